"""sketch columns stored uncompressed on PostgreSQL (STORAGE EXTERNAL)

Sketches are dense, nearly random bytes: TOAST's pglz compression costs time on every write
and saves nothing (docs/benchmarks/2026-11-26-design-measurements.md#sketch-storage).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SKETCHES = ("hll", "kll", "theta", "top_k")


def _set_storage(storage: str) -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for column in SKETCHES:
        op.execute(f"ALTER TABLE column_stats ALTER COLUMN {column} SET STORAGE {storage}")


def upgrade() -> None:
    _set_storage("EXTERNAL")


def downgrade() -> None:
    _set_storage("EXTENDED")
