"""statlas collect beside Spark's ANALYZE on TPC-H lineitem partitioned by l_shipdate.

    python benchmarks/collect.py [--scale 1] [--repeat 3] [--master local[2]]
                                 [--postgres postgresql+psycopg2://127.0.0.1/test]

In one run, one SparkSession, after a warm-up (one floor scan and one collection, not
counted), medians of --repeat (run `make data` first):
  floor          one scan computing count, min and max of every column per partition,
                 reading the files as statlas does (a DataFrame over the table's directory,
                 listed by the driver in local mode: collectors.spark_session.listing_settings)
  floor-job      the same scan with the files listed by Spark's listing job (its default)
  analyze        ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS, histograms on
  analyze-driver the same ANALYZE with the files listed by the driver, as statlas lists them
  analyze-part   ANALYZE TABLE ... PARTITION (l_shipdate) COMPUTE STATISTICS (row counts)
  statlas full   statlas collect --full (every statistic, per partition) into SQLite and,
                 with --postgres, into PostgreSQL (with the share of the run spent writing),
                 by the one-pass JVM scan (STATLAS_SCAN=jvm)
  full rows      the same collection by the one-pass scan reading Spark's rows, not the
                 files' columnar batches (spark.statlas.scan.columnar=false; before 12-07)
  spark aggs     the same collection by Spark's own aggregates (STATLAS_SCAN=spark)
  statlas +1     statlas collect after one new partition appears
  bytes          what the full collection wrote: each database's growth, and each stored
                 piece's bytes (benchmarks/metastore_bytes.py), beside lineitem's Parquet bytes

--statlas-only skips the floor, ANALYZE and Spark's aggregates (the bytes and statlas's own
times alone).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from metastore_bytes import bytes_table, database_bytes, parquet_bytes, piece_bytes
from pyspark.sql import functions as F

from collectors.collect import collect
from collectors.spark_session import listing_settings, session_settings, spark_session
from metastore import Metastore

DATA = Path(__file__).resolve().parent / ".data"


def timed(function: Any) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--postgres", help="also collect into this PostgreSQL metastore")
    parser.add_argument(
        "--statlas-only", action="store_true", help="no floor, ANALYZE or Spark aggregates"
    )
    args = parser.parse_args()
    source = DATA / f"tpch-sf{args.scale}" / "uniform" / "lineitem"
    if not source.exists():
        raise SystemExit(f"{source} is missing: run `make data` first")
    work = Path(tempfile.mkdtemp(prefix="statlas-collect-"))
    lineitem = work / "lineitem"
    shutil.copytree(source, lineitem)
    spark = spark_session(args.master)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    spark.sql(f"CREATE TABLE lineitem USING parquet LOCATION '{lineitem}'")
    spark.sql("ALTER TABLE lineitem RECOVER PARTITIONS")
    columns = [c for c in spark.table("lineitem").columns if c != "l_shipdate"]
    floor_aggs = [F.count(F.lit(1))] + [
        agg(F.col(c)) for c in columns for agg in (F.count, F.min, F.max)
    ]
    results: dict[str, list[float]] = {
        k: []
        for k in (
            "floor",
            "floor-job",
            "analyze",
            "analyze-driver",
            "analyze-part",
            "full",
            "write",
            "full-rows",
            "spark-aggs",
            "pg",
            "pg-write",
            "plus1",
        )
    }
    partitions = 0
    written: dict[str, int] = {}
    pieces: dict[str, int] = {}
    # a warm-up, not counted: the JVM's classes and JIT, the files in the page cache
    spark.read.parquet(str(lineitem)).groupBy("l_shipdate").agg(*floor_aggs).collect()
    warm = Metastore(f"sqlite:///{work / 'warm-up.db'}")
    warm.upgrade()
    warm.register_table("lineitem", str(lineitem))
    collect(warm.engine, "lineitem", full=True, spark=spark, scan="jvm")
    warm.dispose()
    for attempt in range(args.repeat):

        def floor() -> None:
            spark.read.parquet(str(lineitem)).groupBy("l_shipdate").agg(*floor_aggs).collect()

        def analyze() -> None:
            spark.sql("ANALYZE TABLE lineitem COMPUTE STATISTICS FOR ALL COLUMNS").collect()

        if not args.statlas_only:
            with session_settings(spark, listing_settings(spark)):
                results["floor"].append(timed(floor))
            results["floor-job"].append(timed(floor))
            results["analyze"].append(timed(analyze))
            with session_settings(spark, listing_settings(spark)):
                results["analyze-driver"].append(timed(analyze))
            results["analyze-part"].append(
                timed(
                    lambda: spark.sql(
                        "ANALYZE TABLE lineitem PARTITION (l_shipdate) COMPUTE STATISTICS"
                    ).collect()
                )
            )
        db = work / f"statlas-{attempt}.db"
        ms = Metastore(f"sqlite:///{db}")
        ms.upgrade()
        ms.register_table("lineitem", str(lineitem))
        before = database_bytes(ms.engine)
        report = collect(ms.engine, "lineitem", full=True, spark=spark, scan="jvm")
        written["SQLite"] = database_bytes(ms.engine) - before
        pieces = piece_bytes(ms.engine, "lineitem")
        results["full"].append(report.seconds)
        results["write"].append(report.timings["write"])
        partitions = report.partitions_scanned
        if not args.statlas_only:
            rows_db = Metastore(f"sqlite:///{work / f'rows-{attempt}.db'}")
            rows_db.upgrade()
            rows_db.register_table("lineitem", str(lineitem))
            with session_settings(spark, {"spark.statlas.scan.columnar": "false"}):
                by_rows = collect(rows_db.engine, "lineitem", full=True, spark=spark, scan="jvm")
            results["full-rows"].append(by_rows.seconds)
            rows_db.dispose()
            by_spark = collect(ms.engine, "lineitem", full=True, spark=spark, scan="spark")
            results["spark-aggs"].append(by_spark.seconds)
        if args.postgres:
            pg = Metastore(args.postgres)
            pg.upgrade()
            if any(t.name == "lineitem" for t in pg.tables()):
                pg.drop_table("lineitem")
            pg.register_table("lineitem", str(lineitem))
            before = database_bytes(pg.engine)
            on_pg = collect(pg.engine, "lineitem", full=True, spark=spark, scan="jvm")
            written["PostgreSQL"] = database_bytes(pg.engine) - before
            results["pg"].append(on_pg.seconds)
            results["pg-write"].append(on_pg.timings["write"])
            pg.drop_table("lineitem")
            pg.dispose()
        new = lineitem / "l_shipdate=1999-01-01"
        shutil.copytree(lineitem / "l_shipdate=1995-06-17", new)
        ms.register_table("lineitem", str(lineitem))
        plus = collect(ms.engine, "lineitem", spark=spark, scan="jvm")
        assert plus.partitions_scanned == 1
        results["plus1"].append(plus.seconds)
        shutil.rmtree(new)
        ms.dispose()
        print(
            f"attempt {attempt + 1}: "
            + ", ".join(f"{k} {v[-1]:.1f}" for k, v in results.items() if v),
            flush=True,
        )
    median = {k: statistics.median(v) for k, v in results.items() if v}
    print(
        f"\nlineitem SF {args.scale}, {partitions} partitions, {args.master}, "
        f"medians of {args.repeat}\n"
    )
    print("\n".join(bytes_table(written, pieces, parquet_bytes(lineitem))) + "\n")
    if args.statlas_only:
        full, write = median["full"], median["write"]
        print(f"statlas collect --full into SQLite: {full:.1f} s (writing {write:.1f})")
        if "pg" in median:
            print(f"... into PostgreSQL: {median['pg']:.1f} s (writing {median['pg-write']:.1f})")
        print(f"one new partition: {median['plus1']:.2f} s")
        shutil.rmtree(work, ignore_errors=True)
        return
    print("| run | seconds | ratio |")
    print("|---|---:|---|")
    print(f"| floor: count, min, max per partition | {median['floor']:.1f} | 1.00 x floor |")
    print(
        f"| floor, files listed by Spark's listing job (its default) | {median['floor-job']:.1f} | "
        f"{median['floor-job'] / median['floor']:.2f} x floor |"
    )
    print(
        f"| Spark ANALYZE FOR ALL COLUMNS, histograms on | {median['analyze']:.1f} | "
        f"{median['analyze'] / median['floor']:.2f} x floor |"
    )
    print(
        f"| ... the same, files listed by the driver | {median['analyze-driver']:.1f} | "
        f"{median['analyze-driver'] / median['floor']:.2f} x floor |"
    )
    print(
        f"| Spark ANALYZE PARTITION (row counts) | {median['analyze-part']:.1f} | "
        f"{median['analyze-part'] / median['floor']:.2f} x floor |"
    )
    print(
        f"| statlas collect --full (one-pass scan) | {median['full']:.1f} | "
        f"{median['full'] / median['floor']:.2f} x floor "
        f"({median['full'] / median['floor-job']:.2f} x floor-job), "
        f"{median['full'] / median['analyze']:.2f} x ANALYZE "
        f"({median['full'] / median['analyze-driver']:.2f} x ANALYZE listed by the driver) |"
    )
    print(
        f"| ... of which writing to SQLite | {median['write']:.1f} | "
        f"{median['write'] / median['full']:.1%} of the run |"
    )
    print(
        f"| ... the same reading Spark's rows, not columnar batches | {median['full-rows']:.1f} | "
        f"{median['full-rows'] / median['floor']:.2f} x floor, "
        f"{median['full-rows'] / median['analyze']:.2f} x ANALYZE, "
        f"{median['full-rows'] / median['full']:.2f} x batches |"
    )
    print(
        f"| statlas collect --full by Spark's aggregates (STATLAS_SCAN=spark) | "
        f"{median['spark-aggs']:.1f} | {median['spark-aggs'] / median['floor']:.2f} x floor, "
        f"{median['spark-aggs'] / median['analyze']:.2f} x ANALYZE, "
        f"{median['spark-aggs'] / median['full']:.2f} x the one-pass scan |"
    )
    if "pg" in median:
        print(
            f"| statlas collect --full into PostgreSQL | {median['pg']:.1f} | "
            f"{median['pg'] / median['floor']:.2f} x floor "
            f"({median['pg'] / median['floor-job']:.2f} x floor-job), "
            f"{median['pg'] / median['analyze']:.2f} x ANALYZE "
            f"({median['pg'] / median['analyze-driver']:.2f} x ANALYZE listed by the driver) |"
        )
        print(
            f"| ... of which writing to PostgreSQL | {median['pg-write']:.1f} | "
            f"{median['pg-write'] / median['pg']:.1%} of the run |"
        )
    print(
        f"| statlas collect, one new partition | {median['plus1']:.1f} | "
        f"{median['full'] / median['plus1']:.0f} x faster than full |"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
