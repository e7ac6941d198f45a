"""The statlas daemon's HTTP API (FastAPI): tables, partition lookups, statistics,
estimates, map-join pruning, collection runs, health and Prometheus metrics, and the web
console (servers.console) at `/`.

Every answer is the JSON the CLI prints with `--json` for the same request, so a client
can move between the two. Errors are `{"error": "<one line>"}` with the status of the
error (servers.http.errors.HTTP_STATUSES; 503 whenever the database cannot be reached).
Routes are plain `def` functions: FastAPI runs them in its thread pool, where the blocking
SQLAlchemy calls belong. The lookup path is kept lean: one engine per app, no Spark or
optimizer import; well-formed lookups are answered by an ASGI fast path (LookupFastPath)
before FastAPI's routing; they run in a few threads of their own, at most as many as the
engine's pool holds connections (more would only open and close connections beyond the
pool), on the metastore's fast path (metastore.catalog.lookup: a cached catalog entry, one
statement); and answers are serialised straight to bytes by orjson, not through pydantic.

>>> app = create_app("sqlite:///statlas.db", token="s3cret")     # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8080)                # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import AsyncIterator, Sequence

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from metastore import Metastore
from servers.authorization import Roles
from servers.console import routes as console
from servers.http.auth import BearerToken, document_bearer
from servers.http.errors import add_error_handlers
from servers.http.fast_path import LookupFastPath
from servers.http.lookup import LOOKUP_PATH
from servers.http.request_metrics import RequestMetrics
from servers.http.routes import (
    daemons,
    health,
    metrics,
    pages,
    partitions,
    planning,
    pruning,
    runs,
    statistics,
    tables,
)
from servers.http.spark import LazySpark
from servers.http.state import Service
from servers.version import statlas_version

# the service's own routes, in the order of the OpenAPI schema
ROUTES = (health, metrics, runs, daemons, tables, pages, partitions, statistics, planning, pruning)


def create_app(
    db_url: str,
    *,
    token: str | None = None,
    routers: Sequence[APIRouter] = (),
    spark_master: str | None = None,
    roles: Roles | None = None,
) -> FastAPI:
    """The API over the metastore at `db_url`. With `token`, every route but /health wants
    `Authorization: Bearer <token>`, and `roles` says what the token's holder may do.
    `routers` are included as they are (the daemon adds
    its /schedules and /scheduler). Spark starts only when a /prune needs it, on
    `spark_master`."""
    service = Service(Metastore(db_url), LazySpark(spark_master))

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # what is loaded by now lives as long as the server: out of the garbage collector's
        # way, so that its collections (a large lookup allocates thousands of objects) do
        # not walk the whole of FastAPI, SQLAlchemy and pydantic again and again
        gc.freeze()
        yield
        service.close()

    app = FastAPI(
        title="statlas",
        lifespan=lifespan,
        version=statlas_version(),
        summary="Partition lookups, statistics, estimates and map-join pruning over the "
        "statlas metastore.",
    )
    app.state.service = service
    own = [module.router(service) for module in ROUTES]
    for router in (*own, *routers, console.router()):
        app.include_router(router)
    handlers = add_error_handlers(app, service.metastore)
    lookup_routes = {
        method: route
        for router in own
        for route in router.routes
        if isinstance(route, APIRoute) and route.path == LOOKUP_PATH
        for method in (route.methods or set()) & {"GET", "POST"}
    }
    assert set(lookup_routes) == {"GET", "POST"}
    app.add_middleware(LookupFastPath, service=service, routes=lookup_routes, handlers=handlers)
    if token:
        app.add_middleware(BearerToken, token=token, roles=roles)
        document_bearer(app)
    app.add_middleware(RequestMetrics)
    return app
