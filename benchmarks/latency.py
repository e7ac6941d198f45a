"""Latency of statlas's estimates and plans (issue 22) beside Spark's own planning time.

    python benchmarks/latency.py [--sets tpch,star,synthetic] [--dbs sqlite,postgres]
                                 [--queries q1,q3,s2] [--requests 20] [--repeat 1]
                                 [--spark-repeat 5] [--no-spark] [--no-cli]
                                 [--synthetic-days 1000] [--synthetic-regions 100]
                                 [--scale 1] [--master local[2]] [--driver-memory 4g]
                                 [--pg-url postgresql+psycopg2://postgres@127.0.0.1:5432/test]
                                 [--rebuild] [--out benchmarks/.data/latency.json]

Sets (run `make data` first for the TPC-H ones):

  tpch       TPC-H's 22 queries (benchmarks/tpch_queries.py) on SF --scale uniform: lineitem
             by ship date (2,526 partitions), orders by order date, the rest unpartitioned
  star       the star-join set (benchmarks/star_queries.py) on the zipf-1 variant, whose
             tables are registered the same way
  synthetic  one table of --synthetic-days x --synthetic-regions partitions (day date x
             region string; 1,000 x 100 = 100,000 by default), 4 rows each, a column of
             every kind (int, bigint, double, decimal, string, date); estimates of
             `SELECT COUNT(*)` over the whole table and over one month of days

Metastores (cached: built once, then brought up to date incrementally; --rebuild drops them
and builds them again): per data set (tpch-sf1-uniform, tpch-sf1-zipf-1,
synthetic-<days>x<regions>), a SQLite file benchmarks/.data/latency-<data set>.db and a
PostgreSQL schema latency_<data set> (tpch_sf1_uniform...) of the --pg-url database, each
brought to the current revision by `statlas db upgrade`, the tables registered with `statlas
table register` (as benchmarks/qerror_statlas.py does: inferred partition keys, default
properties) and collected with `statlas collect --all --master local[2]` (a second run
scans nothing and starts no Spark). The synthetic data is written once under
benchmarks/.data/latency-synthetic-<days>x<regions>/ (100,000 tiny Parquet files take a
while to write, and longer to collect: try a small size first).

Spark's planning time (not with --no-spark): one local SparkSession whose Hive catalog
(Derby, benchmarks/.data/latency-catalog/, kept between runs) holds the TPC-H tables over
the same Parquet directories, ANALYZEd once per data variant FOR ALL COLUMNS with
histograms; CBO on (spark.sql.cbo.enabled, joinReorder.enabled, planStats.enabled). Per
query, after one warm-up: `spark.sql(sql)` (parsing and analysis, eager in Spark) then
`df._jdf.queryExecution().executedPlan()` (optimisation and physical planning), medians of
--spark-repeat. The "Spark planning ms" column is executedPlan's time, with parsing and
analysis in brackets; the ratio and the target compare statlas's /explain p50 with the
executedPlan time alone, as the issue names it. Over catalog tables Spark asks the catalog
for the partitions a filter keeps on every planning (Derby: about 0.3 s for one day of
lineitem on a 2-core machine). "Spark over views ms" is the same query over temporary views
of the same directories (spark.read.parquet: files listed once, partitions pruned in memory,
no statistics): Spark's floor, given for information.

statlas's times: per set and database, `statlas daemon --db URL` on a free port (no
schedules, no token, no Thrift API, its log under benchmarks/.data/), warmed by one request
per route that fails before reading statistics (an unknown table: imports done, nothing
cached).
Then per query, over one keep-alive connection, --requests `POST /estimate` (level sketch)
and then --requests `POST /explain` (no config), each request timed from sending to the
answer's last byte: p50, p95 (nearest rank) and max over all of them, and the first one
apart (cold: the first time the daemon sees that query; /explain's first request follows
the query's estimates, whose statistics a cache may hold by then). Beside them the wall
time of the CLI, `statlas --db URL estimate --sql SQL --json` (Python start-up included;
median of --repeat). The daemon's resident memory (VmRSS, and the peak VmHWM, from
/proc/<pid>/status) after the warm-up, right after the set, and settled (SETTLE_S later,
once the daemon has handed back what its last requests freed, at most one release interval
after them): the settled growth bounds what a cache holds from above (it also counts what
the allocator keeps of the requests' working sets).
`--queries` picks TPC-H and star queries only; the synthetic set runs both of its queries.

Printed: a Markdown table per set and database, the daemons' memory, and per database one
line per target of the issue: `/estimate` p95 <= 50 ms and `/explain` p95 <= 200 ms for
every TPC-H and star query; the synthetic table's estimates p95 <= 50 ms; no query's
planning (/explain p50) slower than Spark's; the daemon's memory growth within its cache
bound ($STATLAS_CACHE_MB, 256 MB by default); each met or missed, and by how much. Every
figure goes to --out (JSON, rewritten after each query).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from latency_measure import (
    SETTLE_S,
    Client,
    cli_seconds,
    daemon,
    memory_mb,
    timed_requests,
    warm_up,
)
from latency_metastores import Target, build_metastore, metastore_url
from latency_report import HEADER, cache_bound_mb, print_report, summarize, table_row
from latency_spark import measure_spark
from latency_workload import (
    ALL_DBS,
    ALL_SETS,
    DATA,
    QUERY_SETS,
    SYNTHETIC_TABLE,
    TPCH_TABLES,
    chosen_queries,
    split_list,
    synthetic_data,
    synthetic_queries,
)

DEFAULT_PG = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
DEFAULT_OUT = DATA / "latency.json"


# ---------------------------------------------------------------------------- the run


def measure_target(
    target: Target,
    spark: dict[str, dict[str, Any]],
    args: argparse.Namespace,
    records: list[dict[str, Any]],
    save: Callable[[], None],
) -> dict[str, Any]:
    """Every figure of one set on one database, under one daemon: each query's record
    appended to `records` (then `save()`); the daemon's memory."""
    log = DATA / f"latency-daemon-{target.set}-{target.db}.log"
    with daemon(target.url, log) as running:
        client = Client(running.port)
        try:
            warm_up(client)
            memory: dict[str, Any] = {"start": memory_mb(running.pid)}
            print(f"\n### {target.set} on {target.db}\n\n{HEADER}", flush=True)
            for query, sql in target.queries.items():
                body = {"sql": sql}
                record: dict[str, Any] = {
                    "set": target.set,
                    "db": target.db,
                    "query": query,
                    "sql": sql,
                    "estimate": timed_requests(client, "/estimate", body, args.requests),
                    "explain": timed_requests(client, "/explain", body, args.requests),
                    "spark": spark.get(query),
                }
                if not args.no_cli:
                    record["cli"] = cli_seconds(target.url, sql, args.repeat)
                plan_ms = (record["spark"] or {}).get("plan_ms")
                p50 = record["explain"]["p50"]
                record["ratio"] = p50 / plan_ms if p50 is not None and plan_ms else None
                views_ms = (record["spark"] or {}).get("views_plan_ms")
                record["ratio_views"] = p50 / views_ms if p50 is not None and views_ms else None
                records.append(record)
                print(table_row(record), flush=True)
                save()
            memory["end"] = memory_mb(running.pid)
            time.sleep(SETTLE_S)
            memory["settled"] = memory_mb(running.pid)
        finally:
            client.close()
    return memory


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1, default=str))
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(ALL_SETS), help="tpch,star,synthetic")
    parser.add_argument("--dbs", default=",".join(ALL_DBS), help="sqlite,postgres")
    parser.add_argument("--queries", default="", help="TPC-H and star queries, e.g. q1,q3,s2")
    parser.add_argument("--requests", type=int, default=20, help="requests per query and route")
    parser.add_argument("--repeat", type=int, default=1, help="CLI runs per query (median)")
    parser.add_argument("--spark-repeat", type=int, default=5, help="Spark plannings (median)")
    parser.add_argument("--no-spark", action="store_true", help="no Spark planning times")
    parser.add_argument("--no-cli", action="store_true", help="no CLI wall times")
    parser.add_argument("--synthetic-days", type=int, default=1000)
    parser.add_argument("--synthetic-regions", type=int, default=100)
    parser.add_argument("--scale", default="1", help="TPC-H scale factor of `make data`")
    parser.add_argument("--master", default="local[2]", help="Spark master (collect, planning)")
    parser.add_argument("--driver-memory", default="4g", help="of the planning SparkSession")
    parser.add_argument(
        "--pg-url", default=os.environ.get("STATLAS_TEST_DB_URL", DEFAULT_PG), help="PostgreSQL"
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="drop the metastores and build them again"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON of every figure")
    args = parser.parse_args()
    if args.requests < 1 or args.repeat < 1 or args.spark_repeat < 1:
        raise SystemExit("--requests, --repeat and --spark-repeat must be at least 1")
    if args.synthetic_days < 1 or args.synthetic_regions < 1:
        raise SystemExit("--synthetic-days and --synthetic-regions must be at least 1")
    sets = split_list(args.sets, ALL_SETS, "sets")
    dbs = split_list(args.dbs, ALL_DBS, "dbs")
    wanted = [q.strip() for q in args.queries.split(",") if q.strip()]
    queries = chosen_queries(sets, wanted)
    scale = f"{float(args.scale):g}"
    args.scale = scale

    started = time.perf_counter()
    report: dict[str, Any] = {
        "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "args": {k: str(v) for k, v in vars(args).items()},
        "cpus": os.cpu_count(),
        "load_average_start": os.getloadavg(),
        "cache_bound_mb": cache_bound_mb(),
        "setup": {},
    }

    import qerror_truth

    targets: list[Target] = []
    for name in sets:
        if name == "synthetic":
            days, regions = args.synthetic_days, args.synthetic_regions
            store = f"synthetic-{days}x{regions}"
            tables = {SYNTHETIC_TABLE: synthetic_data(days, regions)}
            set_queries = synthetic_queries(days)
        elif name in queries:
            variant = QUERY_SETS[name][1]
            directory = qerror_truth.variant_dir(DATA, scale, variant)
            store = f"tpch-sf{scale}-{variant}"
            tables = {t: directory / t for t in TPCH_TABLES}
            set_queries = queries[name]
        else:
            continue
        for db in dbs:
            target = Target(name, db, metastore_url(db, store, args.pg_url), tables, set_queries)
            print(f"metastore {store} on {db} ...", flush=True)
            build_metastore(target, store, args)
            report["setup"][f"{name} on {db}"] = target.setup
            targets.append(target)
    write_json(args.out, report)

    spark: dict[str, dict[str, dict[str, Any]]] = {}
    if not args.no_spark and queries:
        print("Spark planning ...", flush=True)
        spark = measure_spark(queries, args, report)
        report["spark"] = spark
        write_json(args.out, report)

    records: list[dict[str, Any]] = []
    memory: dict[str, dict[str, Any]] = {}
    report["records"], report["memory"] = records, memory
    for target in targets:
        memory[f"{target.set} on {target.db}"] = measure_target(
            target, spark.get(target.set, {}), args, records, lambda: write_json(args.out, report)
        )
        write_json(args.out, report)

    summary = summarize(records, memory, dbs)
    report["summary"] = summary
    report["load_average_end"] = os.getloadavg()
    report["seconds"] = time.perf_counter() - started
    print_report(records, memory, summary)
    write_json(args.out, report)
    print(f"\nwall time {report['seconds'] / 60:.1f} min; figures in {args.out}")


if __name__ == "__main__":
    main()
