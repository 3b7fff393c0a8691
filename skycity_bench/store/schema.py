"""The store's tables (SQLAlchemy Core), one definition for SQLite and PostgreSQL.

The schema is changed only by Alembic migrations (store/migrations/versions/, applied by
db.migrate; never edit a released one: append a new one). These Table objects describe the
schema as the latest migration leaves it, for the queries; a test holds the two together.

The id ↔ label mapping lives in its own table (`candidate_labels`), read only by the
unblinding code path, so nothing that serves reviewers ever selects it.

Queue tables (used only with PostgreSQL, where procrastinate keeps its jobs in
the same database; on SQLite they stay empty):
- queue_candidates: each candidate's bytes, frozen at `queue add` (workers need no shared disk);
- queue_runs: one row per planned run (candidate × repeat), its options, its state and
  progress (who runs it, which probe, since when), its result (runs.id) once done;
- file_chunks: evidence files of a run stored in the database (runs.storage = 'db').
"""

from __future__ import annotations

from sqlalchemy import (
    CheckConstraint,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    text,
)

# The newest migration this code knows (db.migrate compares it with the store's before
# importing Alembic, so opening an up-to-date store costs one query).
# tests/unit/test_store_migrations.py holds it equal to the migrations' head.
HEAD = "0006"
# PRAGMA user_version of a SQLite store at HEAD: the pre-Alembic code refuses a store whose
# version is above its own (1), so an older bench never writes into a newer store.
SQLITE_USER_VERSION = 2

metadata = MetaData()

meta = Table("meta", metadata, Column("key", Text, primary_key=True), Column("value", Text, nullable=False))

candidates = Table(
    "candidates",
    metadata,
    Column("id", Text, primary_key=True),  # 0005: random, made by the store (reveals nothing)
    Column("sha256", Text, nullable=False, unique=True),  # admins only
    Column("created_at", Text, nullable=False),
    # 0005: the bench's id (report candidate.id: a prefix of sha256), admins only
    Column("bench_id", Text),
    Index("candidates_bench_id", "bench_id", unique=True),
)

candidate_labels = Table(
    "candidate_labels",
    metadata,  # revealed only when unblinding
    Column("candidate_id", Text, ForeignKey("candidates.id"), primary_key=True),
    Column("label", Text, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("candidate_id", Text, ForeignKey("candidates.id"), nullable=False),
    Column("report_sha256", Text, nullable=False, unique=True),
    Column("rubric_id", Text, nullable=False),
    Column("run_dir", Text, nullable=False),  # operator's path: never served (it may name the model)
    Column("started_at", Text, nullable=False, server_default=""),
    Column("imported_at", Text, nullable=False),
    Column("report_json", Text, nullable=False),  # the report.json as imported (source of truth)
    # 0002: 'disk' (files under run_dir) or 'db' (files in file_chunks)
    Column("storage", Text, nullable=False, server_default="disk"),
    # 0003: the reviewer-facing report, masked once at import; items the run collected
    Column("masked_json", Text),
    Column("items_collected", Integer),
    Index("runs_candidate", "candidate_id"),
)

run_files = Table(
    "run_files",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),
    Column("relpath", Text, nullable=False),
    Column("sha256", Text, nullable=False),
    Column("size", Integer, nullable=False),
    Column("mime", Text, nullable=False),
    UniqueConstraint("run_id", "relpath"),
)

reviewers = Table(
    "reviewers",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", Text, nullable=False, unique=True),
    Column("seat", Integer, nullable=False, unique=True),  # sign-in order: the queue order
    Column("created_at", Text, nullable=False),
    # 0003: 'reviewer' or 'admin'; a disabled account keeps its reviews, cannot sign in
    Column("role", Text, nullable=False, server_default="reviewer"),
    Column("disabled_at", Text),
)

reviews = Table(
    "reviews",
    metadata,  # append-only: a revision supersedes, never overwrites
    Column("id", Integer, primary_key=True),
    Column("candidate_id", Text, ForeignKey("candidates.id"), nullable=False),
    Column("run_id", Integer, ForeignKey("runs.id")),
    Column("reviewer_id", Integer, ForeignKey("reviewers.id"), nullable=False),
    Column("item_id", Text, nullable=False),
    Column("kind", Text, CheckConstraint("kind IN ('grade', 'override')"), nullable=False),
    Column("level", Text),
    Column("share", Float),
    Column("points", Float, nullable=False),
    Column("comment", Text, nullable=False, server_default=""),
    Column("reason", Text, nullable=False, server_default=""),
    Column("rubric_id", Text, nullable=False),
    Column("rubric_sha256", Text, nullable=False),
    Column("source", Text, nullable=False),  # web | api | import:<original source>
    Column("created_at", Text, nullable=False),
    Column("superseded_by", Integer, ForeignKey("reviews.id")),
    Index(
        "reviews_active",
        "candidate_id",
        "item_id",
        sqlite_where=text("superseded_by IS NULL"),
        postgresql_where=text("superseded_by IS NULL"),
    ),
)

finalized = Table(
    "finalized",
    metadata,
    Column("candidate_id", Text, ForeignKey("candidates.id"), primary_key=True),
    Column("at", Text, nullable=False),
    Column("by", Text, nullable=False),
)

# --- 0002: evidence in the database, the queue ---------------------------------------------
file_chunks = Table(
    "file_chunks",
    metadata,
    Column("file_id", Integer, ForeignKey("run_files.id"), primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("data", LargeBinary, nullable=False),
)

queue_candidates = Table(
    "queue_candidates",
    metadata,
    Column("id", Text, primary_key=True),  # anonymous id, as candidates.id
    Column("sha256", Text, nullable=False, unique=True),
    Column("html", LargeBinary, nullable=False),  # the exact bytes planned
    Column("labels", Text, nullable=False),  # JSON list: every file name it came as
    Column("created_at", Text, nullable=False),
)

queue_runs = Table(
    "queue_runs",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("candidate_id", Text, ForeignKey("queue_candidates.id"), nullable=False),
    Column("tag", Text, nullable=False),
    Column("repeat_index", Integer, nullable=False),
    Column("options", Text, nullable=False),  # JSON: probes, scenario overrides, network...
    Column("job_id", Integer),  # procrastinate's job
    Column("state", Text, nullable=False),  # queued | running | done | failed
    Column("worker", Text),  # who runs / ran it
    Column("lease", Text),  # this attempt's token: only it may store the result
    Column("probe", Text),  # what the run is doing now
    Column("started_at", Text),
    Column("finished_at", Text),
    Column("attempts", Integer, nullable=False, server_default="0"),
    Column("deaths", Integer, nullable=False, server_default="0"),  # stalls (its worker vanished)
    Column("error", Text),
    Column("result_run_id", Integer, ForeignKey("runs.id")),
    Column("fingerprint", Text),  # JSON: the worker machine's environment
    Column("created_at", Text, nullable=False),
    Column("history", Text, nullable=False, server_default="[]"),  # JSON events: start, stall, done...
    UniqueConstraint("candidate_id", "tag", "repeat_index"),
    Index("queue_runs_tag_state", "tag", "state"),
)

# --- 0003: accounts, run choice, import-time artefacts, calibration, timings, audit ---------
credentials = Table(
    "credentials",
    metadata,  # invitations, sign-in links, API tokens
    Column("id", Integer, primary_key=True),
    Column("reviewer_id", Integer, ForeignKey("reviewers.id"), nullable=False),
    Column("kind", Text, nullable=False),  # invite | signin | api | session
    Column("token_hash", Text, nullable=False, unique=True),  # never the secret itself
    Column("created_at", Text, nullable=False),
    Column("created_by", Text),
    Column("expires_at", Text),
    Column("used_at", Text),
    Column("revoked_at", Text),
)

run_choice = Table(
    "run_choice",
    metadata,  # the run an admin picked to show
    Column("candidate_id", Text, ForeignKey("candidates.id"), primary_key=True),
    Column("run_id", Integer, ForeignKey("runs.id"), nullable=False),
    Column("by", Text, nullable=False),
    Column("at", Text, nullable=False),
    Column("reason", Text, nullable=False, server_default=""),
)

thumbnails = Table(
    "thumbnails",
    metadata,  # made at import for the candidate page
    Column("file_id", Integer, ForeignKey("run_files.id"), primary_key=True),
    Column("width", Integer, nullable=False),
    Column("height", Integer, nullable=False),
    Column("mime", Text, nullable=False),
    Column("data", LargeBinary, nullable=False),
)

anchors = Table(
    "anchors",
    metadata,  # calibration: agreed levels per item
    Column("candidate_id", Text, ForeignKey("candidates.id"), primary_key=True),
    Column("item_id", Text, primary_key=True),
    Column("level", Text, nullable=False),
    Column("source", Text, nullable=False),  # sheet | hand
    Column("reason", Text, nullable=False, server_default=""),
    Column("by", Text, nullable=False),
    Column("at", Text, nullable=False),
)

review_timings = Table(
    "review_timings",
    metadata,  # time per candidate, for the operator
    Column("id", Integer, primary_key=True),
    Column("reviewer_id", Integer, ForeignKey("reviewers.id"), nullable=False),
    Column("candidate_id", Text, ForeignKey("candidates.id"), nullable=False),
    Column("opened_at", Text, nullable=False),
    Column("saved_at", Text, nullable=False),
    Column("seconds", Float, nullable=False),
)

audit = Table(
    "audit",
    metadata,  # admin actions: who did what, when (append-only: triggers refuse UPDATE, DELETE)
    Column("id", Integer, primary_key=True),
    Column("at", Text, nullable=False),
    Column("actor", Text, nullable=False),
    Column("action", Text, nullable=False),
    Column("candidate_id", Text),
    Column("detail", Text, nullable=False, server_default=""),
    Column("subject", Text),  # 0005: the account the action concerns (its owner sees the row)
)

# --- 0004: each run's small facts, apart from its multi-MB report (see the migration) ------
run_summaries = Table(
    "run_summaries",
    metadata,
    Column("run_id", Integer, ForeignKey("runs.id"), primary_key=True),
    Column("candidate_id", Text, ForeignKey("candidates.id"), nullable=False),
    Column("started_at", Text, nullable=False, server_default=""),
    Column("items_collected", Integer, nullable=False),  # the run choice
    Column("sheet_json", Text, nullable=False),  # masked items + environment
    Index("run_summaries_candidate", "candidate_id"),
)

# --- 0006: each candidate's manifest (system, prompt, sample, tags): admins only ------------
candidate_manifests = Table(
    "candidate_manifests",
    metadata,  # read only by admin views and the leaderboard, never by what serves reviewers
    Column("candidate_id", Text, ForeignKey("candidates.id"), primary_key=True),
    Column("system", Text, nullable=False),  # model and version
    Column("prompt", Text, nullable=False),
    Column("sample", Text, nullable=False),
    Column("tags", Text, nullable=False, server_default="[]"),  # JSON list of strings
    Column("set_by", Text, nullable=False),
    Column("set_at", Text, nullable=False),
)
