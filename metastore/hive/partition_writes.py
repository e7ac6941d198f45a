"""Changing a Hive table's partitions as Hive clients ask: adding, altering, renaming,
relocating (under a table's directory that moved) and dropping them, each change bumping
the table's version (its stamp); and re-reading the fingerprints of the partitions a
client listed (a refresh of a table a Hive client created)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, Text, func, insert, literal, select, update
from sqlalchemy.orm import Session

from metastore.catalog import tables as catalog
from metastore.catalog.discovery import DirectoryStats, is_hidden
from metastore.catalog.tables import TableInfo
from metastore.engine import run_read, run_write
from metastore.errors import AlreadyExists, InvalidObject, InvalidOperation, NoSuchObject
from metastore.hive.definitions import PartitionDefinition, local_location
from metastore.hive.partition_reads import names_in, partition_name_of, typed_values
from metastore.hive.statistics import has_statistics, statistics_of
from metastore.models import CatalogTable, HivePartition, utcnow
from metastore.partitions import store as partition_store
from metastore.partitions.names import DEFAULT_PARTITION_NAME, partition_name
from metastore.partitions.store import PartitionRow
from metastore.types import KeyValue


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
                select(table.c.name).where(names_in(conn, table.c.name, list(wanted)))
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
                    names_in(conn, store.table.c.name, [r.name for r in rows])
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
                    if has_statistics(partition.parameters)
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
        written = has_statistics(partition.parameters) and (
            current is None
            or statistics_of(current.parameters) != statistics_of(partition.parameters)
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


def refresh_fingerprints(engine: Engine, info: TableInfo) -> catalog.RegistrationReport:
    """Re-read the files of every partition a Hive client listed (count, bytes, newest
    change) and update the fingerprints that changed, in one transaction; partitions are
    neither added nor removed (they are the client's: a partition may live anywhere, and an
    empty one is still a partition)."""
    from pyarrow import fs as pafs  # pyarrow loads only when needed (as in discovery)

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
