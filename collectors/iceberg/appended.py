"""Partitions of an Iceberg table that only gained files since their statistics were taken:
only the added files are scanned, and their statistics merged into the partition's stored
ones (docs/iceberg.md#collecting). Every figure and sketch merges exactly as blocks of
partitions do (metastore.statistics.column_pieces); the row samples, Bernoulli samples of
each side's rows, are thinned to the lower of the two rates and pooled, so the partition's
sample stays a Bernoulli sample of all its rows.

A partition whose files were rewritten or removed (an overwrite, a delete) is not one of
these: it is scanned whole, as a new partition is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
from sqlalchemy import Connection, select

from collectors.aggregations import ColumnRecord
from collectors.iceberg.listing import DataFile, SnapshotListing
from metastore.models import ColumnStats, PartitionStats
from metastore.statistics.column_pieces import (
    FIGURES,
    merge_pieces,
    piece_of_partition,
    stored_figures,
)
from metastore.statistics.histograms import merge_frequent_items, merge_theta
from metastore.statistics.partition_samples import held_samples, stored_form
from metastore.statistics.samples import encode_table, sample_table

COLLECTED = "iceberg_collected_snapshot"  # the table property: the snapshot last collected


def appended_files(before: SnapshotListing, now: SnapshotListing) -> dict[str, list[DataFile]]:
    """The files each partition gained from `before` to `now`, for the partitions that kept
    every file they had (pure appends)."""
    gained = {}
    for name, files in now.files.items():
        had = {f.path for f in before.files.get(name, ())}
        paths = {f.path for f in files}
        if had and had < paths:
            gained[name] = [f for f in files if f.path not in had]
    return gained


@dataclass(frozen=True)
class StoredPartition:
    """A partition's statistics as stored: rows, sample and column records."""

    rows: int
    sample: bytes | None
    sample_size: int | None
    records: dict[str, Any]  # column_stats rows by column name


def stored_partitions(
    conn: Connection, table_id: int, partition_ids: Iterable[int]
) -> dict[int, StoredPartition]:
    """The stored statistics of the partitions named (those that have any)."""
    ids = list(partition_ids)
    if not ids:
        return {}
    partitions = PartitionStats.__table__.c
    found = {
        row.partition_id: StoredPartition(row.row_count, row.sample, row.sample_size, {})
        for row in conn.execute(
            select(
                partitions.partition_id,
                partitions.row_count,
                partitions.sample,
                partitions.sample_size,
            ).where(partitions.table_id == table_id, partitions.partition_id.in_(ids))
        )
    }
    # a partition whose sample only its block keeps (partition_samples): in its stored form
    held = [pid for pid, stored in found.items() if stored.sample is None and stored.sample_size]
    for pid, table in held_samples(conn, table_id, held).items():
        found[pid] = replace(found[pid], sample=encode_table(stored_form(table)))
    columns = ColumnStats.__table__
    for row in conn.execute(
        select(columns).where(columns.c.table_id == table_id, columns.c.partition_id.in_(ids))
    ):
        if row.partition_id in found:
            found[row.partition_id].records[row.column_name] = row
    return found


def merged_record(type_: str, stored: Any, added: ColumnRecord) -> ColumnRecord:
    """A column's record of the partition: its stored record and its added files' merged."""
    if stored is None:
        return added
    old, new = piece_of_partition(stored), piece_of_partition(added)
    merged = merge_pieces(type_, [old, new])
    # heavy hitters in the form a partition keeps them; a side whose heavy hitters were not
    # kept (none above their error) leaves none
    tops = [old.top_k, new.top_k]
    top_k = (
        merge_frequent_items([t for t in tops if t is not None], merged.top_k_items).serialize()
        if all(t is not None for t in tops)
        else None
    )
    serialised = [_bytes(stored.iceberg_theta), added.iceberg_theta]
    figures = {f: getattr(merged, f) for f in FIGURES}
    return ColumnRecord(
        **stored_figures({**figures, "top_k": top_k}),
        name=added.name,
        iceberg_theta=_merged(serialised, lambda b: merge_theta(b).serialize(True)),
    )


def merged_sample(
    stored: StoredPartition,
    added: tuple[int, bytes, pa.Table] | None,
    added_rows: int,
    rate: float,
    seed: int,
) -> tuple[int, bytes, pa.Table] | None:
    """The partition's row sample: the stored one (drawn at its own rate) and the added
    files' (drawn at `rate`), each thinned to the lower rate, pooled."""
    old = sample_table(stored.sample) if stored.sample else None
    old_rate = (stored.sample_size or 0) / stored.rows if stored.rows else 1.0
    new_rate = min(rate, 1.0) if added_rows else 1.0
    target = min(old_rate, new_rate)
    generator = np.random.default_rng(seed)
    parts = [
        _thinned(table, target / have, generator)
        for table, have in ((old, old_rate), (None if added is None else added[2], new_rate))
        if table is not None and table.num_rows and have > 0
    ]
    if not parts:
        return None
    pooled = pa.concat_tables(parts, promote_options="default") if len(parts) > 1 else parts[0]
    return (pooled.num_rows, encode_table(pooled), pooled) if pooled.num_rows else None


def _thinned(table: pa.Table, keep: float, generator: np.random.Generator) -> pa.Table:
    if keep >= 1.0:
        return table
    return table.filter(pa.array(generator.random(table.num_rows) < keep))


def _merged(blobs: Sequence[bytes | None], merge: Any) -> bytes | None:
    present = [b for b in blobs if b is not None]
    if not present:
        return None
    return present[0] if len(present) == 1 else merge(present)


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
