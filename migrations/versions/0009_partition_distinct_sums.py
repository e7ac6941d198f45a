"""pre-merged blocks keep the sum of their partitions' distinct counts (rollup_columns.
distinct_sum): the distinct (partition, value) pairs of a column, which group counts over
a partitioned table use (docs/design.md#group-by)

Blocks built before this revision lack the sum, and a block is rebuilt only when its
partitions change, so they are dropped here: each table's blocks are built again at its next
collection, and until then its statistics are merged partition by partition, exactly as
with the blocks (0007).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("DELETE FROM rollup_columns")
    op.execute("DELETE FROM rollup_blocks")
    with op.batch_alter_table("rollup_columns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("distinct_sum", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rollup_columns", schema=None) as batch_op:
        batch_op.drop_column("distinct_sum")
