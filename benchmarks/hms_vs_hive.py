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
The partition directories exist before add_partitions (see make_directories, in
benchmarks/hms_vs_hive_metastores.py).

Usage: python benchmarks/hms_vs_hive.py [--runs 15] [--quick] [--days 200] [--regions 100]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.hms import RawClient
from benchmarks.hms_vs_hive_iceberg import quiet_pyiceberg
from benchmarks.hms_vs_hive_measures import measure
from benchmarks.hms_vs_hive_metastores import (
    SIDES,
    TABLE,
    Side,
    dates,
    fill,
    listing,
    make_directories,
    region_names,
    statlas_metastore,
    thrift_client,
)
from benchmarks.hms_vs_hive_report import report
from benchmarks.real_hive import real_hive


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
