"""What a collection scans: the table's listed partitions that are new, or whose fingerprint
changed since their statistics were taken (all of them for a full collection), found by the
database, with the table's partitions counted, the removed ones, and its rows per file byte
so far (collectors.collect)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, and_, exists, func, or_, select, true

from metastore.catalog.tables import TableInfo, get_table
from metastore.models import PartitionStats
from metastore.types import KeyValue


@dataclass(frozen=True)
class ListedPartition:
    """A partition as the metastore lists it: its typed key values, its location, and its
    fingerprint (files, bytes, newest change)."""

    id: int
    name: str
    values: tuple[KeyValue, ...]
    location: str
    fingerprint: tuple[int, int, int]


@dataclass(frozen=True)
class ScanPlan:
    """What a collection scans, read from the table's listing and its statistics."""

    info: TableInfo
    to_scan: list[ListedPartition]  # every partition with `full`, else the new and changed ones
    partitions: int  # the table's partitions
    added: frozenset[int]  # those of to_scan without statistics
    removed: list[int]  # partitions with statistics that are no longer listed
    rows_per_byte: float | None  # so far (None before the first collection)


def plan_scan(conn: Connection, table: str, full: bool) -> ScanPlan:
    """The table, its partitions to scan (all with `full`; else those without statistics, or
    whose fingerprint changed since their statistics were taken), found by the database:
    a new partition of a table of thousands reads one row of its listing, not all."""
    info = get_table(conn, table)
    store = info.store()
    listed, stats = store.table, PartitionStats.__table__
    joined = listed.outerjoin(
        stats, and_(stats.c.table_id == info.id, stats.c.partition_id == listed.c.id)
    )
    fingerprint = (listed.c.file_count, listed.c.total_bytes, listed.c.modified_ns)
    stale = or_(
        stats.c.partition_id.is_(None),
        *(stats.c[column.name].is_distinct_from(column) for column in fingerprint),
    )
    keys = len(info.partition_keys)
    to_scan, added = [], []
    for row in conn.execute(
        select(listed.c.id, listed.c.name, *store.key_columns, listed.c.location, *fingerprint)
        .add_columns(stats.c.partition_id.is_(None).label("unstated"))
        .select_from(joined)
        .where(true() if full else stale)
    ):
        to_scan.append(
            ListedPartition(
                row.id,
                row.name,
                tuple(row[2 : 2 + keys]),
                row.location,
                (row.file_count, row.total_bytes, row.modified_ns),
            )
        )
        if row.unstated:
            added.append(row.id)
    partitions = conn.execute(select(func.count()).select_from(listed)).scalar_one()
    removed = conn.scalars(
        select(stats.c.partition_id).where(
            stats.c.table_id == info.id,
            ~exists().where(listed.c.id == stats.c.partition_id),
        )
    ).all()
    rows, size = conn.execute(
        select(func.sum(stats.c.row_count), func.sum(stats.c.total_bytes)).where(
            stats.c.table_id == info.id
        )
    ).one()
    per_byte = float(rows) / float(size) if rows and size else None
    return ScanPlan(info, to_scan, int(partitions), frozenset(added), sorted(removed), per_byte)
