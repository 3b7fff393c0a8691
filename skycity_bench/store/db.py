"""Where the store lives: `--db` is a file path (SQLite, the single-machine default) or a
`postgresql://` URL (one database shared by several machines). One SQLAlchemy
Core code path serves both; this module makes the engine, turns connection failures into
one clear line, and brings the schema to the newest Alembic revision.

SQLite: WAL lets the web app read while a submission is written; busy_timeout
makes a second writer wait instead of failing with "database is locked"; foreign keys are
on; a write transaction starts with BEGIN IMMEDIATE, so two submissions at once queue
instead of one failing half way. One connection per operation (NullPool): the file is
closed, its WAL checkpointed, when nothing uses it.

PostgreSQL: every write transaction first takes one transaction-level advisory lock
(STORE_LOCK), so writers queue exactly as SQLite's BEGIN IMMEDIATE makes them: the
read-then-write steps (supersede a review, give the next seat) see one writer at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from skycity_bench.common.errors import UserError
from skycity_bench.store.schema import HEAD, SQLITE_USER_VERSION

BUSY_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 10
STORE_LOCK = 0x5C1C17  # pg_advisory_xact_lock key of the store's writers
MIGRATE_LOCK = 0x5C1C18  # ... and of a schema upgrade
KNOWN = (
    "0001",
    "0002",
    "0003",
    "0004",
    "0005",
    "0006",
)  # every released revision, oldest first (a test holds it to the migrations)
PG_PREFIXES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def is_postgres(target: str | Path) -> bool:
    return str(target).startswith(PG_PREFIXES)


@dataclass
class Database:
    engine: Engine
    display: str  # for messages: the path, or the URL without its password
    path: Path | None  # the SQLite file

    @property
    def postgres(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self.engine.connect() as con:
            yield con

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: writers queue (SQLite BEGIN IMMEDIATE; PostgreSQL one
        advisory lock), committed on success, rolled back on any error."""
        with self.engine.connect() as con:
            con = con.execution_options(skycity_immediate=True)
            with con.begin():
                if self.postgres:
                    con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": STORE_LOCK})
                yield con

    def dispose(self) -> None:
        self.engine.dispose()


def open_database(target: str | Path) -> Database:
    """The engine for a path or URL. Nothing is connected yet (migrate does)."""
    raw = str(target)
    if is_postgres(raw):
        url = sa.engine.make_url("postgresql+psycopg://" + raw.split("://", 1)[1])
        eng = sa.create_engine(
            url, pool_pre_ping=True, pool_size=4, max_overflow=8, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
        )
        return Database(eng, url.render_as_string(hide_password=True), None)
    if raw.startswith("sqlite:///"):
        raw = raw[len("sqlite:///") :]
    elif "://" in raw:
        raise UserError(f"--db {raw.split('://', 1)[0]}://…: expected a file path (SQLite) or a postgresql:// URL")
    path = Path(raw)
    if path.is_dir():
        raise UserError(f"{path}: is a directory; --db takes a store file or a postgresql:// URL")
    path.parent.mkdir(parents=True, exist_ok=True)
    eng = sa.create_engine(
        f"sqlite:///{path}",
        poolclass=NullPool,
        connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
    )

    @sa.event.listens_for(eng, "connect")
    def _on_connect(dbapi_con: Any, _rec: Any) -> None:
        dbapi_con.isolation_level = None  # transactions are begun below, not by pysqlite
        cur = dbapi_con.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.close()

    @sa.event.listens_for(eng, "begin")
    def _on_begin(con: Connection) -> None:
        con.exec_driver_sql("BEGIN IMMEDIATE" if con.get_execution_options().get("skycity_immediate") else "BEGIN")

    return Database(eng, str(path), path)


def _connect_error(db: Database, e: Exception) -> UserError:
    orig = getattr(e, "orig", None) or e
    msg = " ".join(str(orig).split()) or type(orig).__name__
    return UserError(f"{db.display}: cannot open the store: {msg[:300]}")


def _found(con: Connection, db: Database) -> str | None:
    """The store's revision: None (empty database), a revision id, or "legacy-N" (a SQLite
    store of the pre-Alembic code, PRAGMA user_version N)."""
    insp = sa.inspect(con)
    if insp.has_table("alembic_version"):
        return con.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
    if insp.has_table("meta"):
        if db.path is None:
            raise UserError(f"{db.display}: holds tables of something else (no alembic_version): not a review store")
        return f"legacy-{con.exec_driver_sql('PRAGMA user_version').scalar()}"
    return None


def migrate(db: Database, *, create: bool = True) -> str | None:
    """Bring the schema to HEAD; returns the revision found before. An up-to-date store costs
    one look-up (Alembic is imported only to upgrade). A store from a newer bench, or a
    missing store when create=False, is refused in one line; an upgrade runs in one
    transaction, so an interrupted one leaves the previous schema intact."""
    try:
        with db.read() as con:
            found = _found(con, db)
            if found == HEAD:
                return found
    except sa.exc.OperationalError as e:
        raise _connect_error(db, e) from None
    except sa.exc.DatabaseError as e:
        raise UserError(
            f"{db.display}: not a review store ({' '.join(str(getattr(e, 'orig', e)).split())[:200]})"
        ) from None
    _check_known(db, found)
    if found is None and not create:
        raise UserError(f"{db.display}: no review store here (run `skycity-bench import RUN_DIR` first)")
    if db.path is not None:
        raw = db.engine.raw_connection()  # not inside a transaction: SQLite refuses it there
        try:
            cur = raw.cursor()
            cur.execute("PRAGMA journal_mode = WAL")
            cur.close()
        finally:
            raw.close()
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with db.engine.connect() as con:
        con = con.execution_options(skycity_immediate=True)
        with con.begin():
            if db.postgres:
                con.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATE_LOCK})
            found = _found(con, db)  # again, under the lock: another process may have done it
            _check_known(db, found)
            if found != HEAD:
                cfg.attributes["connection"] = con
                if found is not None and found.startswith("legacy-"):
                    command.stamp(cfg, "0001")
                command.upgrade(cfg, "head")
                if db.path is not None:
                    con.exec_driver_sql(f"PRAGMA user_version = {SQLITE_USER_VERSION}")
    return found


def _check_known(db: Database, found: str | None) -> None:
    if found is None or found in KNOWN:
        return
    if found.startswith("legacy-"):
        if int(found.split("-", 1)[1]) <= 1:
            return
        found = f"user_version {found.split('-', 1)[1]}"
    raise UserError(
        f"{db.display}: the store's schema ({found}) is newer than this bench knows ({HEAD}); upgrade skycity-bench"
    )
