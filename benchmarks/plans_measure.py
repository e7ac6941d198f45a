"""The measurement of one query in benchmarks/plans.py: statlas's planning of it (the SQL
it emits for Spark), every plan's runs, their medians and rows compared."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from plans_runs import difference, repetitions, run_once, turn_order, warm_up
from plans_spark import PLANS, configure
from tpcds_queries import without_final_limit

from metastore import Metastore
from metastore.errors import StatlasError
from optimizer.estimate.sources import MetastoreSource
from optimizer.physical.api import emit, explain_json, plan_query


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
