"""scheduler jobs by kind: each stored job names its kind ("refresh") where it named its
function's module path (`pruner.scheduler:refresh_table`), so that moving code does not
orphan stored schedules (pruner/daemon/job_store.py maps kinds to functions)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# what releases up to 0011 stored, and the kind that replaces it (literal: migrations do not
# follow the code)
EARLIER = "pruner.scheduler:refresh_table"
KIND = "refresh"

jobs = sa.table(
    "apscheduler_jobs",
    sa.column("id", sa.Unicode(191)),
    sa.column("job_state", sa.LargeBinary()),
)


def _rename(old: str, new: str) -> None:
    """Rewrite every stored job whose function is `old` to `new`, in the migration's
    transaction (reading a job's state imports APScheduler's trigger classes)."""
    bind = op.get_bind()
    for job_id, blob in bind.execute(sa.select(jobs.c.id, jobs.c.job_state)).all():
        state = pickle.loads(blob)
        if state.get("func") != old:
            continue
        state["func"] = new
        bind.execute(
            jobs.update()
            .where(jobs.c.id == job_id)
            .values(job_state=pickle.dumps(state, pickle.HIGHEST_PROTOCOL))
        )


def upgrade() -> None:
    _rename(EARLIER, KIND)


def downgrade() -> None:
    _rename(KIND, EARLIER)
