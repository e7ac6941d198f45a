"""Tables of a Spark catalog (the session's catalog: in-memory, or a Hive metastore when the
session is configured for one): where their files are, in which format, partitioned by
which typed keys, so that statlas can register them like any dataset directory."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from sqlalchemy import Engine

from metastore.catalog.tables import RegistrationReport, register_table
from metastore.errors import RegistrationError, UnknownTable
from metastore.types import KeyType, parse_key_type

SPARK_TABLE = "spark_table"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")
_INTEGRAL_KEYS = {"tinyint": "int", "smallint": "int", "byte": "int", "short": "int"}


@dataclass(frozen=True)
class SparkTable:
    identifier: str
    location: str
    format: str
    partition_types: dict[str, KeyType]


def describe_spark_table(spark: Any, identifier: str) -> SparkTable:
    """Location, file format and partition key types of catalog table `identifier`."""
    if not _IDENTIFIER.fullmatch(identifier):
        raise RegistrationError(f"not a Spark table name: {identifier!r} (use db.table)")
    if not spark.catalog.tableExists(identifier):
        raise UnknownTable(f"Spark table {identifier} does not exist in the session's catalog")
    details: dict[str, str] = {}
    in_details = False
    for row in spark.sql(f"DESCRIBE TABLE EXTENDED {identifier}").collect():
        name, value = (row[0] or "").strip(), (row[1] or "").strip()
        if name == "# Detailed Table Information":
            in_details = True
        elif in_details and name:
            details[name] = value
    if details.get("Type", "").upper() == "VIEW":
        raise RegistrationError(f"Spark table {identifier} is a view: register its tables")
    location = details.get("Location")
    if not location:
        raise RegistrationError(f"Spark table {identifier} has no location")
    partition_types = {
        column.name.lower(): _key_type(identifier, column.name, column.dataType)
        for column in spark.catalog.listColumns(identifier)
        if column.isPartition
    }
    return SparkTable(
        identifier, _local_path(location), _file_format(identifier, details), partition_types
    )


def statlas_name(identifier: str) -> str:
    """The statlas name of Spark table `identifier`: `db.table`, or `table` alone in the
    `default` database (the session catalog's `spark_catalog.` prefix dropped)."""
    if not _IDENTIFIER.fullmatch(identifier):
        raise RegistrationError(f"not a Spark table name: {identifier!r} (use db.table)")
    parts = identifier.lower().split(".")
    if len(parts) == 3 and parts[0] == "spark_catalog":
        parts = parts[1:]
    if len(parts) == 3:
        raise RegistrationError(
            f"{identifier} is in catalog {parts[0]}: give the statlas NAME to register it as"
        )
    return parts[-1] if parts[0] == "default" or len(parts) == 1 else ".".join(parts)


def register_spark_table(
    engine: Engine,
    name: str,
    spark: Any,
    identifier: str,
    properties: Mapping[str, Any] | None = None,
) -> RegistrationReport:
    """Register (or refresh) Spark catalog table `identifier` as statlas table `name`."""
    table = describe_spark_table(spark, identifier)
    return register_table(
        engine,
        name,
        table.location,
        table.format,
        table.partition_types,
        properties={**(properties or {}), SPARK_TABLE: identifier},
    )


def _file_format(identifier: str, details: Mapping[str, str]) -> str:
    provider = details.get("Provider", "").lower()
    if provider in ("parquet", "orc"):
        return provider
    serde = details.get("Serde Library", "").lower()
    if provider == "hive" and "parquet" in serde:
        return "parquet"
    if provider == "hive" and "orc" in serde:
        return "orc"
    raise RegistrationError(
        f"Spark table {identifier} is stored as {provider or 'unknown'}"
        f"{' (' + serde + ')' if serde else ''}: statlas reads Parquet and ORC tables"
    )


def _key_type(identifier: str, column: str, spark_type: str) -> KeyType:
    name = spark_type.strip().lower()
    name = _INTEGRAL_KEYS.get(name, name)
    if name.startswith(("varchar", "char")):
        name = "string"
    try:
        return parse_key_type(name)
    except Exception:
        raise RegistrationError(
            f"partition column {column} of Spark table {identifier} has type {spark_type}, "
            "which statlas cannot use as a partition key"
        ) from None


def _local_path(location: str) -> str:
    """Spark's `file:/x` locations as paths; other URIs as pyarrow opens them."""
    if location.startswith("file:"):
        return "/" + unquote(location[len("file:") :]).lstrip("/")
    if location.startswith("s3a://"):
        return "s3://" + location[len("s3a://") :]
    return location
