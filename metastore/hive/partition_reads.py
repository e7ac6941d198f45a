"""Reading a Hive table's partitions: raw values typed and named as Hive does, the
partitions a predicate or their names select (with their Hive parameters and statlas's
collected figures), their names, and Hive's partial specifications as predicates."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, null, select

from metastore.catalog.tables import TableInfo
from metastore.errors import InvalidObject, InvalidValue
from metastore.hive.definitions import StoredPartition, raw_values
from metastore.models import CollectionRun, HivePartition, PartitionStats
from metastore.partitions import store as partition_store
from metastore.partitions.names import DEFAULT_PARTITION_NAME, partition_name
from metastore.times import aware
from metastore.types import KeyType, KeyValue


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
        statement = statement.where(names_in(conn, table.c.name, names))
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
    return aware(value)


def names_in(conn: Connection, column: Any, names: Sequence[str]) -> ColumnElement[bool]:
    """`column` (a partition's name) is one of `names`, as the dialect matches a list."""
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
