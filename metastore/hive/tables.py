"""Hive's tables: a statlas table and what only Hive clients keep of it (its type, owner,
storage descriptor, parameters and view text: metastore.models.HiveTable; column comments),
created, read, altered (renamed; Hive 4's check-and-swap of a parameter) and dropped (with
their database, when it is dropped with `cascade`); a table's stamp, that a cached table is
checked against; and whose statistics of a table engines are served."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence

from sqlalchemy import Connection, Engine, delete, exists, func, select
from sqlalchemy.orm import Session

from metastore.catalog import tables as catalog
from metastore.catalog.stamps import TableStamp, stamp_of
from metastore.catalog.tables import PartitionKey, TableInfo, get_table
from metastore.engine import run_read
from metastore.errors import (
    AlreadyExists,
    InvalidObject,
    InvalidOperation,
    InvalidValue,
    NoSuchObject,
    StaleParameter,
    UnknownTable,
)
from metastore.hive.databases import database_tables, get_database
from metastore.hive.definitions import (
    DEFAULT_DATABASE,
    EXTERNAL_TABLE,
    HIVE_METASTORE,
    SOURCE,
    HiveColumn,
    StoredTable,
    TableDefinition,
    default_storage,
    format_of,
    hive_name,
    hive_type_name,
    key_type_of,
    local_location,
    statlas_name,
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
from metastore.partitions import store as partition_store
from metastore.runs import SUCCEEDED as SUCCEEDED_RUN
from metastore.times import aware


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


def table_stamp(conn: Connection, database: str, table: str) -> TableStamp:
    """The stamp of a table (metastore.catalog.stamps: id, version, last successful collection
    run, creation time), in one indexed query: what a cached StoredTable is checked against
    (every change a Hive client makes to a table or its partitions bumps its version; a
    collection adds a run; a table dropped and created again, which SQLite may give the same
    id, has another creation time)."""
    stamp = stamp_of(conn, statlas_name(database, table))
    if stamp is None:
        raise NoSuchObject(f"table {database}.{table} does not exist")
    return stamp


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
            CollectionRun.table_id == info.id, CollectionRun.status == SUCCEEDED_RUN
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
            create_time=int(aware(created).timestamp()),
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


def _aware_or_none(moment: dt.datetime | None) -> dt.datetime | None:
    return None if moment is None else aware(moment)


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
