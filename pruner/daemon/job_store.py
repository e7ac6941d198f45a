"""Where the schedules' jobs are kept: APScheduler 3's SQLAlchemyJobStore on the metastore's
`apscheduler_jobs` table, except that a stored job names its kind ("refresh"), which this
module maps to the function that runs it, not the function's module path: moving code does
not orphan stored jobs (APScheduler deletes a job whose function no longer imports).
Migration 0012 rewrote the jobs stored by earlier releases (`pruner.scheduler:
refresh_table`) to their kind."""

from __future__ import annotations

import pickle
from typing import Any

from sqlalchemy import Engine

REFRESH = "refresh"
JOB_KINDS = {REFRESH: "pruner.daemon.scheduler:refresh_table"}
"""Each kind of stored job and the function (by reference) that runs it."""
_KIND_OF = {function: kind for kind, function in JOB_KINDS.items()}


class _AsStored:
    """A job as the store writes it: its state with the function's kind for its reference."""

    def __init__(self, job: Any) -> None:
        self.id = job.id
        self.next_run_time = job.next_run_time
        self._job = job

    def __getstate__(self) -> dict[str, Any]:
        state: dict[str, Any] = self._job.__getstate__()
        state["func"] = _KIND_OF.get(state["func"], state["func"])
        return state


def job_store(engine: Engine) -> Any:
    """The job store on `engine` (APScheduler is the daemon extra's: imported on use)."""
    from apscheduler.jobstores.sqlalchemy import (  # type: ignore[import-untyped]
        SQLAlchemyJobStore,
    )

    class KindJobStore(SQLAlchemyJobStore):  # type: ignore[misc]
        def add_job(self, job: Any) -> None:
            super().add_job(_AsStored(job))

        def update_job(self, job: Any) -> None:
            super().update_job(_AsStored(job))

        def _reconstitute_job(self, job_state: bytes) -> Any:
            state = pickle.loads(job_state)
            state["func"] = JOB_KINDS.get(state["func"], state["func"])
            return super()._reconstitute_job(pickle.dumps(state, self.pickle_protocol))

    return KindJobStore(engine=engine)
