"""Latency of statlas's estimates and plans (issue 22) beside Spark's own planning time.

    python benchmarks/latency.py [--sets tpch,star,synthetic] [--dbs sqlite,postgres]
                                 [--queries q1,q3,s2] [--requests 20] [--repeat 1]
                                 [--spark-repeat 5] [--no-spark] [--no-cli]
                                 [--synthetic-days 1000] [--synthetic-regions 100]
                                 [--scale 1] [--master local[2]] [--driver-memory 4g]
                                 [--pg-url postgresql+psycopg2://postgres@127.0.0.1:5432/test]
                                 [--rebuild] [--out benchmarks/.data/latency.json]

Sets (run `make data` first for the TPC-H ones):

  tpch       TPC-H's 22 queries (benchmarks/tpch_queries.py) on SF --scale uniform: lineitem
             by ship date (2,526 partitions), orders by order date, the rest unpartitioned
  star       the star-join set (benchmarks/star_queries.py) on the zipf-1 variant, whose
             tables are registered the same way
  synthetic  one table of --synthetic-days x --synthetic-regions partitions (day date x
             region string; 1,000 x 100 = 100,000 by default), 4 rows each, a column of
             every kind (int, bigint, double, decimal, string, date); estimates of
             `SELECT COUNT(*)` over the whole table and over one month of days

Metastores (cached: built once, then brought up to date incrementally; --rebuild drops them
and builds them again): per data set (tpch-sf1-uniform, tpch-sf1-zipf-1,
synthetic-<days>x<regions>), a SQLite file benchmarks/.data/latency-<data set>.db and a
PostgreSQL schema latency_<data set> (tpch_sf1_uniform...) of the --pg-url database, each
brought to the current revision by `statlas db upgrade`, the tables registered with `statlas
table register` (as benchmarks/qerror_statlas.py does: inferred partition keys, default
properties) and collected with `statlas collect --all --master local[2]` (a second run
scans nothing and starts no Spark). The synthetic data is written once under
benchmarks/.data/latency-synthetic-<days>x<regions>/ (100,000 tiny Parquet files take a
while to write, and longer to collect: try a small size first).

Spark's planning time (not with --no-spark): one local SparkSession whose Hive catalog
(Derby, benchmarks/.data/latency-catalog/, kept between runs) holds the TPC-H tables over
the same Parquet directories, ANALYZEd once per data variant FOR ALL COLUMNS with
histograms; CBO on (spark.sql.cbo.enabled, joinReorder.enabled, planStats.enabled). Per
query, after one warm-up: `spark.sql(sql)` (parsing and analysis, eager in Spark) then
`df._jdf.queryExecution().executedPlan()` (optimisation and physical planning), medians of
--spark-repeat. The "Spark planning ms" column is executedPlan's time, with parsing and
analysis in brackets; the ratio and the target compare statlas's /explain p50 with the
executedPlan time alone, as the issue names it. Over catalog tables Spark asks the catalog
for the partitions a filter keeps on every planning (Derby: about 0.3 s for one day of
lineitem on a 2-core machine). "Spark over views ms" is the same query over temporary views
of the same directories (spark.read.parquet: files listed once, partitions pruned in memory,
no statistics): Spark's floor, given for information.

statlas's times: per set and database, `statlas daemon --db URL` on a free port (no
schedules, no token, no Thrift API, its log under benchmarks/.data/), warmed by one request
per route that fails before reading statistics (an unknown table: imports done, nothing
cached).
Then per query, over one keep-alive connection, --requests `POST /estimate` (level sketch)
and then --requests `POST /explain` (no config), each request timed from sending to the
answer's last byte: p50, p95 (nearest rank) and max over all of them, and the first one
apart (cold: the first time the daemon sees that query; /explain's first request follows
the query's estimates, whose statistics a cache may hold by then). Beside them the wall
time of the CLI, `statlas --db URL estimate --sql SQL --json` (Python start-up included;
median of --repeat). The daemon's resident memory (VmRSS, and the peak VmHWM, from
/proc/<pid>/status) after the warm-up, right after the set, and settled (SETTLE_S later,
once the daemon has handed back what its last requests freed, at most one release interval
after them): the settled growth bounds what a cache holds from above (it also counts what
the allocator keeps of the requests' working sets).
`--queries` picks TPC-H and star queries only; the synthetic set runs both of its queries.

Printed: a Markdown table per set and database, the daemons' memory, and per database one
line per target of the issue: `/estimate` p95 <= 50 ms and `/explain` p95 <= 200 ms for
every TPC-H and star query; the synthetic table's estimates p95 <= 50 ms; no query's
planning (/explain p50) slower than Spark's; the daemon's memory growth within its cache
bound ($STATLAS_CACHE_MB, 256 MB by default); each met or missed, and by how much. Every
figure goes to --out (JSON, rewritten after each query).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import http.client
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import star_queries
import tpch_queries
from hive_catalog import hive_catalog_settings

from metastore.process_memory import RELEASE_INTERVAL_S

DATA = Path(__file__).resolve().parent / ".data"
CATALOG = DATA / "latency-catalog"
DEFAULT_PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
DEFAULT_OUT = DATA / "latency.json"
TPCH_TABLES = ("lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region")
QUERY_SETS: dict[str, tuple[dict[str, str], str]] = {
    "tpch": (tpch_queries.QUERIES, "uniform"),
    "star": (star_queries.QUERIES, "zipf-1"),
}
ALL_SETS = ("tpch", "star", "synthetic")
ALL_DBS = ("sqlite", "postgres")

SYNTHETIC_TABLE = "synthetic"
FIRST_DAY = dt.date(2020, 1, 1)
ROWS_PER_PARTITION = 4
SYNTHETIC_SEED = 20261122

ESTIMATE_TARGET_MS = 50.0
EXPLAIN_TARGET_MS = 200.0
SYNTHETIC_TARGET_MS = 50.0
DEFAULT_CACHE_MB = 256.0
SETTLE_S = 3 * RELEASE_INTERVAL_S  # the daemon hands back freed memory within one interval

CBO_SETTINGS = (
    "spark.sql.cbo.enabled",
    "spark.sql.cbo.joinReorder.enabled",
    "spark.sql.cbo.planStats.enabled",
)
FINGERPRINT_KEY = "statlas_latency_analyzed"
WARM_UP_SQL = "SELECT COUNT(*) FROM statlas_latency_no_such_table"
REQUEST_TIMEOUT = 1800.0  # seconds: one estimate took seconds before issue 22


# --------------------------------------------------------------------------- pure helpers


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile (q in [0, 1]) of `values`, as benchmarks/api_load.py."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency_summary(seconds: list[float]) -> dict[str, Any]:
    """p50, p95, max and the first (cold) request, in ms, of requests timed in seconds."""
    if not seconds:
        return {"n": 0, "p50": None, "p95": None, "max": None, "cold": None, "ms": []}
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50": statistics.median(ms),
        "p95": percentile(ms, 0.95),
        "max": max(ms),
        "cold": ms[0],
        "ms": ms,
    }


def month_range(days: int, first: dt.date = FIRST_DAY) -> tuple[dt.date, dt.date]:
    """One calendar month of the synthetic table's `days` days: the month of its middle
    day, clipped to the table's days (a table shorter than a month: all of it)."""
    last = first + dt.timedelta(days=days - 1)
    middle = first + dt.timedelta(days=days // 2)
    start = middle.replace(day=1)
    end = (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
    return max(start, first), min(end, last)


def synthetic_queries(days: int) -> dict[str, str]:
    """The synthetic set: the whole table, and one month of days."""
    start, end = month_range(days)
    return {
        "whole": f"SELECT COUNT(*) FROM {SYNTHETIC_TABLE}",
        "month": (
            f"SELECT COUNT(*) FROM {SYNTHETIC_TABLE} "
            f"WHERE day BETWEEN DATE '{start.isoformat()}' AND DATE '{end.isoformat()}'"
        ),
    }


def chosen_queries(sets: list[str], wanted: list[str]) -> dict[str, dict[str, str]]:
    """{set: {query: sql}} of the TPC-H and star sets among `sets`, limited to `wanted`
    (all when empty); a set none of whose queries is wanted is left out."""
    known = {q for name in sets if name in QUERY_SETS for q in QUERY_SETS[name][0]}
    unknown = [q for q in wanted if q not in known]
    if unknown:
        raise SystemExit(f"unknown queries {unknown}: the sets {sets} hold {sorted(known)}")
    chosen = {}
    for name in sets:
        if name not in QUERY_SETS:
            continue
        picked = {q: s for q, s in QUERY_SETS[name][0].items() if not wanted or q in wanted}
        if picked:
            chosen[name] = picked
    return chosen


def split_list(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    """A comma-separated option's items, each one of `allowed`, in the given order."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    wrong = [s for s in items if s not in allowed]
    if wrong or not items:
        raise SystemExit(f"--{what} takes a comma-separated list of {', '.join(allowed)}")
    return list(dict.fromkeys(items))


def verdict(figures: dict[str, float | None], limit: float, unit: str = "ms") -> dict[str, Any]:
    """Whether every figure (by label) is at most `limit`, the worst and by how much. A None
    figure (no answer: the request failed) misses."""
    missing = [label for label, value in figures.items() if value is None]
    present = {label: v for label, v in figures.items() if v is not None}
    over = sorted(label for label, v in present.items() if v > limit)
    worst = max(present, key=lambda label: present[label]) if present else None
    worst_value = present[worst] if worst is not None else None
    met = bool(present) and not over and not missing
    if worst is None or worst_value is None:
        text = "no figures"
    else:
        factor = worst_value / limit if limit else math.inf
        text = (
            f"worst {worst} {_number(worst_value)} {unit} ({factor:.2f} x the limit); "
            f"{len(over)} of {len(present)} over"
        )
        if over:
            text += f", by {_number(worst_value - limit)} {unit} at worst"
    if missing:
        text += f"; failed: {', '.join(missing)}"
    return {
        "met": met,
        "limit": limit,
        "worst": worst,
        "worst_value": worst_value,
        "over": over,
        "missing": missing,
        "text": text,
    }


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ms_cell(value: float | None) -> str:
    return "" if value is None else _number(value)


def ratio_cell(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


# ------------------------------------------------------------------------------ statlas


def statlas_command() -> list[str]:
    """The `statlas` console script of this interpreter's environment."""
    beside = Path(sys.executable).parent / "statlas"
    found = str(beside) if beside.exists() else shutil.which("statlas")
    if found is None:
        raise SystemExit("the `statlas` command is not installed (make install)")
    return [found]


def child_env() -> dict[str, str]:
    """The environment of statlas's processes: no token (the daemon would want it), the
    metastore named by --db only."""
    env = dict(os.environ)
    env.pop("STATLAS_API_TOKEN", None)
    env.pop("STATLAS_DB_URL", None)
    return env


def run_statlas(
    url: str, *args: str, check: bool = True, stream: bool = False
) -> subprocess.CompletedProcess[str]:
    """`statlas --db URL ARGS...`; a failure (with `check`) stops the benchmark with its
    stderr. `stream` lets stderr through (collect's progress lines)."""
    command = [*statlas_command(), "--db", url, *args]
    done = subprocess.run(
        command,
        env=child_env(),
        text=True,
        stdout=subprocess.PIPE,
        stderr=None if stream else subprocess.PIPE,
    )
    if check and done.returncode != 0:
        raise SystemExit(
            f"`statlas {' '.join(args[:3])} ...` failed ({done.returncode}): "
            f"{(done.stderr or '').strip()[-2000:]}"
        )
    return done


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a command's output, one a line (other lines skipped)."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            with contextlib.suppress(ValueError):
                found.append(json.loads(line))
    return found


@dataclass
class Target:
    """One set on one database: its metastore and its queries."""

    set: str
    db: str
    url: str
    tables: dict[str, Path]
    queries: dict[str, str]
    setup: dict[str, Any] = field(default_factory=dict)


def sqlite_path(name: str) -> Path:
    return DATA / f"latency-{name}.db"


def pg_schema(name: str) -> str:
    return "latency_" + "".join(c if c.isalnum() else "_" for c in name.lower())


def metastore_url(db: str, name: str, pg_url: str) -> str:
    """The URL of the set's metastore: a SQLite file, or a PostgreSQL schema of its own
    (search_path, as tests/support/databases.py does)."""
    if db == "sqlite":
        return f"sqlite:///{sqlite_path(name)}"
    from sqlalchemy.engine import make_url

    url = make_url(pg_url).update_query_dict({"options": f"-csearch_path={pg_schema(name)}"})
    return url.render_as_string(hide_password=False)


def prepare_database(db: str, name: str, pg_url: str, rebuild: bool) -> None:
    """The empty place of the set's metastore: the SQLite file's directory, or the schema
    (created if missing; dropped first with --rebuild, as is the SQLite file)."""
    if db == "sqlite":
        path = sqlite_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        if rebuild:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    from sqlalchemy import create_engine, text

    admin = create_engine(pg_url)
    try:
        with admin.begin() as conn:
            if rebuild:
                conn.execute(text(f"DROP SCHEMA IF EXISTS {pg_schema(name)} CASCADE"))
            conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {pg_schema(name)}"))
    finally:
        admin.dispose()


def build_metastore(target: Target, name: str, args: argparse.Namespace) -> None:
    """Upgrade, register what is not registered yet, collect incrementally (CLI)."""
    began = time.perf_counter()
    prepare_database(target.db, name, args.pg_url, args.rebuild)
    run_statlas(target.url, "db", "upgrade")
    listed = json.loads(run_statlas(target.url, "table", "list", "--json").stdout or "[]")
    registered = {t["name"] for t in listed}
    for table, path in target.tables.items():
        if table not in registered:
            run_statlas(target.url, "table", "register", table, "--path", str(path), "--json")
    target.setup["register_seconds"] = time.perf_counter() - began
    began = time.perf_counter()
    collected = run_statlas(
        target.url, "collect", "--all", "--master", args.master, "--json", stream=True
    )
    target.setup["collect_seconds"] = time.perf_counter() - began
    reports = json_lines(collected.stdout)
    target.setup["collect"] = reports
    scanned = sum(int(r.get("partitions_scanned", 0)) for r in reports)
    skipped = sum(int(r.get("partitions_skipped", 0)) for r in reports)
    print(
        f"  {target.set} on {target.db}: registered in {target.setup['register_seconds']:.1f} s; "
        f"collected in {target.setup['collect_seconds']:.1f} s ({scanned:,} partitions "
        f"scanned, {skipped:,} unchanged)",
        flush=True,
    )


# ---------------------------------------------------------------------- synthetic data


def synthetic_dir(days: int, regions: int) -> Path:
    return DATA / f"latency-synthetic-{days}x{regions}"


def synthetic_data(days: int, regions: int) -> Path:
    """The synthetic table's directory (written once): day=YYYY-MM-DD/region=region-NNN/,
    ROWS_PER_PARTITION rows each."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds

    root = synthetic_dir(days, regions)
    table_dir = root / SYNTHETIC_TABLE
    if (root / "_COMPLETE").exists():
        return table_dir
    began = time.perf_counter()
    rng = np.random.default_rng(SYNTHETIC_SEED)
    per_day = regions * ROWS_PER_PARTITION
    rows = days * per_day
    day_index = np.repeat(np.arange(days), per_day)
    day = (np.datetime64(FIRST_DAY.isoformat(), "D") + day_index).astype("datetime64[D]")
    names = np.array([f"region-{i:03d}" for i in range(regions)])
    region = np.tile(np.repeat(names, ROWS_PER_PARTITION), days)
    events = np.array(["view", "click", "cart", "buy", "refund", "share", "search", "login"])
    score = rng.normal(50.0, 15.0, rows)
    data = pa.table(
        {
            "day": pa.array(day),
            "region": pa.array(region, pa.string()),
            "quantity": pa.array(rng.integers(1, 100, rows), pa.int32()),
            "user_id": pa.array(rng.integers(1, 5_000_000_000, rows), pa.int64()),
            "score": pa.array(score, pa.float64(), mask=rng.random(rows) < 0.02),
            "amount": pa.array(np.round(rng.uniform(0, 1000, rows), 2)).cast(
                pa.decimal128(12, 2), safe=False
            ),
            "event": pa.array(events[rng.integers(0, len(events), rows)], pa.string()),
            "event_date": pa.array(
                (day + rng.integers(-30, 1, rows).astype("timedelta64[D]")).astype("datetime64[D]")
            ),
        }
    )
    tmp = root / (SYNTHETIC_TABLE + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    ds.write_dataset(
        data,
        tmp,
        format="parquet",
        partitioning=ds.partitioning(
            pa.schema([data.schema.field("day"), data.schema.field("region")]), flavor="hive"
        ),
        basename_template="part-{i}.parquet",
        max_partitions=days * regions + 1,
    )
    shutil.rmtree(table_dir, ignore_errors=True)
    tmp.rename(table_dir)
    (root / "_COMPLETE").write_text("")
    print(
        f"  synthetic data: {days * regions:,} partitions, {rows:,} rows written in "
        f"{time.perf_counter() - began:.0f} s",
        flush=True,
    )
    return table_dir


# --------------------------------------------------------------------------------- Spark


def spark_session(master: str, driver_memory: str) -> Any:
    """Spark with a Hive catalog (Derby) under CATALOG, partition columns typed, histograms
    for ANALYZE, CBO and join reordering on."""
    from collectors.spark_session import spark_session as make

    spark = make(master, hive_catalog_settings(CATALOG, "statlas-latency", driver_memory))
    for key in CBO_SETTINGS:
        spark.conf.set(key, "true")
    return spark


def fingerprint(directory: Path) -> str:
    """The data ANALYZE saw: its directory and when `make data` completed it."""
    complete = (directory / "_COMPLETE").stat().st_mtime_ns
    return hashlib.sha256(f"{directory}|{complete}|histograms".encode()).hexdigest()[:16]


def catalog_database(spark: Any, directory: Path, scale: str, variant: str) -> str:
    """The variant's catalog database, its tables ANALYZEd FOR ALL COLUMNS with histograms
    (by benchmarks/qerror_truth.py), unless an earlier run did it over the same data."""
    import qerror_truth

    database = f"latency_sf{qerror_truth.safe_name(scale)}_{qerror_truth.safe_name(variant)}"
    expected = fingerprint(directory)
    if spark.catalog.databaseExists(database):
        rows = spark.sql(f"DESCRIBE DATABASE EXTENDED {database}").collect()
        properties = " ".join(str(r[1]) for r in rows if str(r[0]).lower() == "properties")
        if f"({FINGERPRINT_KEY},{expected})" in properties and all(
            spark.catalog.tableExists(f"{database}.{t}") for t in TPCH_TABLES
        ):
            print(f"  Spark catalog {database}: ANALYZEd by an earlier run", flush=True)
            return database
    began = time.perf_counter()
    qerror_truth.analyze_catalog(spark, directory, database, histograms=True)
    spark.sql(f"ALTER DATABASE {database} SET DBPROPERTIES ('{FINGERPRINT_KEY}' = '{expected}')")
    print(
        f"  Spark catalog {database}: created and ANALYZEd in {time.perf_counter() - began:.0f} s",
        flush=True,
    )
    return database


def spark_planning(spark: Any, sql: str, repeat: int) -> dict[str, Any]:
    """Spark's planning of `sql`: after one warm-up, medians of `repeat` of spark.sql()
    (parsing and analysis) and executedPlan() (optimisation and physical planning), ms."""

    def once() -> tuple[float, float]:
        began = time.perf_counter()
        frame = spark.sql(sql)
        analyzed = time.perf_counter()
        frame._jdf.queryExecution().executedPlan()
        return (analyzed - began) * 1000, (time.perf_counter() - analyzed) * 1000

    try:
        once()
        samples = [once() for _ in range(repeat)]
    except Exception as error:  # py4j or an AnalysisException: no figure for this query
        message = " ".join(str(error).split())[:300]
        print(f"  Spark could not plan it: {message}", file=sys.stderr, flush=True)
        return {"plan_ms": None, "analyze_ms": None, "error": message}
    return {
        "plan_ms": statistics.median(s[1] for s in samples),
        "analyze_ms": statistics.median(s[0] for s in samples),
        "plan_samples_ms": [s[1] for s in samples],
        "analyze_samples_ms": [s[0] for s in samples],
    }


def measure_spark(
    sets: dict[str, dict[str, str]], args: argparse.Namespace, report: dict[str, Any]
) -> dict[str, dict[str, dict[str, Any]]]:
    """{set: {query: Spark's planning figures}} over one SparkSession, stopped after."""
    import qerror_truth

    found: dict[str, dict[str, dict[str, Any]]] = {}
    if not sets:
        return found
    began = time.perf_counter()
    spark = spark_session(args.master, args.driver_memory)
    try:
        report["spark_version"] = spark.version
        for name, queries in sets.items():
            variant = QUERY_SETS[name][1]
            directory = qerror_truth.variant_dir(DATA, args.scale, variant)
            database = catalog_database(spark, directory, args.scale, variant)
            spark.catalog.setCurrentDatabase(database)
            found[name] = {}
            for query, sql in queries.items():
                found[name][query] = spark_planning(spark, sql, args.spark_repeat)
            # the same queries over temporary views of the directories: files listed once,
            # partitions pruned in memory, no catalog and no statistics (Spark's floor)
            with qerror_truth.temp_views(spark, directory):
                for query, sql in queries.items():
                    views = spark_planning(spark, sql, args.spark_repeat)
                    figure = found[name][query]
                    figure["views_plan_ms"] = views["plan_ms"]
                    figure["views_analyze_ms"] = views["analyze_ms"]
                    figure["views_plan_samples_ms"] = views.get("plan_samples_ms")
                    print(
                        f"  Spark {name} {query}: executedPlan {ms_cell(figure['plan_ms'])} ms "
                        f"(parse + analyze {ms_cell(figure['analyze_ms'])} ms); over views "
                        f"{ms_cell(views['plan_ms'])} ms (+{ms_cell(views['analyze_ms'])} ms)",
                        flush=True,
                    )
    finally:
        spark.stop()
    report["setup"]["spark_seconds"] = time.perf_counter() - began
    return found


# ------------------------------------------------------------------------------ daemon


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, MB (Linux /proc)."""
    found: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key.lower()] = int(value.split()[0]) / 1024
    return found


@dataclass
class Daemon:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid


def daemon_command(url: str) -> list[str]:
    """`statlas daemon` on the loopback, without its Hive Metastore Thrift API (not measured
    here; its port, 9083, may be taken by another process): the port is added."""
    return [*statlas_command(), "--db", url, "daemon", "--host", "127.0.0.1", "--thrift-port", "0"]


@contextlib.contextmanager
def daemon(url: str, log: Path) -> Iterator[Daemon]:
    """`statlas daemon --db URL` on a free port, healthy, until the block ends (SIGTERM)."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*daemon_command(url), "--port", str(port)],
            env=child_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    running = Daemon(process, port, log)
    try:
        wait_healthy(running)
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_healthy(running: Daemon, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            tail = running.log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"the daemon exited with {running.process.returncode}:\n{tail}")
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
            try:
                connection.request("GET", "/health")
                if connection.getresponse().status == 200:
                    return
            finally:
                connection.close()
        time.sleep(0.2)
    raise SystemExit(f"the daemon was not healthy within {seconds:.0f} s (log: {running.log})")


class Client:
    """JSON POSTs over one keep-alive HTTP/1.1 connection, timed to the answer's last byte."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict[str, Any]) -> tuple[float, int, bytes]:
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        for attempt in (1, 2):  # once more on a connection the server closed
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=REQUEST_TIMEOUT
                )
            began = time.perf_counter()
            try:
                self.connection.request("POST", path, payload, headers)
                answer = self.connection.getresponse()
                content = answer.read()
            except (ConnectionError, http.client.RemoteDisconnected):
                self.close()
                if attempt == 2:
                    raise
                continue
            return time.perf_counter() - began, answer.status, content
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def timed_requests(client: Client, path: str, body: dict[str, Any], n: int) -> dict[str, Any]:
    """`n` requests of one body: their latency summary, or the first error (no more
    requests after it)."""
    seconds: list[float] = []
    error = None
    content = b""
    for _ in range(n):
        took, status, content = client.post(path, body)
        if status != 200:
            error = f"{status}: {content.decode(errors='replace')[:300]}"
            break
        seconds.append(took)
    summary = latency_summary(seconds)
    summary["error"] = error
    summary["answer"] = answer_figures(content) if error is None else {}
    return summary


def answer_figures(content: bytes) -> dict[str, Any]:
    """The headline figures of an /estimate or /explain answer (rows; cost, shuffles and
    jobs), kept to compare runs: a faster read path must give the same estimates."""
    try:
        answer = json.loads(content)
    except ValueError:
        return {}
    if not isinstance(answer, dict):
        return {}
    figures = {key: answer[key] for key in ("rows", "level", "shuffles", "jobs") if key in answer}
    if isinstance(answer.get("cost"), dict):
        figures["cost"] = answer["cost"]
    return figures


def warm_up(client: Client) -> None:
    """One request per route that fails before statistics are read (unknown table): the
    routes' modules are imported, nothing of any table is cached."""
    for path in ("/estimate", "/explain"):
        client.post(path, {"sql": WARM_UP_SQL})


def cli_seconds(url: str, sql: str, repeat: int) -> dict[str, Any]:
    """Wall time of `statlas --db URL estimate --sql SQL --json` (median of `repeat`)."""
    runs: list[float] = []
    for _ in range(repeat):
        began = time.perf_counter()
        done = run_statlas(url, "estimate", "--sql", sql, "--json", check=False)
        took = time.perf_counter() - began
        if done.returncode != 0:
            return {"seconds": None, "runs": runs, "error": done.stderr.strip()[:300]}
        runs.append(took)
    return {"seconds": statistics.median(runs), "runs": runs, "error": None}


# ---------------------------------------------------------------------------- the run


HEADER = (
    "| query | db | estimate p50 ms | estimate p95 ms | estimate max ms | estimate cold ms "
    "| explain p50 ms | explain p95 ms | explain max ms | explain cold ms | CLI s "
    "| Spark planning ms (+ parse, analyze) | Spark over views ms | explain p50 / Spark |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table_row(record: dict[str, Any]) -> str:
    cells = [record["query"], record["db"]]
    for endpoint in ("estimate", "explain"):
        figures = record[endpoint]
        if figures["error"] and not figures["n"]:
            cells += [f"error {figures['error'][:80]}", "", "", ""]
            continue
        cells += [ms_cell(figures[k]) for k in ("p50", "p95", "max", "cold")]
    cli = record.get("cli")
    if cli is None:
        cells.append("")
    elif cli["seconds"] is None:
        cells.append(f"error {str(cli['error'])[:60]}")
    else:
        cells.append(f"{cli['seconds']:.2f}")
    spark = record.get("spark") or {}
    if spark.get("plan_ms") is not None:
        cells.append(f"{ms_cell(spark['plan_ms'])} (+{ms_cell(spark['analyze_ms'])})")
    else:
        cells.append("error" if spark.get("error") else "")
    views = spark.get("views_plan_ms")
    cells.append(
        "" if views is None else f"{ms_cell(views)} (+{ms_cell(spark['views_analyze_ms'])})"
    )
    cells.append(ratio_cell(record.get("ratio")))
    return "| " + " | ".join(cells) + " |"


def measure_target(
    target: Target,
    spark: dict[str, dict[str, Any]],
    args: argparse.Namespace,
    records: list[dict[str, Any]],
    save: Callable[[], None],
) -> dict[str, Any]:
    """Every figure of one set on one database, under one daemon: each query's record
    appended to `records` (then `save()`); the daemon's memory."""
    log = DATA / f"latency-daemon-{target.set}-{target.db}.log"
    with daemon(target.url, log) as running:
        client = Client(running.port)
        try:
            warm_up(client)
            memory: dict[str, Any] = {"start": memory_mb(running.pid)}
            print(f"\n### {target.set} on {target.db}\n\n{HEADER}", flush=True)
            for query, sql in target.queries.items():
                body = {"sql": sql}
                record: dict[str, Any] = {
                    "set": target.set,
                    "db": target.db,
                    "query": query,
                    "sql": sql,
                    "estimate": timed_requests(client, "/estimate", body, args.requests),
                    "explain": timed_requests(client, "/explain", body, args.requests),
                    "spark": spark.get(query),
                }
                if not args.no_cli:
                    record["cli"] = cli_seconds(target.url, sql, args.repeat)
                plan_ms = (record["spark"] or {}).get("plan_ms")
                p50 = record["explain"]["p50"]
                record["ratio"] = p50 / plan_ms if p50 is not None and plan_ms else None
                views_ms = (record["spark"] or {}).get("views_plan_ms")
                record["ratio_views"] = p50 / views_ms if p50 is not None and views_ms else None
                records.append(record)
                print(table_row(record), flush=True)
                save()
            memory["end"] = memory_mb(running.pid)
            time.sleep(SETTLE_S)
            memory["settled"] = memory_mb(running.pid)
        finally:
            client.close()
    return memory


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str))
    tmp.replace(path)


def cache_bound_mb() -> float:
    value = os.environ.get("STATLAS_CACHE_MB")
    try:
        return float(value) if value else DEFAULT_CACHE_MB
    except ValueError:
        return DEFAULT_CACHE_MB


def label(record: dict[str, Any]) -> str:
    """A query's name in the summary: TPC-H's bare, the others' with their set."""
    return record["query"] if record["set"] == "tpch" else f"{record['set']} {record['query']}"


def p95(figures: dict[str, Any]) -> float | None:
    """A route's p95, None when a request failed."""
    return None if figures.get("error") else figures.get("p95")


def summarize(
    records: list[dict[str, Any]], memory: dict[str, dict[str, Any]], dbs: list[str]
) -> dict[str, dict[str, Any]]:
    """Per database, each target of the issue: met or missed, and by how much."""
    summary: dict[str, dict[str, Any]] = {}
    bound = cache_bound_mb()
    for db in dbs:
        mine = [r for r in records if r["db"] == db]
        planned = [r for r in mine if r["set"] in QUERY_SETS]
        synthetic = [r for r in mine if r["set"] == "synthetic"]
        targets: dict[str, Any] = {}

        if planned:
            targets["estimate_p95"] = verdict(
                {label(r): p95(r["estimate"]) for r in planned}, ESTIMATE_TARGET_MS
            )
            targets["explain_p95"] = verdict(
                {label(r): p95(r["explain"]) for r in planned}, EXPLAIN_TARGET_MS
            )
            with_spark = [r for r in planned if (r.get("spark") or {}).get("plan_ms")]
            if with_spark:
                targets["planning_vs_spark"] = verdict(
                    {label(r): r["ratio"] for r in with_spark}, 1.0, unit="x Spark's"
                )
            with_views = [r for r in planned if (r.get("spark") or {}).get("views_plan_ms")]
            if with_views:
                targets["planning_vs_spark_views"] = verdict(
                    {label(r): r["ratio_views"] for r in with_views}, 1.0, unit="x Spark's"
                )
        if synthetic:
            targets["synthetic_estimate_p95"] = verdict(
                {label(r): p95(r["estimate"]) for r in synthetic},
                SYNTHETIC_TARGET_MS,
            )
        growth = {
            name: m["settled"].get("vmrss", 0.0) - m["start"].get("vmrss", 0.0)
            for name, m in memory.items()
            if name.endswith(f" on {db}") and m.get("settled") and m.get("start")
        }
        if growth:
            targets["memory_growth"] = verdict(growth, bound, unit="MB")
        summary[db] = targets
    return summary


TARGET_NAMES = {
    "estimate_p95": f"/estimate p95 <= {ESTIMATE_TARGET_MS:g} ms (every TPC-H and star query)",
    "explain_p95": f"/explain p95 <= {EXPLAIN_TARGET_MS:g} ms (every TPC-H and star query)",
    "synthetic_estimate_p95": (
        f"synthetic table estimates p95 <= {SYNTHETIC_TARGET_MS:g} ms (whole table, one month)"
    ),
    "planning_vs_spark": "no query's planning slower than Spark's (/explain p50 / executedPlan)",
    "memory_growth": (
        "daemon memory growth (VmRSS settled after the set - after warm-up) <= cache bound"
    ),
    "planning_vs_spark_views": (
        "for information, not a target: /explain p50 / Spark's executedPlan over temporary "
        "views (no catalog, no statistics)"
    ),
}
INFORMATION = ("planning_vs_spark_views",)


def print_report(
    records: list[dict[str, Any]], memory: dict[str, dict[str, Any]], summary: dict[str, Any]
) -> None:
    if memory:
        print(
            f"\n### daemon memory (cache bound {cache_bound_mb():g} MB)\n\n"
            "| set on db | VmRSS after warm-up MB | VmRSS right after the set MB "
            f"| VmRSS settled ({SETTLE_S:g} s later) MB | peak VmHWM MB |\n"
            "|---|---:|---:|---:|---:|"
        )
        for name, figures in memory.items():
            start, end = figures.get("start", {}), figures.get("end", {})
            settled = figures.get("settled", {})
            print(
                f"| {name} | {ms_cell(start.get('vmrss'))} | {ms_cell(end.get('vmrss'))} | "
                f"{ms_cell(settled.get('vmrss'))} | {ms_cell(settled.get('vmhwm'))} |"
            )
    print("\n### targets (issue 22)\n")
    for db, targets in summary.items():
        for key, outcome in targets.items():
            if key in INFORMATION:
                state = "all within" if outcome["met"] else "some over"
            else:
                state = "met" if outcome["met"] else "MISSED"
            print(f"- {db}: {TARGET_NAMES[key]}: {state}: {outcome['text']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(ALL_SETS), help="tpch,star,synthetic")
    parser.add_argument("--dbs", default=",".join(ALL_DBS), help="sqlite,postgres")
    parser.add_argument("--queries", default="", help="TPC-H and star queries, e.g. q1,q3,s2")
    parser.add_argument("--requests", type=int, default=20, help="requests per query and route")
    parser.add_argument("--repeat", type=int, default=1, help="CLI runs per query (median)")
    parser.add_argument("--spark-repeat", type=int, default=5, help="Spark plannings (median)")
    parser.add_argument("--no-spark", action="store_true", help="no Spark planning times")
    parser.add_argument("--no-cli", action="store_true", help="no CLI wall times")
    parser.add_argument("--synthetic-days", type=int, default=1000)
    parser.add_argument("--synthetic-regions", type=int, default=100)
    parser.add_argument("--scale", default="1", help="TPC-H scale factor of `make data`")
    parser.add_argument("--master", default="local[2]", help="Spark master (collect, planning)")
    parser.add_argument("--driver-memory", default="4g", help="of the planning SparkSession")
    parser.add_argument(
        "--pg-url", default=os.environ.get("STATLAS_TEST_DB_URL", DEFAULT_PG), help="PostgreSQL"
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="drop the metastores and build them again"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON of every figure")
    args = parser.parse_args()
    if args.requests < 1 or args.repeat < 1 or args.spark_repeat < 1:
        raise SystemExit("--requests, --repeat and --spark-repeat must be at least 1")
    if args.synthetic_days < 1 or args.synthetic_regions < 1:
        raise SystemExit("--synthetic-days and --synthetic-regions must be at least 1")
    sets = split_list(args.sets, ALL_SETS, "sets")
    dbs = split_list(args.dbs, ALL_DBS, "dbs")
    wanted = [q.strip() for q in args.queries.split(",") if q.strip()]
    queries = chosen_queries(sets, wanted)
    scale = f"{float(args.scale):g}"
    args.scale = scale

    started = time.perf_counter()
    report: dict[str, Any] = {
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "args": {k: str(v) for k, v in vars(args).items()},
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg(),
        "cache_bound_mb": cache_bound_mb(),
        "setup": {},
    }

    import qerror_truth

    targets: list[Target] = []
    for name in sets:
        if name == "synthetic":
            days, regions = args.synthetic_days, args.synthetic_regions
            store = f"synthetic-{days}x{regions}"
            tables = {SYNTHETIC_TABLE: synthetic_data(days, regions)}
            set_queries = synthetic_queries(days)
        elif name in queries:
            variant = QUERY_SETS[name][1]
            directory = qerror_truth.variant_dir(DATA, scale, variant)
            store = f"tpch-sf{scale}-{variant}"
            tables = {t: directory / t for t in TPCH_TABLES}
            set_queries = queries[name]
        else:
            continue
        for db in dbs:
            target = Target(name, db, metastore_url(db, store, args.pg_url), tables, set_queries)
            print(f"metastore {store} on {db} ...", flush=True)
            build_metastore(target, store, args)
            report["setup"][f"{name} on {db}"] = target.setup
            targets.append(target)
    write_json(args.out, report)

    spark: dict[str, dict[str, dict[str, Any]]] = {}
    if not args.no_spark and queries:
        print("Spark planning ...", flush=True)
        spark = measure_spark(queries, args, report)
        report["spark"] = spark
        write_json(args.out, report)

    records: list[dict[str, Any]] = []
    memory: dict[str, dict[str, Any]] = {}
    report["records"], report["memory"] = records, memory
    for target in targets:
        memory[f"{target.set} on {target.db}"] = measure_target(
            target, spark.get(target.set, {}), args, records, lambda: write_json(args.out, report)
        )
        write_json(args.out, report)

    summary = summarize(records, memory, dbs)
    report["summary"] = summary
    report["load_average_end"] = os.getloadavg()
    report["seconds"] = time.perf_counter() - started
    print_report(records, memory, summary)
    write_json(args.out, report)
    print(f"\nwall time {report['seconds'] / 60:.1f} min; figures in {args.out}")


if __name__ == "__main__":
    main()
