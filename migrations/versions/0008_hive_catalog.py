"""the Hive Metastore's catalog: databases, what Hive clients keep of tables and partitions,
column statistics written by engines (servers/hive_metastore, docs/hive-metastore.md)

Tables and partitions stay where they are (catalog_tables, partitions_<id>, typed); this
revision adds what a Hive client writes and reads back beside them: databases (`default`
always exists), each table's type, owner, storage descriptor, parameters and view text,
column comments, each partition's parameters and its own storage descriptor where it differs
from the table's, and the column statistics an engine writes (Trino, Hive), kept as given.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def _table_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["table_id"],
        ["catalog_tables.id"],
        name=op.f(f"fk_{table}_table_id_catalog_tables"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    databases = op.create_table(
        "hms_databases",
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("location", sa.Text(), nullable=True),
        sa.Column("owner_name", sa.String(length=256), nullable=True),
        sa.Column("owner_type", sa.String(length=16), nullable=True),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_hms_databases")),
    )
    op.create_table(
        "hms_tables",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("table_type", sa.String(length=32), nullable=False),
        sa.Column("owner", sa.String(length=256), nullable=True),
        sa.Column("storage", JSON, nullable=False),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("view_original_text", sa.Text(), nullable=True),
        sa.Column("view_expanded_text", sa.Text(), nullable=True),
        sa.Column("create_time", sa.Integer(), nullable=False),
        sa.Column("statistics_written_at", sa.DateTime(timezone=True), nullable=True),
        _table_fk("hms_tables"),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_hms_tables")),
    )
    op.create_table(
        "hms_partitions",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("partition_id", sa.BigInteger(), nullable=False),
        sa.Column("storage", JSON, nullable=True),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("create_time", sa.Integer(), nullable=False),
        sa.Column("statistics_written_at", sa.DateTime(timezone=True), nullable=True),
        _table_fk("hms_partitions"),
        sa.PrimaryKeyConstraint("table_id", "partition_id", name=op.f("pk_hms_partitions")),
    )
    op.create_table(
        "hms_column_statistics",
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("partition_id", sa.BigInteger(), nullable=False),
        sa.Column("column_name", sa.String(length=256), nullable=False),
        sa.Column("engine", sa.String(length=32), nullable=True),
        sa.Column("statistics", JSON, nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        _table_fk("hms_column_statistics"),
        sa.PrimaryKeyConstraint(
            "table_id", "partition_id", "column_name", name=op.f("pk_hms_column_statistics")
        ),
    )
    with op.batch_alter_table("catalog_columns") as batch:
        batch.add_column(sa.Column("comment", sa.Text(), nullable=True))
    op.bulk_insert(
        databases,
        [
            {
                "name": "default",
                "description": "Default Hive database",
                "location": None,
                "owner_name": "public",
                "owner_type": "ROLE",
                "parameters": {},
                "created_at": dt.datetime.now(dt.UTC),
            }
        ],
    )


def downgrade() -> None:
    with op.batch_alter_table("catalog_columns") as batch:
        batch.drop_column("comment")
    op.drop_table("hms_column_statistics")
    op.drop_table("hms_partitions")
    op.drop_table("hms_tables")
    op.drop_table("hms_databases")
