"""An Iceberg partition statistics file (Iceberg spec, "Partition Statistics"): one Parquet
row per partition of a snapshot, sorted by partition (nulls first), with the spec's field
ids: 1 partition (the partition tuple as Iceberg stores it), 2 spec_id, 3 data_record_count,
4 data_file_count, 5 total_data_file_size_in_bytes, 6-9 the delete files' counts (none: a
table with deletes is not collected), 10 total_record_count, 11 last_updated_at (ms) and 12
last_updated_snapshot_id (the snapshot that last added a file to the partition)."""

from __future__ import annotations

import io
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from collectors.iceberg.listing import SnapshotListing

_ID = b"PARQUET:field_id"


def partition_statistics(table: Any, listing: SnapshotListing) -> bytes | None:
    """The file's bytes for `listing`'s snapshot of `table`; None for an unpartitioned
    table (it has no partition tuples)."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    spec = table.specs()[listing.spec_id]
    if not spec.fields or not listing.records:
        return None
    partition_type = schema_to_pyarrow(spec.partition_type(table.schema()))
    names = sorted(listing.records, key=lambda n: _order(listing.records[n]))
    timestamps = {s.snapshot_id: s.timestamp_ms for s in table.metadata.snapshots}
    columns: dict[str, list[Any]] = {k: [] for k in _FIELDS}
    for name in names:
        files = listing.files[name]
        latest = max((f.snapshot_id for f in files if f.snapshot_id is not None), default=None)
        rows = sum(f.rows for f in files)
        columns["spec_id"].append(listing.spec_id)
        columns["data_record_count"].append(rows)
        columns["data_file_count"].append(len(files))
        columns["total_data_file_size_in_bytes"].append(sum(f.size for f in files))
        for deletes in _DELETES:
            columns[deletes].append(0)
        columns["total_record_count"].append(rows)
        columns["last_updated_at"].append(timestamps.get(latest) if latest is not None else None)
        columns["last_updated_snapshot_id"].append(latest)
    arrays = [_partitions([listing.records[n] for n in names], partition_type)]
    fields = [pa.field("partition", partition_type, nullable=False, metadata={_ID: b"1"})]
    for number, (name, (kind, nullable)) in enumerate(_FIELDS.items(), start=2):
        arrays.append(pa.array(columns[name], kind))
        fields.append(pa.field(name, kind, nullable=nullable, metadata={_ID: str(number).encode()}))
    out = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), out)
    return out.getvalue()


_FIELDS: dict[str, tuple[pa.DataType, bool]] = {  # (type, nullable), ids 2 to 12
    "spec_id": (pa.int32(), False),
    "data_record_count": (pa.int64(), False),
    "data_file_count": (pa.int32(), False),
    "total_data_file_size_in_bytes": (pa.int64(), False),
    "position_delete_record_count": (pa.int64(), True),
    "position_delete_file_count": (pa.int32(), True),
    "equality_delete_record_count": (pa.int64(), True),
    "equality_delete_file_count": (pa.int32(), True),
    "total_record_count": (pa.int64(), True),
    "last_updated_at": (pa.int64(), True),
    "last_updated_snapshot_id": (pa.int64(), True),
}
_DELETES = (
    "position_delete_record_count",
    "position_delete_file_count",
    "equality_delete_record_count",
    "equality_delete_file_count",
)


def _order(record: tuple[Any, ...]) -> tuple[tuple[bool, Any], ...]:
    """Ascending, nulls first, field by field."""
    return tuple((value is not None, value) for value in record)


def _partitions(records: list[tuple[Any, ...]], struct: pa.StructType) -> pa.Array:
    """The partition tuples as Iceberg stores them (a day as days since 1970, a timestamp
    as microseconds) in the struct's Arrow types."""
    children = []
    for i in range(struct.num_fields):
        target = struct.field(i).type
        values = [r[i] for r in records]
        if pa.types.is_date(target):
            children.append(pa.array(values, pa.int32()).cast(target))
        elif pa.types.is_timestamp(target):
            children.append(pa.array(values, pa.int64()).cast(target))
        else:
            children.append(pa.array(values, target))
    return pa.StructArray.from_arrays(children, fields=list(struct))
