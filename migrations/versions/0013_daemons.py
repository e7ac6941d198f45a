"""the daemons of a metastore (daemons): each `statlas daemon` reports where it serves, its
heartbeat and whether it leads, so that every daemon, the API and the console can list them
(metastore/daemons.py)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "daemons",
        sa.Column("node", sa.String(length=320), nullable=False),
        sa.Column("host", sa.String(length=256), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("http_url", sa.String(length=512), nullable=False),
        sa.Column("thrift_port", sa.Integer(), nullable=True),
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("leader_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("node", name=op.f("pk_daemons")),
    )
    op.create_index(op.f("ix_daemons_heartbeat_at"), "daemons", ["heartbeat_at"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_daemons_heartbeat_at"), table_name="daemons")
    op.drop_table("daemons")
