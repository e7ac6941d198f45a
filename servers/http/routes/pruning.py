"""POST /prune: map-join partition pruning (pruner.prune) on the daemon's Spark. The
pruner, and the optimizer it plans with, are imported by the first /prune (as /estimate's
optimizer: servers.http.routes.planning)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from servers.http.errors import error_responses, sql_errors
from servers.http.formats import json_response
from servers.http.models import PruneOut, PruneRequest
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["queries"])

    @routes.post(
        "/prune",
        summary="Map-join partition pruning",
        response_model=PruneOut,
        responses=error_responses(400, 404),
    )
    def prune(request: PruneRequest) -> Response:
        """Map-join partition pruning of the query's big table (as `statlas prune --json`):
        a query no map join prunes answers `pruned: false`, with the partitions its own
        filters keep. Spark starts on first use, to collect key values or to run."""
        return json_response(run_prune(service, request))

    return routes


def run_prune(service: Service, request: PruneRequest) -> dict[str, Any]:
    """Prune under the lock: one pruning at a time uses the daemon's Spark session."""
    from pruner.prune import MAX_VALUES, prune

    with service.prune_lock, sql_errors():
        report = prune(
            service.engine(),
            request.sql,
            spark=service.spark,
            dialect=request.dialect,
            threshold=request.map_join_threshold,
            max_values=request.max_values or MAX_VALUES,
            run=request.run,
        )
    return report.as_json()
