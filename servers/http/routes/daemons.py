"""GET /daemons: the daemons serving this metastore, which leads, and which fell silent."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from metastore import daemons
from metastore.engine import run_read
from servers.http.formats import json_response
from servers.http.models import DaemonsOut
from servers.http.state import Service


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["operations"])

    @routes.get("/daemons", summary="The daemons of this metastore", response_model=DaemonsOut)
    def list_daemons() -> Response:
        """Every `statlas daemon` heard from in the last day: where it serves, its latest
        heartbeat, whether it is serving, silent or stopped, and which one leads."""
        seen = run_read(service.engine(), daemons.daemons)
        return json_response(daemons.listing_json(seen))

    return routes
