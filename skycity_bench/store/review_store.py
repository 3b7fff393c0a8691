"""The review store: candidates (anonymous ids; labels apart), runs (report.json as imported,
plus an index of the run's files), reviewers and their reviews — in one SQLite file (the
default) or one PostgreSQL database shared by several machines, through one
SQLAlchemy Core code path (db.py makes the engine and upgrades the schema).

Everything in it can be rebuilt from the run folders and an export of the reviews
(`export_reviews` / `import_reviews`): the reports stay the source of truth, reviews are
appended with provenance (reviewer, time, rubric id and hash, source) and a revision
supersedes the old row instead of overwriting it.

A run's files are indexed by number and served from its run folder (runs.storage 'disk'), or
from the database itself (storage 'db': a queue worker's run, its files chunked into
file_chunks so the review app needs no shared disk).
"""

from __future__ import annotations

import secrets as _secrets
from pathlib import Path
from typing import Optional

from skycity_bench.common.errors import UserError
from skycity_bench.inputs.rubric import Rubric, find_rubric, load_rubric
from skycity_bench.store.db import is_postgres, migrate, open_database
from skycity_bench.store.reviews import StoreReviews
from skycity_bench.store.runs import ImportResult, PreparedRun, StoredFile
from skycity_bench.store.sql import _LRU, _q

DEFAULT_DB = Path("recordings") / "reviews.sqlite"
PARSED_REPORTS = 8  # masked reports kept parsed per store (~5 MB of Python objects each)
PARSED_SHEETS = 4096  # runs' sheet_json kept parsed (tens of kB each)
THUMBS_BY_HASH = 512  # thumbnails kept by file hash: the same bytes imported again are not resized again


class ReviewStore(StoreReviews):
    """The store: opening it (its database, rubric and queue seed, the caches: here, kept in
    store_state.StoreState), runs and their files (runs.py: StoreRuns), reviewers, reviews and
    sheets (reviews.py: StoreReviews)."""

    def __init__(
        self,
        target: Path | str = DEFAULT_DB,
        *,
        rubric: Optional[Rubric] = None,
        seed: Optional[int] = None,
        create: bool = True,
    ):
        """`target`: a store file (SQLite) or a postgresql:// URL. create=False refuses a
        place that holds no store yet (sheet), instead of making an empty one."""
        self.db = open_database(target)
        self.path = self.db.path if self.db.path is not None else self.db.display
        migrate(self.db, create=create)
        with self.db.write() as con:
            meta = {r["key"]: r["value"] for r in _q(con, "SELECT key, value FROM meta")}
            if "rubric_id" not in meta:  # a new store: its rubric and queue seed are fixed now
                meta = {
                    "rubric_id": (rubric or load_rubric()).id,
                    "seed": str(seed if seed is not None else _secrets.randbelow(2**31)),
                }
                for k, v in meta.items():
                    _q(con, "INSERT INTO meta (key, value) VALUES (:k, :v)", k=k, v=v)
        if rubric is not None and rubric.id != meta["rubric_id"]:
            raise UserError(f"{self.path}: this store scores under rubric {meta['rubric_id']}, not {rubric.id}")
        if rubric is None:
            p = find_rubric(meta["rubric_id"])
            if p is None:
                raise UserError(f"{self.path}: rubric {meta['rubric_id']} not found under rubrics/")
            rubric = load_rubric(p)
        self.rubric = rubric
        self.seed = int(meta["seed"])
        self._reports = _LRU(PARSED_REPORTS)
        self._sheet_cache = _LRU(PARSED_SHEETS)
        self._thumb_failed = set()
        self._thumb_memo = _LRU(THUMBS_BY_HASH)
        self._backfill()


__all__ = ["ReviewStore", "ImportResult", "StoredFile", "PreparedRun", "DEFAULT_DB", "is_postgres"]
