"""Cardinality-estimation accuracy on TPC-DS (issue 24): `benchmarks/qerror.py --set tpcds`.

    python benchmarks/qerror.py --set tpcds [--scale 1] [--systems statlas,spark,postgres]
                                [--queries q1,q5] [--master local[2]]

Over the data of `benchmarks/data.py --set tpcds` (run it first), per query of the 99
(benchmarks/tpcds_queries.py, each without its final LIMIT), in one run:
  truth     the rows DuckDB returns for the query (DuckDB's own text of it, on the generated
            database tpcds.duckdb), cached in DATA/qerror-tpcds-truth-sf<scale>.json
  statlas   `estimate` at level sketch over the metastore of benchmarks/tpcds_statlas.py
            (registered and collected on first use); also whether `explain` and `explain
            --emit spark` succeed
  spark     Spark's CBO (cbo, planStats, histograms; the 24 tables as catalog tables, fact
            tables with their partitions recovered, each ANALYZEd FOR ALL COLUMNS): the row
            count of the optimized plan's root, "-" when Spark gives none
  postgres  PostgreSQL 15's planner (tables loaded into schema tpcds_sf<scale> of QERROR_PG_DSN,
            ANALYZEd, default_statistics_target 100): 'Plan Rows' of the plan's root, of the
            query rewritten by sqlglot into PostgreSQL's dialect

q-error = max(est/true, true/est), both clamped to at least one row. Printed: per system the
queries it estimated, q-error median, p90, p95, max and the count over 10 and over 100; then
per query every system's estimate. --json writes every figure.

--subplans also judges every system on the connected key-join sub-plans of the queries
(benchmarks/qerror_tpcds_subplans.py: a COUNT(*) per sub-join, truth by DuckDB, cached in
DATA/qerror-tpcds-subplans-truth-sf<scale>.json) and prints their summary table too.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plans_tpcds
import qerror_tpcds_subplans as subplans_
import sqlglot
from qerror_truth import PG_DSN, _pg_type, _row_count, pg_connect, pg_plan, pg_serial_cursor
from tpcds_queries import TABLES, duckdb_connection, duckdb_queries, queries, without_final_limit
from tpcds_statlas import metastore_for

from metastore.errors import StatlasError
from optimizer.estimate.predicates import SKETCH
from optimizer.estimate.sources import MetastoreSource
from optimizer.estimate.stats_query import StatsQuery
from optimizer.physical.api import emit, plan_query
from optimizer.sql_to_plan import build_plan

SYSTEMS = ("statlas", "spark", "postgres")


def q_error(estimate: float, true: float) -> float:
    estimate, true = max(estimate, 1.0), max(true, 1.0)
    return max(estimate / true, true / estimate)


def truth(root: Path, scale: str, names: list[str]) -> dict[str, int]:
    """Rows of each query without its final LIMIT, by DuckDB, cached."""
    cache_file = root / f"qerror-tpcds-truth-sf{scale}.json"
    cached: dict[str, int] = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    missing = [n for n in names if n not in cached]
    if missing:
        database = root / f"tpcds-sf{scale}" / "tpcds.duckdb"
        connection = duckdb_connection(database, read_only=True)
        for name in missing:
            sql = without_final_limit(duckdb_queries()[name], "duckdb")
            (count,) = connection.execute(f"SELECT COUNT(*) FROM ({sql}) AS _t").fetchone()
            cached[name] = int(count)
        connection.close()
        cache_file.write_text(json.dumps(cached, indent=1, sort_keys=True))
    return {n: cached[n] for n in names}


# ---------------------------------------------------------------------------- statlas


def statlas_estimator(metastore: Any) -> Callable[[str], dict[str, Any]]:
    """query name -> {"estimate": rows, "explain": ok, "emit": ok, "ms": estimate's time};
    each table's statistics of a partition selection are read once per run."""
    source = MetastoreSource(metastore.engine, memo=True)

    def estimate(name: str) -> dict[str, Any]:
        sql = without_final_limit(queries()[name])
        result: dict[str, Any] = {}
        started = time.perf_counter()
        try:
            plan = build_plan(sql, source.table)
            result["estimate"] = StatsQuery(source, SKETCH).of(plan).rows.value
        except StatlasError as error:
            result["error"] = str(error)
        result["ms"] = (time.perf_counter() - started) * 1000
        try:
            emit(plan_query(None, queries()[name], source=source))
            result["emit"] = True
        except StatlasError as error:
            result["emit"] = False
            result.setdefault("error", str(error))
        return result

    return estimate


# ------------------------------------------------------------------------------ Spark


def spark_session(master: str) -> Any:
    from collectors.spark_session import spark_session as make

    return make(
        master,
        {
            "spark.app.name": "statlas-qerror-tpcds",
            "spark.sql.cbo.enabled": "true",
            "spark.sql.cbo.planStats.enabled": "true",
            "spark.sql.statistics.histogram.enabled": "true",
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.sources.partitionColumnTypeInference.enabled": "true",
            "spark.sql.shuffle.partitions": "8",
        },
    )


def analyze_catalog(spark: Any, lake: Path, database: str) -> None:
    """The 24 tables as catalog tables of `database`, ANALYZEd with histograms, as the plan
    benchmark builds them (plans_tpcds.analyze_catalog), partition keys typed."""
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "true")
    plans_tpcds.analyze_catalog(spark, lake, database)


def spark_estimate(spark: Any, database: str, name: str) -> float | None:
    spark.catalog.setCurrentDatabase(database)
    try:
        sql = without_final_limit(queries()[name])
        return _row_count(spark.sql(sql)._jdf.queryExecution().optimizedPlan())
    except Exception as error:  # a query Spark does not plan: reported, not fatal
        print(f"spark {name}: {str(error).splitlines()[0][:200]}")
        return None
    finally:
        spark.catalog.setCurrentDatabase("default")


# ------------------------------------------------------------------------- PostgreSQL


def postgres_load(root: Path, scale: str, schema: str, dsn: str = PG_DSN) -> None:
    """The generated tables copied from DuckDB into `schema` (a table whose row count already
    matches is kept), then ANALYZEd."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    source = duckdb_connection(root / f"tpcds-sf{scale}" / "tpcds.duckdb", read_only=True)
    connection = pg_connect(dsn)
    cursor = connection.cursor()
    cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    cursor.execute("SET synchronous_commit = off")
    for table in TABLES:
        relation = source.table(table)
        (expected,) = source.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
        cursor.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
            (schema, table),
        )
        if cursor.fetchone():
            cursor.execute(f"SELECT COUNT(*) FROM {schema}.{table}")
            if cursor.fetchone()[0] == expected:
                continue
        reader = relation.fetch_arrow_reader(batch_size=200_000)
        columns = ", ".join(f"{f.name} {_pg_type(f.type)}" for f in reader.schema)
        cursor.execute(f"DROP TABLE IF EXISTS {schema}.{table}")
        cursor.execute(f"CREATE UNLOGGED TABLE {schema}.{table} ({columns})")
        copy = f"COPY {schema}.{table} FROM STDIN WITH (FORMAT csv)"
        options = pcsv.WriteOptions(include_header=False)
        for batch in reader:
            buffer = io.BytesIO()
            pcsv.write_csv(pa.Table.from_batches([batch]), buffer, options)
            buffer.seek(0)
            cursor.copy_expert(copy, buffer)
    cursor.execute("SET default_statistics_target = 100")
    for table in TABLES:
        cursor.execute(f"ANALYZE {schema}.{table}")
    connection.close()
    source.close()


def postgres_estimator(schema: str, dsn: str = PG_DSN) -> Callable[[str], float | None]:
    """PostgreSQL's 'Plan Rows' of the plan's root, per query name."""
    cursor = pg_serial_cursor(schema, dsn)

    def estimate(name: str) -> float | None:
        sql = without_final_limit(duckdb_queries()[name], "duckdb")
        plan = pg_plan(cursor, sqlglot.transpile(sql, read="duckdb", write="postgres")[0], name)
        return None if plan is None else float(plan["Plan Rows"])

    return estimate


# ----------------------------------------------------------------------------- report


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def summary_line(system: str, errors: list[float], total: int) -> str:
    if not errors:
        return f"| {system} | 0 of {total} | - | - | - | - | - | - |"
    over10 = sum(e > 10 for e in errors)
    over100 = sum(e > 100 for e in errors)
    return (
        f"| {system} | {len(errors)} of {total} | {percentile(errors, 0.5):.2f} | "
        f"{percentile(errors, 0.9):.1f} | {percentile(errors, 0.95):.1f} | {max(errors):,.1f} | "
        f"{over10} | {over100} |"
    )


def run(args: argparse.Namespace) -> None:
    """qerror.py --set tpcds."""
    root, scale = args.data, str(args.scale)
    names = list(queries())
    if args.queries:
        names = [n for n in args.queries.split(",") if n]
    systems = [s for s in args.systems.split(",") if s in SYSTEMS]
    seconds: dict[str, float] = {}

    def timed(phase: str, function: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            return function()
        finally:
            seconds[phase] = seconds.get(phase, 0.0) + time.perf_counter() - started

    truths = timed("truth", lambda: truth(root, scale, names))
    plans: list[subplans_.SubPlan] = []
    sub_truths: dict[str, int | None] = {}
    sub_estimates: dict[str, dict[str, float | None]] = {s: {} for s in systems}
    if args.subplans:
        database_file = str(root / f"tpcds-sf{scale}" / "tpcds.duckdb")
        plans, per_query, capped = subplans_.subplans(names, database_file)
        print(
            f"sub-plans: {len(plans)} distinct ({sum(per_query.values())} before deduplication)"
            f" of {len(names)} queries; blocks cut at {subplans_.MAX_PER_BLOCK} sub-plans "
            f"(smallest first): {', '.join(capped) or 'none'}",
            flush=True,
        )
        sub_truths = timed("truth sub-plans", lambda: subplans_.truth(root, scale, plans))
    spark = timed("spark start", lambda: spark_session(args.master))
    estimates: dict[str, dict[str, float | None]] = {s: {} for s in systems}
    statlas_details: dict[str, dict[str, Any]] = {}
    if "statlas" in systems:
        metastore = timed("statlas collect", lambda: metastore_for(root, scale, spark))
        estimate = statlas_estimator(metastore)
        for name in names:
            statlas_details[name] = timed("statlas estimate", lambda n=name: estimate(n))
            estimates["statlas"][name] = statlas_details[name].get("estimate")
        if plans:
            sub = subplans_.statlas_estimator(metastore)
            for plan in plans:
                sub_estimates["statlas"][plan.key] = timed(
                    "statlas sub-plans", lambda p=plan: sub(p)
                )
    if "spark" in systems:
        database = f"tpcds_sf{scale}".replace(".", "_")
        lake = root / f"tpcds-sf{scale}" / "lake"
        timed("spark analyze", lambda: analyze_catalog(spark, lake, database))
        for name in names:
            estimates["spark"][name] = timed(
                "spark estimate", lambda n=name: spark_estimate(spark, database, n)
            )
        if plans:
            sub = subplans_.spark_estimator(spark, database)
            for plan in plans:
                sub_estimates["spark"][plan.key] = timed("spark sub-plans", lambda p=plan: sub(p))
    if "postgres" in systems:
        schema = f"tpcds_sf{scale}".replace(".", "_")
        timed("postgres load", lambda: postgres_load(root, scale, schema))
        pg = postgres_estimator(schema)
        for name in names:
            estimates["postgres"][name] = timed("postgres estimate", lambda n=name: pg(n))
        if plans:
            sub = subplans_.postgres_estimator(schema)
            for plan in plans:
                sub_estimates["postgres"][plan.key] = timed(
                    "postgres sub-plans", lambda p=plan: sub(p)
                )

    print(f"\n### TPC-DS SF {scale}: q-error of the output rows ({len(names)} queries)\n")
    print("| system | estimated | median | p90 | p95 | max | > 10 | > 100 |")
    print("|---|---|---|---|---|---|---|---|")
    for system in systems:
        errors = [
            q_error(value, truths[n]) for n, value in estimates[system].items() if value is not None
        ]
        print(summary_line(system, errors, len(names)))
    if plans:
        counted = [p for p in plans if sub_truths[p.key] is not None]
        print(
            f"\n### TPC-DS SF {scale}: q-error of the sub-plans ({len(counted)} connected "
            f"key-join sub-plans of the {len(names)} queries)\n"
        )
        print("| system | estimated | median | p90 | p95 | max | > 10 | > 100 |")
        print("|---|---|---|---|---|---|---|---|")
        for system in systems:
            errors = [
                q_error(value, sub_truths[p.key])
                for p in counted
                if (value := sub_estimates[system].get(p.key)) is not None
            ]
            print(summary_line(system, errors, len(counted)))
        uncounted = [p.name for p in plans if sub_truths[p.key] is None]
        if uncounted:
            print(f"\nno DuckDB count (timed out): {', '.join(uncounted)}")
    if statlas_details:
        emitted = sum(bool(d.get("emit")) for d in statlas_details.values())
        times = [d["ms"] for d in statlas_details.values()]
        print(
            f"\nstatlas: estimate {sum('estimate' in d for d in statlas_details.values())} of "
            f"{len(names)}, explain --emit spark {emitted} of {len(names)}; estimate ms "
            f"median {percentile(times, 0.5):.0f}, max {max(times):.0f} (statistics read once "
            "per run)"
        )
        for name, detail in statlas_details.items():
            if "error" in detail:
                print(f"  {name}: {detail['error']}")
    print("\n| query | true rows | " + " | ".join(systems) + " |")
    print("|---|---|" + "---|" * len(systems))
    for name in names:
        cells = []
        for system in systems:
            value = estimates[system].get(name)
            cells.append(
                "-" if value is None else f"{value:,.0f} ({q_error(value, truths[name]):.1f})"
            )
        print(f"| {name} | {truths[name]:,} | " + " | ".join(cells) + " |")
    print("\nseconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()))
    if args.json:
        document = {"truth": truths, "estimates": estimates, "statlas": statlas_details}
        if plans:
            document["subplans"] = [
                {
                    "name": p.name,
                    "relations": p.relations,
                    "sql": p.sql,
                    "truth": sub_truths[p.key],
                    **{s: sub_estimates[s].get(p.key) for s in systems},
                }
                for p in plans
            ]
        Path(args.json).write_text(json.dumps(document, indent=1, default=str))
