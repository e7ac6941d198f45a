"""An Iceberg table's part in `statlas collect` (collectors.collect; docs/iceberg.md): what
the scan reads (the snapshot registered last, refused when its rows are not its data
files'; of a partition that only gained files, those files alone), how such a partition's
statistics are completed from its stored ones, the snapshot recorded with the statistics,
and the statistics file published after them."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlalchemy import Connection, Engine
from sqlalchemy.orm import Session

from collectors.aggregations import SAMPLE_SEED, ColumnRecord
from collectors.iceberg.appended import (
    COLLECTED,
    StoredPartition,
    appended_files,
    merged_record,
    merged_sample,
    stored_partitions,
)
from collectors.iceberg.listing import DataFile, SnapshotListing, snapshot_listing
from collectors.iceberg.source import SNAPSHOT, IcebergSource, IcebergUnavailable, load_table
from metastore.catalog.discovery import Column
from metastore.catalog.tables import TableInfo, get_table
from metastore.engine import run_read
from metastore.models import CatalogTable

Sample = tuple[int, bytes, pa.Table]  # (sampled rows, stored bytes, their table)


@dataclass
class IcebergRead:
    """What one collection of an Iceberg table reads."""

    snapshot: SnapshotListing
    appended: dict[str, list[DataFile]] = field(default_factory=dict)  # by partition name
    stored: dict[int, StoredPartition] = field(default_factory=dict)  # by partition id

    def bytes_of(self, name: str, whole: int) -> int:
        """The bytes read of partition `name` (`whole`: all its files')."""
        added = self.appended.get(name)
        return whole if added is None else sum(f.size for f in added)

    def stored_rows(self) -> int:
        """The rows of the appended partitions already described (not read again)."""
        return sum(kept.rows for kept in self.stored.values())

    def frame(
        self, spark: Any, key_names: Sequence[str], columns: list[Column], names: Sequence[str]
    ) -> Any:
        """The frame over the files of the partitions `names`, with their key values."""
        from collectors.iceberg.reader import iceberg_frame

        raw = {p.name: p.raw_values for p in self.snapshot.dataset.partitions}
        return iceberg_frame(
            spark,
            columns,
            key_names,
            [
                (raw[name], self.appended.get(name) or self.snapshot.files[name])
                for name in names
                if name in raw
            ],
        )

    def completed(
        self,
        info: TableInfo,
        partition_id: int,
        rows: int,
        columns: list[ColumnRecord],
        sample: Sample | None,
        rate: float,
    ) -> tuple[int, list[ColumnRecord], Sample | None]:
        """A partition's statistics from what its scan read: for an appended partition,
        its stored statistics and its added files' merged."""
        kept = self.stored.get(partition_id)
        if kept is None:
            return rows, columns, sample
        types = info.described_columns()
        merged = [
            merged_record(types.get(r.name, "string"), kept.records.get(r.name), r) for r in columns
        ]
        pooled = merged_sample(kept, sample, rows, rate, SAMPLE_SEED + partition_id)
        return kept.rows + rows, merged, pooled


def plan_read(
    engine: Engine,
    info: TableInfo,
    source: IcebergSource,
    partitions: Sequence[tuple[int, str]],
    described: Collection[int],
    full: bool,
) -> IcebergRead:
    """The read of `partitions` (id, name) of `info`'s registered snapshot; those among
    the `described` (with statistics) that only gained files since the snapshot last
    collected read those files alone, unless `full`."""
    table = load_table(engine, source)
    recorded = info.properties.get(SNAPSHOT)
    snapshot = snapshot_listing(table, int(recorded) if recorded is not None else None)
    refused = snapshot.refused(source.identifier)
    if refused is not None:
        raise IcebergUnavailable(refused)
    read = IcebergRead(snapshot)
    before = info.properties.get(COLLECTED)
    if not partitions or full or before is None or table.snapshot_by_id(int(before)) is None:
        return read  # (that snapshot expired: changed partitions are read whole)
    names = {name: pid for pid, name in partitions if pid in described}
    gained = appended_files(snapshot_listing(table, int(before)), snapshot)
    read.appended = {name: files for name, files in gained.items() if name in names}
    ids = [names[name] for name in read.appended]
    read.stored = run_read(engine, lambda conn: stored_partitions(conn, info.id, ids))
    return read


def record_collected(conn: Connection, info: TableInfo) -> None:
    """The snapshot the collection's statistics now describe, kept in the table's
    properties (the next collection reads only the files added since)."""
    snapshot = info.properties.get(SNAPSHOT)
    session = Session(conn)
    row = session.get(CatalogTable, info.id)
    if row is None or snapshot is None:
        return
    row.properties = {**(row.properties or {}), COLLECTED: str(snapshot)}
    session.flush()


def publish_collected(
    engine: Engine, table: str, source: IcebergSource, changed: bool
) -> dict[str, Any] | None:
    """The statistics file of the snapshot just collected, committed unless nothing
    changed and that snapshot has one already (collectors.iceberg.publish)."""
    from collectors.iceberg.publish import publish, published_snapshot

    info = run_read(engine, lambda conn: get_table(conn, table))
    recorded = info.properties.get(SNAPSHOT)
    if recorded is None:
        return None  # a table with no snapshot yet
    iceberg_table = load_table(engine, source)  # read once: checked, then published to
    if not changed and published_snapshot(iceberg_table, int(recorded)):
        return None
    return publish(engine, info, source, int(recorded), table=iceberg_table).as_json()
