"""The review store as the pre-Alembic code made it (PRAGMA user_version 1): candidates
(labels apart), runs, run files, reviewers, reviews, finalised sheets. A SQLite store written
by that code is stamped with this revision, not re-created (db.migrate)."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table("meta", sa.Column("key", sa.Text, primary_key=True), sa.Column("value", sa.Text, nullable=False))
    op.create_table("candidates",
                    sa.Column("id", sa.Text, primary_key=True),
                    sa.Column("sha256", sa.Text, nullable=False, unique=True),
                    sa.Column("created_at", sa.Text, nullable=False))
    op.create_table("candidate_labels",
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), primary_key=True),
                    sa.Column("label", sa.Text, nullable=False))
    op.create_table("runs",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), nullable=False),
                    sa.Column("report_sha256", sa.Text, nullable=False, unique=True),
                    sa.Column("rubric_id", sa.Text, nullable=False),
                    sa.Column("run_dir", sa.Text, nullable=False),
                    sa.Column("started_at", sa.Text, nullable=False, server_default=""),
                    sa.Column("imported_at", sa.Text, nullable=False),
                    sa.Column("report_json", sa.Text, nullable=False))
    op.create_index("runs_candidate", "runs", ["candidate_id"])
    op.create_table("run_files",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
                    sa.Column("relpath", sa.Text, nullable=False),
                    sa.Column("sha256", sa.Text, nullable=False),
                    sa.Column("size", sa.Integer, nullable=False),
                    sa.Column("mime", sa.Text, nullable=False),
                    sa.UniqueConstraint("run_id", "relpath"))
    op.create_table("reviewers",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("name", sa.Text, nullable=False, unique=True),
                    sa.Column("seat", sa.Integer, nullable=False, unique=True),
                    sa.Column("created_at", sa.Text, nullable=False))
    op.create_table("reviews",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), nullable=False),
                    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id")),
                    sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("reviewers.id"), nullable=False),
                    sa.Column("item_id", sa.Text, nullable=False),
                    sa.Column("kind", sa.Text, sa.CheckConstraint("kind IN ('grade', 'override')"), nullable=False),
                    sa.Column("level", sa.Text),
                    sa.Column("share", sa.Float),
                    sa.Column("points", sa.Float, nullable=False),
                    sa.Column("comment", sa.Text, nullable=False, server_default=""),
                    sa.Column("reason", sa.Text, nullable=False, server_default=""),
                    sa.Column("rubric_id", sa.Text, nullable=False),
                    sa.Column("rubric_sha256", sa.Text, nullable=False),
                    sa.Column("source", sa.Text, nullable=False),
                    sa.Column("created_at", sa.Text, nullable=False),
                    sa.Column("superseded_by", sa.Integer, sa.ForeignKey("reviews.id")))
    op.create_index("reviews_active", "reviews", ["candidate_id", "item_id"],
                    sqlite_where=sa.text("superseded_by IS NULL"), postgresql_where=sa.text("superseded_by IS NULL"))
    op.create_table("finalized",
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), primary_key=True),
                    sa.Column("at", sa.Text, nullable=False),
                    sa.Column("by", sa.Text, nullable=False))


def downgrade() -> None:
    for t in ("finalized", "reviews", "reviewers", "run_files", "runs", "candidate_labels", "candidates", "meta"):
        op.drop_table(t)
