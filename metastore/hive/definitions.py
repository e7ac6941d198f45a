"""The records Hive clients give and get back of databases, tables and partitions (what
metastore.hive.catalog's functions take and return), and how Hive's names, types, locations
and storage descriptors map to statlas's."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from metastore.catalog.tables import TableInfo
from metastore.errors import InvalidObject
from metastore.partitions.names import DEFAULT_PARTITION_NAME, split_partition_component
from metastore.types import KeyType

DEFAULT_DATABASE = "default"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
MANAGED_TABLE = "MANAGED_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"

# catalog_tables.properties[SOURCE] of a table a Hive client created: its partitions are
# the client's to add and drop; a refresh only re-reads their files' fingerprints
SOURCE = "source"
HIVE_METASTORE = "hive-metastore"

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)")

# the storage descriptor Hive writes for each format statlas scans
FORMAT_STORAGE: dict[str, dict[str, Any]] = {
    "parquet": {
        "inputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "outputFormat": "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "serde": "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    },
    "orc": {
        "inputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "outputFormat": "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "serde": "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
    },
}


@dataclass(frozen=True)
class HiveColumn:
    name: str
    type: str
    comment: str | None = None


@dataclass(frozen=True)
class Database:
    name: str
    description: str | None = None
    location: str | None = None
    owner_name: str | None = None
    owner_type: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TableDefinition:
    """A table as a Hive client gives it (create, alter) and gets it back."""

    database: str
    name: str
    columns: tuple[HiveColumn, ...]
    partition_keys: tuple[HiveColumn, ...]
    location: str | None
    storage: Mapping[str, Any]
    table_type: str = EXTERNAL_TABLE
    owner: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    view_original_text: str | None = None
    view_expanded_text: str | None = None
    create_time: int = 0


@dataclass(frozen=True)
class StoredTable:
    info: TableInfo
    definition: TableDefinition
    statistics_written_at: dt.datetime | None
    collected_at: dt.datetime | None  # the last successful statlas collection
    # whether any partition has Hive parameters of its own / statlas statistics: a
    # partition read joins only what is there
    partitions_have_parameters: bool = True
    partitions_have_statistics: bool = True


@dataclass(frozen=True)
class PartitionDefinition:
    """A partition as a Hive client gives it: raw values (None: the default partition)."""

    values: tuple[str | None, ...]
    location: str | None = None
    storage: Mapping[str, Any] | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    create_time: int = 0


@dataclass(slots=True)
class StoredPartition:
    id: int
    name: str
    values: tuple[str | None, ...]
    location: str
    storage: Mapping[str, Any] | None
    parameters: Mapping[str, str]
    create_time: int
    statistics_written_at: dt.datetime | None
    row_count: int | None  # statlas's collected figures (None: not collected)
    file_count: int
    total_bytes: int
    collected_at: dt.datetime | None


# --- names and types ----------------------------------------------------------------------


def statlas_name(database: str, table: str) -> str:
    """The statlas table of Hive's `database.table`."""
    database, table = database.lower(), table.lower()
    return table if database == DEFAULT_DATABASE else f"{database}.{table}"


def hive_name(name: str) -> tuple[str, str]:
    """(database, table) of a statlas table name."""
    database, dot, table = name.rpartition(".")
    return (database, table) if dot else (DEFAULT_DATABASE, name)


_TIMESTAMP_NTZ = re.compile(r"(?:^|(?<=[<:,]))timestamp_ntz(?=$|[>,])")


def hive_type_name(type_name: str) -> str:
    """A column's type as Hive names it: Spark's timestamp_ntz is Hive's timestamp (a
    timestamp without a time zone; Hive, Trino and Hive 2.3 clients parse no other name)."""
    return _TIMESTAMP_NTZ.sub("timestamp", type_name)


def key_type_of(hive_type: str) -> KeyType:
    """The typed index column a Hive partition-key type is kept in."""
    text = hive_type.strip().lower()
    base = text.split("(", 1)[0].strip()
    if base in ("tinyint", "smallint", "int", "integer"):
        return KeyType("int")
    if base in ("bigint", "date", "timestamp", "boolean", "string"):
        return KeyType(base)
    if base in ("varchar", "char"):
        return KeyType("string")
    decimal = _DECIMAL.fullmatch(text)
    if decimal:
        return KeyType("decimal", int(decimal.group(1)), int(decimal.group(2) or 0))
    if base == "decimal":
        return KeyType("decimal", 10, 0)
    raise InvalidObject(
        f"partition keys of type {hive_type} are not supported (use tinyint, smallint, int, "
        "bigint, decimal, date, timestamp, string, varchar, char or boolean)"
    )


def format_of(storage: Mapping[str, Any]) -> str:
    """statlas's scan format of a storage descriptor (parquet, orc, else the serde's name)."""
    text = " ".join(str(storage.get(k) or "") for k in ("serde", "inputFormat")).lower()
    for name in FORMAT_STORAGE:
        if name in text:
            return name
    if "text" in text or "lazysimpleserde" in text:
        return "textfile"
    return "other" if text.strip() else "parquet"


def default_storage(data_format: str) -> dict[str, Any]:
    return dict(FORMAT_STORAGE.get(data_format, {}))


def local_location(uri: str | None) -> str | None:
    """Hadoop's `file:/x`, `file:///x` -> `/x` (what statlas lists); other URIs unchanged."""
    if not uri:
        return None
    if uri.startswith("file:"):
        path = uri[len("file:") :]
        if path.startswith("//"):
            path = path[2:]
        return "/" + path.lstrip("/") if path else None
    return uri.rstrip("/") or uri


def raw_values(name: str, key_count: int) -> tuple[str | None, ...]:
    """The raw partition values of a partition name `k1=v1/k2=v2` (None: the default)."""
    if key_count == 0:
        return ()
    values: list[str | None] = []
    for component in name.split("/")[-key_count:]:
        raw = component.partition("=")[2]
        if "%" in raw:
            split = split_partition_component(component)
            values.append(None if split is None else split[1])
        else:
            values.append(None if raw == DEFAULT_PARTITION_NAME else raw)
    return tuple(values)
