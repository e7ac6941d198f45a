"""GET /tables and /tables/{name}: the registered tables."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from metastore.catalog.tables import describe_table, list_tables
from servers.http.errors import error_responses
from servers.http.formats import json_response
from servers.http.models import TableOut, TablesOut
from servers.http.routes.parameters import TableName
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["tables"])

    @routes.get(
        "/tables", summary="List tables", response_model=TablesOut, responses=error_responses()
    )
    def tables() -> Response:
        """Registered tables (as `statlas table list --json`)."""
        return json_response({"tables": [t.as_json() for t in list_tables(service.engine())]})

    @routes.get(
        "/tables/{name}",
        summary="Describe a table",
        response_model=TableOut,
        responses=error_responses(400, 404),
    )
    def table(name: TableName) -> Response:
        """One table: columns, keys, bucketing, properties (as `statlas table show`)."""
        return json_response(describe_table(service.engine(), name).as_json())

    return routes
