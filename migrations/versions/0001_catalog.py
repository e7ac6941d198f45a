"""catalog: registered tables and their columns and partition keys

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    op.create_table(
        "catalog_tables",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("num_buckets", sa.Integer(), nullable=True),
        sa.Column("bucket_columns", JSON, nullable=False),
        sa.Column("sort_columns", JSON, nullable=False),
        sa.Column("properties", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_tables")),
        sa.UniqueConstraint("name", name=op.f("uq_catalog_tables_name")),
    )
    op.create_table(
        "catalog_columns",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=256), nullable=False),
        sa.Column("type", sa.Text(), nullable=False),
        sa.Column("nullable", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["catalog_tables.id"],
            name=op.f("fk_catalog_columns_table_id_catalog_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_catalog_columns")),
        sa.UniqueConstraint("table_id", "name", name=op.f("uq_catalog_columns_table_id_name")),
    )
    with op.batch_alter_table("catalog_columns", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_catalog_columns_table_id"), ["table_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("catalog_columns", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_catalog_columns_table_id"))
    op.drop_table("catalog_columns")
    op.drop_table("catalog_tables")
