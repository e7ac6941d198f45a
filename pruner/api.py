"""The statlas daemon's HTTP API (FastAPI): tables, partition lookups, statistics,
estimates, map-join pruning, collection runs, health and Prometheus metrics.

Every answer is the JSON the CLI prints with `--json` for the same request, so a client
can move between the two. Errors are `{"error": "<one line>"}` with the status of the
error (`StatlasError.http_status`; 503 whenever the database cannot be reached). Routes
are plain `def` functions: FastAPI runs them in its thread pool, where the blocking
SQLAlchemy calls belong. The lookup path is kept lean: one engine per app, no Spark or
optimizer import; well-formed lookups are answered by an ASGI fast path (LookupFastPath)
before FastAPI's routing; they run in a few threads of their own, at most as many as the
engine's pool holds connections (more would only open and close connections beyond the
pool), on the metastore's fast path (metastore.lookup: a cached catalog entry, one
statement); and answers are serialised straight to bytes by orjson, not through pydantic.

>>> app = create_app("sqlite:///statlas.db", token="s3cret")     # doctest: +SKIP
>>> uvicorn.run(app, host="127.0.0.1", port=8080)                # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import gc
import hmac
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from operator import itemgetter
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from sqlalchemy import Connection, Engine, select, text
from sqlalchemy import exc as sa_exc
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from metastore import Metastore
from metastore.catalog import describe_table, get_table, list_tables, normalise_table_name
from metastore.engine import run_read, translate
from metastore.errors import (
    InvalidValue,
    MetastoreUnavailable,
    SchemaNotInitialised,
    StatlasError,
)
from metastore.lookup import PartitionList, PartitionQuery, TupleList, lookup_partitions
from metastore.models import CatalogTable, CollectionRun
from metastore.types import json_value
from optimizer.cost.params import CostParams
from pruner import metrics

OPEN_PATHS = frozenset({"/health"})  # answered without the bearer token
MAX_BUCKETS = 10_000  # histogram buckets one request may ask for
MAX_RUNS = 1_000  # collection runs one request may list
LOOKUP_THREADS = 8  # most lookups one server process runs at once (fewer with a smaller pool)
LOOKUP_PATH = "/tables/{name}/partitions"

# --- request bodies -------------------------------------------------------------------

# PostgreSQL cannot store a NUL character in text: refused here, in the schema, with a 422
# rather than left to fail in the driver (the pattern costs about 60 ms per 1,000,000 values)
Text = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$")]
Scalar = Text | int | float | bool | None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TupleRows(_Strict):
    """`(keys...) IN rows`: exactly these combinations of key values."""

    keys: list[str] = Field(min_length=1, examples=[["dt", "region"]])
    rows: list[list[Scalar]] = Field(
        description="one value per key, in the order of `keys`; null is the default partition",
        examples=[[["2024-03-05", "emea"]]],
    )


class Selection(_Strict):
    """Which partitions: per-key IN lists, exact tuples and a condition, all conjoined
    (every partition when all are absent)."""

    in_: dict[str, list[Scalar]] = Field(
        default_factory=dict,
        alias="in",
        description="the values of each key (1 to 1,000,000 of them); "
        "null or __HIVE_DEFAULT_PARTITION__ is the default partition",
        examples=[{"dt": ["2024-03-05", "2024-03-06"], "region": ["emea"]}],
    )
    tuples: list[TupleRows] = Field(default_factory=list)
    where: Text | None = Field(
        default=None,
        description="an SQL condition on keys, as in Spark SQL",
        examples=["dt >= '2024-03-01' AND region <> 'emea'"],
    )

    def query(self) -> PartitionQuery:
        return PartitionQuery(
            tuple(self.in_.items()),
            tuple(TupleList(tuple(t.keys), t.rows) for t in self.tuples),
            self.where,
        )


class StatisticsRequest(Selection):
    columns: list[str] | None = Field(default=None, description="only these columns (all)")
    buckets: int = Field(default=64, ge=1, le=MAX_BUCKETS, description="histogram buckets")


Dialect = Literal["spark", "hive"]


class EstimateRequest(_Strict):
    sql: Text = Field(examples=["SELECT * FROM sales WHERE dt = '2024-03-05'"])
    dialect: Dialect = "spark"
    level: Literal["basic", "histogram", "sketch"] = "sketch"


class ExplainRequest(_Strict):
    sql: Text = Field(
        examples=[
            "SELECT s.name, count(*) FROM sales f JOIN stores s ON f.store = s.id GROUP BY s.name"
        ]
    )
    dialect: Dialect = "spark"
    config: dict[str, str] = Field(
        default_factory=dict,
        description="cost variables and thresholds, as `statlas explain --config KEY=VALUE`",
    )
    emit: Literal["spark"] | None = Field(
        default=None, description="also return the query as Spark SQL with join hints"
    )


class PruneRequest(_Strict):
    sql: Text
    dialect: Dialect = "spark"
    run: bool = Field(default=False, description="also run the pruned query (adds rows)")
    max_values: int | None = Field(
        default=None,
        ge=1,
        description="distinct values per key before a [min, max] range "
        "is used instead (default 10,000)",
    )
    map_join_threshold: int | None = Field(
        default=None,
        ge=0,
        description="largest small side of a map join, bytes: `statlas explain`'s "
        f"map_join_threshold (default {CostParams.map_join_threshold:,.0f})",
    )


# --- answers (documentation: the routes return the CLI's JSON as bytes) ----------------

JsonScalar = str | int | float | bool | None


class ErrorOut(BaseModel):
    error: str


class HealthOut(BaseModel):
    status: Literal["ok", "degraded"]
    database: Literal["ok", "unavailable"]
    error: str | None = None


class ColumnOut(BaseModel):
    name: str
    type: str
    nullable: bool


class KeyOut(BaseModel):
    name: str
    type: str


class BucketingOut(BaseModel):
    num_buckets: int
    columns: list[str]
    sort_columns: list[list[str]]


class TableOut(BaseModel):
    name: str
    location: str
    format: str
    columns: list[ColumnOut]
    partition_keys: list[KeyOut]
    bucketing: BucketingOut | None
    properties: dict[str, Any]
    partitions: int


class TablesOut(BaseModel):
    tables: list[TableOut]


class PartitionOut(BaseModel):
    values: dict[str, JsonScalar]
    location: str


class PartitionsOut(BaseModel):
    table: str
    count: int
    partitions: list[PartitionOut]


class HistogramOut(BaseModel):
    bounds: list[JsonScalar]
    counts: list[float]


class ColumnStatisticsOut(BaseModel):
    type: str
    null_count: int
    min: JsonScalar
    max: JsonScalar
    ndv: int | None
    ndv_source: str | None
    avg_len: float | None
    max_len: int | None
    mcv: list[list[JsonScalar]] = Field(description="[value, count] pairs")
    equi_depth: HistogramOut | None
    equi_width: HistogramOut | None
    uniform: HistogramOut | None


class StatisticsOut(BaseModel):
    table: str
    partitions: int
    row_count: int
    columns: dict[str, ColumnStatisticsOut]


class PlanNodeOut(BaseModel):
    op: str
    rows: float
    source: str
    precision: str
    row_size: float
    detail: str
    columns: dict[str, dict[str, Any]]
    children: list[PlanNodeOut]


class EstimateOut(BaseModel):
    rows: float
    level: str
    plan: PlanNodeOut


class BeforeAfterOut(BaseModel):
    before: int
    after: int


class ExplainOut(BaseModel):
    jobs: BeforeAfterOut
    shuffles: BeforeAfterOut
    scans: BeforeAfterOut
    cost: dict[str, float]
    level: str
    plan: dict[str, Any]
    spark_sql: str | None = None


class RejectedOut(BaseModel):
    join: str
    reason: str


class PruneOut(BaseModel):
    pruned: bool = Field(description="false: no map join prunes; the query's own filters keep")
    table: str | None = Field(description="the pruned table, else the largest partitioned one")
    table_reason: str
    keys: list[str]
    partitions_before: int
    partitions_after: int
    partitions: list[PartitionOut]
    values_collected: dict[str, int]
    fallback: str | None
    predicates: list[str]
    candidates: list[dict[str, Any]]
    rejected: list[RejectedOut]
    seconds: float
    rows: int | None = Field(default=None, description="with run only")


class RunOut(BaseModel):
    id: int
    table: str
    started: str
    finished: str | None
    status: str
    partitions_scanned: int
    partitions_skipped: int
    partitions_removed: int
    rows: int
    error: str | None


class RunsOut(BaseModel):
    runs: list[RunOut]


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error answers a route can give."""
    why = {
        400: "invalid input (bad value, malformed condition or SQL, empty list)",
        401: "missing or wrong bearer token",
        404: "unknown table, key or column",
        422: "the request does not match its schema",
        503: "the metastore cannot be reached",
    }
    return {s: {"model": ErrorOut, "description": why[s]} for s in (*statuses, 401, 422, 503)}


# --- the app --------------------------------------------------------------------------


class LazySpark:
    """The daemon's one SparkSession, started on first use (the first /prune that gets as
    far as collecting values), never at import or startup. Attribute access is passed on
    to the session, so it can stand wherever pruner.prune wants a session."""

    def __init__(self, master: str | None) -> None:
        self._master = master
        self._session: Any = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self._session is not None

    def session(self) -> Any:
        with self._lock:
            if self._session is None:
                from collectors.spark_session import spark_session

                self._session = spark_session(self._master)
            return self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session(), name)


@dataclass
class Service:
    """What the routes share: the metastore (one engine), Spark, and the lock that runs one
    pruning at a time (its temporary views and settings belong to the one session)."""

    metastore: Metastore
    spark: LazySpark
    prune_lock: threading.Lock = field(default_factory=threading.Lock)
    _lookup_threads: ThreadPoolExecutor | None = None
    _threads_lock: threading.Lock = field(default_factory=threading.Lock)

    async def run_lookup(self, name: str, query: PartitionQuery) -> Response:
        """`lookup` in one of the lookup threads: as many as the engine's pool keeps open
        (its pool_size, at most LOOKUP_THREADS), so that lookups never open a connection
        beyond the pool only to close it again after one statement, as FastAPI's thread
        pool of 40 would."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.lookup_threads(), lookup, self, name, query)

    def lookup_threads(self) -> ThreadPoolExecutor:
        with self._threads_lock:
            if self._lookup_threads is None:
                size = getattr(self.metastore.engine.pool, "size", lambda: LOOKUP_THREADS)()
                self._lookup_threads = ThreadPoolExecutor(
                    max(1, min(size, LOOKUP_THREADS)), thread_name_prefix="statlas-lookup"
                )
            return self._lookup_threads

    def close(self) -> None:
        """Stop the lookup threads and close the pool's connections (the server stops)."""
        with self._threads_lock:
            threads, self._lookup_threads = self._lookup_threads, None
        if threads is not None:
            threads.shutdown(wait=True)
        self.metastore.dispose()

    def engine(self) -> Engine:
        """The engine, once the schema is known to be at head (checked on first use, so a
        daemon may start before its database)."""
        return self.metastore.ready()


def create_app(
    db_url: str,
    *,
    token: str | None = None,
    routers: Sequence[APIRouter] = (),
    spark_master: str | None = None,
) -> FastAPI:
    """The API over the metastore at `db_url`. With `token`, every route but /health wants
    `Authorization: Bearer <token>`. `routers` are included as they are (the daemon adds
    its /schedules). Spark starts only when a /prune needs it, on `spark_master`."""
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
        version=_version(),
        summary="Partition lookups, statistics, estimates and map-join pruning over the "
        "statlas metastore.",
    )
    app.state.service = service
    own = (_ops_routes(service), _table_routes(service), _query_routes(service))
    for router in (*own, *routers):
        app.include_router(router)
    handlers = _add_error_handlers(app, service)
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
        app.add_middleware(BearerToken, token=token)
        _document_bearer(app)
    app.add_middleware(RequestMetrics)
    return app


def _version() -> str:
    try:
        return metadata.version("statlas")
    except metadata.PackageNotFoundError:
        return "0.0.0"


# --- routes ---------------------------------------------------------------------------


def json_response(value: Any, status_code: int = 200) -> Response:
    """`value` as compact UTF-8 JSON bytes, without pydantic's validation of large answers."""
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(body, status_code=status_code, media_type="application/json")


TableName = Annotated[str, Path(description="table name, `name` or `db.name`")]
InParam = Annotated[
    list[Text] | None,
    Query(
        alias="in",
        description="KEY=V1,V2,...: the values of one key (repeatable; a conjunction)",
    ),
]
WhereParam = Annotated[Text | None, Query(description="SQL condition on keys")]


def _ops_routes(service: Service) -> APIRouter:
    router = APIRouter(tags=["operations"])

    @router.get(
        "/health",
        summary="Health of the daemon and its database",
        response_model=HealthOut,
        responses={503: {"model": HealthOut, "description": "the database is unavailable"}},
        openapi_extra={"security": []},
    )
    def health() -> Response:
        """Whether the daemon and its database answer (no token needed)."""
        try:
            run_read(service.metastore.engine, lambda conn: conn.execute(text("SELECT 1")).all())
        except (StatlasError, sa_exc.DBAPIError) as error:
            answer = {"status": "degraded", "database": "unavailable", "error": _one_line(error)}
            return json_response(answer, 503)
        return json_response({"status": "ok", "database": "ok"})

    @router.get(
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

    @router.get(
        "/runs", summary="Collection runs", response_model=RunsOut, responses=_errors(400, 404)
    )
    def runs(
        table: Annotated[str | None, Query(description="only this table's runs")] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_RUNS)] = 50,
    ) -> Response:
        """Statistics collection runs, newest first."""
        return json_response({"runs": collection_runs(service.engine(), table, limit)})

    return router


def _table_routes(service: Service) -> APIRouter:
    router = APIRouter(tags=["tables"])

    @router.get("/tables", summary="List tables", response_model=TablesOut, responses=_errors())
    def tables() -> Response:
        """Registered tables (as `statlas table list --json`)."""
        return json_response({"tables": [t.as_json() for t in list_tables(service.engine())]})

    @router.get(
        "/tables/{name}",
        summary="Describe a table",
        response_model=TableOut,
        responses=_errors(400, 404),
    )
    def table(name: TableName) -> Response:
        """One table: columns, keys, bucketing, properties (as `statlas table show`)."""
        return json_response(describe_table(service.engine(), name).as_json())

    return router


def _query_routes(service: Service) -> APIRouter:
    router = APIRouter(tags=["queries"])
    lookups: dict[str, Any] = {"response_model": PartitionsOut, "responses": _errors(400, 404)}
    stats: dict[str, Any] = {"response_model": StatisticsOut, "responses": _errors(400, 404)}

    # LookupFastPath answers most requests of these two routes before FastAPI sees them
    @router.get(LOOKUP_PATH, summary="Look up partitions", **lookups)
    async def partitions(
        name: TableName, in_: InParam = None, where: WhereParam = None
    ) -> Response:
        """Partitions whose keys are in the lists and satisfy `where` (as `statlas
        partitions --json`)."""
        return await service.run_lookup(name, PartitionQuery(in_lists_of(in_ or []), (), where))

    @router.post(LOOKUP_PATH, summary="Look up partitions (lists of any length)", **lookups)
    async def partitions_of(name: TableName, selection: Selection) -> Response:
        """Partitions matching per-key lists of any length, exact tuples and `where`."""
        return await service.run_lookup(name, selection.query())

    @router.get("/tables/{name}/statistics", summary="Statistics of partitions", **stats)
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

    @router.post(
        "/tables/{name}/statistics", summary="Statistics of partitions (any selection)", **stats
    )
    def statistics_of(name: TableName, request: StatisticsRequest) -> Response:
        """Statistics of the partitions a selection picks, of some columns."""
        return summarise(service, name, request.query(), request.columns, request.buckets)

    @router.post(
        "/estimate",
        summary="Estimate a query",
        response_model=EstimateOut,
        responses=_errors(400, 404),
    )
    def estimate(request: EstimateRequest) -> Response:
        """Every plan node's rows, row size and column statistics (as `statlas estimate
        --json`)."""
        from optimizer.estimate.api import estimate as estimate_plan

        with _sql_errors():
            answer = estimate_plan(service.engine(), request.sql, request.level, request.dialect)
        return json_response(answer)

    @router.post(
        "/explain",
        summary="The cost-based physical plan of a query",
        response_model=ExplainOut,
        responses=_errors(400, 404),
    )
    def explain(request: ExplainRequest) -> Response:
        """Join order, join algorithms, shuffles, jobs and costs (as `statlas explain
        --json`); with `emit: "spark"`, also the query as Spark SQL with join hints."""
        from optimizer.physical.api import emit, explain_json, plan_query

        with _sql_errors():
            plan = plan_query(service.engine(), request.sql, request.dialect, request.config)
            answer = explain_json(plan)
            if request.emit == "spark":
                answer["spark_sql"] = emit(plan)
        return json_response(answer)

    @router.post(
        "/prune",
        summary="Map-join partition pruning",
        response_model=PruneOut,
        responses=_errors(400, 404),
    )
    def prune(request: PruneRequest) -> Response:
        """Map-join partition pruning of the query's big table (as `statlas prune --json`):
        a query no map join prunes answers `pruned: false`, with the partitions its own
        filters keep. Spark starts on first use, to collect key values or to run."""
        return json_response(run_prune(service, request))

    return router


def in_lists_of(items: Sequence[str]) -> tuple[tuple[str, list[str]], ...]:
    """`KEY=V1,V2` query parameters as (key, values) pairs, as the CLI reads `--in`."""
    lists = []
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key.strip():
            raise InvalidValue(f"in wants KEY=V1,V2,..., got {item!r}")
        lists.append((key.strip(), values.split(",") if values else []))
    return tuple(lists)


def lookup(service: Service, name: str, query: PartitionQuery) -> Response:
    """Run one lookup, count it in the metrics, and answer its JSON."""
    started = time.perf_counter()
    found = lookup_partitions(service.engine(), name, query)
    values = sum(len(v) for _, v in query.in_lists) + sum(len(t.rows) for t in query.tuples)
    metrics.record_lookup(found.table, values, time.perf_counter() - started)
    return Response(partitions_json(found), media_type="application/json")


_by_name = itemgetter(0)
# the Python types of key values that orjson writes exactly as json_value and json.dumps
# would (dates as YYYY-MM-DD); any other (datetime, Decimal) goes through json_value
_NATIVE_JSON = frozenset({str, int, bool, dt.date, type(None)})


def partitions_json(found: PartitionList) -> bytes:
    """`found.as_json()` as compact UTF-8 JSON bytes (the same bytes json.dumps with
    ensure_ascii=False writes), built column by column and written by orjson: a key's
    values are decoded and converted (json_value, as in as_json) only when orjson cannot
    write them as they are, each distinct value once."""
    ordered = sorted(found.rows, key=_by_name)
    keys = found.keys
    partitions: list[dict[str, Any]] = []
    if ordered:
        columns = list(zip(*ordered, strict=True))
        decoders = found.decoders or (None,) * len(keys)
        values = [_json_column(c, d) for c, d in zip(columns[1:-1], decoders, strict=True)]
        locations = columns[-1]
        if len(keys) == 1:
            (k0,) = keys
            partitions = [
                {"values": {k0: a}, "location": loc}
                for a, loc in zip(values[0], locations, strict=True)
            ]
        elif len(keys) == 2:
            k0, k1 = keys
            partitions = [
                {"values": {k0: a, k1: b}, "location": loc}
                for a, b, loc in zip(values[0], values[1], locations, strict=True)
            ]
        else:
            partitions = [
                {"values": dict(zip(keys, row[:-1], strict=True)), "location": row[-1]}
                for row in zip(*values, locations, strict=True)
            ]
    answer = {"table": found.table, "count": len(partitions), "partitions": partitions}
    return orjson.dumps(answer, default=json_value)


def _json_column(column: Sequence[Any], decoder: Callable[[Any], Any] | None) -> Sequence[Any]:
    """One key's raw values as values orjson writes as json_value's."""
    if decoder is None and set(map(type, column)) <= _NATIVE_JSON:
        return column

    def convert(raw: Any) -> Any:
        value = raw if decoder is None or raw is None else decoder(raw)
        return json_value(value)

    known = {raw: convert(raw) for raw in set(column)}
    return [known[raw] for raw in column]


def summarise(
    service: Service, name: str, query: PartitionQuery, columns: list[str] | None, buckets: int
) -> Response:
    from metastore.hive_catalog import served_statistics_source
    from metastore.statistics import table_statistics

    summary = table_statistics(service.engine(), name, query, columns or None, buckets)
    served = served_statistics_source(service.engine(), name)
    return json_response({**summary.as_json(), "served_to_engines": served})


def run_prune(service: Service, request: PruneRequest) -> dict[str, Any]:
    """Prune under the lock: one pruning at a time uses the daemon's Spark session."""
    from pruner.prune import MAX_VALUES, prune

    with service.prune_lock, _sql_errors():
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


@contextlib.contextmanager
def _sql_errors() -> Iterator[None]:
    """Turn sqlglot's own errors (a tokenizer error escapes the planner's parse check) into
    the one-line 400 the CLI would print."""
    from sqlglot.errors import SqlglotError

    try:
        yield
    except SqlglotError as error:
        raise InvalidValue(f"malformed SQL: {_one_line(error)}") from None


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
        "started": _iso(row.started_at),
        "finished": None if row.finished_at is None else _iso(row.finished_at),
        "status": row.status,
        "partitions_scanned": row.partitions_scanned,
        "partitions_skipped": row.partitions_skipped,
        "partitions_removed": row.partitions_removed,
        "rows": row.rows,
        "error": row.error,
    }


def _iso(moment: dt.datetime) -> str:
    """ISO 8601 in UTC (SQLite hands back naive datetimes, written in UTC)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).isoformat()


# --- errors ---------------------------------------------------------------------------


def _one_line(error: object) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


ErrorHandler = Callable[[Request, Exception], Awaitable[Response]]


def _add_error_handlers(app: FastAPI, service: Service) -> dict[type[Exception], ErrorHandler]:
    """Every failure becomes {"error": "<one line>"} with its status; database trouble is a
    503, never a 500. Returns the handlers of the errors a route can raise (all but the
    catch-all, which is the server error middleware's)."""

    async def statlas_error(_: Request, error: Exception) -> Response:
        assert isinstance(error, StatlasError)
        unavailable = isinstance(error, MetastoreUnavailable | SchemaNotInitialised)
        return error_response(503 if unavailable else error.http_status, _one_line(error))

    async def database_error(_: Request, error: Exception) -> Response:
        assert isinstance(error, sa_exc.StatementError)
        return database_error_response(service.metastore.engine, error)

    async def invalid_request(_: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        return error_response(422, validation_message(error))

    async def http_error(_: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        return error_response(error.status_code, str(error.detail), error.headers)

    async def unexpected(_: Request, error: Exception) -> Response:
        return error_response(500, f"internal error: {type(error).__name__}: {_one_line(error)}")

    handlers: dict[type[Exception], ErrorHandler] = {
        StatlasError: statlas_error,
        sa_exc.StatementError: database_error,
        RequestValidationError: invalid_request,
        HTTPException: http_error,
    }
    for error_type, handler in handlers.items():
        app.add_exception_handler(error_type, handler)
    app.add_exception_handler(Exception, unexpected)  # a bug: still one JSON line
    return handlers


def database_error_response(engine: Engine, error: sa_exc.StatementError) -> Response:
    """A database error outside the metastore's own translation: a value the database
    refuses (out of range, a NUL character) is the client's 400; anything else means the
    database is not answering as it should: 503."""
    if isinstance(error, sa_exc.DataError) or not isinstance(error, sa_exc.DBAPIError):
        return error_response(400, f"invalid value: {_one_line(error.orig)}")
    translated = translate(engine, error)
    message = _one_line(translated if translated is not error else error.orig)
    return error_response(503, message)


def validation_message(error: RequestValidationError) -> str:
    """The first problem of an invalid request on one line, e.g. `body.buckets: Input
    should be greater than or equal to 1`."""
    problems = error.errors()
    if not problems:
        return "invalid request"
    first = problems[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return " ".join(f"{where}: {first.get('msg', 'invalid')}{more}".split())


# --- middleware -----------------------------------------------------------------------


class BearerToken:
    """Refuses every request but /health without `Authorization: Bearer <token>` (401).
    Plain ASGI: no per-request objects beyond the header lookup."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in OPEN_PATHS:
            if not self._authorised(scope):
                response = error_response(
                    401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    credentials.strip(), self.token
                )
        return False


class LookupFastPath:
    """Answers the partition lookups (GET and POST /tables/{name}/partitions) straight from
    ASGI: the request is read and validated as FastAPI would (the same pydantic model, the
    same query-string parsing), the lookup runs in a lookup thread, and errors go to the
    app's own handlers, without FastAPI's routing, dependency and thread-pool layers, which
    cost more than a small lookup. Any request it would not answer exactly as the route
    does (not JSON, a body or parameters the schema refuses, another path or method) is
    passed on to FastAPI unchanged, its body replayed."""

    _PATH = re.compile(r"/tables/([^/]+)/partitions")

    def __init__(
        self,
        app: ASGIApp,
        service: Service,
        routes: Mapping[str, APIRoute],
        handlers: Mapping[type[Exception], ErrorHandler],
    ) -> None:
        self.app = app
        self.service = service
        self.routes = routes
        self.handlers = handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope.get("method", "")
        match = None
        if scope["type"] == "http" and method in self.routes and not scope.get("root_path"):
            match = self._PATH.fullmatch(scope["path"])
        if match is None:
            await self.app(scope, receive, send)
            return
        if method == "POST":
            body, complete = await _read_body(receive)
            if not complete:
                return  # the client went away
            query = _posted_query(scope, body)
            if query is None:
                await self.app(scope, _replay(body, receive), send)
                return
        else:
            query = _query_of_parameters(scope)
            if query is None:
                await self.app(scope, receive, send)
                return
        scope["route"] = self.routes[method]  # the route template, for RequestMetrics
        scope["path_params"] = {"name": match.group(1)}
        try:
            response = await self.service.run_lookup(match.group(1), query)
        except Exception as error:
            handler = next(
                (self.handlers[c] for c in type(error).__mro__ if c in self.handlers), None
            )
            if handler is None:
                raise  # the server error middleware's 500
            response = await handler(Request(scope, receive), error)
        await response(scope, receive, send)


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request's body, and False if the client disconnected before sending it all."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", False
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` again, then whatever the client sends next."""
    pending = True

    async def replay() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _posted_query(scope: Scope, body: bytes) -> PartitionQuery | None:
    """The query of a POSTed selection, when its body is JSON the schema accepts."""
    content_type = next((v for k, v in scope["headers"] if k == b"content-type"), None)
    if content_type is None or content_type.lower() != b"application/json" or not body:
        return None
    try:
        document = json.loads(body)
        return plain_in_lists(document) or Selection.model_validate(document).query()
    except (ValueError, ValidationError):  # json.JSONDecodeError is a ValueError
        return None


def plain_in_lists(document: Any) -> PartitionQuery | None:
    """The query of the commonest selection, {"in": {key: [text, ...], ...}} with no NUL
    character in any text, without pydantic (which would give the same query, each value
    as it is); None for anything else."""
    if type(document) is not dict or document.keys() != {"in"}:
        return None
    lists = document["in"]
    if type(lists) is not dict:
        return None
    for values in lists.values():
        if type(values) is not list or set(map(type, values)) - {str}:
            return None
        if "\x00" in "".join(values):
            return None
    return PartitionQuery(tuple(lists.items()), (), None)


def _query_of_parameters(scope: Scope) -> PartitionQuery | None:
    """The query of a GET's parameters (read as Starlette reads them for FastAPI), when they
    hold no NUL character (the schema refuses those) and every `in` is KEY=V1,V2,..."""
    parameters = QueryParams(scope["query_string"])
    lists = parameters.getlist("in")
    where = parameters.get("where")
    if any("\x00" in item for item in lists) or (where is not None and "\x00" in where):
        return None
    try:
        return PartitionQuery(in_lists_of(lists), (), where)
    except InvalidValue:
        return None  # the route refuses it


class RequestMetrics:
    """Counts every HTTP request by route template, method and status, with its latency."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client gets if the app fails before answering

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            metrics.record_request(route, scope["method"], status, time.perf_counter() - started)


def _document_bearer(app: FastAPI) -> None:
    """Declare the bearer token in the OpenAPI schema, so /docs can send it."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        components = schema.setdefault("components", {})
        components.setdefault("securitySchemes", {})["bearer"] = {
            "type": "http",
            "scheme": "bearer",
        }
        schema["security"] = [{"bearer": []}]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
