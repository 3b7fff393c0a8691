"""Each candidate's manifest: which system made it, for which prompt, as which sample.

- candidate_manifests: one row per candidate (candidate_id), the system (model and version),
  the prompt id, the sample number (text: "1", "2" or a team's own numbering) and optional
  tags (a JSON list of strings); who set it and when. Admins only: nothing that serves
  reviewers selects this table (system and prompt would unblind the candidate).

The leaderboard reads it to group candidates by system and prompt; a candidate without a
row is left out of the leaderboard, never guessed.
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table("candidate_manifests",
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), primary_key=True),
                    sa.Column("system", sa.Text, nullable=False),
                    sa.Column("prompt", sa.Text, nullable=False),
                    sa.Column("sample", sa.Text, nullable=False),
                    sa.Column("tags", sa.Text, nullable=False, server_default="[]"),
                    sa.Column("set_by", sa.Text, nullable=False),
                    sa.Column("set_at", sa.Text, nullable=False))


def downgrade() -> None:
    op.drop_table("candidate_manifests")
