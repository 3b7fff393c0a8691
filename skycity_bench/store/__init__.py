"""The review store (SQLite file or PostgreSQL URL): candidates under anonymous ids, runs,
reviewers, reviews."""

from .db import is_postgres
from .store import DEFAULT_DB, ImportResult, ReviewStore, StoredFile
from .validate import InvalidReview

__all__ = ["ReviewStore", "ImportResult", "InvalidReview", "DEFAULT_DB", "StoredFile", "is_postgres"]
