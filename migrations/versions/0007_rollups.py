"""pre-merged statistics: blocks of 8**level partition ids, merged (metastore.statistics.rollups)

A table's statistics of any partition selection are then merged from O(log n) stored
blocks per run of adjacent partitions instead of from every partition. Tables collected
before this revision get their blocks at their next collection; until then their
statistics are merged partition by partition, as before. Blobs are compressed already:
PostgreSQL stores them uncompressed (STORAGE EXTERNAL), like the sketches (0004).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _table_key() -> list[sa.Column[int]]:
    return [
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("block", sa.BigInteger(), nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "rollup_blocks",
        *_table_key(),
        sa.Column("partitions", sa.Integer(), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.Column("sample_size", sa.Integer(), nullable=True),
        sa.Column("sample", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["catalog_tables.id"],
            name=op.f("fk_rollup_blocks_table_id_catalog_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("table_id", "level", "block", name=op.f("pk_rollup_blocks")),
    )
    op.create_table(
        "rollup_columns",
        *_table_key(),
        sa.Column("column_name", sa.String(length=256), nullable=False),
        sa.Column("partitions", sa.Integer(), nullable=False),
        sa.Column("with_hll", sa.Integer(), nullable=False),
        sa.Column("with_theta", sa.Integer(), nullable=False),
        sa.Column("with_sketch", sa.Integer(), nullable=False),
        sa.Column("null_count", sa.BigInteger(), nullable=False),
        sa.Column("min_value", sa.Text(), nullable=True),
        sa.Column("max_value", sa.Text(), nullable=True),
        sa.Column("total_len", sa.BigInteger(), nullable=True),
        sa.Column("max_len", sa.Integer(), nullable=True),
        sa.Column("hll", sa.LargeBinary(), nullable=True),
        sa.Column("kll", sa.LargeBinary(), nullable=True),
        sa.Column("theta", sa.LargeBinary(), nullable=True),
        sa.Column("top_k", sa.LargeBinary(), nullable=True),
        sa.Column("top_k_items", sa.String(length=8), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["catalog_tables.id"],
            name=op.f("fk_rollup_columns_table_id_catalog_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "table_id", "level", "block", "column_name", name=op.f("pk_rollup_columns")
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        for table, columns in (
            ("rollup_blocks", ("sample",)),
            ("rollup_columns", ("hll", "kll", "theta", "top_k")),
        ):
            for column in columns:
                op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.drop_table("rollup_columns")
    op.drop_table("rollup_blocks")
