"""The store's small SQL helpers, shared by its parts (store.py, runs.py, reviews.py,
accounts.py, timings.py, calibration.py): a statement's rows as mappings, the time of a
write, a small LRU of parsed JSON."""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


class _Rows:
    """A result read as mappings (row["column"]), or as one scalar."""

    def __init__(self, result):
        self.result = result

    def first(self):
        return self.result.mappings().first()

    def all(self):
        return self.result.mappings().all()

    def __iter__(self):
        return iter(self.result.mappings())

    def scalar_one(self):
        return self.result.scalar_one()


def _q(con: Connection, sql: str, **params: Any) -> _Rows:
    return _Rows(con.execute(sa.text(sql), params))


class _LRU:
    """A small thread-safe least-recently-used map (parsed JSON kept by run)."""

    def __init__(self, size: int):
        self.size, self._d, self._lock = size, OrderedDict(), threading.Lock()

    def get(self, key):
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]
        return None

    def put(self, key, value):
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)
        return value
