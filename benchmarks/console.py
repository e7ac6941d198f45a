"""Time to first render of the console's table page (issue 48), for a table of 10
partitions and one of 1,000,000, on a warm daemon, on SQLite and PostgreSQL.

    python benchmarks/console.py [--backends sqlite,postgres] [--runs 20]
                                 [--days 2703] [--pg-url URL] [--rebuild]

Tables (kept between runs in benchmarks/.data/console/ and the PostgreSQL schema
bench_console; --rebuild builds them again):

  small  10 partitions (dt x region), 2,000 rows each, written as Parquet and collected
         by `statlas collect` (Spark local[2]): every figure of the page is there
  wide   --days x 370 regions = 1,000,110 partitions registered from a listing
         (benchmarks/partition_lookup.py's): no data files, so no statistics are
         collected; the page merges what there is (nothing) and pages the partitions

PostgreSQL's tables are vacuumed first, as autovacuum would have done by then. Per backend:
one `statlas daemon` (no Thrift API, no token), warmed by opening each
table's page twice. Then --runs times each page, alternating between the two tables, in
one headless Debian chromium (Playwright): a fresh page each time, the time from the
navigation's start to the moment the page is whole (the table's facts, the columns with
their statistics and histograms, and the first page of partitions drawn; no section still
busy: the console's `statlas:drawn` mark), read from the page's own clock (the mark's
time since the navigation started). p50, p95 and max, and the
ratio of the wide table's p50 to the small one's.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent))
from partition_lookup import build_listing

from metastore import Metastore
from metastore.catalog.tables import register_listing
from metastore.errors import UnknownTable

HERE = Path(__file__).resolve().parent
DATA = HERE / ".data" / "console"
STATLAS = Path(sys.executable).parent / "statlas"
DEFAULT_PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
SCHEMA = "bench_console"
SMALL, WIDE = "small", "wide"


def database_url(backend: str, args: argparse.Namespace) -> str:
    if backend == "sqlite":
        return f"sqlite:///{DATA / 'console.db'}"
    url = make_url(args.pg_url).update_query_dict({"options": f"-csearch_path={SCHEMA}"})
    return url.render_as_string(hide_password=False)


def prepare(backend: str, args: argparse.Namespace) -> str:
    """The backend's metastore with `small` collected and `wide` registered."""
    DATA.mkdir(parents=True, exist_ok=True)
    if args.rebuild:
        if backend == "sqlite":
            (DATA / "console.db").unlink(missing_ok=True)
        else:
            engine = create_engine(args.pg_url)
            with engine.begin() as conn:
                conn.execute(text(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
            engine.dispose()
    if backend == "postgres":
        engine = create_engine(args.pg_url)
        with engine.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"))
        engine.dispose()
    url = database_url(backend, args)
    metastore = Metastore(url)
    metastore.upgrade()
    if not _registered(metastore, WIDE):
        started = time.perf_counter()
        listing = build_listing(args.days, location="/lake/wide")
        register_listing(metastore.engine, WIDE, listing)
        print(
            f"[{backend}] wide: {len(listing.partitions):,} partitions registered in "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
    if not _registered(metastore, SMALL):
        lake = _write_small(DATA / "small")
        metastore.register_table(SMALL, str(lake))
        subprocess.run(
            [str(STATLAS), "--db", url, "collect", SMALL, "--master", "local[2]"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        print(f"[{backend}] small: collected", flush=True)
    if backend == "postgres":
        _settle(metastore)
    metastore.engine.dispose()
    return url


def _settle(metastore: Metastore) -> None:
    """VACUUM (ANALYZE) the wide table's partitions, as autovacuum does within a minute of
    a bulk registration: until then PostgreSQL counts 1,000,000 rows by reading the heap
    (index-only scans need the visibility map), 0.5 s instead of 0.05 s."""
    table_id = metastore.table(WIDE).id
    with metastore.engine.connect() as conn:
        conn = conn.execution_options(isolation_level="AUTOCOMMIT")
        for name in (f"partitions_{table_id}", "partition_stats"):
            conn.execute(text(f"VACUUM (ANALYZE) {name}"))


def _registered(metastore: Metastore, name: str) -> bool:
    try:
        metastore.table(name)
    except UnknownTable:
        return False
    return True


def _write_small(root: Path) -> Path:
    if root.exists():
        return root
    rng = random.Random(48)
    for day in range(5):
        for region in ("emea", "apac"):
            directory = root / f"dt=2024-03-{day + 1:02d}" / f"region={region}"
            directory.mkdir(parents=True)
            rows = 2_000
            pq.write_table(
                pa.table(
                    {
                        "order_id": pa.array(rng.sample(range(10_000_000), rows), pa.int64()),
                        "customer": [f"c{int(rng.paretovariate(1.2)) % 5000}" for _ in range(rows)],
                        "amount": [round(rng.lognormvariate(3, 1), 2) for _ in range(rows)],
                    }
                ),
                directory / "part-00000.parquet",
            )
    return root


@contextlib.contextmanager
def daemon(url: str) -> Iterator[str]:
    port = _free_port()
    log = DATA / f"daemon-{port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [str(STATLAS), "daemon", "--db", url, "--port", str(port), "--thrift-port", "0"],
            cwd=DATA,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    address = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not _answers(address + "/health"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start: see {log}")
            time.sleep(0.2)
        yield address
    finally:
        process.terminate()
        process.wait(30)


def _answers(url: str) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2):
        return True
    return False


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def render_ms(browser: Any, address: str, table: str) -> float:
    page = browser.new_page(viewport={"width": 1366, "height": 860})
    try:
        page.goto(f"{address}/#/table/{table}")
        page.wait_for_selector("main[aria-busy=false] #partition-list", timeout=120_000)
        drawn = page.evaluate("performance.getEntriesByName('statlas:drawn')[0].startTime")
        return float(drawn)
    finally:
        page.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--days", type=int, default=2703, help="x 370 regions: the wide table")
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium")
    if executable is None:
        raise SystemExit("chromium is not installed: `make tools` installs Debian's chromium")
    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable)
        for backend in args.backends.split(","):
            url = prepare(backend, args)
            with daemon(url) as address:
                for table in (SMALL, WIDE, SMALL, WIDE):  # warm-up
                    render_ms(browser, address, table)
                times: dict[str, list[float]] = {SMALL: [], WIDE: []}
                for _ in range(args.runs):
                    for table in (SMALL, WIDE):
                        times[table].append(render_ms(browser, address, table))
                partitions = {SMALL: 10, WIDE: args.days * 370}
                for table in (SMALL, WIDE):
                    rows.append(
                        {
                            "backend": backend,
                            "table": table,
                            "partitions": partitions[table],
                            "p50": statistics.median(times[table]),
                            "p95": percentile(times[table], 0.95),
                            "max": max(times[table]),
                            "ratio": statistics.median(times[table])
                            / statistics.median(times[SMALL]),
                        }
                    )
        browser.close()
    print(f"\ntable page, time to first whole render (ms), {args.runs} runs each, warm daemon")
    print("| backend | table | partitions | p50 | p95 | max | p50 / small's |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['backend']} | {r['table']} | {r['partitions']:,} | {r['p50']:.0f} | "
            f"{r['p95']:.0f} | {r['max']:.0f} | {r['ratio']:.2f} |"
        )


if __name__ == "__main__":
    main()
