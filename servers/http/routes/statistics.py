"""GET and POST /tables/{name}/statistics: statistics rolled up over partitions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from metastore.catalog.lookup import PartitionQuery
from metastore.hive.catalog import served_statistics_source
from metastore.statistics.summaries import table_statistics
from servers.http.errors import error_responses
from servers.http.formats import json_response
from servers.http.lookup import in_lists_of
from servers.http.models import MAX_BUCKETS, StatisticsOut, StatisticsRequest
from servers.http.routes.parameters import InParam, TableName, WhereParam
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["queries"])
    stats: dict[str, Any] = {
        "response_model": StatisticsOut,
        "responses": error_responses(400, 404),
    }

    @routes.get("/tables/{name}/statistics", summary="Statistics of partitions", **stats)
    def statistics(
        name: TableName,
        in_: InParam = None,
        where: WhereParam = None,
        column: Annotated[list[str] | None, Query(description="only these (repeatable)")] = None,
        buckets: Annotated[int, Query(ge=1, le=MAX_BUCKETS)] = 64,
    ) -> Response:
        """Statistics rolled up over the selected partitions (as `statlas stats --json`)."""
        query = PartitionQuery(in_lists_of(in_ or []), (), where)
        return summarise(service, name, query, column, buckets)

    @routes.post(
        "/tables/{name}/statistics", summary="Statistics of partitions (any selection)", **stats
    )
    def statistics_of(name: TableName, request: StatisticsRequest) -> Response:
        """Statistics of the partitions a selection picks, of some columns."""
        return summarise(service, name, request.query(), request.columns, request.buckets)

    return routes


def summarise(
    service: Service, name: str, query: PartitionQuery, columns: list[str] | None, buckets: int
) -> Response:

    summary = table_statistics(service.engine(), name, query, columns or None, buckets)
    served = served_statistics_source(service.engine(), name)
    return json_response({**summary.as_json(), "served_to_engines": served})
