"""GET /runs: statistics collection runs, newest first."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response
from sqlalchemy import Connection, Engine, select

from metastore.catalog.tables import get_table, normalise_table_name
from metastore.engine import run_read
from metastore.models import CatalogTable, CollectionRun
from servers.http.errors import error_responses
from servers.http.formats import json_response, utc_text
from servers.http.models import RunsOut
from servers.http.state import Service

MAX_RUNS = 1_000  # collection runs one request may list


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["operations"])

    @routes.get(
        "/runs",
        summary="Collection runs",
        response_model=RunsOut,
        responses=error_responses(400, 404),
    )
    def runs(
        table: Annotated[str | None, Query(description="only this table's runs")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_RUNS)] = 50,
    ) -> Response:
        """Statistics collection runs, newest first."""
        return json_response({"runs": collection_runs(service.engine(), table, limit)})

    return routes


def collection_runs(engine: Engine, table: str | None, limit: int) -> list[dict[str, Any]]:
    """The latest `limit` collection runs (of `table`), newest first."""
    runs, tables = CollectionRun.__table__.c, CatalogTable.__table__.c
    statement = (
        select(*runs, tables.name.label("table_name"))
        .join(CatalogTable.__table__, tables.id == runs.table_id)
        .order_by(runs.started_at.desc(), runs.id.desc())
        .limit(limit)
    )

    def read(conn: Connection) -> list[dict[str, Any]]:
        chosen = statement
        if table is not None:
            chosen = statement.where(runs.table_id == get_table(conn, table).id)
        return [_run_json(row) for row in conn.execute(chosen)]

    if table is not None:
        normalise_table_name(table)  # a malformed name is a 400 before any query
    return run_read(engine, read)


def _run_json(row: Any) -> dict[str, Any]:
    return {
        "id": row.id,
        "table": row.table_name,
        "started": utc_text(row.started_at),
        "finished": None if row.finished_at is None else utc_text(row.finished_at),
        "status": row.status,
        "partitions_scanned": row.partitions_scanned,
        "partitions_skipped": row.partitions_skipped,
        "partitions_removed": row.partitions_removed,
        "rows": row.rows,
        "error": row.error,
    }
