"""The report of benchmarks/latency.py: its Markdown table rows, the verdict on each target
of issue 22 per database (met or missed, and by how much), and the printed summary."""

from __future__ import annotations

import math
import os
from typing import Any

from latency_measure import SETTLE_S
from latency_workload import QUERY_SETS

ESTIMATE_TARGET_MS = 50.0
EXPLAIN_TARGET_MS = 200.0
SYNTHETIC_TARGET_MS = 50.0
DEFAULT_CACHE_MB = 256.0


def verdict(figures: dict[str, float | None], limit: float, unit: str = "ms") -> dict[str, Any]:
    """Whether every figure (by label) is at most `limit`, the worst and by how much. A None
    figure (no answer: the request failed) misses."""
    missing = [label for label, value in figures.items() if value is None]
    present = {label: v for label, v in figures.items() if v is not None}
    over = sorted(label for label, v in present.items() if v > limit)
    worst = max(present, key=lambda label: present[label]) if present else None
    worst_value = present[worst] if worst is not None else None
    met = bool(present) and not over and not missing
    if worst is None or worst_value is None:
        text = "no figures"
    else:
        factor = worst_value / limit if limit else math.inf
        text = (
            f"worst {worst} {_number(worst_value)} {unit} ({factor:.2f} x the limit); "
            f"{len(over)} of {len(present)} over"
        )
        if over:
            text += f", by {_number(worst_value - limit)} {unit} at worst"
    if missing:
        text += f"; failed: {', '.join(missing)}"
    return {
        "met": met,
        "limit": limit,
        "worst": worst,
        "worst_value": worst_value,
        "over": over,
        "missing": missing,
        "text": text,
    }


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def ms_cell(value: float | None) -> str:
    return "" if value is None else _number(value)


def ratio_cell(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


HEADER = (
    "| query | db | estimate p50 ms | estimate p95 ms | estimate max ms | estimate cold ms "
    "| explain p50 ms | explain p95 ms | explain max ms | explain cold ms | CLI s "
    "| Spark planning ms (+ parse, analyze) | Spark over views ms | explain p50 / Spark |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table_row(record: dict[str, Any]) -> str:
    cells = [record["query"], record["db"]]
    for endpoint in ("estimate", "explain"):
        figures = record[endpoint]
        if figures["error"] and not figures["n"]:
            cells += [f"error {figures['error'][:80]}", "", "", ""]
            continue
        cells += [ms_cell(figures[k]) for k in ("p50", "p95", "max", "cold")]
    cli = record.get("cli")
    if cli is None:
        cells.append("")
    elif cli["seconds"] is None:
        cells.append(f"error {str(cli['error'])[:60]}")
    else:
        cells.append(f"{cli['seconds']:.2f}")
    spark = record.get("spark") or {}
    if spark.get("plan_ms") is not None:
        cells.append(f"{ms_cell(spark['plan_ms'])} (+{ms_cell(spark['analyze_ms'])})")
    else:
        cells.append("error" if spark.get("error") else "")
    views = spark.get("views_plan_ms")
    cells.append(
        "" if views is None else f"{ms_cell(views)} (+{ms_cell(spark['views_analyze_ms'])})"
    )
    cells.append(ratio_cell(record.get("ratio")))
    return "| " + " | ".join(cells) + " |"


def cache_bound_mb() -> float:
    value = os.environ.get("STATLAS_CACHE_MB")
    try:
        return float(value) if value else DEFAULT_CACHE_MB
    except ValueError:
        return DEFAULT_CACHE_MB


def label(record: dict[str, Any]) -> str:
    """A query's name in the summary: TPC-H's bare, the others' with their set."""
    return record["query"] if record["set"] == "tpch" else f"{record['set']} {record['query']}"


def p95(figures: dict[str, Any]) -> float | None:
    """A route's p95, None when a request failed."""
    return None if figures.get("error") else figures.get("p95")


def summarize(
    records: list[dict[str, Any]], memory: dict[str, dict[str, Any]], dbs: list[str]
) -> dict[str, dict[str, Any]]:
    """Per database, each target of the issue: met or missed, and by how much."""
    summary: dict[str, dict[str, Any]] = {}
    bound = cache_bound_mb()
    for db in dbs:
        mine = [r for r in records if r["db"] == db]
        planned = [r for r in mine if r["set"] in QUERY_SETS]
        synthetic = [r for r in mine if r["set"] == "synthetic"]
        targets: dict[str, Any] = {}

        if planned:
            targets["estimate_p95"] = verdict(
                {label(r): p95(r["estimate"]) for r in planned}, ESTIMATE_TARGET_MS
            )
            targets["explain_p95"] = verdict(
                {label(r): p95(r["explain"]) for r in planned}, EXPLAIN_TARGET_MS
            )
            with_spark = [r for r in planned if (r.get("spark") or {}).get("plan_ms")]
            if with_spark:
                targets["planning_vs_spark"] = verdict(
                    {label(r): r["ratio"] for r in with_spark}, 1.0, unit="x Spark's"
                )
            with_views = [r for r in planned if (r.get("spark") or {}).get("views_plan_ms")]
            if with_views:
                targets["planning_vs_spark_views"] = verdict(
                    {label(r): r["ratio_views"] for r in with_views}, 1.0, unit="x Spark's"
                )
        if synthetic:
            targets["synthetic_estimate_p95"] = verdict(
                {label(r): p95(r["estimate"]) for r in synthetic},
                SYNTHETIC_TARGET_MS,
            )
        growth = {
            name: m["settled"].get("vmrss", 0.0) - m["start"].get("vmrss", 0.0)
            for name, m in memory.items()
            if name.endswith(f" on {db}") and m.get("settled") and m.get("start")
        }
        if growth:
            targets["memory_growth"] = verdict(growth, bound, unit="MB")
        summary[db] = targets
    return summary


TARGET_NAMES = {
    "estimate_p95": f"/estimate p95 <= {ESTIMATE_TARGET_MS:g} ms (every TPC-H and star query)",
    "explain_p95": f"/explain p95 <= {EXPLAIN_TARGET_MS:g} ms (every TPC-H and star query)",
    "synthetic_estimate_p95": (
        f"synthetic table estimates p95 <= {SYNTHETIC_TARGET_MS:g} ms (whole table, one month)"
    ),
    "planning_vs_spark": "no query's planning slower than Spark's (/explain p50 / executedPlan)",
    "memory_growth": (
        "daemon memory growth (VmRSS settled after the set - after warm-up) <= cache bound"
    ),
    "planning_vs_spark_views": (
        "for information, not a target: /explain p50 / Spark's executedPlan over temporary "
        "views (no catalog, no statistics)"
    ),
}
INFORMATION = ("planning_vs_spark_views",)


def print_report(
    records: list[dict[str, Any]], memory: dict[str, dict[str, Any]], summary: dict[str, Any]
) -> None:
    if memory:
        print(
            f"\n### daemon memory (cache bound {cache_bound_mb():g} MB)\n\n"
            "| set on db | VmRSS after warm-up MB | VmRSS right after the set MB "
            f"| VmRSS settled ({SETTLE_S:g} s later) MB | peak VmHWM MB |\n"
            "|---|---:|---:|---:|---:|"
        )
        for name, figures in memory.items():
            start, end = figures.get("start", {}), figures.get("end", {})
            settled = figures.get("settled", {})
            print(
                f"| {name} | {ms_cell(start.get('vmrss'))} | {ms_cell(end.get('vmrss'))} | "
                f"{ms_cell(settled.get('vmrss'))} | {ms_cell(settled.get('vmhwm'))} |"
            )
    print("\n### targets (issue 22)\n")
    for db, targets in summary.items():
        for key, outcome in targets.items():
            if key in INFORMATION:
                state = "all within" if outcome["met"] else "some over"
            else:
                state = "met" if outcome["met"] else "MISSED"
            print(f"- {db}: {TARGET_NAMES[key]}: {state}: {outcome['text']}")
