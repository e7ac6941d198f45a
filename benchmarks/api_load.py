"""HTTP load on the daemon's partition lookup API (servers/http/) over PostgreSQL.

A table of 100,000 partitions (1,000 days x 100 regions, dt date x region string) is
registered from a synthetic listing in the schema `bench_api` of the local PostgreSQL (so
nothing else is disturbed). The API runs under uvicorn in a subprocess, with 1 and then 2
worker processes; a load generator on loopback (asyncio, raw HTTP/1.1 over keep-alive
connections: the leanest client Python has, since it shares the machine's cores with the
server and PostgreSQL) sends lookups for --seconds after a warm-up. Lookups take turns
over four sizes: N dates x 1 region for N = 1, 10, 100 and 1,000 (N + 1 values, N
partitions in the answer). An answer counts as an error unless it is a 200 whose count is
N. Target on a 2-core machine: >= 1,000 lookups/s, p99 <= 50 ms, no errors.

Usage: python benchmarks/api_load.py [--seconds 60] [--workers 1,2] [--methods post,get]
       [--connections 16] [--partitions 100000] [--pg-url URL] [--port 8765]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

DEFAULT_PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
SCHEMA = "bench_api"
TABLE = "events"
REGIONS = 100
FIRST_DAY = dt.date(2020, 1, 1)
SIZES: tuple[int, ...] = (1, 10, 100, 1_000)  # the default mix (--sizes)
REQUESTS_PER_SIZE = 200  # distinct random requests per size, drawn before the run
WARM_UP_SECONDS = 5
TARGET_RATE, TARGET_P99_MS = 1_000, 50


def app_from_env() -> Any:
    """The uvicorn factory: the API over $STATLAS_DB_URL (`uvicorn --factory`)."""
    from servers.http.app import create_app

    return create_app(os.environ["STATLAS_DB_URL"])


# --- the table ---------------------------------------------------------------------------


def regions() -> list[str]:
    return [f"region-{i:03d}" for i in range(REGIONS)]


def prepare(pg_url: str, partitions: int) -> tuple[str, int]:
    """A fresh schema holding `events` registered from a listing; its URL and day count."""
    from metastore import Metastore
    from metastore.catalog.discovery import Column, DiscoveredDataset, DiscoveredPartition
    from metastore.catalog.tables import register_listing

    admin = create_engine(pg_url)
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
        conn.execute(text(f"CREATE SCHEMA {SCHEMA}"))
    url = make_url(pg_url).update_query_dict({"options": f"-csearch_path={SCHEMA}"})
    rendered = url.render_as_string(hide_password=False)
    days = max(1, partitions // REGIONS)
    listing = []
    for d in range(days):
        day = (FIRST_DAY + dt.timedelta(d)).isoformat()
        for region in regions():
            name = f"dt={day}/region={region}"
            listing.append(DiscoveredPartition(name, (day, region), f"/lake/{name}", 1, 1 << 20, 1))
    columns = [Column("user_id", "bigint"), Column("event", "string")]
    dataset = DiscoveredDataset("/lake", "parquet", ["dt", "region"], listing, "x", columns)
    ms = Metastore(rendered)
    ms.upgrade()
    report = register_listing(ms.engine, TABLE, dataset)
    with admin.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")
        table_id = conn.execute(
            text(f"SELECT id FROM {SCHEMA}.catalog_tables WHERE name = :n"), {"n": TABLE}
        ).scalar_one()
        conn.execute(text(f"VACUUM (ANALYZE) {SCHEMA}.partitions_{table_id}"))
    ms.dispose()
    admin.dispose()
    print(f"registered {report.partitions:,} partitions ({days} days x {REGIONS} regions)")
    return rendered, days


# --- the requests ------------------------------------------------------------------------


def draw_requests(method: str, days: int, rng: random.Random) -> dict[int, list[bytes]]:
    """Raw HTTP/1.1 requests, REQUESTS_PER_SIZE for each size, ready to write."""
    all_days = [(FIRST_DAY + dt.timedelta(d)).isoformat() for d in range(days)]
    drawn: dict[int, list[bytes]] = {}
    for size in SIZES:
        drawn[size] = [
            _request(method, rng.sample(all_days, size), rng.choice(regions()))
            for _ in range(REQUESTS_PER_SIZE)
        ]
    return drawn


def _request(method: str, days: list[str], region: str) -> bytes:
    path = f"/tables/{TABLE}/partitions"
    if method == "get":
        query = f"?in=dt={','.join(days)}&in=region={region}"
        return f"GET {path}{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    body = json.dumps({"in": {"dt": days, "region": [region]}}).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


# --- the server --------------------------------------------------------------------------


@contextmanager
def server(url: str, workers: int, port: int, http: str) -> Iterator[subprocess.Popen[bytes]]:
    """uvicorn serving the API with `workers` processes, until the block ends."""
    command = [
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "api_load:app_from_env",
        "--app-dir",
        str(Path(__file__).parent),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--http",
        http,
        "--no-access-log",
        "--log-level",
        "warning",
    ]
    repo = str(Path(__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "STATLAS_DB_URL": url, "PYTHONPATH": path}
    process = subprocess.Popen(command, env=env)
    try:
        _wait_healthy(port, process)
        yield process
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_healthy(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"uvicorn exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the API did not become healthy within 60 s")


APPLICATION_NAME = "statlas_api_load"  # the server's connections, in pg_stat_activity


@dataclass
class CpuSnapshot:
    """CPU seconds used so far, by whom (from /proc, Linux): the server's process tree, each
    PostgreSQL process, this process (the load generator) and the whole machine (busy and
    total jiffies of all cores, in seconds)."""

    at: float
    server: float
    postgres: dict[int, float]
    client: float
    busy: float
    total: float

    @staticmethod
    def take(server_pid: int) -> CpuSnapshot:
        ticks = os.sysconf("SC_CLK_TCK")
        parents: dict[int, int] = {}
        used: dict[int, float] = {}
        postgres: dict[int, float] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                text = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            comm = text[text.index("(") + 1 : text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            pid, seconds = int(entry.name), (int(fields[11]) + int(fields[12])) / ticks
            parents[pid], used[pid] = int(fields[1]), seconds
            if comm == "postgres":
                postgres[pid] = seconds
        children: dict[int, list[int]] = {}
        for pid, parent in parents.items():
            children.setdefault(parent, []).append(pid)
        tree, pending = 0.0, [server_pid]
        while pending:
            pid = pending.pop()
            tree += used.get(pid, 0.0)
            pending += children.get(pid, [])
        values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = values[3] + values[4]
        return CpuSnapshot(
            time.perf_counter(),
            tree,
            postgres,
            used.get(os.getpid(), 0.0),
            (sum(values) - idle) / ticks,
            sum(values) / ticks,
        )

    def cores_since(self, before: CpuSnapshot, backends: set[int]) -> dict[str, float]:
        """Cores used on average between `before` and this snapshot: by the server, by the
        PostgreSQL `backends` that served it, by the load generator, and by the rest of
        the machine (other processes, PostgreSQL's serving others, the kernel's network
        work); `busy` is the share of all cores in use."""
        wall = self.at - before.at
        postgres = sum(
            self.postgres[pid] - before.postgres.get(pid, 0.0)
            for pid in backends
            if pid in self.postgres
        )
        cores = {
            "server": (self.server - before.server) / wall,
            "postgres": postgres / wall,
            "client": (self.client - before.client) / wall,
        }
        busy = (self.busy - before.busy) / wall
        cores["rest"] = max(0.0, busy - sum(cores.values()))
        cores["busy"] = (self.busy - before.busy) / (self.total - before.total)
        cores["wall"] = wall
        return cores


def server_backends(url: str) -> set[int]:
    """The PostgreSQL backends connected now under the server's application_name."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT pid FROM pg_stat_activity WHERE application_name = :name"),
                {"name": APPLICATION_NAME},
            )
            return {int(pid) for (pid,) in rows}
    finally:
        engine.dispose()


# --- the load ----------------------------------------------------------------------------


@dataclass
class Outcome:
    latencies: dict[int, list[float]] = field(default_factory=lambda: {s: [] for s in SIZES})
    errors: int = 0
    first_error: str | None = None
    answered: int = 0  # every answer, warm-up included

    def add(self, size: int, seconds: float, ok: bool, detail: str) -> None:
        self.latencies[size].append(seconds)
        if not ok:
            self.errors += 1
            self.first_error = self.first_error or detail


async def _connection(
    port: int,
    requests: dict[int, list[bytes]],
    start: int,
    measure_from: float,
    stop_at: float,
    outcome: Outcome,
) -> None:
    """One keep-alive connection sending lookups one after another, sizes taking turns."""
    rng = random.Random(start)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    turn = start
    while True:
        size = SIZES[turn % len(SIZES)]
        turn += 1
        sent = time.perf_counter()
        if sent >= stop_at:
            break
        writer.write(rng.choice(requests[size]))
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n"):
            if line[:15].lower() == b"content-length:":
                length = int(line[15:])
        body = await reader.readexactly(length)
        seconds = time.perf_counter() - sent
        outcome.answered += 1
        ok = status == 200 and body.startswith(
            b'{"table":"%s","count":%d,' % (TABLE.encode(), size)
        )
        if sent >= measure_from:
            outcome.add(size, seconds, ok, f"{status} {body[:200]!r}")
    writer.close()
    await writer.wait_closed()


async def _drive(
    port: int, requests: dict[int, list[bytes]], seconds: float, connections: int
) -> Outcome:
    outcome = Outcome()
    now = time.perf_counter()
    measure_from, stop_at = now + WARM_UP_SECONDS, now + WARM_UP_SECONDS + seconds
    await asyncio.gather(
        *(
            _connection(port, requests, i, measure_from, stop_at, outcome)
            for i in range(connections)
        )
    )
    return outcome


def run_async(coroutine: Any) -> Any:
    """uvloop when it is installed (a leaner load generator), else asyncio."""
    if importlib.util.find_spec("uvloop"):
        import uvloop  # type: ignore[import-not-found,unused-ignore]

        return uvloop.run(coroutine)
    return asyncio.run(coroutine)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_load(
    url: str, days: int, workers: int, method: str, args: argparse.Namespace
) -> dict[str, Any]:
    requests = draw_requests(method, days, random.Random(args.seed))
    served = make_url(url).update_query_dict({"application_name": APPLICATION_NAME})
    with server(
        served.render_as_string(hide_password=False), workers, args.port, args.http
    ) as process:
        before = CpuSnapshot.take(process.pid)
        outcome = run_async(_drive(args.port, requests, args.seconds, args.connections))
        after = CpuSnapshot.take(process.pid)
        cores = after.cores_since(before, server_backends(url))
    every = [s for values in outcome.latencies.values() for s in values]
    rate = len(every) / args.seconds
    return {
        "workers": workers,
        "method": method.upper(),
        "lookups": len(every),
        "rate": rate,
        "p50": statistics.median(every) * 1000,
        "p99": percentile(every, 0.99) * 1000,
        "by_size": {
            size: (statistics.median(v) * 1000, percentile(v, 0.99) * 1000, len(v) / args.seconds)
            for size, v in outcome.latencies.items()
            if v
        },
        "errors": outcome.errors,
        "first_error": outcome.first_error,
        "cores": cores,
        # CPU of the server and PostgreSQL together per lookup answered (warm-up included)
        "cpu_ms": (cores["server"] + cores["postgres"]) * cores["wall"] / outcome.answered * 1000
        if outcome.answered
        else 0.0,
    }


# --- the report --------------------------------------------------------------------------


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> None:
    fast = {name: importlib.util.find_spec(name) is not None for name in ("httptools", "uvloop")}
    http = args.http if args.http != "auto" else ("httptools" if fast["httptools"] else "h11")
    loop = "uvloop" if fast["uvloop"] else "asyncio"
    print(
        f"\n{args.seconds:.0f} s per run after {WARM_UP_SECONDS} s of warm-up, "
        f"{args.connections} keep-alive connections, uvicorn --http {http} --loop {loop}, "
        f"{os.cpu_count()} cores; lookups of N dates x 1 region, N in {SIZES} in turn\n"
    )
    print(
        "| workers | method | lookups/s | p50 ms | p99 ms | errors | server cores | "
        "PostgreSQL cores | load generator cores | rest of machine cores | machine busy | "
        "server + PostgreSQL CPU ms per lookup | met |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        met = row["rate"] >= TARGET_RATE and row["p99"] <= TARGET_P99_MS and row["errors"] == 0
        cores = row["cores"]
        print(
            f"| {row['workers']} | {row['method']} | {row['rate']:,.0f} | {row['p50']:.1f} | "
            f"{row['p99']:.1f} | {row['errors']} | {cores['server']:.2f} | "
            f"{cores['postgres']:.2f} | {cores['client']:.2f} | {cores['rest']:.2f} | "
            f"{cores['busy']:.0%} | {row['cpu_ms']:.2f} | {'yes' if met else 'NO'} |"
        )
    print(
        f"\ntarget: >= {TARGET_RATE:,} lookups/s, p99 <= {TARGET_P99_MS} ms, no errors; "
        "rest of machine = other processes and the kernel's own work (loopback networking)"
    )
    print("\n| workers | method | N dates | lookups/s | p50 ms | p99 ms |")
    print("|---:|---|---:|---:|---:|---:|")
    for row in rows:
        for size, (p50, p99, rate) in row["by_size"].items():
            print(
                f"| {row['workers']} | {row['method']} | {size:,} | {rate:,.0f} | {p50:.1f} | "
                f"{p99:.1f} |"
            )
    for row in rows:
        if row["first_error"]:
            print(f"first error ({row['workers']} workers, {row['method']}): {row['first_error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--methods", default="post,get")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument(
        "--http", default="auto", help="uvicorn's HTTP parser (auto: httptools if installed)"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument(
        "--sizes", default="1,10,100,1000", help="dates per lookup, taking turns (the mix)"
    )
    parser.add_argument(
        "--reuse", action="store_true", help="keep the table a previous run registered"
    )
    parser.add_argument("--pg-url", default=os.environ.get("STATLAS_TEST_DB_URL", DEFAULT_PG))
    args = parser.parse_args()
    global SIZES
    SIZES = tuple(int(n) for n in args.sizes.split(","))
    if args.reuse:
        kept = make_url(args.pg_url).update_query_dict({"options": f"-csearch_path={SCHEMA}"})
        url, days = kept.render_as_string(hide_password=False), args.partitions // REGIONS
    else:
        url, days = prepare(args.pg_url, args.partitions)
    rows = []
    for method in args.methods.split(","):
        for workers in (int(w) for w in args.workers.split(",")):
            print(f"{workers} worker(s), {method.upper()} ...", flush=True)
            rows.append(run_load(url, days, workers, method.strip().lower(), args))
    report(rows, args)


if __name__ == "__main__":
    main()
