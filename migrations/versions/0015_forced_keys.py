"""a sampled table's forced keys (forced_keys): per column, the values whose rows every
partition's row sample holds whatever its draw (collectors/forced_keys.py), so an estimate
knows those values' rows are all in the sample, and a value of them the sample does not show
has none

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | Sequence[str] | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "forced_keys",
        sa.Column(
            "table_id",
            sa.Integer(),
            sa.ForeignKey("catalog_tables.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("column_name", sa.String(256), primary_key=True),
        sa.Column("key_values", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("forced_keys")
