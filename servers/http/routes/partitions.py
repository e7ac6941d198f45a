"""GET and POST /tables/{name}/partitions: partition lookups. LookupFastPath answers most
requests of these two routes before FastAPI sees them; these answer the rest alike."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from metastore.catalog.lookup import PartitionQuery
from servers.http.errors import error_responses
from servers.http.lookup import LOOKUP_PATH, in_lists_of, run_lookup
from servers.http.models import PartitionsOut, Selection
from servers.http.routes.parameters import InParam, TableName, WhereParam
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["queries"])
    lookups: dict[str, Any] = {
        "response_model": PartitionsOut,
        "responses": error_responses(400, 404),
    }

    @routes.get(LOOKUP_PATH, summary="Look up partitions", **lookups)
    async def partitions(
        name: TableName, in_: InParam = None, where: WhereParam = None
    ) -> Response:
        """Partitions whose keys are in the lists and satisfy `where` (as `statlas
        partitions --json`)."""
        query = PartitionQuery(in_lists_of(in_ or []), (), where)
        return await run_lookup(service, name, query)

    @routes.post(LOOKUP_PATH, summary="Look up partitions (lists of any length)", **lookups)
    async def partitions_of(name: TableName, selection: Selection) -> Response:
        """Partitions matching per-key lists of any length, exact tuples and `where`."""
        return await run_lookup(service, name, selection.query())

    return routes
