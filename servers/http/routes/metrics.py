"""GET /metrics: the Prometheus metrics (servers.http.metrics)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from servers.http import metrics
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["operations"])

    @routes.get(
        "/metrics",
        summary="Prometheus metrics",
        response_class=Response,
        responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text"}},
    )
    def prometheus_metrics() -> Response:
        """Prometheus metrics: requests, lookups, scheduled jobs, and each table's
        statistics staleness read from the metastore now."""
        body, content_type = metrics.render(service.metastore.engine)
        return Response(body, media_type=content_type)

    return routes
