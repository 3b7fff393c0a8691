"""The store's small SQL helpers, shared by its parts (review_store.py, runs.py, reviews.py,
accounts.py, timings.py, anchors.py): a statement's rows as mappings, the time of a write, a
small LRU of parsed JSON."""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from typing import Any, Generic, Optional, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, CursorResult, RowMapping

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
Record = dict[str, Any]  # a row as a plain dict (what the store's readers hand out)


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


class _Rows:
    """A result read as mappings (row["column"]), or as one scalar."""

    def __init__(self, result: CursorResult[Any]):
        self.result = result

    def first(self) -> Optional[RowMapping]:
        return self.result.mappings().first()

    def all(self) -> Sequence[RowMapping]:
        return self.result.mappings().all()

    def __iter__(self) -> Iterator[RowMapping]:
        return iter(self.result.mappings())

    def one(self) -> RowMapping:
        return self.result.mappings().one()

    def scalar_one(self) -> Any:
        return self.result.scalar_one()


def _q(con: Connection, sql: str, **params: Any) -> _Rows:
    return _Rows(con.execute(sa.text(sql), params))


def expanding(sql: str, name: str) -> sa.TextClause:
    """A statement whose parameter `name` is a list (`IN :name`), expanded when it runs."""
    return sa.text(sql).bindparams(sa.bindparam(name, expanding=True))


class _LRU(Generic[K, V]):
    """A small thread-safe least-recently-used map (parsed JSON kept by run)."""

    def __init__(self, size: int):
        self.size = size
        self._d: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> Optional[V]:
        with self._lock:
            if key in self._d:
                self._d.move_to_end(key)
                return self._d[key]
        return None

    def put(self, key: K, value: V) -> V:
        with self._lock:
            self._d[key] = value
            self._d.move_to_end(key)
            while len(self._d) > self.size:
                self._d.popitem(last=False)
        return value
