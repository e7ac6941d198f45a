"""GET /tables and /tables/{name}: the registered tables."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from metastore.catalog.tables import describe_table, list_tables
from metastore.hive.summaries import summarised_tables
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
    def tables(
        summary: Annotated[
            bool, Query(description="add each table's summary (rows, bytes, staleness, runs)")
        ] = False,
    ) -> Response:
        """Registered tables (as `statlas table list --json`; `--summary` for `summary`)."""
        return json_response({"tables": tables_json(service, summary)})

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


def tables_json(service: Service, summary: bool) -> list[dict[str, Any]]:
    if not summary:
        return [t.as_json() for t in list_tables(service.engine())]
    return [{**t.as_json(), "summary": s.as_json()} for t, s in summarised_tables(service.engine())]
