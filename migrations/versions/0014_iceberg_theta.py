"""an Iceberg table's Theta sketches of its values as Iceberg serialises them
(column_stats.iceberg_theta): what its Puffin statistics file publishes where statlas's own
Theta sketch hashes the values otherwise (collectors/iceberg/publish.py)

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | Sequence[str] | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # a nullable column: added in place on both databases (no copy of the table)
    op.add_column("column_stats", sa.Column("iceberg_theta", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("column_stats") as batch:
        batch.drop_column("iceberg_theta")
