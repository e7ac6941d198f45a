"""A table's listing brought up to date before its statistics are collected: what the
daemon's schedule and `statlas collect` both run first.

A table registered from a directory lists that directory again; a table registered from a
Spark catalog (`table register --spark-table`) asks that catalog again for its location,
format and keys, then lists its location. Either way new partitions are added, vanished
ones removed with their statistics and changed fingerprints updated, in one transaction
(metastore.catalog.tables.register_listing). A table a Hive client created through statlas's Hive
Metastore API keeps the partitions the client listed: only their files are re-read. A table
registered from an Iceberg table takes its catalog's current snapshot (collectors.iceberg).
"""

from __future__ import annotations

from sqlalchemy import Engine

from collectors.iceberg.register import register_iceberg_table
from collectors.iceberg.source import source_of
from collectors.spark_session import LazySession
from collectors.spark_tables import SPARK_TABLE, register_spark_table
from metastore.catalog.tables import RegistrationReport, TableInfo, register_table
from metastore.errors import UnknownTable
from metastore.hive import catalog as hive_catalog


def refresh_listing(engine: Engine, info: TableInfo, spark: LazySession) -> RegistrationReport:
    """List table `info` again where it was registered from; Spark is started only for a
    table of a Spark catalog."""
    iceberg = source_of(info.properties)
    if iceberg is not None:
        return register_iceberg_table(engine, info.name, iceberg)
    if info.properties.get(hive_catalog.SOURCE) == hive_catalog.HIVE_METASTORE:
        return hive_catalog.refresh_fingerprints(engine, info)
    identifier = info.properties.get(SPARK_TABLE)
    if not identifier:
        return register_table(engine, info.name, info.location, info.format)
    try:
        return register_spark_table(engine, info.name, spark.get(), str(identifier))
    except UnknownTable as error:
        raise UnknownTable(
            f"{error} ({info.name} was registered from it): give collect the Spark settings "
            "of that catalog (--spark-conf), or --no-refresh"
        ) from None
