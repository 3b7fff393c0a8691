"""The review store's SQLite schema, versioned by `PRAGMA user_version` and upgraded by
ordered migrations (never edit a released migration: append a new one).

Why these pragmas: WAL lets the web app read while a reviewer's submission is written and
keeps concurrent writers from corrupting each other (they queue behind `BEGIN IMMEDIATE`);
busy_timeout makes the second writer wait instead of failing with "database is locked";
foreign keys catch a review of a candidate that does not exist.

The id ↔ label mapping lives in its own table (`candidate_labels`), read only by the
unblinding code path, so nothing that serves reviewers ever selects it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

BUSY_TIMEOUT_MS = 30_000

MIGRATIONS: list[tuple[int, str]] = [
    (1, """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE candidates (
        id          TEXT PRIMARY KEY,          -- anonymous (report candidate.id), never a model name
        sha256      TEXT NOT NULL UNIQUE,
        created_at  TEXT NOT NULL
    );
    CREATE TABLE candidate_labels (            -- revealed only when unblinding
        candidate_id TEXT PRIMARY KEY REFERENCES candidates(id),
        label        TEXT NOT NULL
    );
    CREATE TABLE runs (
        id            INTEGER PRIMARY KEY,
        candidate_id  TEXT NOT NULL REFERENCES candidates(id),
        report_sha256 TEXT NOT NULL UNIQUE,
        rubric_id     TEXT NOT NULL,
        run_dir       TEXT NOT NULL,           -- operator's path: never served (it may name the model)
        started_at    TEXT NOT NULL DEFAULT '',
        imported_at   TEXT NOT NULL,
        report_json   TEXT NOT NULL            -- the report.json as imported (source of truth)
    );
    CREATE INDEX runs_candidate ON runs(candidate_id);
    CREATE TABLE run_files (
        id       INTEGER PRIMARY KEY,
        run_id   INTEGER NOT NULL REFERENCES runs(id),
        relpath  TEXT NOT NULL,
        sha256   TEXT NOT NULL,
        size     INTEGER NOT NULL,
        mime     TEXT NOT NULL,
        UNIQUE (run_id, relpath)
    );
    CREATE TABLE reviewers (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        seat        INTEGER NOT NULL UNIQUE,   -- sign-in order: decides the queue order
        created_at  TEXT NOT NULL
    );
    CREATE TABLE reviews (                     -- append-only: a revision supersedes, never overwrites
        id            INTEGER PRIMARY KEY,
        candidate_id  TEXT NOT NULL REFERENCES candidates(id),
        run_id        INTEGER REFERENCES runs(id),
        reviewer_id   INTEGER NOT NULL REFERENCES reviewers(id),
        item_id       TEXT NOT NULL,
        kind          TEXT NOT NULL CHECK (kind IN ('grade', 'override')),
        level         TEXT,                    -- grade: level key
        share         REAL,
        points        REAL NOT NULL,
        comment       TEXT NOT NULL DEFAULT '',
        reason        TEXT NOT NULL DEFAULT '',
        rubric_id     TEXT NOT NULL,
        rubric_sha256 TEXT NOT NULL,
        source        TEXT NOT NULL,           -- web | api | import:<original source>
        created_at    TEXT NOT NULL,
        superseded_by INTEGER REFERENCES reviews(id)
    );
    CREATE INDEX reviews_active ON reviews(candidate_id, item_id) WHERE superseded_by IS NULL;
    CREATE TABLE finalized (
        candidate_id TEXT PRIMARY KEY REFERENCES candidates(id),
        at           TEXT NOT NULL,
        by           TEXT NOT NULL
    );
    """),
]

LATEST = MIGRATIONS[-1][0]


def connect(path: Path | str) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                          check_same_thread=False)
    con.row_factory = sqlite3.Row
    con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    con.execute("PRAGMA foreign_keys = ON")
    con.execute("PRAGMA synchronous = NORMAL")
    return con


def migrate(con: sqlite3.Connection) -> int:
    """Bring the schema to LATEST; returns the version found before. Each step is one
    transaction, so an interrupted upgrade leaves the previous version intact."""
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("BEGIN IMMEDIATE")
    try:
        found = con.execute("PRAGMA user_version").fetchone()[0]
        if found > LATEST:
            raise RuntimeError(f"store schema {found} is newer than this bench knows ({LATEST})")
        for version, sql in MIGRATIONS:
            if version > found:
                for stmt in sql.split(";"):
                    if stmt.strip():
                        con.execute(stmt)
                con.execute(f"PRAGMA user_version = {version}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return found
