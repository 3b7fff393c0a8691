"""The queue's engine: procrastinate, a PostgreSQL-backed task queue. Its jobs,
locks, worker heartbeats and retries live in the same database as the review store, so
several reference machines need one PostgreSQL and nothing else.

One procrastinate job per planned run (queue_runs row); its queue is the run's tag (a
worker started with --tag takes only that tag's jobs). The job carries only the run's id:
the candidate's bytes and the run's options are in the store's queue tables.
"""

from __future__ import annotations

import procrastinate
import sqlalchemy as sa

from skycity_bench.common.errors import UserError
from skycity_bench.store.db import Database, is_postgres

TASK = "skycity.run"
SCHEMA_LOCK = 0x5C1C19  # pg_advisory_xact_lock key: one process applies procrastinate's schema


class HandBack(Exception):
    """Raised by a job that a stopping worker hands back (second Ctrl-C): procrastinate's
    retry puts it back in the queue at once, for any worker."""


def conninfo(db: Database) -> str:
    """Libpq's URL for psycopg (SQLAlchemy's carries the driver name)."""
    return db.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


def require_postgres(target: str) -> None:
    """Before anything is opened: a file path would make a SQLite store nobody else can reach."""
    if not is_postgres(target):
        raise UserError(
            f"{target}: the queue needs a PostgreSQL database (--db postgresql://…); "
            f"on one machine, `skycity-bench run PATH...` runs a batch without one"
        )


def make_app(db: Database) -> procrastinate.App:
    require_postgres(str(db.engine.url))
    connector = procrastinate.PsycopgConnector(
        conninfo=conninfo(db), min_size=1, max_size=4, kwargs={"connect_timeout": 10}
    )
    return procrastinate.App(connector=connector)


def ensure_schema(db: Database) -> None:
    """Procrastinate's tables, applied once (under an advisory lock, so two machines starting
    at once do not both try)."""
    with db.engine.connect() as con:
        with con.begin():
            con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK})
            if con.execute(sa.text("SELECT to_regclass('procrastinate_jobs')")).scalar() is not None:
                return
            # psycopg's own execute: with no parameters it reads no placeholders in the SQL
            driver = con.connection.driver_connection
            assert driver is not None  # a live connection inside the transaction
            driver.execute(procrastinate.schema.SchemaManager.get_schema())
