"""heavy hitters: how a column's top-k sketch serialises its items (longs, doubles, strings)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("column_stats", schema=None) as batch_op:
        batch_op.add_column(sa.Column("top_k_items", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("column_stats", schema=None) as batch_op:
        batch_op.drop_column("top_k_items")
