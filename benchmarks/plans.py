"""Join planning (issue 6): statlas's emitted Spark SQL beside Spark's own plans.

    python benchmarks/plans.py [--set tpch|star|tpcds|all] [--scale 1] [--variant uniform]
                               [--repeat 3] [--warmup 1] [--short-warmup 2]
                               [--min-seconds 6] [--max-repeat 25]
                               [--queries q1,q5] [--json FILE] [--config key=value ...]
                               [--plans default,cbo,statlas]
                               [--master local[2]] [--driver-memory 10g] [--timeout 900]

TPC-H's 22 queries (benchmarks/tpch_queries.py; --set tpch, on the uniform data unless
--variant says otherwise) and a star-join set written in a naive join order
(benchmarks/star_queries.py; --set star, on zipf-1 unless --variant says otherwise), over
the Parquet lake of `make data`; TPC-DS's 99 queries (benchmarks/tpcds_queries.py; --set
tpcds, not part of --set all) over the lake of `benchmarks/data.py --set tpcds`, its catalog
tables and statlas metastore set up by benchmarks/plans_tpcds.py. In one run and one
SparkSession, per query, after --warmup untimed runs of each plan (Spark compiles each plan's
generated code once; up to --short-warmup more rounds for a short query, whose first run
overstates its length), medians of --repeat wall times of `spark.sql(q).collect()` (more for
a short query: until each plan has about --min-seconds timed, at most --max-repeat), the
plans taking turns (their order rotated per repetition and query, and reversed on every other
repetition, so that each plan runs after each other plan equally often), each run after a
full garbage collection of the driver JVM (untimed: one plan's garbage is not paid for by the
next):

  default   Spark's own plan: CBO off, adaptive execution on (Spark's defaults)
  cbo       Spark with spark.sql.cbo.enabled, joinReorder.enabled and planStats.enabled, over
            the same tables ANALYZEd FOR ALL COLUMNS with equi-height histograms
  statlas   the query as statlas emits it for Spark (optimizer.physical.api.emit: join
            order and hints from the statistics of the statlas metastore, planned with the
            --config settings), run like default

All three read the same catalog tables over the lake: the catalog is a Hive metastore (Derby)
under DATA/plans-catalog/, kept between runs, so ANALYZE runs once per data variant (the
database records a fingerprint of the data it analyzed). The statlas metastore is the q-error
benchmark's (benchmarks/qerror_statlas.py: registered and collected incrementally). Before
timing, every table is counted twice (its partitions' files listed and cached).

Per query: the medians, statlas / the better Spark plan and statlas / default, the Exchange
nodes of each plan's executed (final adaptive) plan, shuffles and broadcasts apart (an
exchange reused within a plan is not counted), the shuffles statlas predicts before and after
its shuffle elimination (optimizer.physical.api.explain), statlas's planning time, whether
Spark executed statlas's SQL with its default plan's very operators (plan_shape: operator
names, join types and build sides, scanned tables), and whether
the three plans returned the same rows (sorted; floats to 1e-6 relative); a difference is
printed loudly and makes the exit status 1, unless the query ends in a LIMIT and the two
plans' texts without it (tpcds_queries.without_final_limit) return the same rows: then the
plans cut a tie differently, which the table says ("ties"). --plans runs fewer plans (e.g.
default,statlas for a check of statlas's rows). A query statlas cannot plan (a StatlasError) says
"not planned: <message>" and is left out of statlas's figures, as are a statlas plan that
fails, times out (--timeout seconds, per run) or returns other rows. Summary per set: geometric
means, the queries more than 10% slower than the better Spark plan (and which of them statlas
emitted unchanged, or Spark ran with the better Spark plan's very operators: there the
difference is between runs of the same plan), and the issue's targets
(none slower by more than 10%; on skewed data the geometric mean of statlas / the better Spark
plan at most 0.90). --json writes every figure, after each query.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import plans_tpcds
import qerror_statlas
import qerror_truth
import star_queries
import tpch_queries
from hive_catalog import hive_catalog_settings
from tpcds_queries import TABLES as TPCDS_TABLES
from tpcds_queries import without_final_limit

from collectors.spark_session import spark_session
from metastore import Metastore
from metastore.errors import StatlasError
from optimizer.cost.params import parse_settings
from optimizer.estimate.sources import MetastoreSource
from optimizer.physical.api import emit, explain_json, plan_query

DATA = Path(__file__).resolve().parent / ".data"
CATALOG = DATA / "plans-catalog"
PLANS = ("default", "cbo", "statlas")
CBO_SETTINGS = (
    "spark.sql.cbo.enabled",
    "spark.sql.cbo.joinReorder.enabled",
    "spark.sql.cbo.planStats.enabled",
)
# {set: (its queries, read when the set runs; its data variant)}
SETS: dict[str, tuple[Callable[[], dict[str, str]], str]] = {
    "tpch": (lambda: tpch_queries.QUERIES, "uniform"),
    "star": (lambda: star_queries.QUERIES, "zipf-1"),
    "tpcds": (plans_tpcds.queries, plans_tpcds.VARIANT),
}
FINGERPRINT_KEY = "statlas_plans_analyzed"
TOLERANCE = 1e-6
SLOWER = 1.10
SKEW_TARGET = 0.90


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


# ------------------------------------------------------------------------------- runs


@dataclass
class Outcome:
    """One run of one plan: seconds and rows, or why there are none."""

    seconds: float | None
    rows: list[tuple[Any, ...]] | None = None
    exchanges: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    shape: str = ""


def turn_order(plans: list[str], attempt: int, index: int) -> list[str]:
    """The plans' order in one repetition: rotated by repetition and query, reversed on odd
    repetitions (a fixed cyclic order would put one plan always right after the same
    other one, and make it pay for that one's memory)."""
    turn = (attempt + index) % len(plans)
    order = plans[turn:] + plans[:turn]
    return order[::-1] if attempt % 2 else order


def repetitions(seconds: float, args: argparse.Namespace) -> int:
    """Timed repetitions of a query whose slowest last warm-up run took `seconds`: --repeat, or
    more for a short query, until each plan has about --min-seconds of timed runs (at most
    --max-repeat): a median of three sub-second runs on a 2-core machine varies by a third
    between identical plans."""
    if seconds <= 0:
        return args.repeat
    wanted = math.ceil(args.min_seconds / seconds)
    return max(args.repeat, min(args.max_repeat, wanted))


def warm_up(
    spark: Any,
    texts: dict[str, str],
    plans: list[str],
    index: int,
    errors: dict[str, str],
    args: argparse.Namespace,
) -> float:
    """Untimed rounds of every plan: --warmup, and up to --short-warmup more while the query
    is short (the first run of a plan pays for listing files and compiling code, which makes
    a short query look long: its timed repetitions would be too few, and its first ones
    still warming up). The slowest run of the last round; failures go to `errors`."""
    rounds, slowest = 0, 0.0
    while rounds < args.warmup or (
        rounds < args.warmup + args.short_warmup and repetitions(slowest, args) > args.repeat
    ):
        slowest = 0.0
        for plan in turn_order(plans, rounds, index):
            if plan in errors:
                continue
            outcome = run_once(spark, texts[plan], plan, args.timeout)
            if outcome.error is not None or outcome.seconds is None:
                errors[plan] = outcome.error or "no result"
            else:
                slowest = max(slowest, outcome.seconds)
        rounds += 1
    return slowest


def run_once(spark: Any, sql: str, plan: str, timeout: float) -> Outcome:
    """`spark.sql(sql).collect()` under the plan's settings, cancelled after `timeout` s.
    A failure (of any plan) is reported, and that plan has no time for the query."""
    configure(spark, plan)
    context = spark.sparkContext
    context._jvm.java.lang.System.gc()  # the previous run's garbage is not this run's cost
    group = f"plans-{uuid.uuid4().hex}"
    expired = threading.Event()

    def cancel() -> None:
        expired.set()
        context.cancelJobGroup(group)

    context.setJobGroup(group, plan, interruptOnCancel=True)
    timer = threading.Timer(timeout, cancel)
    timer.start()
    began = time.perf_counter()
    try:
        frame = spark.sql(sql)
        rows = [tuple(r) for r in frame.collect()]
        seconds = time.perf_counter() - began
    except Exception as error:
        if expired.is_set():
            return Outcome(None, error=f"timed out after {timeout:.0f} s")
        message = "failed: " + " ".join(str(error).split())[:300]
        print(f"!!!!!!!! {plan} plan failed: {message}", file=sys.stderr, flush=True)
        return Outcome(None, error=message)
    finally:
        timer.cancel()
    return Outcome(seconds, rows, exchanges(spark, frame), shape=plan_shape(frame))


def _sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    key: list[Any] = []
    for value in row:
        if isinstance(value, float | Decimal):
            value = float(f"{float(value):.8g}")
        key.append((value is None, value if value is not None else 0))
    return tuple(key)


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float | Decimal) and isinstance(b, float | Decimal):
        x, y = float(a), float(b)
        return math.isclose(x, y, rel_tol=TOLERANCE, abs_tol=1e-9) or (
            math.isnan(x) and math.isnan(y)
        )
    return bool(a == b)


def difference(rows: list[tuple[Any, ...]], reference: list[tuple[Any, ...]]) -> str | None:
    """Why two results differ (rows sorted, floats and decimals to TOLERANCE), or None."""
    if len(rows) != len(reference):
        return f"{len(rows)} rows, not {len(reference)}"
    for number, (row, want) in enumerate(
        zip(sorted(rows, key=_sort_key), sorted(reference, key=_sort_key), strict=True)
    ):
        if len(row) != len(want) or not all(map(_same_value, row, want)):
            return f"sorted row {number}: {row!r}, not {want!r}"
    return None


# ---------------------------------------------------------------------------- queries


@dataclass
class Planned:
    """statlas's rewriting of one query, or the StatlasError that stopped it."""

    sql: str | None
    explanation: dict[str, Any] | None
    seconds: float
    message: str | None = None


_SOURCES: dict[int, MetastoreSource] = {}


def plan_statlas(metastore: Metastore, sql: str, config: dict[str, str] | None = None) -> Planned:
    """The emitted Spark SQL and the plan's explanation (timed: statlas's planning; each
    table's statistics of a partition selection are read once per run, as they do not
    change between queries); `config`: statlas's planner settings (`explain --config`)."""
    source = _SOURCES.setdefault(id(metastore), MetastoreSource(metastore.engine, memo=True))
    began = time.perf_counter()
    try:
        plan = plan_query(metastore.engine, sql, dialect="spark", config=config, source=source)
        emitted = emit(plan)
        seconds = time.perf_counter() - began
        explanation = explain_json(plan)
    except StatlasError as error:
        return Planned(None, None, time.perf_counter() - began, f"not planned: {error}")
    return Planned(emitted, explanation, seconds)


def cut_tie(spark: Any, texts: dict[str, str], plan: str, reference: str, timeout: float) -> bool:
    """Whether `plan` and the `reference` plan, whose rows differ, return the same rows
    without the query's final LIMIT (ORDER BY ... LIMIT cuts ties as the plan has them)."""
    unlimited = {p: without_final_limit(texts[p]) for p in (plan, reference)}
    if unlimited[plan] == texts[plan] or unlimited[reference] == texts[reference]:
        return False  # no final LIMIT: the rows differ
    found = {p: run_once(spark, sql, p, timeout) for p, sql in unlimited.items()}
    rows = [found[p].rows for p in (plan, reference)]
    configure(spark, "default")
    return rows[0] is not None and rows[1] is not None and difference(rows[0], rows[1]) is None


def predicted(explanation: dict[str, Any] | None, key: str = "shuffles") -> dict[str, Any]:
    """{"before": n, "after": n} of the explanation's `key`, empty without one."""
    found = (explanation or {}).get(key)
    return found if isinstance(found, dict) else {}


def measure(
    spark: Any, name: str, sql: str, planned: Planned, index: int, args: argparse.Namespace
) -> dict[str, Any]:
    """Every figure of one query."""
    texts = {"default": sql, "cbo": sql}
    if planned.sql is not None:
        texts["statlas"] = planned.sql
    plans = [p for p in PLANS if p in texts and p in args.plans]
    times: dict[str, list[float]] = {p: [] for p in plans}
    rows: dict[str, list[tuple[Any, ...]]] = {}
    executed: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    shapes: dict[str, set[str]] = {}
    repeat = repetitions(warm_up(spark, texts, plans, index, errors, args), args)
    for attempt in range(repeat):
        for plan in turn_order(plans, attempt, index):
            if plan in errors:
                continue
            outcome = run_once(spark, texts[plan], plan, args.timeout)
            if outcome.error is not None or outcome.seconds is None or outcome.rows is None:
                errors[plan] = outcome.error or "no result"
                continue
            times[plan].append(outcome.seconds)
            rows[plan] = outcome.rows
            executed[plan] = outcome.exchanges
            shapes.setdefault(plan, set()).add(outcome.shape)
    configure(spark, "default")
    median = {p: statistics.median(t) if t and p not in errors else None for p, t in times.items()}
    differs: dict[str, str] = {}
    ties: dict[str, str] = {}
    first = "default" if "default" in rows else "cbo"
    reference = rows.get(first)
    for plan, result in rows.items():
        why = None if reference is None else difference(result, reference)
        if why is not None and cut_tie(spark, texts, plan, first, args.timeout):
            ties[plan] = why
            print(f"{name}: {plan} cut a tie of the final LIMIT otherwise ({why})", flush=True)
        elif why is not None:
            differs[plan] = why
            print(
                f"\n!!!!!!!! RESULT MISMATCH {name}: {plan} differs from Spark's default: {why}\n",
                flush=True,
            )
            print(f"!!!!!!!! RESULT MISMATCH {name} ({plan}): {why}", file=sys.stderr, flush=True)
    spark_medians = {p: m for p, m in median.items() if p != "statlas" and m is not None}
    best_plan = min(spark_medians, key=spark_medians.__getitem__) if spark_medians else None
    best = spark_medians[best_plan] if best_plan else None
    ours = median.get("statlas")
    default = median.get("default")
    usable = ours is not None and "statlas" not in differs
    return {
        "query": name,
        "sql": sql,
        "statlas_sql": planned.sql,
        "planned": planned.sql is not None,
        # emitted as written: statlas's plan is Spark's default plan
        "unchanged": planned.sql is not None and planned.sql.strip() == sql.strip(),
        # Spark executed statlas's SQL with the very plan of its default (plan_shape)
        "same_plan": "statlas" in shapes and shapes.get("statlas") == shapes.get("default"),
        # ... and with the very plan of the better Spark plan
        "same_plan_as_best": "statlas" in shapes and shapes.get("statlas") == shapes.get(best_plan),
        "shapes": {p: sorted(v) for p, v in shapes.items()},
        "message": planned.message or errors.get("statlas"),
        "plan_seconds": planned.seconds,
        "seconds": times,
        "repeat": repeat,
        "median": median,
        "best_spark": best,
        "ratio_best": ours / best if usable and ours is not None and best else None,
        "ratio_default": ours / default if usable and ours is not None and default else None,
        "exchanges": executed,
        "predicted_shuffles": predicted(planned.explanation),
        "explain": planned.explanation,
        "errors": errors,
        "mismatch": differs,
        # other rows under the final LIMIT, the same rows without it
        "ties": ties,
        "same": not differs and reference is not None,
    }


# ----------------------------------------------------------------------------- report


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _counts(record: dict[str, Any], key: str) -> str:
    return " / ".join(str(record["exchanges"].get(p, {}).get(key, "–")) for p in PLANS)


HEADER = (
    "| query | default s | cbo s | statlas s | statlas / best Spark | statlas / default "
    "| shuffles default / cbo / statlas | statlas predicted shuffles before → after "
    "| broadcasts default / cbo / statlas | statlas plan ms | plan = default's | same |\n"
    "|---|---:|---:|---:|---:|---:|---|---|---|---:|---|---|"
)


def table_row(record: dict[str, Any]) -> str:
    median = record["median"]
    if not record["planned"]:
        ours = record["message"]
    elif "statlas" in record["errors"]:
        ours = record["errors"]["statlas"]
    else:
        ours = _seconds(median.get("statlas"))
    shuffles = record["predicted_shuffles"]
    guess = f"{shuffles.get('before', '?')} → {shuffles.get('after', '?')}" if shuffles else ""
    same = (
        "yes"
        if record["same"]
        else "NO: " + "; ".join(f"{p} {why}" for p, why in record["mismatch"].items())
    )
    if record["same"] and record.get("ties"):
        same += " (ties under LIMIT: " + ", ".join(record["ties"]) + ")"
    return (
        f"| {record['query']} | {_seconds(median.get('default'))} | "
        f"{_seconds(median.get('cbo'))} | {ours} | {_ratio(record['ratio_best'])} | "
        f"{_ratio(record['ratio_default'])} | {_counts(record, 'shuffles')} | {guess} | "
        f"{_counts(record, 'broadcasts')} | {record['plan_seconds'] * 1000:.0f} | "
        f"{'yes' if record.get('same_plan') else 'no'} | {same} |"
    )


def _geomean(values: list[float]) -> float | None:
    return statistics.geometric_mean(values) if values else None


def summarize(records: list[dict[str, Any]], variant: str) -> dict[str, Any]:
    """The set's summary figures and the issue's targets."""
    timed = [r for r in records if r["ratio_best"] is not None]
    cbo_default = [
        r["median"]["cbo"] / r["median"]["default"]
        for r in records
        if r["median"].get("cbo") and r["median"].get("default")
    ]
    slower = [r["query"] for r in timed if r["ratio_best"] > SLOWER]
    slower_unchanged = [r["query"] for r in timed if r["ratio_best"] > SLOWER and r["unchanged"]]
    slower_same_plan = [
        r["query"] for r in timed if r["ratio_best"] > SLOWER and r["same_plan_as_best"]
    ]
    left_out: dict[str, str] = {}
    for r in records:
        if r["ratio_best"] is not None:
            continue
        if not r["planned"]:
            left_out[r["query"]] = str(r["message"])
        elif "statlas" not in r["median"]:
            left_out[r["query"]] = "not run (--plans)"
        elif "statlas" in r["errors"]:
            left_out[r["query"]] = r["errors"]["statlas"]
        elif "statlas" in r["mismatch"]:
            left_out[r["query"]] = "result differs: " + r["mismatch"]["statlas"]
        else:
            left_out[r["query"]] = "no Spark plan's time to compare with"
    # a statlas plan that failed, timed out or returned other rows misses the target too
    failed = [q for q, why in left_out.items() if not why.startswith(("not planned", "not run"))]
    geo_best = _geomean([r["ratio_best"] for r in timed])
    summary: dict[str, Any] = {
        "variant": variant,
        "queries": len(records),
        "timed": len(timed),
        "geomean_statlas_over_best_spark": geo_best,
        "geomean_statlas_over_default": _geomean([r["ratio_default"] for r in timed]),
        "geomean_cbo_over_default": _geomean(cbo_default),
        "slower_than_best_spark_by_10pct": slower,
        "slower_but_emitted_unchanged": slower_unchanged,
        "slower_but_same_plan_as_best_spark": slower_same_plan,
        "left_out": left_out,
        "mismatches": [r["query"] for r in records if not r["same"]],
        "target_none_slower": not slower and not failed,
    }
    if variant.startswith("zipf"):
        summary["target_skew_geomean"] = geo_best is not None and geo_best <= SKEW_TARGET
    return summary


def print_summary(name: str, summary: dict[str, Any]) -> None:
    def number(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    print(
        f"\n{name} on {summary['variant']}: statlas timed on {summary['timed']} of "
        f"{summary['queries']} queries"
    )
    for label, key in (
        ("statlas / best Spark", "geomean_statlas_over_best_spark"),
        ("statlas / default", "geomean_statlas_over_default"),
        ("cbo / default", "geomean_cbo_over_default"),
    ):
        print(f"  geometric mean {label}: {number(summary[key])}")
    slower = summary["slower_than_best_spark_by_10pct"]
    print(f"  more than 10% slower than the better Spark plan: {len(slower)} {slower or ''}")
    unchanged = summary.get("slower_but_emitted_unchanged") or []
    if unchanged:
        print(
            f"    of which emitted unchanged (Spark's default plan; the difference is between "
            f"runs of the same SQL): {len(unchanged)} {unchanged}"
        )
    same_plan = summary.get("slower_but_same_plan_as_best_spark") or []
    if same_plan:
        print(
            f"    of which Spark executed with the better Spark plan's very operators (the "
            f"difference is between runs of one plan): {len(same_plan)} {same_plan}"
        )
    for query, why in summary["left_out"].items():
        print(f"  left out of statlas's figures: {query}: {why}")
    if summary["mismatches"]:
        print(f"  !!!!!!!! RESULT MISMATCHES: {summary['mismatches']}")
    verdict = {True: "met", False: "NOT met"}
    print(f"  target, none more than 10% slower: {verdict[summary['target_none_slower']]}")
    if "target_skew_geomean" in summary:
        print(
            f"  target, geometric mean statlas / best Spark <= {SKEW_TARGET} on skewed data: "
            f"{verdict[summary['target_skew_geomean']]}"
        )


def write_json(path: Path | None, report: dict[str, Any]) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str))
    tmp.replace(path)


# ------------------------------------------------------------------------------- main


def chosen_sets(args: argparse.Namespace) -> list[tuple[str, dict[str, str], str]]:
    """(set, {query: sql}, variant) for each set of the run, limited to --queries."""
    names = ("tpch", "star") if args.set == "all" else (args.set,)
    wanted = [q for q in (args.queries or "").split(",") if q]
    every = {n: SETS[n][0]() for n in names}
    known = {q for n in names for q in every[n]}
    unknown = [q for q in wanted if q not in known]
    if unknown:
        raise SystemExit(f"unknown queries {unknown}: the sets {names} hold {sorted(known)}")
    chosen = []
    for name in names:
        queries, variant = every[name], SETS[name][1]
        picked = {q: s for q, s in queries.items() if not wanted or q in wanted}
        if picked:
            chosen.append((name, picked, args.variant or variant))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("tpch", "star", "tpcds", "all"), default="tpch")
    parser.add_argument("--scale", default="1")
    parser.add_argument(
        "--variant", help="uniform | zipf-1 | zipf-1.5 (default: tpch uniform, star zipf-1)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--warmup", type=int, default=1, help="untimed runs of each plan before timing"
    )
    parser.add_argument(
        "--min-seconds",
        type=float,
        default=6.0,
        help="a short query repeats until each plan has about this many seconds timed",
    )
    parser.add_argument("--max-repeat", type=int, default=25)
    parser.add_argument(
        "--short-warmup",
        type=int,
        default=2,
        help="more untimed rounds for a query that repeats more than --repeat times",
    )
    parser.add_argument("--queries", help="comma-separated names, e.g. q1,q5 or s2")
    parser.add_argument(
        "--plans",
        default=",".join(PLANS),
        type=lambda text: [p for p in text.split(",") if p],
        help="the plans to run, of default,cbo,statlas (rows compare with default's, or cbo's)",
    )
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="10g")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument(
        "--config",
        action="append",
        metavar="KEY=VALUE",
        help="a statlas planner setting, as `statlas explain --config` takes (repeatable)",
    )
    args = parser.parse_args()
    config = parse_settings(args.config)
    scale = qerror_truth.scale_name(args.scale)
    sets = chosen_sets(args)
    unknown = [p for p in args.plans if p not in PLANS]
    if unknown or not set(args.plans) & {"default", "cbo"}:
        raise SystemExit(f"--plans {args.plans}: of {PLANS}, with default or cbo")
    directories = {
        v: plans_tpcds.directory(DATA, scale)
        if v == plans_tpcds.VARIANT
        else qerror_truth.variant_dir(DATA, scale, v)
        for _, _, v in sets
    }

    started = time.perf_counter()
    spark = session(args.master, args.driver_memory)
    report: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "scale": scale,
        "master": args.master,
        "repeat": args.repeat,
        "plans": args.plans,
        "statlas_config": config,
        "spark": spark.version,
        "setup_seconds": {},
        "sets": {},
    }
    databases: dict[str, str] = {}
    metastores: dict[str, Metastore] = {}
    for variant, directory in directories.items():
        began = time.perf_counter()
        databases[variant] = catalog_database(spark, directory, scale, variant)
        report["setup_seconds"][f"catalog {variant}"] = time.perf_counter() - began
        began = time.perf_counter()
        if variant == plans_tpcds.VARIANT:
            metastores[variant] = plans_tpcds.metastore(DATA, scale, spark)
        else:
            metastores[variant] = qerror_statlas.metastore_for(
                DATA, scale, variant, directory, spark
            )
        report["setup_seconds"][f"statlas collect {variant}"] = time.perf_counter() - began
        print(f"statlas metastore {variant}: ready in {time.perf_counter() - began:.0f} s")
        began = time.perf_counter()
        warm(spark, databases[variant], tables_of(variant))
        report["setup_seconds"][f"warm {variant}"] = time.perf_counter() - began
    print(f"set up in {time.perf_counter() - started:.0f} s", flush=True)

    mismatched = False
    for name, queries, variant in sets:
        spark.catalog.setCurrentDatabase(databases[variant])
        planned = {q: plan_statlas(metastores[variant], sql, config) for q, sql in queries.items()}
        records: list[dict[str, Any]] = []
        entry: dict[str, Any] = {"variant": variant, "queries": records}
        report["sets"][name] = entry
        print(
            f"\n### {name}: SF {scale} {variant}, after {args.warmup} untimed run(s) of each "
            f"plan, medians of {args.repeat} (of up to {args.max_repeat} for a query under "
            f"{args.min_seconds:g} s)\n\n{HEADER}"
        )
        for index, (query, sql) in enumerate(queries.items()):
            records.append(measure(spark, query, sql, planned[query], index, args))
            print(table_row(records[-1]), flush=True)
            write_json(args.json, report)
        entry["summary"] = summarize(records, variant)
        mismatched = mismatched or bool(entry["summary"]["mismatches"])
        write_json(args.json, report)
    for name, entry in report["sets"].items():
        print_summary(name, entry["summary"])
    report["seconds"] = time.perf_counter() - started
    write_json(args.json, report)
    print(
        f"\nwall time {report['seconds'] / 60:.1f} min"
        + (f"; figures in {args.json}" if args.json else "")
    )
    spark.stop()
    if mismatched:
        raise SystemExit("!!!!!!!! some plans returned other rows than Spark's default (above)")


if __name__ == "__main__":
    main()
