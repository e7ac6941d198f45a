"""statlas's Hive Metastore Thrift API beside a real Hive 2.3 metastore, in one run.

Both on PostgreSQL (separate databases: statlas_bench and hive_bench, re-created), both
serving loopback ports at once: `statlas daemon --thrift-port` (as benchmarks/hms.py starts
it) and Hive 2.3.10's own `HiveMetaStore` from pyspark's jars (benchmarks/real_hive.py).
The same Python Thrift client for both (benchmarks/hms.py's RawClient: binary protocol, C
decoder, buffered transport, one connection) and the same partitions: a table `events`
(dt x region, string keys, --days x --regions partitions) created and filled through
`create_table` and `add_partitions` over Thrift, in batches, on both; the two lists of
partition names and locations are compared before anything is timed.

  (a) get_partitions_by_filter, 1 partition      `dt = "..." and region = "..."`
  (b) get_partitions_by_filter, 300 partitions   `(dt) in (30 dates) and (region) in (10)`
  (c) get_partitions_by_filter, 10,000           `(dt) in (100 dates) and (region) in (100)`
  (d) get_partitions_by_names, 1,000 names
  (e) get_table, calls per second on one connection
  (f) lock + unlock of a table (Thrift, one connection): pairs per second
  (g) Iceberg appends through pyiceberg's own HiveCatalog (lock, check_lock, get_table,
      alter_table, unlock around each commit): one client appending one-row batches to a
      fresh table, appends per second
  (h) the same with --writers client processes appending to one table at once, each
      retrying on CommitFailedException (reload, append again): appends acknowledged per
      second, then a check that the table holds exactly the acknowledged appends (one
      snapshot and one (writer, seq) row each)

Every run times each measure on both metastores, in turns (statlas first in even runs, Hive
first in odd ones), with the same random cases; --warmup runs first, not counted; medians
over --runs runs (--iceberg-runs for (g) and (h)). Ratios are statlas's time over Hive's
(below 1: statlas is faster). A failing measure (e.g. a call one metastore does not
implement) is reported, not fatal.

pyiceberg's lock wait is tenacity's wait_exponential(multiplier=2): its first wait is 2 s
whatever the minimum; --lock-max-wait (0.05 s) caps it, --lock-retries (200) bounds it. Its
own commit retries (commit.retry.num-retries, 4 by default, backing off from 100 ms) are set
by --commit-retries (0): a conflict comes straight back to the writer, which reloads the
table and appends again; both kinds of retry and the lock waits are counted.
The partition directories exist before add_partitions (see make_directories).

Usage: python benchmarks/hms_vs_hive.py [--runs 15] [--quick] [--days 200] [--regions 100]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any, TypeVar

from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.hms import STATLAS, RawClient, daemon
from benchmarks.real_hive import real_hive, recreate_database

T = TypeVar("T")
PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
DB, TABLE = "default", "events"
SIDES = ("statlas", "hive")
SHAPES = {
    "a": "(a) by filter, 1 partition",
    "b": "(b) by filter, 300 (30 dt x 10 region)",
    "c": "(c) by filter, 10,000 (100 dt x 100 region)",
    "d": "(d) by names, 1,000",
}


def dates(days: int) -> list[str]:
    """`days` distinct, sortable date strings."""
    first = 18262  # 2020-01-01, days since the epoch
    return [time.strftime("%Y-%m-%d", time.gmtime((first + d) * 86400)) for d in range(days)]


def region_names(regions: int) -> list[str]:
    return [f"region-{i:03d}" for i in range(regions)]


def quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


# --- the two metastores ---------------------------------------------------------------


def thrift_client(port: int) -> tuple[thrift_api.Client, TTransport.TTransportBase]:
    """The generated client (for set-up, lock and unlock), Hive's wire settings."""
    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    transport.open()
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    return thrift_api.Client(protocol), transport


def fresh_database(db: str) -> None:
    recreate_database(db, PG_HOST, PG_PORT, PG_USER)


@contextlib.contextmanager
def statlas_metastore(db: str, workdir: Path) -> Iterator[int]:
    fresh_database(db)
    url = f"postgresql+psycopg2://{PG_USER}@{PG_HOST}:{PG_PORT}/{db}"
    subprocess.run([STATLAS, "--db", url, "db", "upgrade"], check=True, capture_output=True)
    workdir.mkdir(parents=True, exist_ok=True)
    with daemon(url, workdir) as (port, _process):
        yield port


@dataclass
class Side:
    name: str
    port: int
    raw: RawClient
    client: thrift_api.Client
    transport: TTransport.TTransportBase
    iceberg: Path
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"


def table_object(location: str) -> hms.Table:
    storage = hms.StorageDescriptor(
        cols=[hms.FieldSchema("user_id", "bigint"), hms.FieldSchema("event", "string")],
        location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=hms.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={"serialization.format": "1"},
        ),
        compressed=False,
        numBuckets=-1,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return hms.Table(
        tableName=TABLE,
        dbName=DB,
        owner="bench",
        createTime=int(time.time()),
        lastAccessTime=0,
        retention=0,
        sd=storage,
        partitionKeys=[hms.FieldSchema("dt", "string"), hms.FieldSchema("region", "string")],
        parameters={"EXTERNAL": "TRUE"},
        tableType="EXTERNAL_TABLE",
    )


def partition_objects(
    location: str, days: list[str], regions: list[str]
) -> Iterator[hms.Partition]:
    table = table_object(location)
    for d in days:
        for r in regions:
            storage = hms.StorageDescriptor(**vars(table.sd))
            storage.location = f"{location}/dt={d}/region={r}"
            yield hms.Partition(
                values=[d, r],
                dbName=DB,
                tableName=TABLE,
                createTime=int(time.time()),
                lastAccessTime=0,
                sd=storage,
                parameters={"numFiles": "4", "totalSize": "4194304", "numRows": "100000"},
            )


def make_directories(root: Path, days: list[str], regions: list[str]) -> None:
    """The table's partition directories. Hive's add_partitions creates a missing one
    through Hadoop's local file system, which (no native Hadoop library in pyspark) forks
    `chmod` per directory: ~40 partitions/s here, a cost of this set-up, not of a
    metastore on HDFS or S3. statlas creates none."""
    for d in days:
        for r in regions:
            (root / f"dt={d}" / f"region={r}").mkdir(parents=True, exist_ok=True)


def fill(side: Side, location: str, days: list[str], regions: list[str], batch: int) -> float:
    """Create the table and add its partitions; returns the seconds add_partitions took."""
    try:
        side.client.get_database(DB)
    except hms.NoSuchObjectException:
        side.client.create_database(hms.Database(name=DB, description="", parameters={}))
    side.client.create_table(table_object(location))
    pending: list[hms.Partition] = []
    seconds = 0.0
    for partition in partition_objects(location, days, regions):
        pending.append(partition)
        if len(pending) == batch:
            started = time.perf_counter()
            side.client.add_partitions(pending)
            seconds += time.perf_counter() - started
            pending = []
    if pending:
        started = time.perf_counter()
        side.client.add_partitions(pending)
        seconds += time.perf_counter() - started
    return seconds


def listing(side: Side) -> list[tuple[str, str]]:
    """(name, location) of every partition, sorted; locations without a file: scheme."""
    names = side.client.get_partition_names(DB, TABLE, -1)
    found: list[tuple[str, str]] = []
    for start in range(0, len(names), 1000):
        for p in side.client.get_partitions_by_names(DB, TABLE, names[start : start + 1000]):
            location = p.sd.location.removeprefix("file:").replace("///", "/")
            found.append((f"dt={p.values[0]}/region={p.values[1]}", location))
    return sorted(found)


# --- the measures -------------------------------------------------------------------------


def cases(
    rounds: int, days: list[str], regions: list[str], rng: random.Random
) -> list[dict[str, tuple[str, Any, int]]]:
    """Per round, per shape: (method, argument, expected partitions)."""
    out = []
    for _ in range(rounds):
        names = [f"dt={rng.choice(days)}/region={rng.choice(regions)}" for _ in range(3000)]
        unique = list(dict.fromkeys(names))[:1000]
        out.append(
            {
                "a": (
                    "get_partitions_by_filter",
                    f'dt = "{rng.choice(days)}" and region = "{rng.choice(regions)}"',
                    1,
                ),
                "b": (
                    "get_partitions_by_filter",
                    f"(dt) in ({quoted(rng.sample(days, 30))}) "
                    f"and (region) in ({quoted(rng.sample(regions, 10))})",
                    300,
                ),
                "c": (
                    "get_partitions_by_filter",
                    f"(dt) in ({quoted(rng.sample(days, 100))}) "
                    f"and (region) in ({quoted(rng.sample(regions, 100))})",
                    10_000,
                ),
                "d": ("get_partitions_by_names", unique, len(unique)),
            }
        )
    return out


def partition_call(side: Side, method: str, argument: Any, expected: int) -> float:
    if method == "get_partitions_by_names":
        _, seconds, result = side.raw.call(method, db_name=DB, tbl_name=TABLE, names=argument)
    else:
        _, seconds, result = side.raw.call(
            method, db_name=DB, tbl_name=TABLE, filter=argument, max_parts=-1
        )
    if len(result) != expected:
        raise RuntimeError(f"{side.name}: {method} gave {len(result)}, not {expected}")
    return float(seconds)


def get_table_rate(side: Side, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        side.raw.call("get_table", dbname=DB, tbl_name=TABLE)
    return calls / (time.perf_counter() - started)


def lock_request(table: str) -> hms.LockRequest:
    component = hms.LockComponent(
        type=hms.LockType.EXCLUSIVE,
        level=hms.LockLevel.TABLE,
        dbname=DB,
        tablename=table,
        isTransactional=True,
    )
    return hms.LockRequest(component=[component], user="bench", hostname="localhost")


def lock_rate(side: Side, pairs: int) -> float:
    started = time.perf_counter()
    for _ in range(pairs):
        response = side.client.lock(lock_request(TABLE))
        if response.state != hms.LockState.ACQUIRED:
            raise RuntimeError(f"{side.name}: lock state {response.state}, not ACQUIRED")
        side.client.unlock(hms.UnlockRequest(lockid=response.lockid))
    return pairs / (time.perf_counter() - started)


def catalog(uri: str, warehouse: Path, args: argparse.Namespace) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog(
        "bench",
        uri=uri,
        warehouse=f"file://{warehouse}",
        **{
            "lock-check-min-wait-time": "0.01",
            "lock-check-max-wait-time": str(args.lock_max_wait),
            "lock-check-retries": str(args.lock_retries),
        },
    )


def iceberg_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [pa.field("writer", pa.int32(), nullable=False), pa.field("seq", pa.int32(), False)]
    )


def one_row(writer: int, seq: int) -> Any:
    import pyarrow as pa

    return pa.table(
        {"writer": pa.array([writer], pa.int32()), "seq": pa.array([seq], pa.int32())},
        schema=iceberg_schema(),
    )


def new_iceberg_table(side: Side, args: argparse.Namespace, name: str) -> str:
    """A fresh Iceberg table bench.<name>; pyiceberg's own commit retries set to
    --commit-retries (0: a conflict comes back to the writer's loop at once)."""
    cat = catalog(side.uri, side.iceberg, args)
    if ("bench",) not in cat.list_namespaces():
        cat.create_namespace("bench", {"location": f"file://{side.iceberg / 'bench.db'}"})
    identifier = f"bench.{name}"
    properties = {"commit.retry.num-retries": str(args.commit_retries)}
    cat.create_table(identifier, iceberg_schema(), properties=properties)
    return identifier


class PyicebergWarnings(logging.Handler):
    """Counts (and keeps off stderr) pyiceberg's "Wait on lock" and its own commit
    retries ("Commit failed due to a concurrent update, retrying")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lock_waits = 0
        self.retries = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Wait on lock"):
            self.lock_waits += 1
        elif "concurrent update" in message:
            self.retries += 1


def quiet_pyiceberg() -> PyicebergWarnings:
    counter = PyicebergWarnings()
    logger = logging.getLogger("pyiceberg")
    logger.handlers = [counter]
    logger.propagate = False
    return counter


def single_appends(side: Side, args: argparse.Namespace, run: int) -> float:
    identifier = new_iceberg_table(side, args, f"single_{run}")
    cat = catalog(side.uri, side.iceberg, args)
    table = cat.load_table(identifier)
    started = time.perf_counter()
    for seq in range(args.appends):
        table.append(one_row(0, seq))
    rate: float = args.appends / (time.perf_counter() - started)
    snapshots = len(cat.load_table(identifier).metadata.snapshots)
    if snapshots != args.appends:
        raise RuntimeError(f"{snapshots} snapshots after {args.appends} appends")
    return rate


def writer(
    uri: str,
    warehouse: str,
    identifier: str,
    number: int,
    args: argparse.Namespace,
    barrier: Barrier,
    results: Any,
) -> None:
    """One of the concurrent clients: appends (number, seq) rows, retrying conflicts."""
    from pyiceberg.exceptions import CommitFailedException

    counter = quiet_pyiceberg()
    acknowledged: list[int] = []
    conflicts = 0
    error = None
    try:
        cat = catalog(uri, Path(warehouse), args)
        table = cat.load_table(identifier)
        rows = [one_row(number, seq) for seq in range(args.writer_appends)]
        barrier.wait()
        for seq, row in enumerate(rows):
            for _attempt in range(args.max_attempts):
                try:
                    table.append(row)
                except CommitFailedException:
                    conflicts += 1
                    table = cat.load_table(identifier)
                    continue
                acknowledged.append(seq)
                break
            else:
                raise RuntimeError(f"append {seq} failed {args.max_attempts} times")
    except Exception as exc:  # reported by the parent
        error = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            barrier.abort()
    results.put((number, acknowledged, conflicts, counter.retries, counter.lock_waits, error))


@dataclass
class Concurrent:
    rate: float
    acknowledged: int
    conflicts: int
    pyiceberg_retries: int
    lock_waits: int
    snapshots: int
    rows: int
    exact: bool


def concurrent_appends(side: Side, args: argparse.Namespace, run: int) -> Concurrent:
    identifier = new_iceberg_table(side, args, f"shared_{run}")
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(args.writers + 1)
    results = context.Queue()
    processes = [
        context.Process(
            target=writer,
            args=(side.uri, str(side.iceberg), identifier, n, args, barrier, results),
        )
        for n in range(args.writers)
    ]
    for process in processes:
        process.start()
    try:
        with contextlib.suppress(threading.BrokenBarrierError):  # a writer failed: see below
            barrier.wait(timeout=120)
        started = time.perf_counter()
        reports = [results.get(timeout=600) for _ in processes]
        seconds = time.perf_counter() - started
    finally:
        for process in processes:
            process.join(60)
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, 9)
                process.join()
    errors = [r[5] for r in reports if r[5]]
    if errors:
        raise RuntimeError(errors[0])
    expected = {(r[0], seq) for r in reports for seq in r[1]}
    table = catalog(side.uri, side.iceberg, args).load_table(identifier)
    data = table.scan().to_arrow()
    found = list(zip(data["writer"].to_pylist(), data["seq"].to_pylist(), strict=True))
    snapshots = len(table.metadata.snapshots)
    exact = len(found) == len(expected) and set(found) == expected and snapshots == len(expected)
    return Concurrent(
        rate=len(expected) / seconds,
        acknowledged=len(expected),
        conflicts=sum(r[2] for r in reports),
        pyiceberg_retries=sum(r[3] for r in reports),
        lock_waits=sum(r[4] for r in reports),
        snapshots=snapshots,
        rows=len(found),
        exact=exact,
    )


# --- the run ------------------------------------------------------------------------------


def turns(run: int, sides: dict[str, Side]) -> list[Side]:
    """statlas first in even runs, Hive first in odd ones."""
    order = [sides["statlas"], sides["hive"]]
    return order if run % 2 == 0 else order[::-1]


def attempt(side: Side, key: str, function: Callable[..., T], *arguments: Any) -> T | None:
    """function(side, *arguments), or None once it has failed for this side (the error
    is kept and reported)."""
    if key in side.errors:
        return None
    try:
        return function(side, *arguments)
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        side.errors[key] = f"{type(exc).__name__}: {message}"[:200]
        if os.environ.get("BENCH_TRACEBACK"):
            traceback.print_exc()
        return None


def measure(
    sides: dict[str, Side], args: argparse.Namespace, days: list[str], regions: list[str]
) -> tuple[dict[str, dict[str, list[float]]], dict[str, Any]]:
    rng = random.Random(args.seed)
    rounds = args.warmup + args.runs
    per_round = cases(rounds, days, regions, rng)
    samples: dict[str, dict[str, list[float]]] = {}

    def keep(key: str, side: Side, value: float | None, counted: bool) -> None:
        if value is not None and counted:
            samples.setdefault(key, {}).setdefault(side.name, []).append(value)

    for run in range(rounds):
        counted = run >= args.warmup
        for shape, (method, argument, expected) in per_round[run].items():
            for side in turns(run, sides):
                seconds = attempt(side, shape, partition_call, method, argument, expected)
                keep(shape, side, seconds, counted)
        for side in turns(run, sides):
            keep("e", side, attempt(side, "e", get_table_rate, args.calls), counted)
        for side in turns(run, sides):
            keep("f", side, attempt(side, "f", lock_rate, args.calls), counted)
        print(
            f"  run {run + 1}/{rounds}{' (warm-up)' if run < args.warmup else ''} done", flush=True
        )
    concurrent: dict[str, list[Concurrent]] = {}
    iceberg_rounds = (1 if args.warmup else 0) + args.iceberg_runs
    for run in range(iceberg_rounds):
        counted = run >= iceberg_rounds - args.iceberg_runs
        for side in turns(run, sides):
            rate = attempt(side, "g", single_appends, args, run)
            keep("g", side, rate, counted)
        for side in turns(run, sides):
            result = attempt(side, "h", concurrent_appends, args, run)
            if result is not None and counted:
                concurrent.setdefault(side.name, []).append(result)
                keep("h", side, result.rate, counted)
        print(
            f"  Iceberg run {run + 1}/{iceberg_rounds}{'' if counted else ' (warm-up)'} done",
            flush=True,
        )
    return samples, concurrent


def report(
    samples: dict[str, dict[str, list[float]]],
    concurrent: dict[str, Any],
    sides: dict[str, Side],
    filled: dict[str, float],
    partitions: int,
    args: argparse.Namespace,
) -> None:
    rates = {
        "e": "(e) get_table, one connection",
        "f": "(f) lock + unlock, one connection",
        "g": "(g) Iceberg appends, 1 client",
        "h": f"(h) Iceberg appends, {args.writers} clients, one table",
    }
    print()
    print(
        f"statlas vs Hive 2.3.10, both on PostgreSQL; {partitions:,} partitions; medians of "
        f"{args.runs} runs ({args.iceberg_runs} for Iceberg) after {args.warmup} warm-up"
    )
    print()
    print(
        "| measure | statlas ms | Hive ms | statlas calls/s | Hive calls/s | statlas/Hive (time) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for key, label in [*SHAPES.items(), *rates.items()]:
        seconds: dict[str, float | None] = {}
        for name in SIDES:
            values = samples.get(key, {}).get(name)
            if not values:
                seconds[name] = None
            elif key in rates:  # per-run rates: time of one operation
                seconds[name] = 1 / statistics.median(values)
            else:
                seconds[name] = statistics.median(values)
        cells = []
        for name in SIDES:
            value = seconds[name]
            cells.append("n/a" if value is None else f"{value * 1000:,.2f}")
        for name in SIDES:
            value = seconds[name]
            cells.append("n/a" if value is None else f"{1 / value:,.1f}")
        s, h = seconds["statlas"], seconds["hive"]
        cells.append("n/a" if s is None or h is None else f"{s / h:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("| adding the partitions (add_partitions, one run) | statlas | Hive |")
    print("|---|---:|---:|")
    print(
        f"| {partitions:,} partitions, batches of {args.batch:,}: seconds (partitions/s) | "
        + " | ".join(f"{filled[n]:.1f} ({partitions / filled[n]:,.0f}/s)" for n in SIDES)
        + " |"
    )
    print()
    print(
        f"| (h) check: {args.writers} clients x {args.writer_appends} appends | "
        "acknowledged | conflicts retried | pyiceberg's own retries | lock waits | snapshots "
        "| rows | exactly the acknowledged |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in SIDES:
        for index, result in enumerate(concurrent.get(name, [])):
            print(
                f"| {name} run {index + 1} | {result.acknowledged} | {result.conflicts} | "
                f"{result.pyiceberg_retries} | {result.lock_waits} | {result.snapshots} | "
                f"{result.rows} | {'yes' if result.exact else 'NO'} |"
            )
        if not concurrent.get(name):
            print(f"| {name} | n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
    failures = [
        (side.name, key, error) for side in sides.values() for key, error in side.errors.items()
    ]
    if failures:
        print()
        print("Failed measures (not timed from then on):")
        for name, key, error in failures:
            print(f"- {name} ({key}): {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2, help="uncounted runs first (2)")
    parser.add_argument("--iceberg-runs", type=int, help="runs of (g) and (h) (--runs)")
    parser.add_argument("--days", type=int, default=200, help="dt values (200)")
    parser.add_argument("--regions", type=int, default=100, help="region values (100)")
    parser.add_argument("--batch", type=int, default=1000, help="add_partitions batch (1000)")
    parser.add_argument("--calls", type=int, default=300, help="(e), (f) calls per run (300)")
    parser.add_argument("--appends", type=int, default=20, help="(g) appends per run (20)")
    parser.add_argument("--writers", type=int, default=4, help="(h) client processes (4)")
    parser.add_argument("--writer-appends", type=int, default=10, help="(h) each (10)")
    parser.add_argument("--max-attempts", type=int, default=100, help="(h) per append")
    parser.add_argument(
        "--commit-retries",
        type=int,
        default=0,
        help="pyiceberg's own commit.retry.num-retries of the tables (0; its default: 4)",
    )
    parser.add_argument("--lock-max-wait", type=float, default=0.05)
    parser.add_argument("--lock-retries", type=int, default=200)
    parser.add_argument("--statlas-db", default="statlas_bench")
    parser.add_argument("--hive-db", default="hive_bench")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a fast check: 3 runs, 1 warm-up, 1 Iceberg run, fewer calls and appends",
    )
    args = parser.parse_args()
    quiet_pyiceberg()
    if args.quick:
        args.runs, args.warmup, args.iceberg_runs = 3, 1, 1
        args.calls, args.appends, args.writer_appends = 100, 5, 3
    if args.iceberg_runs is None:
        args.iceberg_runs = args.runs
    if args.days < 100 or args.regions < 100:
        raise SystemExit("--days and --regions must be at least 100 (shape c: 100 x 100)")
    days, regions = dates(args.days), region_names(args.regions)
    partitions = len(days) * len(regions)
    with (
        tempfile.TemporaryDirectory(prefix="hms-vs-hive-") as directory,
        contextlib.ExitStack() as stack,
    ):
        work = Path(directory)
        print("starting statlas's daemon and the Hive metastore ...", flush=True)
        ports = {
            "statlas": stack.enter_context(statlas_metastore(args.statlas_db, work / "statlas")),
            "hive": stack.enter_context(real_hive(args.hive_db, workdir=work / "hive")),
        }
        sides: dict[str, Side] = {}
        for name, port in ports.items():
            client, transport = thrift_client(port)
            stack.callback(transport.close)
            raw = RawClient(port)
            stack.callback(raw.close)
            sides[name] = Side(name, port, raw, client, transport, work / f"iceberg-{name}")
        location = f"file://{work / 'lake' / TABLE}"
        make_directories(work / "lake" / TABLE, days, regions)
        filled = {}
        for name in SIDES:
            print(f"adding {partitions:,} partitions to {name} ...", flush=True)
            filled[name] = fill(sides[name], location, days, regions, args.batch)
        listings = {name: listing(sides[name]) for name in SIDES}
        if listings["statlas"] != listings["hive"] or len(listings["hive"]) != partitions:
            differ = set(listings["statlas"]) ^ set(listings["hive"])
            raise SystemExit(f"the partitions differ: e.g. {sorted(differ)[:3]}")
        print(f"both hold the same {partitions:,} partitions (names and locations)", flush=True)
        samples, concurrent = measure(sides, args, days, regions)
        report(samples, concurrent, sides, filled, partitions, args)


if __name__ == "__main__":
    main()
