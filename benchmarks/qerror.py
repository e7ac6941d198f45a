"""Cardinality-estimation accuracy (issue 4): q-error of each estimator on the TPC-H workload
(on TPC-DS's 99 queries with --set tpcds: benchmarks/qerror_tpcds.py).

    python benchmarks/qerror.py [--scale 1] [--variants uniform,zipf-1.5]
                                [--systems spark,postgres,statlas] [--check]
                                [--data benchmarks/.data] [--master local[2]] [--subplans]

For each variant (run benchmarks/data.py first), in one run and one SparkSession:
  truth     exact COUNT(*) of the 80 queries of benchmarks/qerror_workload.py by Spark,
            cached in DATA/qerror-truth-<scale>-<variant>.json
  spark     Spark's CBO (spark.sql.cbo.enabled, histograms, ANALYZE TABLE ... COMPUTE
            STATISTICS FOR ALL COLUMNS on catalog tables over the same files): the row count
            of the optimized plan's input to the final COUNT
  spark-nohist  the same without histograms (only when named in --systems)
  postgres  PostgreSQL 15's planner on the same tables loaded into schema qerr_<variant>
            of the database QERROR_PG_DSN names (local `test` by default), ANALYZEd:
            'Plan Rows' of the input to the final Aggregate
  statlas   the project's estimator at each of its levels, once statlas_estimators() has it

q-error = max(est/true, true/est) with both clamped to at least one row. Printed per variant
and system: q-error median, p90, p95 and max by number of joins; written per query to
DATA/qerror-<scale>.csv (rows of the variants and systems of this run replace earlier ones).
--check also counts every query on PostgreSQL and lists the queries whose count differs from
Spark's (there should be none).
"""

from __future__ import annotations

import argparse
import csv
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import qerror_truth as truth_
from qerror_subplans import workload_subplans
from qerror_workload import QUERIES, Query, summary

Estimator = Callable[[Query, str], "float | None"]
"""(query, variant) -> estimated rows of the query's COUNT(*) input, None if it has none."""

JOIN_GROUPS = ("0", "1", "2", "3", "4+", "all")
CSV_FIELDS = ("variant", "system", "query", "kind", "joins", "true_rows", "estimate", "qerror")


@dataclass
class Run:
    """What estimators share within one run: the data, the session, the per-variant workload
    parameters, and the seconds spent per phase."""

    scale: str
    root: Path
    spark: Any
    params: dict[str, dict[str, str]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)

    def directory(self, variant: str) -> Path:
        return truth_.variant_dir(self.root, self.scale, variant)

    def sql(self, query: Query, variant: str) -> str:
        return query.render(self.params[variant])

    def timed(self, phase: str, function: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            return function()
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - started


def q_error(estimate: float, true: float) -> float:
    estimate, true = max(estimate, 1.0), max(true, 1.0)
    return max(estimate / true, true / estimate)


# ------------------------------------------------------------------------- estimators


def spark_estimator(run: Run, histograms: bool = True) -> Estimator:
    """Spark's CBO; the first call per variant creates and ANALYZEs the catalog tables
    (with column histograms unless `histograms` is false, in a database of their own)."""
    suffix = "" if histograms else "_nohist"
    name = "spark" if histograms else "spark-nohist"

    def estimate(query: Query, variant: str) -> float | None:
        database = f"qerr_{truth_.safe_name(variant)}{suffix}"
        ready = run.state.setdefault(f"{name}-analyzed", set())
        if variant not in ready:
            run.timed(
                f"{name} ANALYZE {variant}",
                lambda: truth_.analyze_catalog(
                    run.spark, run.directory(variant), database, histograms
                ),
            )
            ready.add(variant)
        return run.timed(
            f"{name} estimate",
            lambda: truth_.spark_estimate(run.spark, database, run.sql(query, variant)),
        )

    return estimate


def postgres_for(run: Run, variant: str) -> truth_.Postgres:
    """The variant's PostgreSQL connection, loading and ANALYZEing the tables first."""
    connections = run.state.setdefault("postgres", {})
    if variant not in connections:
        took = truth_.postgres_load(run.directory(variant), variant)
        for phase, seconds in took.items():
            run.seconds[f"postgres {phase} {variant}"] = seconds
        connections[variant] = truth_.Postgres(variant)
    return connections[variant]


def postgres_estimator(run: Run) -> Estimator:
    """PostgreSQL's planner."""

    def estimate(query: Query, variant: str) -> float | None:
        database = postgres_for(run, variant)
        return run.timed("postgres estimate", lambda: database.estimate(run.sql(query, variant)))

    return estimate


def statlas_estimators(run: Run) -> dict[str, Estimator]:
    """statlas at each level ("statlas-basic", "statlas-histogram", "statlas-sketch"): the
    first call per variant registers and collects the variant's tables into its own SQLite
    metastore (benchmarks/qerror_statlas.py; incremental, so a second run scans nothing);
    estimates come from those statistics only."""
    import qerror_statlas

    def metastore_of(variant: str) -> Any:
        ready = run.state.setdefault("statlas", {})
        if variant not in ready:
            ready[variant] = run.timed(
                f"statlas register + collect {variant}",
                lambda: qerror_statlas.metastore_for(
                    run.root, run.scale, variant, run.directory(variant), run.spark
                ),
            )
        return ready[variant]

    def timed(estimate: Estimator) -> Estimator:
        return lambda query, variant: run.timed(
            "statlas estimate", lambda: estimate(query, variant)
        )

    return {
        name: timed(estimate)
        for name, estimate in qerror_statlas.estimators(metastore_of, run.sql).items()
    }


def estimators(run: Run) -> dict[str, Estimator]:
    """Every estimator the harness compares, by system name."""
    return {
        "spark": spark_estimator(run),
        # not in the default --systems: Spark's CBO without histograms, for contrast (with
        # histograms, its join estimate ignores filters on the other columns of the
        # dimension side)
        "spark-nohist": spark_estimator(run, histograms=False),
        "postgres": postgres_estimator(run),
        **statlas_estimators(run),
    }


# ---------------------------------------------------------------------------- report


def result_row(
    variant: str, system: str, query: Query, value: float | None, truths: dict[str, int]
) -> dict[str, Any]:
    true = truths[query.name]
    return {
        "variant": variant,
        "system": system,
        "query": query.name,
        "kind": query.kind,
        "joins": query.joins,
        "true_rows": true,
        "estimate": "" if value is None else f"{value:.0f}",
        "qerror": None if value is None else q_error(value, true),
    }


def group_of(joins: int) -> str:
    return "4+" if joins >= 4 else str(joins)


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: q-error by number of joins for one variant and system."""
    groups = [
        (group, [r for r in rows if group == "all" or group_of(r["joins"]) == group])
        for group in JOIN_GROUPS
    ]
    return qerror_table("joins", groups)


def qerror_table(
    label: str, groups: list[tuple[str, list[dict[str, Any]]]], max_format: str = ".2f"
) -> str:
    """Markdown: per group of rows (its name under `label`), the estimates' q-error median,
    p90, p95 and max (`max_format`)."""
    lines = [
        f"| {label} | queries | median | p90 | p95 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for group, chosen in groups:
        errors = np.array([r["qerror"] for r in chosen if r["qerror"] is not None])
        missing = len(chosen) - len(errors)
        count = f"{len(errors)}" + (f" (+{missing} without estimate)" if missing else "")
        if len(errors) == 0:
            lines.append(f"| {group} | {count} | | | | |")
            continue
        median, p90, p95 = np.percentile(errors, [50, 90, 95])
        highest = format(errors.max(), max_format)
        lines.append(f"| {group} | {count} | {median:.2f} | {p90:.2f} | {p95:.2f} | {highest} |")
    return "\n".join(lines)


def write_csv(
    path: Path, rows: list[dict[str, Any]], fields: tuple[str, ...] | list[str] = CSV_FIELDS
) -> None:
    """Per-query rows (their `fields`); rows of other (variant, system) pairs already in the
    file stay."""
    replaced = {(r["variant"], r["system"]) for r in rows}
    kept: list[dict[str, Any]] = []
    if path.exists():
        with path.open(newline="") as handle:
            kept = [
                r for r in csv.DictReader(handle) if (r["variant"], r["system"]) not in replaced
            ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(kept)
        writer.writerows(rows)


def check_postgres(run: Run, variant: str, counts: dict[str, int]) -> list[str]:
    """Queries whose COUNT(*) on PostgreSQL differs from Spark's truth."""
    database = postgres_for(run, variant)
    mismatches = []
    for query in QUERIES:
        count = run.timed("postgres count", lambda q=query: database.count(run.sql(q, variant)))
        if count != counts[query.name]:
            mismatches.append(f"{query.name}: spark {counts[query.name]} postgres {count}")
    return mismatches


def sub_truth(run: Run, variant: str, queries: list[Query]) -> dict[str, int]:
    """Exact counts of the sub-plans (cached with the workload's)."""
    cache = truth_.cache_path(run.root, run.scale, variant)
    return truth_.truth(run.spark, run.directory(variant), queries, run.params[variant], cache)


def prepare(run: Run, variant: str) -> dict[str, int]:
    """The variant's workload parameters and true counts (computed or from the cache)."""
    directory = run.directory(variant)
    cache = truth_.cache_path(run.root, run.scale, variant)
    run.params[variant] = run.timed(
        f"parameters {variant}", lambda: truth_.parameters(run.spark, directory, cache)
    )
    print(f"{variant}: parameters {run.params[variant]}", flush=True)
    return run.timed(
        f"truth {variant}",
        lambda: truth_.truth(run.spark, directory, QUERIES, run.params[variant], cache),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("tpch", "tpcds"), default="tpch", dest="which")
    parser.add_argument("--scale", default="1")
    parser.add_argument("--variants", default="uniform,zipf-1.5")
    parser.add_argument("--systems", default="spark,postgres,statlas")
    parser.add_argument("--data", type=Path, default=truth_.DATA)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--check", action="store_true", help="compare with COUNT(*) on PostgreSQL")
    parser.add_argument(
        "--subplans",
        action="store_true",
        help="also every connected sub-join of the join queries (benchmarks/qerror_subplans.py;"
        " with --set tpcds: of the 99 queries' SELECT blocks, benchmarks/qerror_tpcds_subplans.py)",
    )
    parser.add_argument("--queries", default="", help="--set tpcds: these queries only")
    parser.add_argument("--json", default="", help="--set tpcds: every figure to this file")
    args = parser.parse_args()
    if args.which == "tpcds":
        import qerror_tpcds

        qerror_tpcds.run(args)
        return
    variants = [v for v in args.variants.split(",") if v]
    wanted = {s for s in args.systems.split(",") if s}
    scale = truth_.scale_name(args.scale)
    print(f"workload: {len(QUERIES)} queries {summary()}", flush=True)

    run = Run(scale=scale, root=args.data, spark=None)
    run.spark = run.timed("spark start", lambda: truth_.spark_session(args.master))
    available = estimators(run)
    chosen = {
        name: estimate
        for name, estimate in available.items()
        if name in wanted or (name.startswith("statlas") and "statlas" in wanted)
    }
    if not any(name.startswith("statlas") for name in available):
        print("statlas estimates are not available yet (benchmarks/qerror.py statlas_estimators)")

    rows: list[dict[str, Any]] = []
    tables: list[str] = []
    mismatched = 0
    for variant in variants:
        counts = prepare(run, variant)
        if args.check:
            mismatches = check_postgres(run, variant, counts)
            mismatched += len(mismatches)
            print(f"{variant}: {len(mismatches)} count mismatches between Spark and PostgreSQL")
            for line in mismatches:
                print(f"  {line}")
        workloads = [("", QUERIES, counts)]
        if args.subplans:
            sub = workload_subplans(QUERIES, run.params[variant])
            print(f"{variant}: {len(sub)} connected sub-plans of the join queries", flush=True)
            sub_counts = run.timed(
                f"truth sub-plans {variant}", partial(sub_truth, run, variant, sub)
            )
            workloads.append((" (sub-plans)", sub, sub_counts))
        for label, queries, truths in workloads:
            for system, estimate in chosen.items():
                system_rows = [
                    result_row(variant, system, query, estimate(query, variant), truths)
                    for query in queries
                ]
                rows.extend(system_rows)
                tables.append(
                    f"### SF {scale} {variant}: {system}{label}\n\n{table(system_rows)}\n"
                )
                print(tables[-1], flush=True)

    for row in rows:
        if row["qerror"] is not None:
            row["qerror"] = f"{row['qerror']:.4f}"
    output = args.data / f"qerror-{scale}.csv"
    write_csv(output, rows)
    print("\n".join(tables))
    print(f"per query: {output}")
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in run.seconds.items()))
    for connection in run.state.get("postgres", {}).values():
        connection.close()
    if mismatched:
        raise SystemExit(f"{mismatched} truth mismatches")


if __name__ == "__main__":
    main()
