"""row samples: each partition's statistics gain a uniform random sample of its rows

The sample is zlib-compressed already, so PostgreSQL stores it uncompressed (STORAGE
EXTERNAL), like the sketches (0004).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("partition_stats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sample_size", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("sample", sa.LargeBinary(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE partition_stats ALTER COLUMN sample SET STORAGE EXTERNAL")


def downgrade() -> None:
    with op.batch_alter_table("partition_stats", schema=None) as batch_op:
        batch_op.drop_column("sample")
        batch_op.drop_column("sample_size")
