"""Spark's planning time for benchmarks/latency.py: one SparkSession over a Hive catalog
(Derby) of the TPC-H tables, ANALYZEd once per data variant; per query, the medians of
spark.sql() and executedPlan(), over the catalog and over temporary views."""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from hive_catalog import hive_catalog_settings
from latency_report import ms_cell
from latency_workload import DATA, QUERY_SETS, TPCH_TABLES

CATALOG = DATA / "latency-catalog"
CBO_SETTINGS = (
    "spark.sql.cbo.enabled",
    "spark.sql.cbo.joinReorder.enabled",
    "spark.sql.cbo.planStats.enabled",
)
FINGERPRINT_KEY = "statlas_latency_analyzed"


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
