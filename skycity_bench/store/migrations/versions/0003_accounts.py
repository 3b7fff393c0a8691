"""Reviewer accounts and roles, run choice, masked artefacts made at import,
thumbnails, calibration anchors, time per candidate and an audit trail of admin actions.

- reviewers.role: 'reviewer' or 'admin'; reviewers.disabled_at: a removed account keeps its
  reviews (they stay on the record) but can no longer sign in.
- credentials: invitation links, sign-in links and API tokens, stored only as a hash of the
  secret (never in clear), each with its expiry and when it was used or revoked.
- run_choice: the run an admin picked to show for a candidate (else the most complete one).
- runs.masked_json / runs.items_collected: the reviewer-facing report, masked once at import,
  and how many items the run collected (the run-choice rule).
- thumbnails: small images made at import for the candidate page.
- anchors: calibration candidates' agreed levels per item.
- review_timings: how long a reviewer had a candidate open until they saved (for the operator).
- audit: who did what (invite, finalise, un-finalise, unblind, pick a run, mark an anchor).
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    with op.batch_alter_table("reviewers") as b:
        b.add_column(sa.Column("role", sa.Text, nullable=False, server_default="reviewer"))
        b.add_column(sa.Column("disabled_at", sa.Text))
    with op.batch_alter_table("runs") as b:
        b.add_column(sa.Column("masked_json", sa.Text))
        b.add_column(sa.Column("items_collected", sa.Integer))
    op.create_table("credentials",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("reviewers.id"), nullable=False),
                    sa.Column("kind", sa.Text, nullable=False),
                    sa.Column("token_hash", sa.Text, nullable=False, unique=True),
                    sa.Column("created_at", sa.Text, nullable=False),
                    sa.Column("created_by", sa.Text),
                    sa.Column("expires_at", sa.Text),
                    sa.Column("used_at", sa.Text),
                    sa.Column("revoked_at", sa.Text))
    op.create_table("run_choice",
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), primary_key=True),
                    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), nullable=False),
                    sa.Column("by", sa.Text, nullable=False),
                    sa.Column("at", sa.Text, nullable=False),
                    sa.Column("reason", sa.Text, nullable=False, server_default=""))
    op.create_table("thumbnails",
                    sa.Column("file_id", sa.Integer, sa.ForeignKey("run_files.id"), primary_key=True),
                    sa.Column("width", sa.Integer, nullable=False),
                    sa.Column("height", sa.Integer, nullable=False),
                    sa.Column("mime", sa.Text, nullable=False),
                    sa.Column("data", sa.LargeBinary, nullable=False))
    op.create_table("anchors",
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), primary_key=True),
                    sa.Column("item_id", sa.Text, primary_key=True),
                    sa.Column("level", sa.Text, nullable=False),
                    sa.Column("source", sa.Text, nullable=False),
                    sa.Column("reason", sa.Text, nullable=False, server_default=""),
                    sa.Column("by", sa.Text, nullable=False),
                    sa.Column("at", sa.Text, nullable=False))
    op.create_table("review_timings",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("reviewer_id", sa.Integer, sa.ForeignKey("reviewers.id"), nullable=False),
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), nullable=False),
                    sa.Column("opened_at", sa.Text, nullable=False),
                    sa.Column("saved_at", sa.Text, nullable=False),
                    sa.Column("seconds", sa.Float, nullable=False))
    op.create_table("audit",
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("at", sa.Text, nullable=False),
                    sa.Column("actor", sa.Text, nullable=False),
                    sa.Column("action", sa.Text, nullable=False),
                    sa.Column("candidate_id", sa.Text),
                    sa.Column("detail", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    for t in ("audit", "review_timings", "anchors", "thumbnails", "run_choice", "credentials"):
        op.drop_table(t)
    with op.batch_alter_table("runs") as b:
        b.drop_column("items_collected")
        b.drop_column("masked_json")
    with op.batch_alter_table("reviewers") as b:
        b.drop_column("disabled_at")
        b.drop_column("role")
