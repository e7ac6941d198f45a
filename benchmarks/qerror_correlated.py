"""Cardinality-estimation accuracy on joins whose fan-outs are correlated (issue 47, point 3):
q-error of PostgreSQL, Spark's CBO and statlas on 100 COUNT(*) queries of one to six tables.

    python benchmarks/qerror_correlated.py [--variants correlated,anti] [--scale 1]
                                           [--systems spark,postgres,statlas]
                                           [--levels basic,histogram,sketch]
                                           [--data benchmarks/.data] [--master local[2]]
                                           [--queries NAME,...] [--worst 10] [--zipf S]

Data: benchmarks/correlated_data.py (written on first use): owners referenced by posts,
comments, votes and badges through a Zipf-distributed key whose heavy owners are the same in
every table (`correlated`) or heavy in one table and light in the others (`anti`). Queries:
benchmarks/correlated_queries.py (through the shared owner, stars on the shared key, chains of
3-6 tables, self-joins, filters on any side). For each variant, in one run and one
SparkSession:

(--zipf S: one exponent S for the four owner keys instead of 1.1-1.3, its own data under
DATA/correlated-zS/.)

  truth     exact COUNT(*) by DuckDB over the Parquet files, counted per join key up the
            join tree (correlated_queries.count_sql), cached in DATA/correlated/truth-<variant>.json
  postgres  PostgreSQL 15's planner on the tables loaded into schema qcorr_<variant> of the
            database QERROR_PG_DSN names (local `test` by default), ANALYZEd: 'Plan Rows' of
            the input to the final Aggregate
  spark     Spark's CBO (histograms, ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS on
            catalog tables over the same files): rows of the optimized plan's input to the
            final COUNT
  statlas   the project's estimator at each level of --levels ("statlas-<level>"), from the
            statistics `statlas collect` keeps in DATA/correlated/statlas-<variant>.db
            (registered and collected on first use, incrementally afterwards)

q-error = max(est/true, true/est) with both clamped to at least one row. Printed per variant
and system: median, p90, p95 and max by number of tables, and how many of the estimates of
3+ tables are too low and too high (all of them, and those off by more than 2 x); then one
table of median / p95 per system side by side, and the queries where statlas (its last
level) is worst. Per query rows go to DATA/correlated/qerror.csv (rows of the variants and
systems of this run replace earlier ones).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import correlated_data as data_
import correlated_queries as queries_
import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import qerror
import qerror_truth as truth_
from correlated_queries import QUERIES, Query
from qerror import q_error, qerror_table

TABLE_GROUPS = ("1", "2", "3", "4", "5", "6", "all")
CSV_FIELDS = (
    "variant",
    "system",
    "query",
    "family",
    "tables",
    "true_rows",
    "estimate",
    "qerror",
    "sql",
)
Estimator = Callable[[Query], "float | None"]


class Timer:
    """Seconds spent per phase."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, phase: str, function: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            return function()
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - started


# ----------------------------------------------------------------------------- truth


def truth(directory: Path, cache: Path, queries: list[Query]) -> dict[str, int]:
    """Exact counts by DuckDB, cached by the hash of each query's SQL."""
    known: dict[str, Any] = json.loads(cache.read_text()) if cache.exists() else {}
    todo = [q for q in queries if truth_.sql_key(q.sql) not in known]
    if todo:
        connection = queries_.duckdb_views(directory)
        for number, query in enumerate(todo, 1):
            count = queries_.exact_count(connection, query)
            known[truth_.sql_key(query.sql)] = {"name": query.name, "count": count}
            print(f"  truth {number}/{len(todo)} {query.name}: {count:,}", flush=True)
        connection.close()
        cache.write_text(json.dumps(known, indent=1, sort_keys=True))
    return {q.name: int(known[truth_.sql_key(q.sql)]["count"]) for q in queries}


# ------------------------------------------------------------------------ PostgreSQL


def pg_schema(variant: str, scale: float, zipf: float | None = None) -> str:
    return f"qcorr_{truth_.safe_name(variant + data_.suffix(scale, zipf))}"


def dataset(directory: Path, table: str) -> ds.Dataset:
    key = data_.PARTITION_KEYS.get(table)
    partitioning = ds.partitioning(pa.schema([(key, pa.date32())]), flavor="hive") if key else None
    return ds.dataset(str(directory / table), format="parquet", partitioning=partitioning)


def fingerprint(directory: Path, table: str) -> str:
    """Names and sizes of the table's files: a changed generator gets its tables reloaded."""
    files = sorted((directory / table).rglob("*.parquet"))
    text = ";".join(f"{f.relative_to(directory)}:{f.stat().st_size}" for f in files)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def postgres_load(directory: Path, schema: str) -> None:
    """The variant's tables in `schema` (a table whose comment is its data's fingerprint is
    kept), ANALYZEd at default_statistics_target 100."""
    connection = truth_.pg_connect()
    try:
        cursor = connection.cursor()
        cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        cursor.execute("SET synchronous_commit = off")
        for table in data_.TABLES:
            mark = fingerprint(directory, table)
            cursor.execute(
                "SELECT obj_description(to_regclass(%s), 'pg_class')", (f"{schema}.{table}",)
            )
            if cursor.fetchone()[0] == mark:
                continue
            data = dataset(directory, table)
            columns = ", ".join(f"{f.name} {truth_._pg_type(f.type)}" for f in data.schema)
            cursor.execute(f"DROP TABLE IF EXISTS {schema}.{table}")
            cursor.execute(f"CREATE UNLOGGED TABLE {schema}.{table} ({columns})")
            names = ", ".join(data.schema.names)
            copy = f"COPY {schema}.{table} ({names}) FROM STDIN WITH (FORMAT csv)"
            options = pcsv.WriteOptions(include_header=False)
            for batch in data.to_batches(batch_size=200_000):
                buffer = io.BytesIO()
                pcsv.write_csv(pa.Table.from_batches([batch]), buffer, options)
                buffer.seek(0)
                cursor.copy_expert(copy, buffer)
            cursor.execute(f"COMMENT ON TABLE {schema}.{table} IS '{mark}'")
        cursor.execute("SET default_statistics_target = 100")
        for table in data_.TABLES:
            cursor.execute(f"ANALYZE {schema}.{table}")
    finally:
        connection.close()


def postgres_estimator(directory: Path, schema: str, timer: Timer) -> tuple[Estimator, Any]:
    timer("postgres load + ANALYZE", lambda: postgres_load(directory, schema))
    cursor = truth_.pg_serial_cursor(schema)

    def estimate(query: Query) -> float | None:
        plan = truth_.pg_plan(cursor, query.sql, query.name)
        if plan is None:
            return None
        while plan["Node Type"] != "Aggregate":
            plan = plan["Plans"][0]
        return float(plan["Plans"][0]["Plan Rows"])

    return estimate, cursor.connection


# ----------------------------------------------------------------------------- Spark


def analyze_catalog(spark: Any, directory: Path, database: str) -> None:
    """The variant's tables as catalog tables of `database` (partitions recovered), each
    ANALYZEd FOR ALL COLUMNS with equi-height histograms."""
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    for table in data_.TABLES:
        name = f"{database}.{table}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        location = str(directory / table).replace("'", "\\'")
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{location}'")
        key = data_.PARTITION_KEYS.get(table)
        if key:
            spark.sql(f"ALTER TABLE {name} RECOVER PARTITIONS")
            kind = spark.table(name).schema[key].dataType.simpleString()
            if kind != "date":
                raise RuntimeError(f"{name}.{key} reads as {kind}, not date")
        spark.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")


def spark_estimator(spark: Any, directory: Path, database: str, timer: Timer) -> Estimator:
    timer("spark ANALYZE", lambda: analyze_catalog(spark, directory, database))

    def estimate(query: Query) -> float | None:
        return truth_.spark_estimate(spark, database, query.sql)

    return estimate


# ---------------------------------------------------------------------------- statlas


def statlas_estimators(
    spark: Any, directory: Path, path: Path, levels: list[str], timer: Timer
) -> dict[str, Estimator]:
    """{"statlas-<level>": estimate} over the variant's metastore, registered and collected."""
    import qerror_statlas

    from metastore import Metastore

    metastore = Metastore(f"sqlite:///{path}")
    metastore.upgrade()
    timer(
        "statlas register + collect",
        lambda: qerror_statlas.register_and_collect(metastore, directory, data_.TABLES, spark),
    )

    def make(level: str) -> Estimator:
        def estimate(query: Query) -> float | None:
            try:
                return qerror_statlas.estimate_count_input(metastore, query.sql, level)
            except Exception as error:  # reported, counted as "without estimate"
                print(f"statlas-{level} {query.name}: {type(error).__name__}: {error}")
                return None

        return estimate

    return {f"statlas-{level}": make(level) for level in levels}


# ---------------------------------------------------------------------------- report


def group_rows(rows: list[dict[str, Any]], group: str) -> list[dict[str, Any]]:
    return [r for r in rows if group == "all" or str(r["tables"]) == group]


def errors_of(rows: list[dict[str, Any]]) -> np.ndarray:
    return np.array([r["qerror"] for r in rows if r["qerror"] is not None])


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: q-error by number of tables for one variant and system, then the direction
    of the estimates of 3+ tables."""
    groups = [(group, group_rows(rows, group)) for group in TABLE_GROUPS]
    return qerror_table("tables", groups, ".3g") + "\n\n" + direction(rows)


def direction(rows: list[dict[str, Any]]) -> str:
    """Too low vs too high among the estimates of 3+ tables."""
    chosen = [r for r in rows if r["tables"] >= 3 and r["estimate"] is not None]
    if not chosen:
        return "3+ tables: no estimates"
    low = [r for r in chosen if max(r["estimate"], 1.0) < max(r["true_rows"], 1)]
    high = [r for r in chosen if max(r["estimate"], 1.0) > max(r["true_rows"], 1)]
    far = [r for r in chosen if r["qerror"] > 2]
    far_low = [r for r in far if r in low]
    return (
        f"3+ tables, {len(chosen)} estimates: {len(low)} too low ({len(low) / len(chosen):.0%}),"
        f" {len(high)} too high ({len(high) / len(chosen):.0%}); off by more than 2 x:"
        f" {len(far)}, of them {len(far_low)} too low and {len(far) - len(far_low)} too high"
    )


def side_by_side(variant: str, rows: list[dict[str, Any]], systems: list[str]) -> str:
    """Markdown: median / p95 per number of tables, one column per system."""
    lines = [
        f"| {variant}: tables | " + " | ".join(f"{s} median / p95" for s in systems) + " |",
        "|---|" + "---:|" * len(systems),
    ]
    for group in TABLE_GROUPS:
        cells = []
        for system in systems:
            errors = errors_of(group_rows([r for r in rows if r["system"] == system], group))
            if len(errors) == 0:
                cells.append("")
                continue
            median, p95 = np.percentile(errors, [50, 95])
            cells.append(f"{median:.2f} / {p95:.3g}")
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def worst(variant: str, rows: list[dict[str, Any]], system: str, count: int) -> str:
    """The queries where `system` is furthest off, with the other systems' estimates."""
    by_query: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_query.setdefault(row["query"], {})[row["system"]] = row
    mine = sorted(
        (r for r in rows if r["system"] == system and r["qerror"] is not None),
        key=lambda r: -r["qerror"],
    )[:count]
    systems = [s for s in ("postgres", "spark") if any(r["system"] == s for r in rows)]
    lines = [f"worst {system} estimates, {variant}:"]
    for row in mine:
        others = ", ".join(
            f"{s} {_number(by_query[row['query']][s]['estimate'])}"
            for s in systems
            if s in by_query[row["query"]]
        )
        lines.append(
            f"  {row['query']} ({row['tables']} tables): true {row['true_rows']:,}, {system}"
            f" {_number(row['estimate'])} (q {row['qerror']:.3g}){', ' + others if others else ''}"
            f"\n    {row['sql']}"
        )
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}" if value < 1e12 else f"{value:.3g}"


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Per-query rows, figures rounded (qerror.write_csv: rows of other (variant, system)
    pairs already in the file stay)."""
    formatted = [
        {
            **r,
            "estimate": "" if r["estimate"] is None else f"{r['estimate']:.0f}",
            "qerror": "" if r["qerror"] is None else f"{r['qerror']:.4f}",
        }
        for r in rows
    ]
    qerror.write_csv(path, formatted, CSV_FIELDS)


# ------------------------------------------------------------------------------ main


def parser() -> argparse.ArgumentParser:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(arguments)
    return arguments


def add_arguments(arguments: argparse.ArgumentParser) -> None:
    arguments.add_argument("--variants", default=",".join(data_.VARIANTS))
    arguments.add_argument("--scale", type=float, default=1.0, help="row counts times this")
    arguments.add_argument("--systems", default="spark,postgres,statlas")
    arguments.add_argument(
        "--zipf", type=float, default=None, help="one owner-key exponent for all tables"
    )
    arguments.add_argument("--levels", default="basic,histogram,sketch", help="statlas levels")
    arguments.add_argument("--data", type=Path, default=data_.DEFAULT_OUT)
    arguments.add_argument("--master", default="local[2]")
    arguments.add_argument("--queries", default="", help="these queries only (names, comma)")
    arguments.add_argument("--worst", type=int, default=10, help="worst statlas queries shown")


def run(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    timer = Timer()
    variants = [v for v in args.variants.split(",") if v]
    wanted = [s for s in args.systems.split(",") if s]
    levels = [level for level in args.levels.split(",") if level]
    names = {n for n in args.queries.split(",") if n}
    queries = [q for q in QUERIES if not names or q.name in names]
    scale = float(args.scale)
    print(f"workload: {len(queries)} queries, {queries_.summary(queries)}", flush=True)

    spark = None
    if "spark" in wanted or "statlas" in wanted:
        spark = timer("spark start", lambda: truth_.spark_session(args.master))
    rows: list[dict[str, Any]] = []
    reports: list[str] = []
    for variant in variants:
        directory = timer(
            f"data {variant}", lambda v=variant: data_.build(v, args.data, scale, args.zipf)
        )
        counts = timer(
            f"truth {variant}",
            lambda d=directory, v=variant: truth(d, d.parent / f"truth-{v}.json", queries),
        )
        chosen: dict[str, Estimator] = {}
        connection = None
        if "postgres" in wanted:
            chosen["postgres"], connection = postgres_estimator(
                directory, pg_schema(variant, scale, args.zipf), timer
            )
        if "spark" in wanted:
            database = pg_schema(
                variant, scale, args.zipf
            )  # the same name serves as Spark database
            chosen["spark"] = spark_estimator(spark, directory, database, timer)
        if "statlas" in wanted:
            path = directory.parent / f"statlas-{variant}.db"
            chosen.update(statlas_estimators(spark, directory, path, levels, timer))
        variant_rows: list[dict[str, Any]] = []
        for system, estimate in chosen.items():
            system_rows = []
            for query in queries:
                value = timer(f"{system} estimate", lambda e=estimate, q=query: e(q))
                true = counts[query.name]
                system_rows.append(
                    {
                        "variant": variant,
                        "system": system,
                        "query": query.name,
                        "family": query.family,
                        "tables": query.tables,
                        "true_rows": true,
                        "estimate": value,
                        "qerror": None if value is None else q_error(value, true),
                        "sql": query.sql,
                    }
                )
            variant_rows.extend(system_rows)
            reports.append(f"### {variant}: {system}\n\n{table(system_rows)}\n")
            print(reports[-1], flush=True)
        if connection is not None:
            connection.close()
        systems = list(chosen)
        if not systems:
            continue
        reports.append(side_by_side(variant, variant_rows, systems) + "\n")
        statlas = [s for s in systems if s.startswith("statlas")]
        if statlas and args.worst:
            reports.append(worst(variant, variant_rows, statlas[-1], args.worst) + "\n")
        print("\n".join(reports[-2:]), flush=True)
        rows.extend(variant_rows)

    output = data_.data_dir(args.data, scale, "x", args.zipf).parent / "qerror.csv"
    write_csv(output, rows)
    print("\n".join(reports))
    print(f"per query: {output}")
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in timer.seconds.items()))
    print(f"total: {time.perf_counter() - started:.0f} s")


def main() -> None:
    run(parser().parse_args())


if __name__ == "__main__":
    main()
