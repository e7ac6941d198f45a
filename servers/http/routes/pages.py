"""GET /tables/{name}/partitions/page: a table's partitions a page at a time, ordered by
their key values (as `statlas partitions NAME --offset N --limit M --json`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.pages import DEFAULT_PAGE, MAX_OFFSET, MAX_PAGE, partition_page
from servers.http.errors import error_responses
from servers.http.formats import json_response
from servers.http.lookup import in_lists_of
from servers.http.models import PartitionPageOut
from servers.http.routes.parameters import InParam, TableName, WhereParam
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["tables"])

    @routes.get(
        "/tables/{name}/partitions/page",
        summary="A page of partitions",
        response_model=PartitionPageOut,
        responses=error_responses(400, 404),
    )
    def page(
        name: TableName,
        in_: InParam = None,
        where: WhereParam = None,
        offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="partitions skipped")] = 0,
        limit: Annotated[
            int, Query(ge=1, le=MAX_PAGE, description="partitions at most")
        ] = DEFAULT_PAGE,
    ) -> Response:
        """The selected partitions ordered by their key values, `limit` of them from the
        `offset`th on, each with its files, bytes, rows and staleness, and how many the
        selection picks."""
        query = PartitionQuery(in_lists_of(in_ or []), (), where)
        return json_response(partition_page(service.engine(), name, query, offset, limit).as_json())

    return routes
