"""statistics: collection runs and per-partition table and column statistics

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "collection_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("partitions_scanned", sa.Integer(), nullable=False),
        sa.Column("partitions_skipped", sa.Integer(), nullable=False),
        sa.Column("partitions_removed", sa.Integer(), nullable=False),
        sa.Column("rows", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["catalog_tables.id"],
            name=op.f("fk_collection_runs_table_id_catalog_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_collection_runs")),
    )
    with op.batch_alter_table("collection_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_collection_runs_table_id"), ["table_id"], unique=False)

    op.create_table(
        "column_stats",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("partition_id", sa.BigInteger(), nullable=False),
        sa.Column("column_name", sa.String(length=256), nullable=False),
        sa.Column("null_count", sa.BigInteger(), nullable=False),
        sa.Column("min_value", sa.Text(), nullable=True),
        sa.Column("max_value", sa.Text(), nullable=True),
        sa.Column("total_len", sa.BigInteger(), nullable=True),
        sa.Column("max_len", sa.Integer(), nullable=True),
        sa.Column("hll", sa.LargeBinary(), nullable=True),
        sa.Column("kll", sa.LargeBinary(), nullable=True),
        sa.Column("theta", sa.LargeBinary(), nullable=True),
        sa.Column("top_k", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["catalog_tables.id"],
            name=op.f("fk_column_stats_table_id_catalog_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "table_id", "partition_id", "column_name", name=op.f("pk_column_stats")
        ),
    )
    op.create_table(
        "partition_stats",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("partition_id", sa.BigInteger(), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.Column("file_count", sa.Integer(), nullable=False),
        sa.Column("total_bytes", sa.BigInteger(), nullable=False),
        sa.Column("modified_ns", sa.BigInteger(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["collection_runs.id"],
            name=op.f("fk_partition_stats_run_id_collection_runs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["catalog_tables.id"],
            name=op.f("fk_partition_stats_table_id_catalog_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("table_id", "partition_id", name=op.f("pk_partition_stats")),
    )


def downgrade() -> None:
    op.drop_table("partition_stats")
    op.drop_table("column_stats")
    with op.batch_alter_table("collection_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_collection_runs_table_id"))

    op.drop_table("collection_runs")
