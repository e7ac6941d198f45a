"""a partition's record of a column its files do not have (column_stats.absent), and how
many partitions of a pre-merged block lack the column (rollup_columns.absent): partitions
written with other schemas (docs/design.md#schemas-that-change)

Records and blocks written before this revision describe columns their partitions had:
both default to present.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("column_stats", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("absent", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("rollup_columns", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("absent", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )


def downgrade() -> None:
    with op.batch_alter_table("rollup_columns", schema=None) as batch_op:
        batch_op.drop_column("absent")
    with op.batch_alter_table("column_stats", schema=None) as batch_op:
        batch_op.drop_column("absent")
