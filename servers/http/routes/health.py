"""GET /health: whether the daemon and its database answer (no token needed)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from sqlalchemy import exc as sa_exc
from sqlalchemy import text

from metastore.engine import run_read
from metastore.errors import StatlasError
from servers.http.errors import one_line
from servers.http.formats import json_response
from servers.http.models import HealthOut
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["operations"])

    @routes.get(
        "/health",
        summary="Health of the daemon and its database",
        response_model=HealthOut,
        responses={503: {"model": HealthOut, "description": "the database is unavailable"}},
        openapi_extra={"security": []},
    )
    def health() -> Response:
        """Whether the daemon and its database answer (no token needed)."""
        try:
            run_read(service.metastore.engine, lambda conn: conn.execute(text("SELECT 1")).all())
        except (StatlasError, sa_exc.DBAPIError) as error:
            answer = {"status": "degraded", "database": "unavailable", "error": one_line(error)}
            return json_response(answer, 503)
        return json_response({"status": "ok", "database": "ok"})

    return routes
