"""What Hive clients keep in a metastore, on top of statlas's catalog (docs/hive-metastore.md).

A Hive table `db.t` is the statlas table `db.t` (`t` for database `default`): its columns,
partition keys and typed partitions are statlas's own, so a table a Hive client creates is a
statlas table and a table `statlas table register` made is a Hive table. Beside them this
module keeps what only Hive clients use (metastore.models Hive*): databases, each table's
type, owner, storage descriptor, parameters and view text, column comments, each partition's
parameters and its own storage descriptor where it differs from the table's, and column
statistics written by engines. Every function takes the caller's connection: one call of
the Thrift API is one transaction.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Text,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    literal,
    null,
    select,
    update,
)
from sqlalchemy.orm import Session

from metastore import catalog, partition_store
from metastore.catalog import PartitionKey, TableInfo, get_table
from metastore.engine import run_read, run_write
from metastore.errors import InvalidValue, StatlasError, UnknownTable
from metastore.hive_paths import (
    DEFAULT_PARTITION_NAME,
    partition_name,
    split_partition_component,
)
from metastore.models import (
    CatalogColumn,
    CatalogTable,
    CollectionRun,
    HiveColumnStatistics,
    HiveDatabase,
    HivePartition,
    HiveTable,
    PartitionStats,
    utcnow,
)
from metastore.partition_store import PartitionRow, id_in
from metastore.types import KeyType, KeyValue

DEFAULT_DATABASE = "default"
TABLE_LEVEL = 0  # HiveColumnStatistics.partition_id of a table's own statistics
EXTERNAL_TABLE = "EXTERNAL_TABLE"
MANAGED_TABLE = "MANAGED_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"

# catalog_tables.properties[SOURCE] of a table a Hive client created: its partitions are
# the client's to add and drop; a refresh only re-reads their files' fingerprints
SOURCE = "source"
HIVE_METASTORE = "hive-metastore"

_NAME = re.compile(r"[a-z_][a-z0-9_]*")
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


class NoSuchObject(StatlasError):
    """A database, table or partition a Hive client named does not exist."""

    http_status = 404


class AlreadyExists(StatlasError):
    http_status = 409


class InvalidObject(StatlasError):
    """A Hive object that cannot be stored as given (a key type statlas cannot index, a
    partition value that does not parse as its key's type, clashing values)."""


class StaleParameter(StatlasError):
    """A change that expected a table parameter's value the table no longer has."""


class InvalidOperation(StatlasError):
    """A change Hive clients may ask for that statlas refuses (changing partition keys,
    dropping a database that still has tables)."""


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


# --- databases ----------------------------------------------------------------------------


def list_databases(conn: Connection) -> list[str]:
    """Every database: those created, and those statlas tables named `db.t` imply."""
    names = set(conn.execute(select(HiveDatabase.name)).scalars())
    names.add(DEFAULT_DATABASE)
    for table in conn.execute(select(CatalogTable.name)).scalars():
        names.add(hive_name(table)[0])
    return sorted(names)


def get_database(conn: Connection, name: str) -> Database:
    name = name.lower()
    db = Session(conn).get(HiveDatabase, name)
    if db is not None:
        return Database(
            db.name,
            db.description,
            db.location,
            db.owner_name,
            db.owner_type,
            dict(db.parameters or {}),
        )
    if name == DEFAULT_DATABASE or name in list_databases(conn):
        return Database(name, None, None, "public", "ROLE", {})
    raise NoSuchObject(f"database {name} does not exist")


def create_database(conn: Connection, database: Database) -> None:
    name = database.name.lower()
    if not _NAME.fullmatch(name):
        raise InvalidObject(f"invalid database name {database.name!r}")
    if name in list_databases(conn):
        raise AlreadyExists(f"database {name} already exists")
    session = Session(conn)
    session.add(
        HiveDatabase(
            name=name,
            description=database.description,
            location=database.location,
            owner_name=database.owner_name,
            owner_type=database.owner_type,
            parameters=dict(database.parameters),
        )
    )
    session.flush()


def alter_database(conn: Connection, name: str, database: Database) -> None:
    current = get_database(conn, name)
    session = Session(conn)
    row = session.get(HiveDatabase, current.name)
    if row is None:
        row = HiveDatabase(name=current.name)
        session.add(row)
    row.description = database.description
    row.location = database.location or current.location
    row.owner_name = database.owner_name
    row.owner_type = database.owner_type
    row.parameters = dict(database.parameters)
    session.flush()


def database_tables(conn: Connection, database: str) -> list[str]:
    """The tables of `database` (Hive names, without the database)."""
    database = database.lower()
    names = conn.execute(select(CatalogTable.name)).scalars()
    return sorted(t for d, t in map(hive_name, names) if d == database)


def drop_database(conn: Connection, name: str, cascade: bool) -> list[StoredTable]:
    """Drop `name`; with `cascade`, its tables too (returned, for deleting managed data)."""
    name = name.lower()
    if name == DEFAULT_DATABASE:
        raise InvalidOperation("the default database cannot be dropped")
    get_database(conn, name)
    tables = database_tables(conn, name)
    if tables and not cascade:
        raise InvalidOperation(f"database {name} is not empty: it has {len(tables)} tables")
    dropped = [drop_table(conn, name, t) for t in tables]
    conn.execute(delete(HiveDatabase).where(HiveDatabase.name == name))
    return dropped


# --- tables -------------------------------------------------------------------------------


def table_names(conn: Connection, database: str, table_type: str | None = None) -> list[str]:
    names = database_tables(conn, database)
    if table_type is None:
        return names
    types = dict(
        conn.execute(
            select(CatalogTable.name, HiveTable.table_type).join(
                HiveTable, HiveTable.table_id == CatalogTable.id
            )
        ).all()
    )
    return [t for t in names if types.get(statlas_name(database, t), EXTERNAL_TABLE) == table_type]


TableStamp = tuple[int, int, int, Any]


def table_stamp(conn: Connection, database: str, table: str) -> TableStamp:
    """(id, version, last successful collection run, creation time) of a table, in one
    indexed query: what a cached StoredTable is checked against (every change a Hive client
    makes to a table or its partitions bumps its version; a collection adds a run; a table
    dropped and created again, which SQLite may give the same id, has another creation
    time)."""
    name = statlas_name(database, table)
    row = conn.execute(_STAMP, {"name": name}).first()
    if row is None:
        raise NoSuchObject(f"table {database}.{table} does not exist")
    return int(row[0]), int(row[1]), int(row[2] or 0), row[3]


_STAMP = select(
    CatalogTable.id,
    CatalogTable.version,
    select(func.max(CollectionRun.id))
    .where(CollectionRun.table_id == CatalogTable.id, CollectionRun.status == "succeeded")
    .scalar_subquery(),
    CatalogTable.created_at,
).where(CatalogTable.name == bindparam("name"))


def get_stored_table(conn: Connection, database: str, table: str) -> StoredTable:
    try:
        info = get_table(conn, statlas_name(database, table))
    except (UnknownTable, InvalidValue):
        raise NoSuchObject(f"table {database}.{table} does not exist") from None
    return _stored(conn, info)


def _stored(conn: Connection, info: TableInfo) -> StoredTable:
    hive = Session(conn).get(HiveTable, info.id)
    comments = dict(
        conn.execute(
            select(CatalogColumn.name, CatalogColumn.comment).where(
                CatalogColumn.table_id == info.id, CatalogColumn.comment.is_not(None)
            )
        ).all()
    )
    collected_at = conn.execute(
        select(func.max(CollectionRun.finished_at)).where(
            CollectionRun.table_id == info.id, CollectionRun.status == "succeeded"
        )
    ).scalar_one_or_none()
    database, name = hive_name(info.name)
    columns = tuple(
        HiveColumn(c.name, hive_type_name(c.type), comments.get(c.name)) for c in info.columns
    )
    if hive is None:
        created = conn.execute(
            select(CatalogTable.created_at).where(CatalogTable.id == info.id)
        ).scalar_one()
        definition = TableDefinition(
            database,
            name,
            columns,
            tuple(HiveColumn(k.name, str(k.type)) for k in info.partition_keys),
            info.location,
            default_storage(info.format),
            EXTERNAL_TABLE,
            None,
            {"EXTERNAL": "TRUE"},
            create_time=int(_aware(created).timestamp()),
        )
        return StoredTable(
            info, definition, None, _aware_or_none(collected_at), *_partition_flags(conn, info)
        )
    storage = dict(hive.storage or {})
    given_keys = storage.pop("partitionKeys", None)
    keys = (
        tuple(HiveColumn(k["name"], k["type"], k.get("comment")) for k in given_keys)
        if given_keys
        else tuple(HiveColumn(k.name, str(k.type)) for k in info.partition_keys)
    )
    definition = TableDefinition(
        database,
        name,
        columns,
        keys,
        info.location or None,
        storage,
        hive.table_type,
        hive.owner,
        dict(hive.parameters or {}),
        hive.view_original_text,
        hive.view_expanded_text,
        hive.create_time,
    )
    return StoredTable(
        info,
        definition,
        _aware_or_none(hive.statistics_written_at),
        _aware_or_none(collected_at),
        *_partition_flags(conn, info),
    )


def _partition_flags(conn: Connection, info: TableInfo) -> tuple[bool, bool]:
    """Whether any partition of the table has Hive parameters, statlas statistics."""
    row = conn.execute(
        select(
            exists().where(HivePartition.table_id == info.id),
            exists().where(PartitionStats.table_id == info.id),
        )
    ).one()
    return bool(row[0]), bool(row[1])


def create_table(conn: Connection, definition: TableDefinition) -> TableInfo:
    """Create a (so far empty) statlas table from what a Hive client gives."""
    database = definition.database.lower()
    get_database(conn, database)
    name = statlas_name(database, definition.name)
    try:
        catalog.normalise_table_name(name)
    except InvalidValue as error:
        raise InvalidObject(str(error)) from None
    exists = conn.execute(select(CatalogTable.id).where(CatalogTable.name == name)).first()
    if exists is not None:
        raise AlreadyExists(f"table {database}.{definition.name.lower()} already exists")
    keys = [PartitionKey(k.name.lower(), key_type_of(k.type)) for k in definition.partition_keys]
    _check_columns([*definition.columns, *definition.partition_keys])
    session = Session(conn)
    row = CatalogTable(
        name=name,
        location=local_location(definition.location) or "",
        format=format_of(definition.storage)[:16],
        properties={SOURCE: HIVE_METASTORE},
    )
    session.add(row)
    session.flush()
    _write_columns(session, row.id, definition.columns, keys)
    session.add(_hive_row(row.id, definition))
    session.flush()
    info = get_table(conn, name)
    store = info.store()
    partition_store.create(conn, store)
    partition_store.create_indexes(conn, store)
    return info


def _check_columns(columns: Sequence[HiveColumn]) -> None:
    seen: set[str] = set()
    for column in columns:
        lowered = column.name.lower()
        if not lowered or lowered in seen:
            raise InvalidObject(f"duplicate or empty column name {column.name!r}")
        seen.add(lowered)


def _write_columns(
    session: Session, table_id: int, columns: Sequence[HiveColumn], keys: Sequence[PartitionKey]
) -> None:
    for position, column in enumerate(columns):
        session.add(
            CatalogColumn(
                table_id=table_id,
                kind="data",
                position=position,
                name=column.name.lower(),
                type=column.type,
                nullable=True,
                comment=column.comment,
            )
        )
    for position, key in enumerate(keys):
        session.add(
            CatalogColumn(
                table_id=table_id,
                kind="partition",
                position=position,
                name=key.name,
                type=str(key.type),
                nullable=True,
            )
        )


def _hive_row(table_id: int, definition: TableDefinition) -> HiveTable:
    storage = dict(definition.storage)
    storage["partitionKeys"] = [
        {"name": k.name.lower(), "type": k.type, "comment": k.comment}
        for k in definition.partition_keys
    ]
    return HiveTable(
        table_id=table_id,
        table_type=definition.table_type,
        owner=definition.owner,
        storage=storage,
        parameters=dict(definition.parameters),
        view_original_text=definition.view_original_text,
        view_expanded_text=definition.view_expanded_text,
        create_time=definition.create_time or int(time.time()),
    )


def alter_table(
    conn: Connection,
    database: str,
    table: str,
    definition: TableDefinition,
    statistics_written: bool,
    expected: tuple[str, str] | None = None,
) -> StoredTable:
    """Replace what a client may change: name, columns, location, storage, parameters;
    returns the table as it was. With `expected` (key, value), only if the table's parameter
    `key` is `value` now: Hive 4's check-and-swap (HIVE-26882), decided on the table's row
    locked until the transaction ends, so of two writers expecting one value one wins."""
    _lock_table_row(conn, database, table)
    stored = get_stored_table(conn, database, table)
    if expected is not None:
        key, value = expected
        if key not in definition.parameters:
            raise StaleParameter(f"New value for expected key {key} is not set")
        hive_row = conn.execute(
            select(HiveTable.parameters).where(HiveTable.table_id == stored.info.id)
        ).first()
        current = (hive_row[0] or {}).get(key) if hive_row is not None else None
        if current != value:
            raise StaleParameter(
                f"The table has been modified. The parameter value for key '{key}' is "
                f"'{current}'. The expected was value was '{value}'"
            )
    info = stored.info
    old_keys = [k.name for k in stored.definition.partition_keys]
    new_keys = [k.name.lower() for k in definition.partition_keys]
    if new_keys and new_keys != old_keys:
        raise InvalidOperation(
            f"partition keys of {database}.{table} cannot change ({', '.join(old_keys) or 'none'} "
            f"to {', '.join(new_keys)})"
        )
    _check_columns([*definition.columns, *stored.definition.partition_keys])
    session = Session(conn)
    row = session.get(CatalogTable, info.id)
    assert row is not None
    new_name = statlas_name(definition.database or database, definition.name or table)
    if new_name != info.name:
        get_database(conn, hive_name(new_name)[0])
        clash = conn.execute(select(CatalogTable.id).where(CatalogTable.name == new_name)).first()
        if clash is not None:
            raise AlreadyExists(f"table {new_name} already exists")
        row.name = catalog.normalise_table_name(new_name)
    location = local_location(definition.location)
    if location:
        row.location = location
    row.format = format_of(definition.storage)[:16] if definition.storage else row.format
    old_columns = [(c.name, c.type, c.comment) for c in stored.definition.columns]
    new_columns = [(c.name.lower(), c.type, c.comment) for c in definition.columns]
    if definition.columns and new_columns != old_columns:
        session.execute(
            delete(CatalogColumn).where(
                CatalogColumn.table_id == info.id, CatalogColumn.kind == "data"
            )
        )
        _write_columns(session, info.id, definition.columns, [])
    hive = session.get(HiveTable, info.id)
    merged = TableDefinition(
        definition.database,
        definition.name,
        definition.columns,
        stored.definition.partition_keys,
        definition.location,
        definition.storage or stored.definition.storage,
        definition.table_type or stored.definition.table_type,
        definition.owner,
        definition.parameters,
        definition.view_original_text,
        definition.view_expanded_text,
        stored.definition.create_time,
    )
    replacement = _hive_row(info.id, merged)
    if hive is None:
        hive = replacement
        session.add(hive)
    else:
        for attribute in ("table_type", "owner", "storage", "parameters"):
            setattr(hive, attribute, getattr(replacement, attribute))
        hive.view_original_text = replacement.view_original_text
        hive.view_expanded_text = replacement.view_expanded_text
    if statistics_written:
        hive.statistics_written_at = utcnow()
    row.version += 1
    row.updated_at = utcnow()
    session.flush()
    catalog.forget_cached_table(info.id)
    return stored


def _lock_table_row(conn: Connection, database: str, table: str) -> None:
    """Hold the table's catalog row until the transaction ends (PostgreSQL; SQLite's one
    writer holds everything), so that concurrent changes to one table queue."""
    if conn.dialect.name == "postgresql":
        conn.execute(
            select(CatalogTable.id)
            .where(CatalogTable.name == statlas_name(database, table))
            .with_for_update()
        )


def drop_table(conn: Connection, database: str, table: str) -> StoredTable:
    """Drop the table, its partitions and statistics; returns what it was."""
    stored = get_stored_table(conn, database, table)
    partition_store.drop(conn, stored.info.id)
    for model in (HiveColumnStatistics, HivePartition, HiveTable, CatalogColumn):
        conn.execute(delete(model).where(model.table_id == stored.info.id))
    conn.execute(delete(CatalogTable).where(CatalogTable.id == stored.info.id))
    catalog.forget_cached_table(stored.info.id)
    return stored


# --- partitions ---------------------------------------------------------------------------


def typed_values(info: TableInfo, values: Sequence[str | None]) -> tuple[KeyValue, ...]:
    if len(values) != len(info.partition_keys):
        raise InvalidObject(
            f"{info.name} has {len(info.partition_keys)} partition keys, not {len(values)} values"
        )
    typed: list[KeyValue] = []
    for key, raw in zip(info.partition_keys, values, strict=True):
        if raw is None or raw == DEFAULT_PARTITION_NAME:
            typed.append(None)
            continue
        try:
            typed.append(key.type.parse(raw))
        except InvalidValue as error:
            raise InvalidObject(f"partition value of {key.name}: {error}") from None
    return tuple(typed)


def partition_name_of(info: TableInfo, values: Sequence[str | None]) -> str:
    """Hive's name `k1=v1/k2=v2` of raw values (None or Hive's default name: NULL)."""
    raw = [None if v == DEFAULT_PARTITION_NAME else v for v in values]
    return partition_name([k.name for k in info.partition_keys], raw)


def read_partitions(
    conn: Connection,
    info: TableInfo,
    where: ColumnElement[bool] | None = None,
    names: Sequence[str] | None = None,
    limit: int | None = None,
    with_parameters: bool = True,
    with_statistics: bool = True,
) -> list[StoredPartition]:
    """Partitions of `info` (those `where` selects, or those named), with their Hive
    parameters and statlas's collected figures, in name order. One query (joining only
    what is asked for); rows are read as the driver returns them (a reply may hold a
    hundred thousand partitions)."""
    table = info.store().table
    nothing = null()
    columns: list[Any] = [
        table.c.id,
        table.c.name,
        table.c.location,
        table.c.file_count,
        table.c.total_bytes,
    ]
    joined: Any = table
    if with_parameters:
        columns += [
            HivePartition.storage,
            HivePartition.parameters,
            HivePartition.create_time,
            HivePartition.statistics_written_at,
        ]
        joined = joined.outerjoin(
            HivePartition,
            and_(HivePartition.table_id == info.id, HivePartition.partition_id == table.c.id),
        )
    else:
        columns += [nothing, nothing, nothing, nothing]
    if with_statistics:
        columns += [
            PartitionStats.row_count,
            PartitionStats.file_count,
            PartitionStats.total_bytes,
            CollectionRun.finished_at,
        ]
        joined = joined.outerjoin(
            PartitionStats,
            and_(PartitionStats.table_id == info.id, PartitionStats.partition_id == table.c.id),
        ).outerjoin(CollectionRun, CollectionRun.id == PartitionStats.run_id)
    else:
        columns += [nothing, nothing, nothing, nothing]
    statement = select(*columns).select_from(joined).order_by(table.c.name)
    if where is not None:
        statement = statement.where(where)
    if names is not None:
        statement = statement.where(_name_in(conn, table.c.name, names))
    if limit is not None and limit >= 0:
        statement = statement.limit(limit)
    result = conn.execute(statement)
    rows = result.cursor.fetchall()
    result.close()
    count = len(info.partition_keys)
    partitions = []
    for (
        pid,
        name,
        location,
        files,
        size,
        storage,
        parameters,
        create_time,
        written_at,
        row_count,
        collected_files,
        collected_bytes,
        collected_at,
    ) in rows:
        collected = row_count is not None
        partitions.append(
            StoredPartition(
                pid,
                name,
                raw_values(name, count),
                location,
                _json(storage),
                _json(parameters) or {},
                create_time or 0,
                _moment(written_at),
                row_count,
                collected_files if collected else files,
                collected_bytes if collected else size,
                _moment(collected_at),
            )
        )
    return partitions


def _json(value: Any) -> Any:
    """A JSON column as the driver returned it: parsed (psycopg2) or text (sqlite3)."""
    return json.loads(value) if isinstance(value, str) else value


def _moment(value: Any) -> dt.datetime | None:
    """A timestamp column as the driver returned it: a datetime, or SQLite's text."""
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return _aware(value)


def _name_in(conn: Connection, column: Any, names: Sequence[str]) -> ColumnElement[bool]:
    return partition_store.value_in(conn.dialect.name, column, KeyType("string"), list(names))


def partition_names(conn: Connection, info: TableInfo, limit: int | None = None) -> list[str]:
    table = info.store().table
    statement = select(table.c.name).order_by(table.c.name)
    if limit is not None and limit >= 0:
        statement = statement.limit(limit)
    return list(conn.execute(statement).scalars())


def prefix_predicate(
    conn: Connection, info: TableInfo, values: Sequence[str | None]
) -> ColumnElement[bool] | None:
    """Hive's partial specification (`get_partitions_ps`): a value per leading key, "" (or
    missing) for any; as a predicate on the typed keys."""
    store = info.store()
    clauses: list[ColumnElement[bool]] = []
    for key, raw in zip(info.partition_keys, values, strict=False):
        if raw is None or raw == "":
            continue
        column, key_type = store.column_of(key.name)
        if raw == DEFAULT_PARTITION_NAME:
            clauses.append(column.is_(None))
            continue
        try:
            value = key_type.parse(raw)
        except InvalidValue as error:
            raise InvalidObject(f"partition value of {key.name}: {error}") from None
        clauses.append(partition_store.value_in(conn.dialect.name, column, key_type, [value]))
    return and_(*clauses) if clauses else None


def add_partitions(
    conn: Connection,
    info: TableInfo,
    partitions: Sequence[PartitionDefinition],
    if_not_exists: bool,
    table_storage: Mapping[str, Any],
) -> list[PartitionDefinition]:
    """Add partitions (typed values, default locations under the table's); returns those
    added (with an existing one skipped when `if_not_exists`, else AlreadyExists)."""
    store = info.store()
    names = [k.name for k in info.partition_keys]
    wanted: dict[str, tuple[PartitionDefinition, tuple[KeyValue, ...]]] = {}
    for partition in partitions:
        typed = typed_values(info, partition.values)
        raw = [None if v == DEFAULT_PARTITION_NAME else v for v in partition.values]
        name = partition_name(names, raw)
        if name in wanted:
            raise InvalidObject(f"partition {name} is given twice")
        wanted[name] = (partition, typed)
    existing = set()
    if wanted:
        table = store.table
        existing = set(
            conn.execute(
                select(table.c.name).where(_name_in(conn, table.c.name, list(wanted)))
            ).scalars()
        )
    if existing and not if_not_exists:
        raise AlreadyExists(f"partition {sorted(existing)[0]} of {info.name} already exists")
    rows, added = [], []
    base = info.location.rstrip("/")
    for name, (partition, typed) in wanted.items():
        if name in existing:
            continue
        location = local_location(partition.location) or f"{base}/{name}"
        rows.append(PartitionRow(name, typed, location, 0, 0, 0))
        added.append(partition)
    try:
        partition_store.insert_rows(conn, store, rows)
    except Exception as error:  # a unique-name clash raced us, or a value out of range
        if "unique" in str(error).lower() or "duplicate" in str(error).lower():
            raise AlreadyExists(f"a partition of {info.name} was added at the same time") from None
        raise
    if rows:
        ids = dict(
            conn.execute(
                select(store.table.c.name, store.table.c.id).where(
                    _name_in(conn, store.table.c.name, [r.name for r in rows])
                )
            ).all()
        )
        now = int(time.time())
        values = []
        for row, partition in zip(rows, added, strict=True):
            values.append(
                {
                    "table_id": info.id,
                    "partition_id": ids[row.name],
                    "storage": _own_storage(partition.storage, table_storage),
                    "parameters": dict(partition.parameters),
                    "create_time": partition.create_time or now,
                    "statistics_written_at": utcnow()
                    if _has_statistics(partition.parameters)
                    else None,
                }
            )
        conn.execute(insert(HivePartition), values)
        if len(rows) >= 1000:  # the planner's figures of both tables the lookups join
            partition_store.analyze(conn, store)
            conn.exec_driver_sql(f"ANALYZE {HivePartition.__tablename__}")
        _touch(conn, info.id)
    return added


def _own_storage(
    storage: Mapping[str, Any] | None, table_storage: Mapping[str, Any]
) -> dict[str, Any] | None:
    """A partition's storage descriptor, kept only where it differs from its table's in
    format, serde or columns."""
    if not storage:
        return None
    own = {k: v for k, v in storage.items() if k != "location"}
    same = all(own.get(k) == table_storage.get(k) for k in ("inputFormat", "outputFormat", "serde"))
    return None if same and "columns" not in own else own


def alter_partitions(
    conn: Connection,
    info: TableInfo,
    partitions: Sequence[PartitionDefinition],
    table_storage: Mapping[str, Any],
) -> None:
    """Replace the parameters, location and storage of existing partitions."""
    store = info.store()
    names = [k.name for k in info.partition_keys]
    for partition in partitions:
        typed_values(info, partition.values)
        raw = [None if v == DEFAULT_PARTITION_NAME else v for v in partition.values]
        name = partition_name(names, raw)
        pid = conn.execute(select(store.table.c.id).where(store.table.c.name == name)).scalar()
        if pid is None:
            raise NoSuchObject(f"partition {name} of {info.name} does not exist")
        location = local_location(partition.location)
        if location:
            conn.execute(
                update(store.table).where(store.table.c.id == pid).values(location=location)
            )
        current = (
            Session(conn)
            .scalars(
                select(HivePartition).where(
                    HivePartition.table_id == info.id, HivePartition.partition_id == pid
                )
            )
            .one_or_none()
        )
        written = _has_statistics(partition.parameters) and (
            current is None
            or _statistics_of(current.parameters) != _statistics_of(partition.parameters)
        )
        values: dict[str, Any] = {
            "storage": _own_storage(partition.storage, table_storage),
            "parameters": dict(partition.parameters),
        }
        if written:
            values["statistics_written_at"] = utcnow()
        if current is None:
            conn.execute(
                insert(HivePartition),
                [
                    {
                        "table_id": info.id,
                        "partition_id": pid,
                        "create_time": partition.create_time or int(time.time()),
                        "statistics_written_at": None,
                        **values,
                    }
                ],
            )
        else:
            conn.execute(
                update(HivePartition)
                .where(HivePartition.table_id == info.id, HivePartition.partition_id == pid)
                .values(**values)
            )
    _touch(conn, info.id)


def rename_partition(
    conn: Connection,
    info: TableInfo,
    old_values: Sequence[str | None],
    new_values: Sequence[str | None],
    new_location: str | None,
) -> tuple[str, str]:
    """Give a partition new values (and, when given, a new location); returns its old and
    new names. The statistics collected for it stay with it."""
    old_name = partition_name_of(info, old_values)
    new_name = partition_name_of(info, new_values)
    typed = typed_values(info, new_values)
    store = info.store()
    table = store.table
    found = conn.execute(select(table.c.id).where(table.c.name == old_name)).first()
    if found is None:
        raise InvalidOperation(f"partition {old_name} of {info.name} does not exist")
    if (
        new_name != old_name
        and conn.execute(select(table.c.id).where(table.c.name == new_name)).first()
    ):
        raise InvalidOperation(f"partition {new_name} of {info.name} already exists")
    values: dict[str, Any] = {"name": new_name}
    values.update({f"k{i}": value for i, value in enumerate(typed)})
    if new_location:
        values["location"] = new_location
    conn.execute(update(table).where(table.c.id == found[0]).values(**values))
    _touch(conn, info.id)
    return old_name, new_name


def table_metas(conn: Connection) -> list[tuple[str, str, str, str | None]]:
    """Every table as (database, table, table type, comment), by name."""
    rows = conn.execute(
        select(CatalogTable.name, HiveTable.table_type, HiveTable.parameters)
        .outerjoin(HiveTable, HiveTable.table_id == CatalogTable.id)
        .order_by(CatalogTable.name)
    ).all()
    metas = []
    for name, table_type, parameters in rows:
        database, table = hive_name(name)
        comment = (parameters or {}).get("comment")
        metas.append((database, table, table_type or EXTERNAL_TABLE, comment))
    return metas


def relocate_partitions(conn: Connection, info: TableInfo, old: str, new: str) -> int:
    """Partitions whose location lies under `old` (a table's directory that moved to `new`)
    get the same place under `new`; returns how many."""
    store = info.store()
    location = store.table.c.location
    old, new = old.rstrip("/"), new.rstrip("/")
    prefix = old + "/"
    moved = conn.execute(
        update(store.table)
        .where(func.substr(location, 1, len(prefix), type_=Text) == prefix)
        .values(
            location=literal(new + "/", Text).concat(
                func.substr(location, len(prefix) + 1, type_=Text)
            )
        )
    ).rowcount
    return int(moved or 0)


def drop_partitions(conn: Connection, info: TableInfo, ids: Sequence[int]) -> None:
    partition_store.delete_ids(conn, info.store(), list(ids))
    catalog.forget_statistics(conn, info.id, list(ids))
    _touch(conn, info.id)


def _touch(conn: Connection, table_id: int) -> None:
    conn.execute(
        update(CatalogTable)
        .where(CatalogTable.id == table_id)
        .values(version=CatalogTable.version + 1, updated_at=utcnow())
    )


def _statistics_of(parameters: Mapping[str, str] | None) -> dict[str, str]:
    return {
        k: v
        for k, v in (parameters or {}).items()
        if k.startswith("spark.sql.statistics.") or k in ("numRows", "rawDataSize")
    }


def _has_statistics(parameters: Mapping[str, str] | None) -> bool:
    return bool(_statistics_of(parameters))


def statistics_changed(old: Mapping[str, str], new: Mapping[str, str]) -> bool:
    """Whether a client's new table parameters write statistics (Spark's ANALYZE)."""
    return _has_statistics(new) and _statistics_of(old) != _statistics_of(new)


def refresh_fingerprints(engine: Engine, info: TableInfo) -> catalog.RegistrationReport:
    """Re-read the files of every partition a Hive client listed (count, bytes, newest
    change) and update the fingerprints that changed, in one transaction; partitions are
    neither added nor removed (they are the client's: a partition may live anywhere, and an
    empty one is still a partition)."""
    from pyarrow import fs as pafs

    from metastore.discovery import DirectoryStats, is_hidden

    changed: list[tuple[int, PartitionRow]] = []
    unchanged = 0
    listed = run_read(engine, lambda conn: partition_store.fingerprints(conn, info.store()))
    for pid, name, location, files, size, modified in listed:
        stats = DirectoryStats()
        try:
            filesystem, root = (
                pafs.FileSystem.from_uri(location)
                if "://" in location
                else (pafs.LocalFileSystem(), location)
            )
            infos = filesystem.get_file_info(
                pafs.FileSelector(root, recursive=True, allow_not_found=True)
            )
        except (OSError, ValueError):
            infos = []
        for found in infos:
            if found.type == pafs.FileType.File and not is_hidden(found.base_name):
                stats.file_count += 1
                stats.total_bytes += found.size or 0
                stats.modified_ns = max(stats.modified_ns, found.mtime_ns or 0)
        fingerprint = (stats.file_count, stats.total_bytes, stats.modified_ns)
        if fingerprint == (files, size, modified):
            unchanged += 1
            continue
        changed.append((pid, PartitionRow(name, (), location, *fingerprint)))

    def write(conn: Connection) -> None:
        partition_store.update_fingerprints(conn, info.store(), changed)

    if changed:
        run_write(engine, write)
    return catalog.RegistrationReport(
        info.name, False, list(info.partition_keys), changed=len(changed), unchanged=unchanged
    )


# --- which statistics engines are served ---------------------------------------------------


def statlas_is_fresher(collected_at: dt.datetime | None, written_at: dt.datetime | None) -> bool:
    """Whether statlas's collection is the fresher of its statistics and an engine's."""
    return collected_at is not None and (written_at is None or collected_at >= written_at)


def statistics_source(stored: StoredTable) -> str:
    """Where the table statistics served to engines through the Hive Metastore API come
    from, in words (servers.hive_metastore.served_statistics serves the fresher)."""
    if statlas_is_fresher(stored.collected_at, stored.statistics_written_at):
        assert stored.collected_at is not None
        return f"statlas's collection of {stored.collected_at.isoformat(timespec='seconds')}"
    if stored.statistics_written_at is not None:
        written = stored.statistics_written_at.isoformat(timespec="seconds")
        return f"an engine's, written through the Hive Metastore API at {written}"
    return "none (not collected by statlas, none written by an engine)"


def served_statistics_source(engine: Engine, name: str) -> str:
    database, table = hive_name(catalog.normalise_table_name(name))
    return run_read(engine, lambda conn: statistics_source(get_stored_table(conn, database, table)))


# --- column statistics written by engines -------------------------------------------------


def write_column_statistics(
    conn: Connection,
    table_id: int,
    partition_id: int,
    statistics: Mapping[str, Mapping[str, Any]],
    engine: str | None,
) -> None:
    """Keep the column statistics an engine wrote (one JSON document per column), replacing
    what it wrote before for the same columns."""
    if not statistics:
        return
    conn.execute(
        delete(HiveColumnStatistics).where(
            HiveColumnStatistics.table_id == table_id,
            HiveColumnStatistics.partition_id == partition_id,
            HiveColumnStatistics.column_name.in_(list(statistics)),
        )
    )
    now = utcnow()
    conn.execute(
        insert(HiveColumnStatistics),
        [
            {
                "table_id": table_id,
                "partition_id": partition_id,
                "column_name": column,
                "engine": engine,
                "statistics": dict(document),
                "written_at": now,
            }
            for column, document in statistics.items()
        ],
    )


def read_column_statistics(
    conn: Connection, table_id: int, partition_ids: Sequence[int], columns: Sequence[str]
) -> dict[int, dict[str, tuple[dict[str, Any], dt.datetime]]]:
    """{partition id: {column: (document, written at)}} of engine-written statistics."""
    if not partition_ids or not columns:
        return {}
    rows = conn.execute(
        select(
            HiveColumnStatistics.partition_id,
            HiveColumnStatistics.column_name,
            HiveColumnStatistics.statistics,
            HiveColumnStatistics.written_at,
        ).where(
            HiveColumnStatistics.table_id == table_id,
            id_in(conn, HiveColumnStatistics.partition_id, list(partition_ids)),  # type: ignore[arg-type]
            HiveColumnStatistics.column_name.in_([c.lower() for c in columns]),
        )
    ).all()
    result: dict[int, dict[str, tuple[dict[str, Any], dt.datetime]]] = {}
    for pid, column, document, written in rows:
        result.setdefault(pid, {})[column] = (dict(document), _aware(written))
    return result


def delete_column_statistics(
    conn: Connection, table_id: int, partition_id: int, column: str | None
) -> int:
    statement = delete(HiveColumnStatistics).where(
        HiveColumnStatistics.table_id == table_id,
        HiveColumnStatistics.partition_id == partition_id,
    )
    if column:
        statement = statement.where(HiveColumnStatistics.column_name == column.lower())
    return conn.execute(statement).rowcount or 0


def forget_partitions(conn: Connection, table_id: int, partition_ids: Sequence[int]) -> None:
    """Drop what Hive clients kept of these partitions (vanished or dropped)."""
    for model in (HivePartition, HiveColumnStatistics):
        for start in range(0, len(partition_ids), 10_000):
            chunk = list(partition_ids[start : start + 10_000])
            conn.execute(
                delete(model).where(
                    model.table_id == table_id,
                    model.partition_id.in_(chunk),
                )
            )


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def _aware_or_none(moment: dt.datetime | None) -> dt.datetime | None:
    return None if moment is None else _aware(moment)


__all__ = [
    "DEFAULT_DATABASE",
    "AlreadyExists",
    "Database",
    "HiveColumn",
    "InvalidObject",
    "InvalidOperation",
    "NoSuchObject",
    "PartitionDefinition",
    "StoredPartition",
    "StoredTable",
    "TableDefinition",
]
