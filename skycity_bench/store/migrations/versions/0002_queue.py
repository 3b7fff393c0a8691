"""Run files kept in the database (runs.storage, file_chunks) and the queue's own
tables (frozen candidate bytes, one row per planned run with its state and progress).
procrastinate's job tables are its own schema, applied by queue/app.py."""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.add_column("runs", sa.Column("storage", sa.Text, nullable=False, server_default="disk"))
    op.create_table("file_chunks",
                    sa.Column("file_id", sa.Integer, sa.ForeignKey("run_files.id"), primary_key=True),
                    sa.Column("seq", sa.Integer, primary_key=True),
                    sa.Column("data", sa.LargeBinary, nullable=False))
    op.create_table("queue_candidates",
                    sa.Column("id", sa.Text, primary_key=True),
                    sa.Column("sha256", sa.Text, nullable=False, unique=True),
                    sa.Column("html", sa.LargeBinary, nullable=False),
                    sa.Column("labels", sa.Text, nullable=False),
                    sa.Column("created_at", sa.Text, nullable=False))
    op.create_table("queue_runs",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("queue_candidates.id"), nullable=False),
                    sa.Column("tag", sa.Text, nullable=False),
                    sa.Column("repeat_index", sa.Integer, nullable=False),
                    sa.Column("options", sa.Text, nullable=False),
                    sa.Column("job_id", sa.Integer),
                    sa.Column("state", sa.Text, nullable=False),
                    sa.Column("worker", sa.Text),
                    sa.Column("lease", sa.Text),
                    sa.Column("probe", sa.Text),
                    sa.Column("started_at", sa.Text),
                    sa.Column("finished_at", sa.Text),
                    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
                    sa.Column("deaths", sa.Integer, nullable=False, server_default="0"),
                    sa.Column("error", sa.Text),
                    sa.Column("result_run_id", sa.Integer, sa.ForeignKey("runs.id")),
                    sa.Column("fingerprint", sa.Text),
                    sa.Column("created_at", sa.Text, nullable=False),
                    sa.Column("history", sa.Text, nullable=False, server_default="[]"),
                    sa.UniqueConstraint("candidate_id", "tag", "repeat_index"))
    op.create_index("queue_runs_tag_state", "queue_runs", ["tag", "state"])


def downgrade() -> None:
    op.drop_index("queue_runs_tag_state", "queue_runs")
    for t in ("queue_runs", "queue_candidates", "file_chunks"):
        op.drop_table(t)
    with op.batch_alter_table("runs") as b:
        b.drop_column("storage")
