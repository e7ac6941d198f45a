"""Spark's CBO fed by statlas through the Hive Metastore API, beside Spark's own ANALYZE.

    python benchmarks/hms_cbo.py [--scale 1] [--variant uniform] [--master local[2]]

The q-error workload of benchmarks/qerror.py (80 COUNT(*) queries over TPC-H, 0 to 5
joins; run benchmarks/data.py first), in one run:
  spark ANALYZE   Spark's CBO over catalog tables of the same files after ANALYZE TABLE ...
                  COMPUTE STATISTICS FOR ALL COLUMNS with histograms (as qerror.py's `spark`)
  spark + statlas the same CBO with no ANALYZE: the tables registered and collected by
                  statlas (a fresh SQLite metastore), served by `statlas daemon` over the
                  Hive Metastore API, read by a Spark session with Hive support
q-error = max(est/true, true/est) of the row count of the optimized plan's input to the final
COUNT, both clamped to one row; true counts from qerror.py's cache (computed when absent).
Also: the seconds each took to get its statistics.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import qerror_truth as truth_
from qerror import JOIN_GROUPS, Run, group_of, prepare, q_error
from qerror_workload import QUERIES

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.hms import daemon

STATLAS = str(Path(sys.executable).parent / "statlas")


def spark_analyze(run: Run, variant: str) -> tuple[dict[str, float | None], float]:
    database = f"qerr_{truth_.safe_name(variant)}"
    started = time.perf_counter()
    truth_.analyze_catalog(run.spark, run.directory(variant), database, True)
    seconds = time.perf_counter() - started
    estimates = {
        q.name: truth_.spark_estimate(run.spark, database, run.sql(q, variant)) for q in QUERIES
    }
    return estimates, seconds


def statlas_collect(run: Run, variant: str, path: Path) -> float:
    """Register and collect every table into a fresh metastore; seconds taken."""
    from collectors.collect import collect
    from metastore import Metastore

    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    started = time.perf_counter()
    metastore = Metastore(f"sqlite:///{path}")
    metastore.upgrade()
    run.spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    for table in truth_.TABLES:
        metastore.register_table(table, str(run.directory(variant) / table))
        collect(metastore.engine, table, spark=run.spark)
    metastore.dispose()
    return time.perf_counter() - started


def statlas_served(
    run: Run, variant: str, path: Path, master: str
) -> tuple[dict[str, float | None], float]:
    """Spark's CBO with statlas's statistics through the daemon's Thrift API; seconds from
    the session's start to the first estimate (its metastore reads)."""
    from collectors.spark_session import spark_session

    with daemon(f"sqlite:///{path}", path.parent) as (port, _process):
        spark = spark_session(
            master,
            {
                "spark.app.name": "statlas-hms-cbo",
                "spark.sql.catalogImplementation": "hive",
                "spark.hadoop.hive.metastore.uris": f"thrift://127.0.0.1:{port}",
                "spark.sql.warehouse.dir": str(path.parent / "hms-cbo-warehouse"),
                "spark.sql.cbo.enabled": "true",
                "spark.sql.statistics.histogram.enabled": "true",
            },
        )
        started = time.perf_counter()
        estimates: dict[str, float | None] = {}
        first: float | None = None
        for query in QUERIES:
            estimates[query.name] = truth_.spark_plan_rows(spark, run.sql(query, variant))
            if first is None:
                first = time.perf_counter() - started
        spark.stop()
        return estimates, first or 0.0


def summary_table(results: dict[str, dict[str, float | None]], truths: dict[str, int]) -> list[str]:
    import numpy as np

    systems = list(results)
    header = "| joins | queries | " + " | ".join(f"{s} median | {s} p90 | {s} max" for s in systems)
    lines = [header + " |", "|---|---:|" + "---:|" * (3 * len(systems))]
    for group in JOIN_GROUPS:
        chosen = [q for q in QUERIES if group == "all" or group_of(q.joins) == group]
        cells = []
        for system in systems:
            errors = [
                q_error(results[system][q.name] or 1.0, truths[q.name])
                for q in chosen
                if results[system][q.name] is not None
            ]
            if not errors:
                cells += ["", "", ""]
                continue
            median, p90 = np.percentile(errors, [50, 90])
            cells += [f"{median:.2f}", f"{p90:.2f}", f"{max(errors):,.2f}"]
        lines.append(f"| {group} | {len(chosen)} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--variant", default="uniform")
    parser.add_argument("--data", type=Path, default=truth_.DATA)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    run = Run(args.scale, args.data, truth_.spark_session(args.master))
    truths = prepare(run, args.variant)
    spark_estimates, analyze_seconds = spark_analyze(run, args.variant)
    print(f"Spark ANALYZE: {analyze_seconds:.1f} s", flush=True)
    path = args.data / f"hms-cbo-sf{args.scale}-{args.variant}.db"
    collect_seconds = statlas_collect(run, args.variant, path)
    print(f"statlas register + collect: {collect_seconds:.1f} s", flush=True)
    run.spark.stop()
    served, first_seconds = statlas_served(run, args.variant, path, args.master)
    results = {"spark ANALYZE": spark_estimates, "spark + statlas": served}
    print()
    print(f"TPC-H SF {args.scale} {args.variant}, {len(QUERIES)} queries, q-error by joins:")
    print("\n".join(summary_table(results, truths)))
    print()
    print("| statistics for Spark's CBO | seconds |")
    print("|---|---:|")
    print(f"| Spark ANALYZE TABLE ... FOR ALL COLUMNS (8 tables) | {analyze_seconds:.1f} |")
    print(f"| statlas table register + collect (8 tables) | {collect_seconds:.1f} |")
    print(
        f"| a new Spark session's first estimate through statlas's Thrift API "
        f"| {first_seconds:.1f} |"
    )
    worse = sorted(
        (
            q_error(served[q.name] or 1.0, truths[q.name])
            / q_error(spark_estimates[q.name] or 1.0, truths[q.name]),
            q.name,
        )
        for q in QUERIES
        if served[q.name] is not None and spark_estimates[q.name] is not None
    )
    print()
    print("queries where statlas-fed CBO is furthest behind / ahead of ANALYZE (ratio):")
    for ratio, name in [*worse[-5:][::-1], *worse[:5]]:
        print(f"  {name}: {ratio:.2f}")


if __name__ == "__main__":
    main()
