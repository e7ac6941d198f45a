"""The Spark settings of a benchmark's own Hive catalog: Derby under a directory of
benchmarks/.data, partition columns typed (l_shipdate and o_orderdate are dates) and
histograms for ANALYZE, so Spark's CBO plans with the statistics it would have."""

from __future__ import annotations

from pathlib import Path


def hive_catalog_settings(catalog: Path, app: str, driver_memory: str) -> dict[str, str]:
    """Settings of a SparkSession whose Hive catalog lives under `catalog` (created)."""
    catalog.mkdir(parents=True, exist_ok=True)
    return {
        "spark.app.name": app,
        "spark.driver.memory": driver_memory,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(catalog / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={catalog / 'metastore_db'};create=true"
        ),
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={catalog}",
        "spark.sql.sources.partitionColumnTypeInference.enabled": "true",
        "spark.sql.statistics.histogram.enabled": "true",
    }
