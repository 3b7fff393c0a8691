"""Candidate ids that reveal nothing, and an audit trail that names whom an action concerns.

- candidates.id becomes a random id of the same shape (c- and 12 hex digits) made by the
  store. The bench's own id (the report's candidate.id, the first 12 hex digits of the
  file's sha256) moves to candidates.bench_id, read only by admin views: anyone holding the
  candidate files could hash them and match the old ids to the models. Every table that
  names a candidate follows (runs, reviews, finalised sheets, run choices, anchors, timings,
  labels, audit rows); queue_candidates keeps the bench's id (the workers' side, admins only).
- runs.masked_json and run_summaries are cleared: their candidate block named the old id; the
  store masks them again when it opens (ReviewStore._backfill), with the new id.
- audit.subject: the account an action concerns (an invitation, a revoked account, a
  re-issued link, an admin's override); its owner sees those rows. The audit table refuses
  UPDATE and DELETE from now on (a trigger on each database): append-only.

Moving a primary key that other rows point at, on both databases without deferring foreign
keys: a new candidate row (its sha256 suffixed for the moment: that column is unique), the
children pointed at it, the old row deleted, the sha256 restored.
"""

import secrets

import sqlalchemy as sa
from alembic import op
from sqlalchemy.engine import Connection

revision = "0005"
down_revision = "0004"

CHILDREN = ("candidate_labels", "runs", "run_summaries", "reviews", "finalized", "run_choice", "anchors",
            "review_timings", "audit")
SQLITE_GUARD = ("CREATE TRIGGER audit_append_only_{op} BEFORE {OP} ON audit "
                "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END")
PG_GUARD_FN = ("CREATE OR REPLACE FUNCTION audit_append_only() RETURNS trigger AS $$ BEGIN "
               "RAISE EXCEPTION 'the audit trail is append-only'; END; $$ LANGUAGE plpgsql")
PG_GUARD = "CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION audit_append_only()"


def _move(con: Connection, old: str, new: str) -> None:
    sha, created = con.execute(sa.text("SELECT sha256, created_at FROM candidates WHERE id = :o"), {"o": old}).one()
    con.execute(sa.text("INSERT INTO candidates (id, sha256, created_at, bench_id) VALUES (:n, :s, :t, :b)"),
                {"n": new, "s": sha + ":moving", "t": created, "b": old})
    for t in CHILDREN:
        con.execute(sa.text(f"UPDATE {t} SET candidate_id = :n WHERE candidate_id = :o"), {"n": new, "o": old})
    con.execute(sa.text("DELETE FROM candidates WHERE id = :o"), {"o": old})
    con.execute(sa.text("UPDATE candidates SET sha256 = :s WHERE id = :n"), {"s": sha, "n": new})


def _guard(con: Connection, on: bool) -> None:
    if con.dialect.name == "sqlite":
        for o in ("update", "delete"):
            con.execute(sa.text(SQLITE_GUARD.format(op=o, OP=o.upper()) if on else
                                f"DROP TRIGGER IF EXISTS audit_append_only_{o}"))
    elif on:
        con.execute(sa.text(PG_GUARD_FN))
        con.execute(sa.text(PG_GUARD))
    else:
        con.execute(sa.text("DROP TRIGGER IF EXISTS audit_append_only ON audit"))


def _forget_masked(con: Connection) -> None:
    con.execute(sa.text("DELETE FROM run_summaries"))
    con.execute(sa.text("UPDATE runs SET masked_json = NULL, items_collected = NULL"))


def upgrade() -> None:
    op.add_column("candidates", sa.Column("bench_id", sa.Text))
    op.add_column("audit", sa.Column("subject", sa.Text))
    con = op.get_bind()
    taken = set()
    for (old,) in con.execute(sa.text("SELECT id FROM candidates ORDER BY id")).all():
        new = "c-" + secrets.token_hex(6)
        while new in taken or new == old:
            new = "c-" + secrets.token_hex(6)
        taken.add(new)
        _move(con, old, new)
    op.create_index("candidates_bench_id", "candidates", ["bench_id"], unique=True)
    _forget_masked(con)
    _guard(con, True)


def downgrade() -> None:
    con = op.get_bind()
    _guard(con, False)
    for new, old in con.execute(sa.text("SELECT id, bench_id FROM candidates")).all():
        con.execute(sa.text("UPDATE candidates SET bench_id = NULL WHERE id = :n"), {"n": new})
        sha, created = con.execute(sa.text("SELECT sha256, created_at FROM candidates WHERE id = :n"),
                                   {"n": new}).one()
        con.execute(sa.text("INSERT INTO candidates (id, sha256, created_at) VALUES (:o, :s, :t)"),
                    {"o": old, "s": sha + ":moving", "t": created})
        for t in CHILDREN:
            con.execute(sa.text(f"UPDATE {t} SET candidate_id = :o WHERE candidate_id = :n"), {"n": new, "o": old})
        con.execute(sa.text("DELETE FROM candidates WHERE id = :n"), {"n": new})
        con.execute(sa.text("UPDATE candidates SET sha256 = :s WHERE id = :o"), {"s": sha, "o": old})
    _forget_masked(con)
    op.drop_index("candidates_bench_id", "candidates")
    op.drop_column("audit", "subject")  # SQLite 3.35+ drops a column in place (no table copy)
    op.drop_column("candidates", "bench_id")
