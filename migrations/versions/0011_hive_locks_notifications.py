"""Hive's lock manager (hms_locks, hms_lock_components), notification log
(hms_notifications) and permanent functions (hms_functions), kept in the metastore
database so that every daemon on one database grants locks from the same list and numbers
events in one order (docs/hive-metastore.md)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "hms_locks",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("user_name", sa.String(length=256), nullable=False),
        sa.Column("host_name", sa.String(length=256), nullable=False),
        sa.Column("agent_info", sa.String(length=1024), nullable=True),
        sa.Column("created_at", sa.Float(precision=53), nullable=False),
        sa.Column("last_heartbeat", sa.Float(precision=53), nullable=False),
        sa.Column("acquired_at", sa.Float(precision=53), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_hms_locks")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_hms_locks_last_heartbeat"), "hms_locks", ["last_heartbeat"], unique=False
    )
    op.create_table(
        "hms_lock_components",
        sa.Column("lock_id", ID, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("database_name", sa.String(length=128), nullable=False),
        sa.Column("table_name", sa.String(length=256), nullable=True),
        sa.Column("partition_name", sa.Text(), nullable=True),
        sa.Column("lock_type", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["lock_id"],
            ["hms_locks.id"],
            name=op.f("fk_hms_lock_components_lock_id_hms_locks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("lock_id", "position", name=op.f("pk_hms_lock_components")),
    )
    op.create_index(
        op.f("ix_hms_lock_components_database_name"),
        "hms_lock_components",
        ["database_name"],
        unique=False,
    )
    op.create_table(
        "hms_notifications",
        sa.Column("event_id", ID, autoincrement=True, nullable=False),
        sa.Column("event_time", sa.Integer(), nullable=False),
        sa.Column("event_type", sa.String(length=32), nullable=False),
        sa.Column("database_name", sa.String(length=128), nullable=True),
        sa.Column("table_name", sa.String(length=256), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("message_format", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name=op.f("pk_hms_notifications")),
        sqlite_autoincrement=True,
    )
    op.create_index(
        op.f("ix_hms_notifications_event_time"), "hms_notifications", ["event_time"], unique=False
    )

    op.create_table(
        "hms_functions",
        sa.Column("database_name", sa.String(length=128), nullable=False),
        sa.Column("function_name", sa.String(length=256), nullable=False),
        sa.Column("class_name", sa.String(length=4000), nullable=False),
        sa.Column("owner_name", sa.String(length=256), nullable=True),
        sa.Column("owner_type", sa.String(length=16), nullable=True),
        sa.Column("create_time", sa.Integer(), nullable=False),
        sa.Column("function_type", sa.Integer(), nullable=False),
        sa.Column(
            "resources",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=False,
        ),
        sa.PrimaryKeyConstraint("database_name", "function_name", name=op.f("pk_hms_functions")),
    )


def downgrade() -> None:
    op.drop_table("hms_functions")
    op.drop_index(op.f("ix_hms_notifications_event_time"), table_name="hms_notifications")
    op.drop_table("hms_notifications")
    op.drop_index(op.f("ix_hms_lock_components_database_name"), table_name="hms_lock_components")
    op.drop_table("hms_lock_components")
    op.drop_index(op.f("ix_hms_locks_last_heartbeat"), table_name="hms_locks")
    op.drop_table("hms_locks")
