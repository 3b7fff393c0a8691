"""Each run's small facts in a narrow table of their own (run_summaries), so
that listing every candidate's runs (the run choice, the sheet of 50 candidates) never reads
a report.

Why a table and not runs' own columns (0003's runs.items_collected): SQLite stores a row's
columns in order and a multi-MB report_json spills into a chain of overflow pages; a column
added after it (items_collected, masked_json) is reached only by walking that whole chain.
Measured: selecting items_collected of 50 runs with 3 MB reports took 270-490 ms (under
load), id and candidate_id alone 0.05 ms. PostgreSQL keeps large values apart (TOAST) and
does not care; one table serves both.

- run_id, candidate_id, started_at: the run (as runs has them), indexed by candidate;
- items_collected: items the run collected (status other than untested): the run choice;
- sheet_json: what the sheet needs of the run, from the reviewer-facing (masked) report: the
  items (bench points, status, evidence) and the environment (ranking groups), a few tens
  of kB instead of the report's megabytes.

Runs stored before this revision have no row yet: the store fills them in when it opens
(ReviewStore._backfill), with runs.masked_json and runs.items_collected.
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table("run_summaries",
                    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id"), primary_key=True),
                    sa.Column("candidate_id", sa.Text, sa.ForeignKey("candidates.id"), nullable=False),
                    sa.Column("started_at", sa.Text, nullable=False, server_default=""),
                    sa.Column("items_collected", sa.Integer, nullable=False),
                    sa.Column("sheet_json", sa.Text, nullable=False))
    op.create_index("run_summaries_candidate", "run_summaries", ["candidate_id"])


def downgrade() -> None:
    op.drop_index("run_summaries_candidate", "run_summaries")
    op.drop_table("run_summaries")
