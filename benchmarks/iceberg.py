"""statlas on an Iceberg copy of TPC-H lineitem partitioned by day(l_shipdate), beside Spark's
ANALYZE of the same rows as Parquet (issue 50, docs/iceberg.md).

    python benchmarks/iceberg.py [--scale 1] [--repeat 3] [--master local[2]]
                                 [--postgres postgresql+psycopg2://127.0.0.1/test]
                                 [--appends 5] [--every 1s]

In one run, one SparkSession, medians of --repeat (run `make data` first):
  write          pyiceberg writes the rows once into a SQL catalog's table (not compared)
  floor          one Spark scan of the snapshot's data files: count, min and max of every
                 column per partition
  analyze        Spark's ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS (histograms on)
                 of the same rows as a Parquet table partitioned by l_shipdate
  statlas        `table register --iceberg-table` + `collect` (every statistic, per partition,
                 and the Puffin statistics file published and committed) into SQLite and,
                 with --postgres, PostgreSQL; with the time spent publishing
  +1 append      `collect` after an append of one new day (its partition alone scanned)
  daemon         a running `statlas daemon` scheduled --every: the seconds from each of
                 --appends appends' commits to its snapshot's statistics file
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.transforms import DayTransform
from pyspark.sql import functions as F

from collectors.collect import collect
from collectors.iceberg.listing import local_path, snapshot_listing
from collectors.iceberg.register import register_iceberg_table
from collectors.iceberg.source import IcebergSource
from collectors.spark_session import spark_session
from metastore import Metastore
from metastore.catalog.tables import drop_table, list_tables

DATA = Path(__file__).resolve().parent / ".data"
STATLAS = Path(sys.executable).parent / "statlas"


def timed(function: Any) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def iceberg_copy(source: Path, work: Path) -> tuple[SqlCatalog, float]:
    """lineitem written by pyiceberg into a SQL catalog, partitioned by day(l_shipdate)."""
    rows = ds.dataset(str(source), format="parquet", partitioning="hive").to_table()
    shipdate = rows["l_shipdate"].cast(pa.string()).cast(pa.date32())
    rows = rows.drop_columns(["l_shipdate"]).append_column("l_shipdate", shipdate)
    warehouse = work / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog(
        "default", uri=f"sqlite:///{work / 'iceberg.db'}", warehouse=f"file://{warehouse}"
    )
    catalog.create_namespace("tpch")
    table = catalog.create_table("tpch.lineitem", rows.schema)
    with table.update_spec() as spec:
        spec.add_field("l_shipdate", DayTransform(), "l_shipdate_day")
    started = time.perf_counter()
    table.append(rows)
    return catalog, time.perf_counter() - started


def new_day(catalog: SqlCatalog, day: dt.date, count: int = 1_000) -> None:
    """An append of `count` rows shipped on `day` (a day lineitem has no rows of)."""
    table = catalog.load_table("tpch.lineitem")
    template = table.scan(limit=count).to_arrow()
    dates = pa.array([day] * template.num_rows, pa.date32())
    index = template.schema.get_field_index("l_shipdate")
    table.append(template.set_column(index, "l_shipdate", dates))


def published(catalog: SqlCatalog) -> bool:
    table = catalog.load_table("tpch.lineitem")
    current = table.current_snapshot()
    return current is not None and any(
        s.snapshot_id == current.snapshot_id for s in table.metadata.statistics
    )


def first_run_done(ms: Metastore) -> bool:
    """Whether the daemon's first scheduled collection succeeded."""
    from sqlalchemy import func, select

    from metastore.models import CollectionRun

    with ms.engine.connect() as conn:
        done = conn.execute(
            select(func.count()).where(CollectionRun.status == "succeeded")
        ).scalar_one()
    return bool(done)


def daemon_latencies(
    catalog: SqlCatalog, source: IcebergSource, work: Path, appends: int, every: str
) -> list[float]:
    """Seconds from each append's commit to its statistics file, on a running daemon."""
    db = work / "daemon.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATLAS_")}
    env.update(STATLAS_DB_URL=f"sqlite:///{db}", SPARK_LOCAL_IP="127.0.0.1")

    def statlas(*argv: str) -> None:
        subprocess.run([str(STATLAS), *argv], env=env, check=True, capture_output=True)

    statlas("db", "upgrade")
    ms = Metastore(f"sqlite:///{db}")
    register_iceberg_table(ms.ready(), "lineitem", source)
    statlas("schedule", "add", "lineitem", "--every", every)
    log = open(work / "daemon.log", "wb")  # noqa: SIM115 (the daemon's lifetime)
    daemon = subprocess.Popen(
        [str(STATLAS), "daemon", "--port", "0", "--thrift-port", "0"],
        env=env,
        cwd=work,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    latencies = []
    try:
        deadline = time.monotonic() + 600
        while not first_run_done(ms):  # the first tick: Spark starts, everything collected
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit((work / "daemon.log").read_text()[-2000:])
            time.sleep(0.5)
        for i in range(appends):
            new_day(catalog, dt.date(2000, 1, 1) + dt.timedelta(days=i))
            committed = time.monotonic()
            while not published(catalog):
                if time.monotonic() - committed > 300:
                    raise SystemExit((work / "daemon.log").read_text()[-2000:])
                time.sleep(0.05)
            latencies.append(time.monotonic() - committed)
    finally:
        daemon.terminate()
        daemon.wait(60)
        log.close()
    return latencies


def daemon_line(every: str, latencies: list[float]) -> str:
    return (
        f"daemon --every {every}: commit to published statistics, {len(latencies)} appends: "
        f"median {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s "
        f"({', '.join(f'{s:.2f}' for s in latencies)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--postgres", help="also collect into this PostgreSQL metastore")
    parser.add_argument("--appends", type=int, default=5)
    parser.add_argument("--every", default="1s", help="the daemon's schedule")
    parser.add_argument(
        "--reuse", type=Path, help="the work directory of an earlier run: its Iceberg copy"
    )
    parser.add_argument(
        "--daemon-only", action="store_true", help="only the daemon's commit-to-publication"
    )
    args = parser.parse_args()
    source = DATA / f"tpch-sf{args.scale}" / "uniform" / "lineitem"
    if not source.exists():
        raise SystemExit(f"{source} is missing: run `make data` first")
    work = Path(tempfile.mkdtemp(prefix="statlas-iceberg-"))
    if args.reuse is not None:  # the earlier run's copy, as that run left it
        catalog = SqlCatalog("default", uri=f"sqlite:///{args.reuse / 'iceberg.db'}")
        write_seconds = float("nan")
    else:
        catalog, write_seconds = iceberg_copy(source, work)
    iceberg = IcebergSource("tpch.lineitem", str(catalog.engine.url))
    if args.daemon_only:
        latencies = daemon_latencies(catalog, iceberg, work, args.appends, args.every)
        print(daemon_line(args.every, latencies))
        return
    listing = snapshot_listing(catalog.load_table("tpch.lineitem"))
    files = [local_path(f.path) for fs in listing.files.values() for f in fs]
    iceberg_bytes = sum(f.size for fs in listing.files.values() for f in fs)

    parquet = work / "lineitem-parquet"
    shutil.copytree(source, parquet)
    spark = spark_session(args.master)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    spark.sql(f"CREATE TABLE lineitem USING parquet LOCATION '{parquet}'")
    spark.sql("ALTER TABLE lineitem RECOVER PARTITIONS")
    columns = spark.read.parquet(files[0]).columns
    floor_aggs = [F.count(F.lit(1))] + [
        agg(F.col(c)) for c in columns for agg in (F.count, F.min, F.max)
    ]

    results: dict[str, list[float]] = {
        k: [] for k in ("floor", "analyze", "sqlite", "sqlite-publish", "pg", "pg-publish")
    }
    for attempt in range(args.repeat):
        results["floor"].append(
            timed(
                lambda: spark.read.parquet(*files).groupBy("l_shipdate").agg(*floor_aggs).collect()
            )
        )
        results["analyze"].append(
            timed(
                lambda: spark.sql(
                    "ANALYZE TABLE lineitem COMPUTE STATISTICS FOR ALL COLUMNS"
                ).collect()
            )
        )
        targets = [("sqlite", f"sqlite:///{work / f'statlas-{attempt}.db'}")]
        if args.postgres:
            targets.append(("pg", args.postgres))
        for label, url in targets:
            ms = Metastore(url)
            ms.upgrade()
            if label == "pg" and any(t.name == "lineitem" for t in list_tables(ms.engine)):
                drop_table(ms.engine, "lineitem")  # a clean slate in the shared database
            started = time.perf_counter()
            register_iceberg_table(ms.ready(), "lineitem", iceberg)
            report = collect(ms.engine, "lineitem", spark=spark, refresh=False, full=True)
            results[label].append(time.perf_counter() - started)
            results[f"{label}-publish"].append(report.timings.get("publish", 0.0))
            assert report.published is not None
            ms.dispose()

    ms = Metastore(f"sqlite:///{work / 'statlas-0.db'}")
    new_day(catalog, dt.date(1999, 12, 1))
    plus_one = collect(ms.ready(), "lineitem", spark=spark)
    spark.stop()
    latencies = daemon_latencies(catalog, iceberg, work, args.appends, args.every)

    median = {k: statistics.median(v) for k, v in results.items() if v}
    print(f"\nlineitem SF {args.scale}: {len(listing.files):,} day partitions, "
          f"{len(files):,} data files, {iceberg_bytes / 1e6:.1f} MB of Iceberg Parquet; "
          f"pyiceberg wrote it in {write_seconds:.1f} s")  # fmt: skip
    print(f"medians of {args.repeat}, {args.master}\n")
    print("| run | s | ratio |")
    print("|---|---:|---|")
    floor = median["floor"]
    print(f"| floor (the snapshot's files, count/min/max per partition) | {floor:.1f} | 1.00 x |")
    print(f"| Spark ANALYZE FOR ALL COLUMNS, histograms (Parquet copy) | {median['analyze']:.1f} | "
          f"{median['analyze'] / median['floor']:.2f} x floor |")  # fmt: skip
    for label, name in (("sqlite", "SQLite"), ("pg", "PostgreSQL")):
        if label in median:
            print(
                f"| statlas register + collect + publish, {name} | {median[label]:.1f} | "
                f"{median[label] / median['floor']:.2f} x floor, "
                f"{median[label] / median['analyze']:.2f} x ANALYZE; publishing "
                f"{median[label + '-publish']:.2f} s |"
            )
    print(f"| +1 append (one new day), SQLite | {plus_one.seconds:.2f} | "
          f"{plus_one.partitions_scanned} partition scanned |")  # fmt: skip
    print("\n" + daemon_line(args.every, latencies))
    print(f"\nwork directory: {work}")


if __name__ == "__main__":
    main()
