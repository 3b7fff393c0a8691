"""The review store (SQLite): candidates under anonymous ids, runs, reviewers, reviews."""

from .store import DEFAULT_DB, ImportResult, Store
from .validate import InvalidReview

__all__ = ["Store", "ImportResult", "InvalidReview", "DEFAULT_DB"]
