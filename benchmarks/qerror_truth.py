"""Truth and the baselines' estimates for the q-error harness (benchmarks/qerror.py).

spark_session(...)          local Spark with typed partition columns, CBO and histograms on
variant_dir(...)            OUT/tpch-sf<scale>/<variant>, as benchmarks/data.py writes it
temp_views(...)             the variant's tables as Spark temp views (spark.read.parquet)
parameters(...)             the workload's per-variant placeholder values, cached
truth(...)                  exact COUNT(*) per query by Spark, cached in
                            OUT/qerror-truth-<scale>-<variant>.json keyed by a hash of the SQL
analyze_catalog(...)        catalog tables in a Spark database, ANALYZE ... FOR ALL COLUMNS
spark_estimate(...)         Spark CBO's row count of the input of the final COUNT
postgres_load(...)          the tables in schema qerr_<variant> of PostgreSQL, ANALYZEd
Postgres(variant)           .estimate(sql): PostgreSQL's 'Plan Rows' of the input of the
                            final COUNT; .count(sql): its exact COUNT(*) (to check the truth)
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.dataset as ds
from qerror_workload import PARAMETERS, Query

TABLES = ("lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region")
PARTITION_KEYS = {"lineitem": "l_shipdate", "orders": "o_orderdate"}
DATA = Path(__file__).resolve().parent / ".data"


def scale_name(scale: float | str) -> str:
    return f"{float(scale):g}"


def variant_dir(root: Path, scale: float | str, variant: str) -> Path:
    directory = root / f"tpch-sf{scale_name(scale)}" / variant
    if not (directory / "_COMPLETE").exists():
        raise SystemExit(f"{directory} is missing: run benchmarks/data.py --scale {scale} first")
    return directory


def safe_name(variant: str) -> str:
    """`zipf-1.5` -> `zipf_1_5`: a name usable unquoted in Spark and PostgreSQL."""
    return re.sub(r"[^a-z0-9]+", "_", variant.lower()).strip("_")


def sql_key(sql: str) -> str:
    return hashlib.sha256(" ".join(sql.split()).encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- Spark


def spark_session(master: str = "local[2]") -> Any:
    """The harness's SparkSession: partition columns typed (l_shipdate, o_orderdate are
    dates), CBO and column histograms on, an in-memory catalog in a throwaway warehouse."""
    from collectors.spark_session import spark_session as make

    warehouse = Path(tempfile.mkdtemp(prefix="qerror-warehouse-"))
    atexit.register(shutil.rmtree, warehouse, True)
    return make(
        master,
        {
            "spark.app.name": "statlas-qerror",
            "spark.sql.sources.partitionColumnTypeInference.enabled": "true",
            "spark.sql.cbo.enabled": "true",
            "spark.sql.statistics.histogram.enabled": "true",
            "spark.sql.warehouse.dir": str(warehouse),
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.shuffle.partitions": "8",
        },
    )


def _check_types(frame: Any, table: str) -> None:
    key = PARTITION_KEYS.get(table)
    if key is None:
        return
    kind = frame.schema[key].dataType.simpleString()
    if kind != "date":
        raise RuntimeError(
            f"{table}.{key} reads as {kind}, not date: is "
            "spark.sql.sources.partitionColumnTypeInference.enabled true?"
        )


@contextlib.contextmanager
def temp_views(spark: Any, directory: Path) -> Iterator[None]:
    """The variant's tables as temp views named as in TPC-H, dropped on exit (they would
    hide the catalog tables of analyze_catalog)."""
    try:
        for table in TABLES:
            frame = spark.read.parquet(str(directory / table))
            _check_types(frame, table)
            frame.createOrReplaceTempView(table)
        yield
    finally:
        for table in TABLES:
            spark.catalog.dropTempView(table)


def _load_cache(path: Path) -> dict[str, Any]:
    if path.exists():
        return json.loads(path.read_text())
    return {"parameters": {}, "truth": {}}


def _save_cache(path: Path, cache: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cache, indent=1, sort_keys=True))
    tmp.replace(path)


def cache_path(root: Path, scale: float | str, variant: str) -> Path:
    return root / f"qerror-truth-{scale_name(scale)}-{variant}.json"


def parameters(spark: Any, directory: Path, cache_file: Path) -> dict[str, str]:
    """The workload's placeholder values for this variant (PARAMETERS), cached."""
    cache = _load_cache(cache_file)
    params: dict[str, str] = cache["parameters"]
    missing = [name for name in PARAMETERS if name not in params]
    if missing:
        with temp_views(spark, directory):
            for name in missing:
                rows = spark.sql(PARAMETERS[name]).collect()
                params[name] = ", ".join(str(row[0]) for row in rows)
        _save_cache(cache_file, cache)
    return params


def truth(
    spark: Any,
    directory: Path,
    queries: list[Query],
    params: dict[str, str],
    cache_file: Path,
    progress: bool = True,
) -> dict[str, int]:
    """Exact COUNT(*) of every query (by name) on this variant; counts are cached by the hash
    of the rendered SQL, so a changed query or parameter is counted again."""
    cache = _load_cache(cache_file)
    known: dict[str, Any] = cache["truth"]
    counts: dict[str, int] = {}
    todo = [q for q in queries if sql_key(q.render(params)) not in known]
    if todo:
        with temp_views(spark, directory):
            for number, query in enumerate(todo, 1):
                sql = query.render(params)
                count = int(spark.sql(sql).collect()[0][0])
                known[sql_key(sql)] = {"name": query.name, "sql": sql, "count": count}
                if progress:
                    print(f"  truth {number}/{len(todo)} {query.name}: {count:,}", flush=True)
                if number % 10 == 0:
                    _save_cache(cache_file, cache)
        _save_cache(cache_file, cache)
    for query in queries:
        counts[query.name] = int(known[sql_key(query.render(params))]["count"])
    return counts


def analyze_catalog(spark: Any, directory: Path, database: str, histograms: bool = True) -> None:
    """The variant's tables as catalog tables of `database` (partitioned ones with their
    partitions recovered), each ANALYZEd FOR ALL COLUMNS, with equi-height histograms unless
    `histograms` is false. The catalog is in memory: this runs once per process and variant."""
    spark.conf.set("spark.sql.statistics.histogram.enabled", str(histograms).lower())
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    for table in TABLES:
        name = f"{database}.{table}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        location = str(directory / table).replace("'", "\\'")
        # without a column list Spark infers the schema and the partition column (it
        # refuses PARTITIONED BY then); RECOVER PARTITIONS registers the partitions
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{location}'")
        if table in PARTITION_KEYS:
            spark.sql(f"ALTER TABLE {name} RECOVER PARTITIONS")
            partitions = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
            if not any(r[0] == "# Partition Information" for r in partitions):
                raise RuntimeError(f"{name} is not partitioned")
        _check_types(spark.table(name), table)
        spark.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")


def _row_count(plan: Any) -> float | None:
    option = plan.stats().rowCount()
    if option.isEmpty():
        return None
    value = option.get()  # a scala.math.BigInt, which py4j may hand over as an int
    return float(value if isinstance(value, int) else value.toString())


def spark_plan_rows(spark: Any, sql: str) -> float | None:
    """The optimizer's row count for the input of the query's top Aggregate (None when the
    statistics do not give one)."""
    plan = spark.sql(sql)._jdf.queryExecution().optimizedPlan()
    while plan.nodeName() != "Aggregate":
        children = plan.children()
        if children.size() != 1:
            raise RuntimeError(f"no Aggregate at the top of the plan of: {sql}")
        plan = children.apply(0)
    return _row_count(plan.children().apply(0))


def spark_estimate(spark: Any, database: str, sql: str) -> float | None:
    """Spark CBO's estimate for `sql` against the ANALYZEd tables of `database`."""
    spark.catalog.setCurrentDatabase(database)
    try:
        return spark_plan_rows(spark, sql)
    finally:
        spark.catalog.setCurrentDatabase("default")


# ------------------------------------------------------------------------ PostgreSQL

PG_DSN = os.environ.get("QERROR_PG_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=test")


def pg_connect(dsn: str = PG_DSN) -> Any:
    import psycopg2

    connection = psycopg2.connect(dsn)
    connection.autocommit = True
    return connection


def pg_serial_cursor(schema: str, dsn: str = PG_DSN) -> Any:
    """A cursor on `schema` whose plans stay serial (a Gather's input is one worker's share)."""
    cursor = pg_connect(dsn).cursor()
    cursor.execute(f"SET search_path = {schema}")
    cursor.execute("SET max_parallel_workers_per_gather = 0")
    return cursor


def pg_plan(cursor: Any, sql: str, label: str) -> dict[str, Any] | None:
    """The root node of PostgreSQL's plan of `sql` (EXPLAIN FORMAT JSON); None, reported
    with `label`, for a query PostgreSQL does not take."""
    try:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
    except Exception as error:
        print(f"postgres {label}: {str(error).splitlines()[0][:200]}", flush=True)
        return None
    document = cursor.fetchone()[0]
    if isinstance(document, str):
        document = json.loads(document)
    return document[0]["Plan"]  # type: ignore[no-any-return]


def pg_schema(variant: str) -> str:
    return f"qerr_{safe_name(variant)}"


def _dataset(directory: Path, table: str) -> ds.Dataset:
    key = PARTITION_KEYS.get(table)
    partitioning = ds.partitioning(pa.schema([(key, pa.date32())]), flavor="hive") if key else None
    return ds.dataset(str(directory / table), format="parquet", partitioning=partitioning)


def _pg_type(kind: pa.DataType) -> str:
    if pa.types.is_int64(kind):
        return "bigint"
    if pa.types.is_int32(kind):
        return "integer"
    if pa.types.is_decimal(kind):
        return f"numeric({kind.precision},{kind.scale})"
    if pa.types.is_date(kind):
        return "date"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    if pa.types.is_floating(kind):
        return "double precision"
    raise TypeError(f"no PostgreSQL type for {kind}")


def postgres_load(
    directory: Path, variant: str, dsn: str = PG_DSN, batch_rows: int = 200_000
) -> dict[str, float]:
    """Load the variant's tables into schema qerr_<variant> (a table whose row count already
    matches the Parquet data is kept), then ANALYZE them (default_statistics_target 100).
    Returns the seconds spent loading and analyzing."""
    import time

    schema = pg_schema(variant)
    connection = pg_connect(dsn)
    seconds = {"load": 0.0, "analyze": 0.0}
    try:
        cursor = connection.cursor()
        cursor.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        cursor.execute("SET synchronous_commit = off")
        for table in TABLES:
            dataset = _dataset(directory, table)
            expected = dataset.count_rows()
            cursor.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s "
                "AND table_name = %s",
                (schema, table),
            )
            if cursor.fetchone():
                cursor.execute(f"SELECT COUNT(*) FROM {schema}.{table}")
                if cursor.fetchone()[0] == expected:
                    continue
            started = time.perf_counter()
            columns = ", ".join(f"{f.name} {_pg_type(f.type)}" for f in dataset.schema)
            cursor.execute(f"DROP TABLE IF EXISTS {schema}.{table}")
            cursor.execute(f"CREATE UNLOGGED TABLE {schema}.{table} ({columns})")
            names = ", ".join(dataset.schema.names)
            copy = f"COPY {schema}.{table} ({names}) FROM STDIN WITH (FORMAT csv)"
            options = pcsv.WriteOptions(include_header=False)
            for batch in dataset.to_batches(batch_size=batch_rows):
                buffer = io.BytesIO()
                pcsv.write_csv(pa.Table.from_batches([batch]), buffer, options)
                buffer.seek(0)
                cursor.copy_expert(copy, buffer)
            seconds["load"] += time.perf_counter() - started
        started = time.perf_counter()
        cursor.execute("SET default_statistics_target = 100")
        for table in TABLES:
            cursor.execute(f"ANALYZE {schema}.{table}")
        seconds["analyze"] = time.perf_counter() - started
    finally:
        connection.close()
    return seconds


class Postgres:
    """One connection per variant's schema, with plans kept serial (so the top Aggregate's
    input is the whole result, not one worker's share)."""

    def __init__(self, variant: str, dsn: str = PG_DSN) -> None:
        self.connection = pg_connect(dsn)
        cursor = self.connection.cursor()
        cursor.execute(f"SET search_path = {pg_schema(variant)}")
        cursor.execute("SET max_parallel_workers_per_gather = 0")

    def estimate(self, sql: str) -> float:
        cursor = self.connection.cursor()
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}")
        document = cursor.fetchone()[0]
        if isinstance(document, str):
            document = json.loads(document)
        plan = document[0]["Plan"]
        while plan["Node Type"] != "Aggregate":
            plan = plan["Plans"][0]
        return float(plan["Plans"][0]["Plan Rows"])

    def count(self, sql: str) -> int:
        cursor = self.connection.cursor()
        cursor.execute(sql)
        return int(cursor.fetchone()[0])

    def close(self) -> None:
        self.connection.close()
