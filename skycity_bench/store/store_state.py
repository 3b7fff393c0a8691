"""What the store's parts share through `self`: its database and connections, its rubric and
queue seed, and the caches of parsed JSON and thumbnails. ReviewStore (review_store.py)
fills these in when it opens a store; its runs (runs.py) and its reviews (reviews.py) build
on them, each part a class of its own on top of this one."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Connection

from skycity_bench.inputs.rubric import Rubric
from skycity_bench.store.artefacts import Thumb
from skycity_bench.store.db import Database
from skycity_bench.store.sql import _LRU

Json = dict[str, Any]  # a parsed JSON object (a report, a sheet summary)


class StoreState:
    db: Database
    path: Path | str  # the SQLite file, or the PostgreSQL URL without its password
    rubric: Rubric
    seed: int  # the queue order's seed, fixed when the store was made
    _reports: _LRU[tuple[int, str], Json]  # masked reports by (run id, report hash)
    _sheet_cache: _LRU[int, Json]  # runs' sheet_json by run id
    _thumb_memo: _LRU[str, Thumb]  # thumbnails by the image's hash
    _thumb_failed: set[int]  # files whose thumbnail could not be made (not tried again)

    @property
    def postgres(self) -> bool:
        return self.db.postgres

    def close(self) -> None:
        self.db.dispose()

    def _read(self) -> AbstractContextManager[Connection]:
        return self.db.read()

    def _tx(self) -> AbstractContextManager[Connection]:
        """One write transaction; writers queue (db.Database.write)."""
        return self.db.write()


__all__ = ["StoreState", "Json"]
