"""The catalog: register, describe, list and drop tables. Every write is one transaction."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, delete, func, select, true
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session

from metastore.catalog.column_names import AmbiguousColumn, case_clashes, fold, leaf_paths, resolve
from metastore.catalog.discovery import (
    Column,
    DiscoveredDataset,
    discover,
    key_types,
    typed_values,
)
from metastore.catalog.schema_merge import merge_columns
from metastore.engine import run_read, run_write
from metastore.errors import (
    ConcurrentModification,
    InvalidValue,
    RegistrationError,
    UnknownColumn,
    UnknownTable,
)
from metastore.models import (
    CatalogColumn,
    CatalogTable,
    ColumnStats,
    HiveColumnStatistics,
    HivePartition,
    PartitionStats,
    utcnow,
)
from metastore.partitions import store as partition_store
from metastore.partitions.block_tree import forget_blocks
from metastore.partitions.store import PartitionRow, PartitionStore
from metastore.types import KeyType, KeyValue, parse_key_type

_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?")


@dataclass(frozen=True)
class PartitionKey:
    name: str
    type: KeyType


@dataclass(frozen=True)
class BucketSpec:
    """Hive/Spark bucketing: CLUSTERED BY (columns) SORTED BY (sort) INTO num_buckets."""

    num_buckets: int
    columns: tuple[str, ...]
    sort_columns: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TableInfo:
    id: int
    name: str
    location: str
    format: str
    columns: tuple[Column, ...]
    partition_keys: tuple[PartitionKey, ...]
    bucketing: BucketSpec | None
    properties: Mapping[str, Any]
    version: int
    partition_count: int = 0

    @property
    def key_names(self) -> list[str]:
        return [k.name for k in self.partition_keys]

    def described_paths(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """The columns statistics are kept of, name -> (type, field path read): each data
        column, then the leaf fields of its struct columns by path (`a.b.c`;
        metastore.catalog.column_names), a path that is also a column's own name left to the
        column."""
        described: dict[str, tuple[str, tuple[str, ...]]] = {
            c.name: (c.type, (c.name,)) for c in self.columns
        }
        for column in self.columns:
            for path, type_name in leaf_paths(column.name, column.type):
                described.setdefault(".".join(path), (type_name, path))
        return described

    def described_columns(self) -> dict[str, str]:
        """`described_paths`' names and types."""
        return {name: type_name for name, (type_name, _) in self.described_paths().items()}

    def folded_names(self) -> dict[str, str]:
        """Each described column's name as an engine matching names ignoring case (a
        planner that normalises identifiers) names it (metastore.catalog.column_names.fold); the
        names that differ from another only by case left out (no such engine can name them)."""
        names = self.described_columns()
        clashes = case_clashes(names)
        return {name: fold(name) for name in names if fold(name) not in clashes}

    def folded(self) -> TableInfo:
        """The table as such an engine sees it (`folded_names`): its columns, bucketing's
        too, named folded, the columns it cannot name left out."""
        names = self.folded_names()
        columns = tuple(
            Column(names[c.name], c.type, c.nullable) for c in self.columns if c.name in names
        )
        bucketing = self.bucketing
        if bucketing is not None:
            bucketing = BucketSpec(
                bucketing.num_buckets,
                tuple(fold(c) for c in bucketing.columns),
                tuple((fold(c), d) for c, d in bucketing.sort_columns),
            )
        return dataclasses.replace(self, columns=columns, bucketing=bucketing)

    def resolve_column(self, name: str) -> str:
        """The described column `name` names, as Spark and Hive match names
        (metastore.catalog.column_names.resolve)."""
        return resolve(self.described_columns(), name, self.name)

    def store(self) -> PartitionStore:
        return _cached_store(self.id, tuple(self.partition_keys))

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "location": self.location,
            "format": self.format,
            "columns": [
                {"name": c.name, "type": c.type, "nullable": c.nullable} for c in self.columns
            ],
            "partition_keys": [{"name": k.name, "type": str(k.type)} for k in self.partition_keys],
            "bucketing": None
            if self.bucketing is None
            else {
                "num_buckets": self.bucketing.num_buckets,
                "columns": list(self.bucketing.columns),
                "sort_columns": [list(s) for s in self.bucketing.sort_columns],
            },
            "properties": dict(self.properties),
            "partitions": self.partition_count,
        }


@dataclass
class RegistrationReport:
    table: str
    created: bool
    partition_keys: list[PartitionKey]
    added: int = 0
    removed: int = 0
    changed: int = 0
    unchanged: int = 0
    schema_changed: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def partitions(self) -> int:
        return self.added + self.changed + self.unchanged

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "created": self.created,
            "partition_keys": [{"name": k.name, "type": str(k.type)} for k in self.partition_keys],
            "partitions": self.partitions,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "schema_changed": self.schema_changed,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


_STORES: dict[tuple[int, tuple[PartitionKey, ...]], PartitionStore] = {}


def _cached_store(table_id: int, keys: tuple[PartitionKey, ...]) -> PartitionStore:
    store = _STORES.get((table_id, keys))
    if store is None:
        store = partition_store.partition_store(
            table_id, [k.name for k in keys], [k.type for k in keys]
        )
        _STORES[(table_id, keys)] = store
    return store


def forget_cached_table(table_id: int) -> None:
    """Forget the described partitions tables of a table dropped or changed in place."""
    for key in [k for k in _STORES if k[0] == table_id]:
        del _STORES[key]


def normalise_table_name(name: str) -> str:
    lowered = name.strip().lower()
    if not _TABLE_NAME.fullmatch(lowered):
        raise InvalidValue(f"invalid table name {name!r}: use letters, digits and _, as db.table")
    return lowered


def parse_partition_types(text: str | None) -> dict[str, KeyType]:
    """`dt:date,region:string` -> {"dt": date, "region": string}."""
    if not text:
        return {}
    result: dict[str, KeyType] = {}
    for item in _split_top_level(text):
        key, sep, type_text = item.partition(":")
        if not sep or not key.strip():
            raise InvalidValue(f"--partition-types wants key:type pairs, got {item!r}")
        result[key.strip().lower()] = parse_key_type(type_text)
    return result


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses (decimal(10,2))."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in (s.strip() for s in parts) if p]


def register_table(
    engine: Engine,
    name: str,
    path: str,
    data_format: str | None = None,
    partition_types: Mapping[str, KeyType] | None = None,
    bucketing: BucketSpec | None = None,
    properties: Mapping[str, Any] | None = None,
) -> RegistrationReport:
    """Register the dataset at `path` as `name`, or bring an existing registration up to date:
    new partitions are added, vanished ones removed, changed fingerprints updated."""
    name = normalise_table_name(name)
    started = time.perf_counter()
    dataset = discover(path, data_format)
    report = register_listing(engine, name, dataset, partition_types, bucketing, properties)
    report.seconds["listing"] = time.perf_counter() - started - report.seconds["writing"]
    report.seconds["total"] = time.perf_counter() - started
    return report


def register_listing(
    engine: Engine,
    name: str,
    dataset: DiscoveredDataset,
    partition_types: Mapping[str, KeyType] | None = None,
    bucketing: BucketSpec | None = None,
    properties: Mapping[str, Any] | None = None,
) -> RegistrationReport:
    """Register (or refresh) `name` from a listing already taken (see discovery.discover)."""
    name = normalise_table_name(name)
    started = time.perf_counter()
    try:
        report = run_write(
            engine,
            lambda conn: _register(
                conn, name, dataset, dict(partition_types or {}), bucketing, properties
            ),
        )
    except sa_exc.IntegrityError:
        raise ConcurrentModification(
            f"table {name} was registered or changed by another writer at the same time; "
            "run the command again"
        ) from None
    report.seconds = {"writing": time.perf_counter() - started}
    return report


def _register(
    conn: Connection,
    name: str,
    dataset: DiscoveredDataset,
    overrides: dict[str, KeyType],
    bucketing: BucketSpec | None,
    properties: Mapping[str, Any] | None,
) -> RegistrationReport:
    session = Session(conn)
    query = select(CatalogTable).where(CatalogTable.name == name)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = session.scalars(query).one_or_none()
    bucketing = _check_bucketing(bucketing, dataset.columns)

    if row is None:
        types = key_types(dataset.keys, dataset.partitions, overrides)
        keys = [PartitionKey(k, t) for k, t in zip(dataset.keys, types, strict=True)]
        row = CatalogTable(name=name, location=dataset.location, format=dataset.format)
        _apply_spec(row, bucketing, properties)
        session.add(row)
        session.flush()
        _write_columns(session, row.id, dataset.columns, keys)
        session.flush()
        store = _cached_store(row.id, tuple(keys))
        rows = _partition_rows(dataset, keys)
        partition_store.create(conn, store)
        partition_store.insert_rows(conn, store, rows)
        partition_store.create_indexes(conn, store)
        partition_store.analyze(conn, store)
        return RegistrationReport(name, True, keys, added=len(rows))

    info = get_table(conn, name)
    keys = list(info.partition_keys)
    if [k.name for k in keys] != dataset.keys:
        raise RegistrationError(
            f"partition keys of {name} changed from {_describe_keys(keys)} to "
            f"{', '.join(dataset.keys) or 'none'}: drop the table and register it again"
        )
    for key in keys:
        wanted = overrides.get(key.name)
        if wanted is not None and wanted != key.type:
            raise RegistrationError(
                f"{name}.{key.name} is registered as {key.type}, not {wanted}: drop the table "
                "and register it again to change a key's type"
            )
    if row.location != dataset.location:
        raise RegistrationError(f"{name} is registered at {row.location}, not {dataset.location}")
    store = info.store()
    wanted_rows = {r.name: r for r in _partition_rows(dataset, keys)}
    existing = partition_store.fingerprints(conn, store)
    removed, changed, unchanged = [], [], 0
    for pid, pname, location, files, size, modified in existing:
        new = wanted_rows.pop(pname, None)
        if new is None:
            removed.append(pid)
        elif (location, files, size, modified) != (
            new.location,
            new.file_count,
            new.total_bytes,
            new.modified_ns,
        ):
            changed.append((pid, new))
        else:
            unchanged += 1
    partition_store.delete_ids(conn, store, removed)
    forget_statistics(conn, row.id, removed)
    partition_store.update_fingerprints(conn, store, changed)
    partition_store.insert_rows(conn, store, list(wanted_rows.values()))
    if removed or changed or wanted_rows:
        partition_store.analyze(conn, store)

    # a sample file's columns are merged into the table's, never replace them: partitions
    # written at other times may have other columns (metastore.catalog.schema_merge)
    merged = (
        merge_columns(info.columns, dataset.columns)[0]
        if row.format == dataset.format
        else dataset.columns
    )
    schema_changed = replace_columns(conn, info, merged)
    row.format = dataset.format
    if bucketing is not None or properties is not None:
        _apply_spec(row, bucketing, properties)
    row.version += 1
    row.updated_at = utcnow()
    session.flush()
    return RegistrationReport(
        name,
        False,
        keys,
        added=len(wanted_rows),
        removed=len(removed),
        changed=len(changed),
        unchanged=unchanged,
        schema_changed=schema_changed,
    )


def replace_columns(conn: Connection, info: TableInfo, columns: Sequence[Column]) -> bool:
    """Make `columns` the table's data columns, if they are not already; whether they
    changed (in the caller's transaction)."""
    if [(c.name, c.type, c.nullable) for c in info.columns] == [
        (c.name, c.type, c.nullable) for c in columns
    ]:
        return False
    conn.execute(
        delete(CatalogColumn).where(CatalogColumn.table_id == info.id, CatalogColumn.kind == "data")
    )
    session = Session(conn)
    _write_columns(session, info.id, columns, [])
    session.flush()
    return True


def forget_statistics(
    conn: Connection,
    table_id: int,
    partition_ids: list[int],
    unrecorded: AbstractSet[int] = frozenset(),
) -> None:
    """Drop the statistics of these partitions (vanished, or about to be replaced), and the
    pre-merged blocks over them (metastore.statistics.rollups: rebuilt by the next collection)
    but over those of `unrecorded`, which had none: no block merges them."""
    forget_blocks(conn, table_id, [pid for pid in partition_ids if pid not in unrecorded])
    # and what Hive clients kept of them (metastore.hive.statistics)
    for model in (PartitionStats, ColumnStats, HivePartition, HiveColumnStatistics):
        for start in range(0, len(partition_ids), 10_000):
            chunk = partition_ids[start : start + 10_000]
            conn.execute(
                delete(model).where(model.table_id == table_id, model.partition_id.in_(chunk))
            )


def _check_bucketing(bucketing: BucketSpec | None, columns: Sequence[Column]) -> BucketSpec | None:
    """The bucketing with its columns spelled as the table's (found in any case)."""
    if bucketing is None:
        return None
    names = [c.name for c in columns]
    if bucketing.num_buckets < 1:
        raise InvalidValue("--buckets must be at least 1")

    def spelled(column: str) -> str:
        try:
            return resolve(names, column, "the dataset")
        except AmbiguousColumn as error:
            raise RegistrationError(f"bucketing: {error}") from None
        except UnknownColumn:
            raise RegistrationError(
                f"bucketing names {column!r}, which is not a data column"
            ) from None

    return BucketSpec(
        bucketing.num_buckets,
        tuple(spelled(c) for c in bucketing.columns),
        tuple((spelled(c), d) for c, d in bucketing.sort_columns),
    )


def _apply_spec(
    row: CatalogTable, bucketing: BucketSpec | None, properties: Mapping[str, Any] | None
) -> None:
    if bucketing is not None:
        row.num_buckets = bucketing.num_buckets
        row.bucket_columns = list(bucketing.columns)
        row.sort_columns = [list(s) for s in bucketing.sort_columns]
    if properties is not None:
        row.properties = {**(row.properties or {}), **properties}


def _write_columns(
    session: Session, table_id: int, columns: Sequence[Column], keys: Sequence[PartitionKey]
) -> None:
    rows = [("data", c.name, c.type, c.nullable) for c in columns]
    rows += [("partition", k.name, str(k.type), True) for k in keys]
    positions = {"data": 0, "partition": 0}
    for kind, name, type_name, nullable in rows:
        session.add(
            CatalogColumn(
                table_id=table_id,
                kind=kind,
                position=positions[kind],
                name=name,
                type=type_name,
                nullable=nullable,
            )
        )
        positions[kind] += 1


def _partition_rows(dataset: DiscoveredDataset, keys: Sequence[PartitionKey]) -> list[PartitionRow]:
    names = [k.name for k in keys]
    types = [k.type for k in keys]
    seen: dict[tuple[KeyValue, ...], str] = {}
    rows = []
    for partition in dataset.partitions:
        values = typed_values(names, types, partition)
        clash = seen.get(values)
        if clash is not None:
            raise RegistrationError(
                f"partitions {clash} and {partition.name} have the same typed values "
                f"({_describe_keys(keys)})"
            )
        seen[values] = partition.name
        rows.append(
            PartitionRow(
                partition.name,
                values,
                partition.location,
                partition.file_count,
                partition.total_bytes,
                partition.modified_ns,
            )
        )
    return rows


def _describe_keys(keys: Sequence[PartitionKey]) -> str:
    return ", ".join(f"{k.name}:{k.type}" for k in keys) or "none"


def get_table(conn: Connection, name: str, *, count_partitions: bool = False) -> TableInfo:
    """The catalog entry of `name` (one query); UnknownTable if there is none."""
    normalised = normalise_table_name(name)
    found = _load_tables(conn, CatalogTable.__table__.c.name == normalised, count_partitions)
    if not found:
        raise UnknownTable(f"unknown table {name!r}")
    return found[0]


def _load_tables(conn: Connection, where: Any, count_partitions: bool) -> list[TableInfo]:
    """Tables with their columns and keys, from one joined query."""
    t, c = CatalogTable.__table__.c, CatalogColumn.__table__.c  # Core: no ORM compile step
    rows = conn.execute(
        select(
            t.id,
            t.name,
            t.location,
            t.format,
            t.num_buckets,
            t.bucket_columns,
            t.sort_columns,
            t.properties,
            t.version,
            c.kind,
            c.name.label("column_name"),
            c.type,
            c.nullable,
        )
        .select_from(CatalogTable.__table__.outerjoin(CatalogColumn.__table__, c.table_id == t.id))
        .where(where)
        .order_by(t.name, c.kind, c.position)
    ).all()
    tables: dict[int, tuple[Any, list[Column], list[PartitionKey]]] = {}
    for row in rows:
        _, data, keys = tables.setdefault(row.id, (row, [], []))
        if row.kind == "data":
            data.append(Column(row.column_name, row.type, bool(row.nullable)))
        elif row.kind == "partition":
            keys.append(PartitionKey(row.column_name, parse_key_type(row.type)))
    result = []
    for row, data, keys in tables.values():
        bucketing = None
        if row.num_buckets:
            bucketing = BucketSpec(
                row.num_buckets,
                tuple(row.bucket_columns or ()),
                tuple((col, direction) for col, direction in (row.sort_columns or ())),
            )
        info = TableInfo(
            row.id,
            row.name,
            row.location,
            row.format,
            tuple(data),
            tuple(keys),
            bucketing,
            dict(row.properties or {}),
            row.version,
        )
        if count_partitions:
            table = info.store().table
            count = conn.execute(select(func.count()).select_from(table)).scalar_one()
            info = dataclasses.replace(info, partition_count=count)
        result.append(info)
    return result


def describe_table(engine: Engine, name: str) -> TableInfo:
    return run_read(engine, lambda conn: get_table(conn, name, count_partitions=True))


def all_tables(conn: Connection) -> list[TableInfo]:
    """Every table with its columns and keys, without counting their partitions."""
    return _load_tables(conn, true(), count_partitions=False)


def list_tables(engine: Engine) -> list[TableInfo]:
    return run_read(engine, lambda conn: _load_tables(conn, true(), count_partitions=True))


def drop_table(engine: Engine, name: str) -> int:
    """Drop `name` and its partitions; returns how many partitions it had."""

    def drop(conn: Connection) -> int:
        info = get_table(conn, name, count_partitions=True)
        partition_store.drop(conn, info.id)
        conn.execute(delete(CatalogColumn).where(CatalogColumn.table_id == info.id))
        conn.execute(delete(CatalogTable).where(CatalogTable.id == info.id))
        return info.partition_count

    return run_write(engine, drop)
