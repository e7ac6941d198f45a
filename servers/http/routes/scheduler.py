"""GET /scheduler: this daemon's part in running the schedules (the daemon adds it)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from pruner.daemon.leader import LeaderElector
from pruner.daemon.scheduler import JobRuntime
from servers.http.formats import utc_text


def scheduler_router(node: str, elector: LeaderElector, runtime: JobRuntime) -> APIRouter:
    """GET /scheduler: this daemon's part: whether it leads, since when, what it runs."""
    router = APIRouter(tags=["schedules"])

    @router.get("/scheduler")
    def scheduler_status() -> JSONResponse:
        since = runtime.leader_since
        return JSONResponse(
            {
                "node": node,
                "leader": elector.leading,
                "leader_since": None if since is None else utc_text(since),
                "running": runtime.running(),
            }
        )

    return router
