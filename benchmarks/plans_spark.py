"""The Spark side of benchmarks/plans.py: the SparkSession, its Hive catalog (Derby) of the
tables ANALYZEd once per data variant, each plan's settings, and what an executed plan did
(its exchanges, its operators)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import plans_tpcds
import qerror_truth
from hive_catalog import hive_catalog_settings
from tpcds_queries import TABLES as TPCDS_TABLES

from collectors.spark_session import spark_session

DATA = Path(__file__).resolve().parent / ".data"
CATALOG = DATA / "plans-catalog"
PLANS = ("default", "cbo", "statlas")
CBO_SETTINGS = (
    "spark.sql.cbo.enabled",
    "spark.sql.cbo.joinReorder.enabled",
    "spark.sql.cbo.planStats.enabled",
)
FINGERPRINT_KEY = "statlas_plans_analyzed"


# --------------------------------------------------------------------- Spark and catalog


def session(master: str, driver_memory: str) -> Any:
    """The benchmark's SparkSession: a Hive catalog (Derby) under CATALOG, partition columns
    typed (l_shipdate and o_orderdate are dates), histograms for ANALYZE, CBO off until a
    plan turns it on."""
    spark = spark_session(master, hive_catalog_settings(CATALOG, "statlas-plans", driver_memory))
    configure(spark, "default")
    return spark


def configure(spark: Any, plan: str) -> None:
    """CBO and join reordering on for the cbo plan, off (Spark's defaults) otherwise."""
    for key in CBO_SETTINGS:
        spark.conf.set(key, "true" if plan == "cbo" else "false")


def fingerprint(directory: Path) -> str:
    """The data ANALYZE saw: its directory and when `make data` completed it."""
    complete = (directory / "_COMPLETE").stat().st_mtime_ns
    return hashlib.sha256(f"{directory}|{complete}|histograms".encode()).hexdigest()[:16]


def analyzed(spark: Any, database: str, expected: str, tables: tuple[str, ...]) -> bool:
    """Whether `database` holds every table, ANALYZEd over the data of `expected`."""
    if not spark.catalog.databaseExists(database):
        return False
    rows = spark.sql(f"DESCRIBE DATABASE EXTENDED {database}").collect()
    properties = " ".join(str(r[1]) for r in rows if str(r[0]).lower() == "properties")
    if f"({FINGERPRINT_KEY},{expected})" not in properties:
        return False
    return all(spark.catalog.tableExists(f"{database}.{t}") for t in tables)


def tables_of(variant: str) -> tuple[str, ...]:
    return TPCDS_TABLES if variant == plans_tpcds.VARIANT else qerror_truth.TABLES


def catalog_database(spark: Any, directory: Path, scale: str, variant: str) -> str:
    """The variant's catalog database, created and ANALYZEd FOR ALL COLUMNS with histograms
    unless a run before did it over the same data."""
    database = f"plans_sf{qerror_truth.safe_name(scale)}_{qerror_truth.safe_name(variant)}"
    expected = fingerprint(directory)
    if analyzed(spark, database, expected, tables_of(variant)):
        print(f"{database}: ANALYZEd by an earlier run", flush=True)
        return database
    started = time.perf_counter()
    if variant == plans_tpcds.VARIANT:
        plans_tpcds.analyze_catalog(spark, directory / "lake", database)
    else:
        qerror_truth.analyze_catalog(spark, directory, database, histograms=True)
    spark.sql(f"ALTER DATABASE {database} SET DBPROPERTIES ('{FINGERPRINT_KEY}' = '{expected}')")
    print(f"{database}: created and ANALYZEd in {time.perf_counter() - started:.0f} s", flush=True)
    return database


def warm(spark: Any, database: str, tables: tuple[str, ...]) -> None:
    """Count every table twice: the files of every partition are listed (and cached by the
    session) and the JVM warmed up before any plan is timed (a first count of lineitem takes
    ten times a second)."""
    for _ in range(2):
        for table in tables:
            spark.sql(f"SELECT COUNT(*) FROM {database}.{table}").collect()


# ---------------------------------------------------------------------- executed plans


def executed(node: Any) -> Any:
    """The operator that ran: through adaptive execution's wrappers (the final adaptive
    plan, each query stage's plan)."""
    while True:
        name = node.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            node = node.executedPlan()
        elif name.endswith("QueryStageExec"):
            node = node.plan()
        else:
            return node


def inputs(node: Any) -> list[Any]:
    """An operator's children, then its subqueries."""
    return [n.apply(i) for n in (node.children(), node.subqueries()) for i in range(n.size())]


def exchanges(spark: Any, frame: Any) -> dict[str, int]:
    """Exchange nodes of the frame's executed plan (the final adaptive plan once it ran),
    subqueries included: shuffles, broadcasts, and exchanges reused (not run again)."""
    counts = {"shuffles": 0, "broadcasts": 0, "reused": 0}
    identity = spark._jvm.java.lang.System.identityHashCode
    seen: set[int] = set()
    stack = [frame._jdf.queryExecution().executedPlan()]
    while stack:
        node = executed(stack.pop())
        key = int(identity(node))
        if key in seen:
            continue
        seen.add(key)
        name = node.getClass().getSimpleName()
        if name.startswith("Reused"):  # ReusedExchangeExec, ReusedSubqueryExec
            counts["reused"] += name == "ReusedExchangeExec"
            continue
        if name.endswith("ShuffleExchangeExec"):
            counts["shuffles"] += 1
        elif name.endswith("BroadcastExchangeExec"):
            counts["broadcasts"] += 1
        stack.extend(inputs(node))
    return counts


def plan_shape(frame: Any) -> str:
    """The executed (final adaptive) plan's operators in tree order, subqueries included:
    class names, with each join's type and build side and each scan's table, and no
    expression ids. Two runs with equal shapes executed the same plan."""

    def call(node: Any, method: str) -> str | None:
        try:
            return str(getattr(node, method)())
        except Exception:  # py4j: the operator has no such field
            return None

    def visit(node: Any) -> str:
        node = executed(node)
        name = label = str(node.getClass().getSimpleName())
        if name.endswith("JoinExec"):
            details = [call(node, "joinType"), call(node, "buildSide")]
            label += "[" + ",".join(d for d in details if d) + "]"
        elif name == "FileSourceScanExec":
            label += f"[{call(node, 'tableIdentifier')}]"
        parts = [visit(n) for n in inputs(node)]
        return label + (f"({','.join(parts)})" if parts else "")

    return visit(frame._jdf.queryExecution().executedPlan())
