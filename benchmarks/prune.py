"""Map-join partition pruning (issue 5): statlas beside Spark's dynamic partition pruning.

    python benchmarks/prune.py [--scale 1] [--variant uniform] [--repeat 3] [--master local[2]]

TPC-H lineitem partitioned by l_shipdate (2,526 partitions; run `make data` first) joined to
a filtered date dimension (written here once: one row per day of 1992-1998) and orders. In
one run and one SparkSession, per query, medians of --repeat, the systems taking turns:

  none      Spark without dynamic partition pruning (every lineitem partition read)
  dpp       Spark with dynamic partition pruning (its default)
  statlas   `pruned_dataframe`: the date dimension's key values collected with Spark, the
            metastore's partition lookup, then the query over only the kept partitions

End to end, each system starts from the tables' directories: Spark lists every partition
of lineitem and orders (spark.read), statlas asks the metastore and lists only what it
keeps. `dpp warm` is Spark's DPP with the tables already listed (DataFrames made before
the clock starts): the query alone.

Partitions and bytes of lineitem read come from Spark's scan metrics. "exact" checks that
statlas kept exactly the partitions holding a joined row (their l_shipdate values found by
Spark); "same" that all three systems returned the same result.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from collectors.collect import collect
from collectors.spark_session import spark_session
from metastore import Metastore
from metastore.catalog.tables import describe_table
from optimizer.sql_to_plan import parse, referenced_tables
from pruner.prune import plan_pruning, prune, pruned_dataframe
from pruner.spark_views import register_views, rewrite_onto_views

DATA = Path(__file__).resolve().parent / ".data"
DPP = "spark.sql.optimizer.dynamicPartitionPruning.enabled"
SYSTEMS = ("none", "dpp", "dpp warm", "statlas")
SELECT = "SELECT COUNT(*) AS n, SUM(l.l_extendedprice) AS revenue"
QUERIES = {
    "one month": f"{SELECT} FROM lineitem l JOIN date_dim d ON l.l_shipdate = d.d_date "
    "WHERE d.d_year = 1995 AND d.d_month = 6",
    "Sundays of 1996": f"{SELECT} FROM lineitem l JOIN date_dim d ON l.l_shipdate = d.d_date "
    "WHERE d.d_year = 1996 AND d.d_dow = 'Sun'",
    "holidays + orders": f"{SELECT} FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
    "JOIN date_dim d ON l.l_shipdate = d.d_date "
    "WHERE d.d_holiday AND o.o_orderpriority = '1-URGENT'",
    "quarter + static": f"{SELECT} FROM lineitem l JOIN date_dim d ON l.l_shipdate = d.d_date "
    "WHERE d.d_quarter = 2 AND l.l_shipdate >= DATE '1997-01-01'",
    "IN subquery": f"{SELECT} FROM lineitem l WHERE l.l_shipdate IN "
    "(SELECT d.d_date FROM date_dim d WHERE d.d_year = 1994 AND d.d_dow = 'Mon')",
}


def write_date_dim(directory: Path) -> None:
    """One row per day of 1992-1998: year, month, quarter, weekday, and a holiday flag (the
    1st and the 15th of every month)."""
    if (directory / "part-0.parquet").exists():
        return
    days = [dt.date(1992, 1, 1) + dt.timedelta(n) for n in range(7 * 366)]
    days = [d for d in days if d.year <= 1998]
    directory.mkdir(parents=True, exist_ok=True)
    table = pa.table(
        {
            "d_date": pa.array(days, pa.date32()),
            "d_year": pa.array([d.year for d in days], pa.int32()),
            "d_month": pa.array([d.month for d in days], pa.int32()),
            "d_quarter": pa.array([(d.month - 1) // 3 + 1 for d in days], pa.int32()),
            "d_dow": [d.strftime("%a") for d in days],
            "d_holiday": [d.day in (1, 15) for d in days],
        }
    )
    pq.write_table(table, directory / "part-0.parquet")


def scan_metrics(frame: Any, table_dir: str) -> tuple[int, int]:
    """(partitions, bytes) the executed plan read from `table_dir`, from the metrics of its
    file scans (after adaptive execution)."""
    partitions = size = 0
    stack = [frame._jdf.queryExecution().executedPlan()]
    while stack:
        node = stack.pop()
        name = node.getClass().getSimpleName()
        if name == "AdaptiveSparkPlanExec":
            stack.append(node.executedPlan())
        if name.endswith("QueryStageExec"):
            stack.append(node.plan())
        if name == "ReusedExchangeExec":
            stack.append(node.child())
        children = node.children()
        stack.extend(children.apply(i) for i in range(children.size()))
        if name == "FileSourceScanExec":
            roots = node.relation().location().rootPaths()
            paths = [roots.apply(i).toString() for i in range(roots.size())]
            if not any(table_dir in p for p in paths):
                continue
            metrics = node.metrics()
            for key, target in (("numPartitions", "p"), ("filesSize", "s")):
                found = metrics.get(key)
                if found.isDefined():
                    if target == "p":
                        partitions += int(found.get().value())
                    else:
                        size += int(found.get().value())
    return partitions, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--variant", default="uniform")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    root = DATA / f"tpch-sf{args.scale}" / args.variant
    if not (root / "lineitem").exists():
        raise SystemExit(f"{root / 'lineitem'} is missing: run `make data` first")
    write_date_dim(DATA / "date_dim")
    spark = spark_session(args.master)
    metastore = Metastore(f"sqlite:///{DATA / f'prune-sf{args.scale}-{args.variant}.db'}")
    metastore.upgrade()
    engine = metastore.engine
    started = time.perf_counter()
    for name, path in (
        ("lineitem", root / "lineitem"),
        ("orders", root / "orders"),
        ("date_dim", DATA / "date_dim"),
    ):
        metastore.register_table(name, str(path))
        collect(engine, name, spark=spark)
    print(f"registered and collected in {time.perf_counter() - started:.0f} s", flush=True)
    tables = {n: describe_table(engine, n) for n in ("lineitem", "orders", "date_dim")}
    lineitem_dir = str(root / "lineitem")

    def spark_run(sql: str, dpp: bool, warm: bool = False) -> tuple[float, Any, Any]:
        spark.conf.set(DPP, "true" if dpp else "false")
        used = {n: tables[n] for n in referenced_tables(parse(sql))}
        if warm:
            views = register_views(spark, used)
        began = time.perf_counter()
        if not warm:
            views = register_views(spark, used)
        frame = spark.sql(rewrite_onto_views(sql, views))
        result = frame.collect()
        return time.perf_counter() - began, result, frame

    def statlas_run(sql: str) -> tuple[float, Any, Any]:
        spark.conf.set(DPP, "false")  # statlas's own pruning only
        began = time.perf_counter()
        frame = pruned_dataframe(spark, engine, sql)
        result = frame.collect()
        return time.perf_counter() - began, result, frame

    print(
        "| query | partitions: all / exact / statlas / dpp / none | MB read: statlas / dpp / "
        "none | seconds: statlas / dpp / dpp warm / none | statlas / dpp | statlas / dpp warm "
        "| exact | same |"
    )
    print("|---|---|---|---|---|---|---|---|")
    ratios: list[float] = []
    warm_ratios: list[float] = []
    for label, sql in QUERIES.items():
        compiled = plan_pruning(engine, sql)
        assert compiled.big is not None, label
        assert compiled.big.table == "lineitem", label
        report = prune(engine, sql, spark=spark)
        truth_sql = sql.replace(SELECT, "SELECT DISTINCT l.l_shipdate")
        _, truth_rows, _ = spark_run(truth_sql, dpp=True)
        truth = {r[0] for r in truth_rows}
        kept = {p.values["l_shipdate"] for p in report.partitions}
        times: dict[str, list[float]] = {s: [] for s in SYSTEMS}
        results: dict[str, Any] = {}
        read: dict[str, tuple[int, int]] = {}
        for attempt in range(args.repeat):
            turn = attempt % len(SYSTEMS)
            for system in SYSTEMS[turn:] + SYSTEMS[:turn]:
                if system == "statlas":
                    seconds, result, frame = statlas_run(sql)
                else:
                    dpp, warm = system != "none", system == "dpp warm"
                    seconds, result, frame = spark_run(sql, dpp=dpp, warm=warm)
                times[system].append(seconds)
                results[system] = [tuple(r) for r in result]
                read[system] = scan_metrics(frame, lineitem_dir)
        median = {s: statistics.median(t) for s, t in times.items()}
        same = all(results[s] == results["none"] for s in SYSTEMS)
        ratios.append(median["statlas"] / median["dpp"])
        warm_ratios.append(median["statlas"] / median["dpp warm"])
        print(
            f"| {label} | {report.partitions_before} / "
            f"{len(truth)} / {read['statlas'][0]} / {read['dpp'][0]} / {read['none'][0]} | "
            f"{read['statlas'][1] / 1e6:.1f} / {read['dpp'][1] / 1e6:.1f} / "
            f"{read['none'][1] / 1e6:.1f} | {median['statlas']:.2f} / {median['dpp']:.2f} / "
            f"{median['dpp warm']:.2f} / {median['none']:.2f} | {ratios[-1]:.2f} | "
            f"{warm_ratios[-1]:.2f} | {kept == truth} | {same} |",
            flush=True,
        )
    print(
        f"\ngeometric mean of statlas / dpp wall time: {statistics.geometric_mean(ratios):.2f} "
        f"end to end, {statistics.geometric_mean(warm_ratios):.2f} against dpp warm"
    )
    spark.stop()


if __name__ == "__main__":
    main()
