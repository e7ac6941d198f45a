"""scheduler jobs: APScheduler 3's job store table, so that `statlas daemon` schedules
live in the metastore and survive restarts

The table is exactly the one `apscheduler.jobstores.sqlalchemy.SQLAlchemyJobStore` defines
(id VARCHAR(191) primary key, next_run_time FLOAT(25) indexed, job_state BLOB), so the
store finds it in place and never creates it itself.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "apscheduler_jobs",
        sa.Column("id", sa.Unicode(length=191), nullable=False),
        sa.Column("next_run_time", sa.Float(precision=25), nullable=True),
        sa.Column("job_state", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_apscheduler_jobs")),
    )
    op.create_index(
        op.f("ix_apscheduler_jobs_next_run_time"), "apscheduler_jobs", ["next_run_time"]
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_apscheduler_jobs_next_run_time"), table_name="apscheduler_jobs")
    op.drop_table("apscheduler_jobs")
