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
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import plans_tpcds
import qerror_statlas
import qerror_truth
import star_queries
import tpch_queries
from plans_measure import measure, plan_statlas
from plans_report import HEADER, print_summary, summarize, table_row, write_json
from plans_spark import DATA, PLANS, catalog_database, session, tables_of, warm

from metastore import Metastore
from optimizer.cost.params import parse_settings

# {set: (its queries, read when the set runs; its data variant)}
SETS: dict[str, tuple[Callable[[], dict[str, str]], str]] = {
    "tpch": (lambda: tpch_queries.QUERIES, "uniform"),
    "star": (lambda: star_queries.QUERIES, "zipf-1"),
    "tpcds": (plans_tpcds.queries, plans_tpcds.VARIANT),
}


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
