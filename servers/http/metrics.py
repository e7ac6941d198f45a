"""The daemon's Prometheus metrics: HTTP requests, partition lookups, scheduled jobs, and
how stale each table's statistics are.

Every metric lives in one module-level registry (`REGISTRY`), not prometheus_client's
global one, so that importing statlas never registers anything in a host program and a
test can read exactly statlas's figures. The staleness gauge is not kept in memory: it is
computed from the metastore each time /metrics is scraped (`render`), so it is right even
when collections run in another process.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator

from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from sqlalchemy import Connection, Engine, func, select
from sqlalchemy import exc as sa_exc

from metastore.engine import run_read
from metastore.errors import StatlasError
from metastore.models import CatalogTable, CollectionRun
from servers.http.formats import utc

REGISTRY = CollectorRegistry(auto_describe=True)

# request latencies of a lookup API: from a fraction of a millisecond to a large scan
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
# lists of 1 to 1,000,000 values
VALUE_BUCKETS = (0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)
# scheduled jobs: a discovery takes seconds, a full collection can take an hour
JOB_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1_800, 3_600, 7_200)

REQUESTS = Counter(
    "statlas_requests",
    "HTTP requests answered, by route template, method and status code.",
    ["route", "method", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "statlas_request_seconds",
    "Time to answer an HTTP request, by route template.",
    ["route"],
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
LOOKUPS = Counter(
    "statlas_lookups", "Partition lookups answered, by table.", ["table"], registry=REGISTRY
)
LOOKUP_SECONDS = Histogram(
    "statlas_lookup_seconds",
    "Time of a partition lookup in the metastore (parsing and serialisation excluded).",
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
LOOKUP_VALUES = Histogram(
    "statlas_lookup_values",
    "Values in a lookup's lists (IN-list values plus tuple rows).",
    buckets=VALUE_BUCKETS,
    registry=REGISTRY,
)
JOB_RUNS = Counter(
    "statlas_job_runs",
    "Scheduled job runs, by job, table and status (succeeded or failed).",
    ["job", "table", "status"],
    registry=REGISTRY,
)
JOB_FAILURES = Counter(
    "statlas_job_failures",
    "Scheduled job runs that failed, by job and table.",
    ["job", "table"],
    registry=REGISTRY,
)
JOB_SECONDS = Histogram(
    "statlas_job_seconds",
    "Duration of a scheduled job run, by job.",
    ["job"],
    buckets=JOB_BUCKETS,
    registry=REGISTRY,
)


def record_request(route: str, method: str, status: int, seconds: float) -> None:
    """Count one HTTP request and its latency (`route` is the route's template, e.g.
    /tables/{name}/partitions, so that the label's values stay few)."""
    REQUESTS.labels(route, method, str(status)).inc()
    REQUEST_SECONDS.labels(route).observe(seconds)


def record_lookup(table: str, values: int, seconds: float) -> None:
    """Count one answered partition lookup of `table` with `values` list values."""
    LOOKUPS.labels(table).inc()
    LOOKUP_SECONDS.observe(seconds)
    LOOKUP_VALUES.observe(values)


def record_job_run(job: str, table: str, status: str, seconds: float) -> None:
    """Count one scheduled job run; `status` is "succeeded" or "failed"."""
    JOB_RUNS.labels(job, table, status).inc()
    if status == "failed":
        JOB_FAILURES.labels(job, table).inc()
    JOB_SECONDS.labels(job).observe(seconds)


def render(engine: Engine) -> tuple[bytes, str]:
    """The exposition text of every statlas metric and its content type. The staleness of
    each table is read from the metastore now; when the metastore cannot be read,
    `statlas_metastore_up` is 0 and the other metrics are still given."""
    scrape = CollectorRegistry(auto_describe=False)
    scrape.register(_MetastoreCollector(engine))
    return generate_latest(REGISTRY) + generate_latest(scrape), CONTENT_TYPE_PLAIN_0_0_4


class _MetastoreCollector(Collector):
    """Gauges read from the metastore at scrape time."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily(
            "statlas_metastore_up", "1 when the metastore answered this scrape, else 0."
        )
        staleness = GaugeMetricFamily(
            "statlas_table_staleness_seconds",
            "Seconds since the table's last successful statistics collection (since its "
            "registration if it was never collected).",
            labels=["table"],
        )
        try:
            ages = table_staleness(self.engine)
        except (StatlasError, sa_exc.DBAPIError):
            up.add_metric([], 0)
            return [up]
        up.add_metric([], 1)
        for table, seconds in ages:
            staleness.add_metric([table], seconds)
        return [up, staleness]


def table_staleness(engine: Engine, now: dt.datetime | None = None) -> list[tuple[str, float]]:
    """(table, seconds since its last successful collection or its registration)."""
    moment = now or dt.datetime.now(dt.UTC)
    return [(name, (moment - since).total_seconds()) for name, since in _fresh_as_of(engine)]


def _fresh_as_of(engine: Engine) -> Iterator[tuple[str, dt.datetime]]:
    tables, runs = CatalogTable.__table__.c, CollectionRun.__table__.c
    last_success = (
        select(runs.table_id, func.max(runs.finished_at).label("finished"))
        .where(runs.status == "succeeded")
        .group_by(runs.table_id)
        .subquery()
    )
    statement = (
        select(tables.name, tables.created_at, last_success.c.finished)
        .outerjoin(last_success, last_success.c.table_id == tables.id)
        .order_by(tables.name)
    )

    def read(conn: Connection) -> list[tuple[str, dt.datetime, dt.datetime | None]]:
        return [(r.name, r.created_at, r.finished) for r in conn.execute(statement)]

    for name, created, finished in run_read(engine, read):
        yield name, utc(finished if finished is not None else created)
