"""The review store (SQLite): candidates under anonymous ids, runs, reviewers, reviews."""

from .store import DEFAULT_DB, ImportResult, ReviewStore
from .validate import InvalidReview

__all__ = ["ReviewStore", "ImportResult", "InvalidReview", "DEFAULT_DB"]
