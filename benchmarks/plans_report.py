"""The report of benchmarks/plans.py: a Markdown table row per query, the summary per set
(geometric means, the queries slower than Spark, the issue's targets), the JSON file."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from plans_spark import PLANS

SLOWER = 1.10
SKEW_TARGET = 0.90


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
