"""The review store (SQLite file or PostgreSQL URL): candidates under anonymous ids, runs,
reviewers, reviews.

The names load lazily: `from skycity_bench.store import blind` (report.html, rescore) or
InvalidReview never import SQLAlchemy; ReviewStore does."""

from typing import Any

_WHERE = {"ReviewStore": ".store", "ImportResult": ".runs", "StoredFile": ".runs", "DEFAULT_DB": ".store",
          "is_postgres": ".db", "InvalidReview": ".validate"}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
