"""TPC-DS in benchmarks/plans.py (--set tpcds): the 99 queries of benchmarks/tpcds_queries.py
over the lake of `benchmarks/data.py --set tpcds` (DATA/tpcds-sfSCALE/lake: the seven fact
tables Hive-partitioned by their date key, the 17 dimensions unpartitioned).

The catalog database (plans_sfSCALE_tpcds, in plans.py's Hive catalog) holds the 24 tables,
each fact table with its partitions recovered (their date keys typed as integers, a NULL key's
__HIVE_DEFAULT_PARTITION__ included), every table ANALYZEd FOR ALL COLUMNS with equi-height
histograms once per data set (the fingerprint of plans.py). statlas's metastore is
benchmarks/tpcds_statlas.py's (registered and collected incrementally).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import tpcds_queries
import tpcds_statlas
from tpcds_queries import PARTITION_KEYS, TABLES

from metastore import Metastore

VARIANT = "tpcds"  # the set's data variant in plans.py (the data set has one)
INTEGERS = ("int", "bigint")


def directory(root: Path, scale: str) -> Path:
    """The data set's directory (its _COMPLETE marks the data that ANALYZE saw)."""
    found = root / f"tpcds-sf{scale}"
    if not (found / "_COMPLETE").exists():
        raise SystemExit(f"{found} is missing: run benchmarks/data.py --set tpcds first")
    return found


def queries() -> dict[str, str]:
    """{"q1": spark_sql, ..., "q99": spark_sql}."""
    return tpcds_queries.queries()


def _check_types(spark: Any, name: str, table: str) -> None:
    key = PARTITION_KEYS.get(table)
    if key is None:
        return
    kind = spark.table(name).schema[key].dataType.simpleString()
    if kind not in INTEGERS:
        raise RuntimeError(
            f"{name}.{key} reads as {kind}, not an integer: is "
            "spark.sql.sources.partitionColumnTypeInference.enabled true?"
        )


def analyze_catalog(spark: Any, lake: Path, database: str) -> None:
    """The 24 tables as catalog tables of `database` over `lake` (fact tables with their
    partitions recovered), each ANALYZEd FOR ALL COLUMNS with equi-height histograms."""
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    for table in TABLES:
        began = time.perf_counter()
        name = f"{database}.{table}"
        spark.sql(f"DROP TABLE IF EXISTS {name}")
        location = str(lake / table).replace("'", "\\'")
        # the schema and the partition column inferred (as in qerror_truth.analyze_catalog)
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{location}'")
        if table in PARTITION_KEYS:
            spark.sql(f"ALTER TABLE {name} RECOVER PARTITIONS")
            described = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
            if not any(r[0] == "# Partition Information" for r in described):
                raise RuntimeError(f"{name} is not partitioned")
        _check_types(spark, name, table)
        spark.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")
        print(f"  {name}: ANALYZEd in {time.perf_counter() - began:.0f} s", flush=True)


def metastore(root: Path, scale: str, spark: Any) -> Metastore:
    """statlas's TPC-DS metastore (tpcds_statlas: a second collection scans nothing)."""
    return tpcds_statlas.metastore_for(root, scale, spark)
