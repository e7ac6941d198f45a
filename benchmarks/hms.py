"""The Hive Metastore Thrift API on the lookup benchmark's 1,000,000-partition table.

The table of benchmarks/partition_lookup.py (dt: ~2,700 days x region: 370 values) is
registered, `statlas daemon` serves it on a loopback Thrift port, and a real Thrift client
(Apache thrift, binary protocol, buffered transport: Hive's wire settings) makes the calls
Spark and Trino make. Beside each, in the same run, the same lookup through statlas's own
Python API (metastore.Metastore.lookup), the anchor of the issue:

  (a) get_partitions_by_filter, one partition     `dt = "..." and region = "..."`
  (b) get_partitions_by_filter, 1,000 dates x 10 regions, in Spark's form
      `(dt) in (...) and (region) in (...)`         (10,000 partitions)
  (c) get_partitions_by_filter, a 30-day range    `dt >= "..." and dt <= "..."` (11,100)
  (d) get_partitions_by_names, 1,000 names
  (e) get_table, calls per second on one connection

Each call is timed to the reply's first byte and to the reply decoded into Thrift objects by
thrift's C decoder (the whole call as a client sees it). The daemon's resident memory is read before
and after the large replies.

Usage: python benchmarks/hms.py [--partitions N] [--runs 30] [--backends postgres,sqlite]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hive_metastore import ThriftHiveMetastore as thrift_api
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TSocket, TTransport

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.partition_lookup import (  # noqa: E402
    DEFAULT_PG,
    FIRST_DAY,
    TABLE,
    build_listing,
    prepare_backend,
    regions,
)
from metastore import Metastore, PartitionQuery, TupleList  # noqa: E402
from metastore.catalog.tables import register_listing  # noqa: E402

STATLAS = str(Path(sys.executable).parent / "statlas")


def settle(ms: Metastore) -> None:
    """VACUUM (ANALYZE) the partitions table after its bulk load (PostgreSQL), so that no
    lookup meets autovacuum; a WAL checkpoint on SQLite."""
    table = f"partitions_{ms.table(TABLE).id}"
    with ms.engine.connect() as conn:
        if ms.engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql(
                f"VACUUM (ANALYZE) {table}"
            )
        else:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@contextlib.contextmanager
def daemon(url: str, workdir: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATLAS_")}
    env["STATLAS_DB_URL"] = url
    log = open(workdir / f"daemon-{port}.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [STATLAS, "daemon", "--port", str(free_port()), "--thrift-port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=workdir,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start: see {log.name}") from None
            time.sleep(0.2)
    try:
        yield port, process
    finally:
        process.terminate()
        process.wait(30)
        log.close()


class RawClient:
    """Hive's wire settings; each call timed to the reply's last byte, then decoded."""

    def __init__(self, port: int) -> None:
        self.socket = TSocket.TSocket("127.0.0.1", port)
        self.transport = TTransport.TBufferedTransport(self.socket)
        self.transport.open()
        self.protocol = TBinaryProtocol.TBinaryProtocolAccelerated(self.transport)
        self.seqid = 0

    def call(self, method: str, **arguments: Any) -> tuple[float, float, Any]:
        """(seconds to the reply's first byte, seconds to the reply decoded, the result)."""
        args = getattr(thrift_api, f"{method}_args")(**arguments)
        self.seqid += 1
        started = time.perf_counter()
        self.protocol.writeMessageBegin(method, TMessageType.CALL, self.seqid)
        args.write(self.protocol)
        self.protocol.writeMessageEnd()
        self.transport.flush()
        _name, kind, _seqid = self.protocol.readMessageBegin()
        first_byte = time.perf_counter() - started
        if kind == TMessageType.EXCEPTION:
            raise SystemExit(f"{method}: the server answered an exception")
        result = getattr(thrift_api, f"{method}_result")()
        result.read(self.protocol)  # thrift's C decoder
        self.protocol.readMessageEnd()
        decoded = time.perf_counter() - started
        if result.success is None:
            raise SystemExit(f"{method}: no result ({result})")
        return first_byte, decoded, result.success

    def close(self) -> None:
        self.transport.close()


def quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def shapes(days: int, runs: int, rng: random.Random) -> dict[str, list[tuple[str, Any, Any]]]:
    """Per shape, `runs` cases: (filter string or names, the API's query, expected count)."""
    all_regions = regions()

    def day(d: int) -> str:
        return (FIRST_DAY + dt.timedelta(d)).isoformat()

    cases: dict[str, list[tuple[str, Any, Any]]] = {"a": [], "b": [], "c": [], "d": []}
    for _ in range(runs):
        d, r = day(rng.randrange(days)), rng.choice(all_regions)
        cases["a"].append(
            (f'dt = "{d}" and region = "{r}"', PartitionQuery.of({"dt": [d], "region": [r]}), 1)
        )
        dates = [day(x) for x in rng.sample(range(days), min(1000, days))]
        some = rng.sample(all_regions, 10)
        cases["b"].append(
            (
                f"(dt) in ({quoted(dates)}) and (region) in ({quoted(some)})",
                PartitionQuery.of({"dt": dates, "region": some}),
                10 * len(dates),
            )
        )
        start = rng.randrange(days - 30)
        first, last = day(start), day(start + 29)
        cases["c"].append(
            (
                f'dt >= "{first}" and dt <= "{last}"',
                PartitionQuery.of(where=f"dt BETWEEN '{first}' AND '{last}'"),
                30 * len(all_regions),
            )
        )
        names = [
            f"dt={day(x)}/region={rng.choice(all_regions)}"
            for x in rng.sample(range(days), min(1000, days))
        ]
        cases["d"].append((names, None, len(names)))
    return cases


def timed(function: Callable[[], Any]) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench(backend: str, args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    days = max(1, args.partitions // len(regions()))
    lake = workdir / "lake" / "events"
    listing = build_listing(days, str(lake))
    url = prepare_backend(backend, args, workdir)
    ms = Metastore(url)
    ms.upgrade()
    print(f"[{backend}] registering {len(listing.partitions):,} partitions ...", flush=True)
    register_listing(ms.engine, TABLE, listing)
    settle(ms)
    rng = random.Random(args.seed)
    cases = shapes(days, args.runs, rng)
    rows: list[dict[str, Any]] = []
    with daemon(url, workdir) as (port, process):
        client = RawClient(port)
        rss_before = rss_mb(process.pid)
        for shape, instances in cases.items():
            wire, decoded, api = [], [], []
            for index, (request, query, expected) in enumerate(instances):
                if shape == "d":
                    w, d, result = client.call(
                        "get_partitions_by_names", db_name="default", tbl_name=TABLE, names=request
                    )
                else:
                    w, d, result = client.call(
                        "get_partitions_by_filter",
                        db_name="default",
                        tbl_name=TABLE,
                        filter=request,
                        max_parts=-1,
                    )
                if len(result) != expected:
                    raise SystemExit(f"shape {shape}: {len(result)} partitions, not {expected}")
                if shape == "d":  # the API's form of names: (dt, region) tuples
                    pairs = [n.replace("dt=", "").split("/region=") for n in request]
                    tuples = (TupleList(("dt", "region"), pairs),)
                    seconds = timed(lambda t=tuples: ms.lookup(TABLE, PartitionQuery(tuples=t)))
                else:
                    seconds = timed(lambda q=query: ms.lookup(TABLE, q))
                if index >= 2:  # the first calls warm both sides alike
                    wire.append(w)
                    decoded.append(d)
                    api.append(seconds)
            rows.append(
                {
                    "backend": backend,
                    "shape": shape,
                    "partitions": len(result),
                    "first_p50": statistics.median(wire),
                    "decoded_p50": statistics.median(decoded),
                    "decoded_p99": percentile(decoded, 0.99),
                    "api_p50": statistics.median(api),
                    "api_p99": percentile(api, 0.99),
                }
            )
            print(f"[{backend}] shape {shape} done", flush=True)
        rss_after = rss_mb(process.pid)
        calls = 0
        started = time.perf_counter()
        while time.perf_counter() - started < args.seconds:
            client.call("get_table", dbname="default", tbl_name=TABLE)
            calls += 1
        per_second = calls / (time.perf_counter() - started)
        client.close()
        planning = spark_planning(port, workdir, lake, days, args) if args.spark else None
    ms.dispose()
    rows.append(
        {
            "backend": backend,
            "shape": "e",
            "get_table_per_s": per_second,
            "rss_before": rss_before,
            "rss_after": rss_after,
        }
    )
    if planning is not None:
        rows.append({"backend": backend, "shape": "spark", **planning})
    return rows


def spark_planning(
    port: int, workdir: Path, lake: Path, days: int, args: argparse.Namespace
) -> dict[str, float]:
    """Spark (Hive support, statlas's Thrift API as its metastore) planning and running
    `SELECT count(*) FROM events WHERE dt = ... AND region = ...` on the table: from the
    query's submission to its executed plan, and to its answer (one small file read)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from collectors.spark_session import spark_session

    rng = random.Random(args.seed + 1)
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": f"thrift://127.0.0.1:{port}",
        "spark.sql.warehouse.dir": str(workdir / "warehouse"),
        "spark.ui.enabled": "false",
    }
    spark = spark_session("local[1]", conf)
    planned, answered = [], []
    for index in range(args.spark_runs + 2):
        day = (FIRST_DAY + dt.timedelta(rng.randrange(days))).isoformat()
        region = rng.choice(regions())
        directory = lake / f"dt={day}" / f"region={region}"
        directory.mkdir(parents=True, exist_ok=True)
        table = pa.table({"user_id": pa.array([1, 2, 3], pa.int64()), "event": ["a", "b", "c"]})
        pq.write_table(table, directory / "part-00000.parquet")
        sql = f"SELECT count(*) FROM {TABLE} WHERE dt = DATE'{day}' AND region = '{region}'"
        started = time.perf_counter()
        frame = spark.sql(sql)
        frame._jdf.queryExecution().executedPlan()
        plan_seconds = time.perf_counter() - started
        count = frame.collect()[0][0]
        total = time.perf_counter() - started
        if count != 3:
            raise SystemExit(f"Spark counted {count} rows in {day}/{region}, not 3")
        if index >= 2:
            planned.append(plan_seconds)
            answered.append(total)
    spark.stop()
    return {"plan_p50": statistics.median(planned), "answer_p50": statistics.median(answered)}


def report(rows: list[dict[str, Any]]) -> None:
    names = {
        "a": "(a) by filter, 1 partition",
        "b": "(b) by filter, 1,000 dt x 10 region",
        "c": "(c) by filter, 30-day range",
        "d": "(d) by names, 1,000",
    }
    print()
    print(
        "| db | call | partitions | Thrift p50 ms | Thrift p99 ms | first byte p50 ms | "
        "statlas API p50 ms | API p99 ms | Thrift / API |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        if row["shape"] in ("e", "spark"):
            continue
        print(
            f"| {row['backend']} | {names[row['shape']]} | {row['partitions']:,} | "
            f"{row['decoded_p50'] * 1000:.1f} | {row['decoded_p99'] * 1000:.1f} | "
            f"{row['first_p50'] * 1000:.1f} | {row['api_p50'] * 1000:.1f} | "
            f"{row['api_p99'] * 1000:.1f} | {row['decoded_p50'] / row['api_p50']:.2f} |"
        )
    print()
    print(
        "| db | get_table calls/s (one connection) | daemon RSS before MB "
        "| after large replies MB |"
    )
    print("|---|---:|---:|---:|")
    for row in rows:
        if row["shape"] == "spark":
            continue
        if row["shape"] == "e":
            print(
                f"| {row['backend']} | {row['get_table_per_s']:,.0f} | "
                f"{row['rss_before']:.0f} | {row['rss_after']:.0f} |"
            )


def report_spark(rows: list[dict[str, Any]]) -> None:
    spark = [r for r in rows if r["shape"] == "spark"]
    if not spark:
        return
    print()
    print(
        "| db | Spark: submitted to executed plan, p50 ms | to its answer, p50 ms "
        "| (a) through the Thrift API, p50 ms |"
    )
    print("|---|---:|---:|---:|")
    for row in spark:
        one = next(r for r in rows if r["backend"] == row["backend"] and r["shape"] == "a")
        print(
            f"| {row['backend']} | {row['plan_p50'] * 1000:.0f} | {row['answer_p50'] * 1000:.0f} "
            f"| {one['decoded_p50'] * 1000:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=5.0, help="get_table timing (5)")
    parser.add_argument("--backends", default="postgres,sqlite")
    parser.add_argument("--pg-url", default=os.environ.get("STATLAS_TEST_DB_URL", DEFAULT_PG))
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--spark", action="store_true", help="also time Spark's planning")
    parser.add_argument("--spark-runs", type=int, default=10)
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="statlas-hms-") as directory:
        for backend in args.backends.split(","):
            rows += bench(backend.strip(), args, Path(directory))
    report(rows)
    report_spark(rows)


if __name__ == "__main__":
    main()
