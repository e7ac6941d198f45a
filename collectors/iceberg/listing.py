"""An Iceberg table's snapshot as statlas partitions: one per partition tuple of its live
data files, read from the snapshot's manifests (Iceberg spec, "Manifests"), whatever the
transform (identity, year, month, day, hour, bucket, truncate).

A partition's keys are the partition spec's fields, typed by the transform's result: day
gives a date, year, month, hour and bucket an int (years, months, hours since 1970, the
bucket), identity and truncate the source column's type. Its name is Iceberg's own path
form (`d_day=2024-01-01/id_bucket=3`); its fingerprint is its live files' count, bytes and a
hash of their paths, so a partition whose files change is collected again. A column that is
an identity partition's source under the same name is the key, not a data column, as a
directory table's keys are not in its files.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from collectors.iceberg.source import IcebergUnavailable
from metastore.catalog.discovery import (
    Column,
    DiscoveredDataset,
    DiscoveredPartition,
    arrow_type_name,
)
from metastore.catalog.transform_keys import TransformKey
from metastore.errors import RegistrationError

FORMAT = "iceberg"
_LOCAL = re.compile(r"^file:/+")


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    rows: int
    snapshot_id: int | None = None  # the snapshot that added it


@dataclass
class SnapshotListing:
    """A snapshot's partitions (as a directory listing gives them) and each one's files."""

    dataset: DiscoveredDataset
    snapshot_id: int | None
    files: dict[str, list[DataFile]] = field(default_factory=dict)  # by partition name
    # each partition's values as Iceberg stores them (days as ints, ...), by partition name
    records: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    spec_id: int = 0
    key_types: dict[str, str] = field(default_factory=dict)  # key: statlas key type
    transform_keys: list[TransformKey] = field(default_factory=list)  # each key's transform
    delete_files: int = 0  # position and equality delete files live in the snapshot
    renamed: list[str] = field(default_factory=list)  # columns renamed since first written

    def refused(self, identifier: str) -> str | None:
        """Why the snapshot's rows cannot be read from its data files alone, if they cannot."""
        if self.delete_files:
            return (
                f"Iceberg table {identifier} has {self.delete_files} delete file(s) in snapshot "
                f"{self.snapshot_id} (merge-on-read deletes): statlas does not apply Iceberg "
                "deletes; rewrite the table's deletes (rewrite_data_files) before collecting"
            )
        if self.renamed:
            return (
                f"Iceberg table {identifier} renamed column(s) {', '.join(self.renamed)}: "
                "statlas reads data files by column name, and older files spell them otherwise"
            )
        return None


def local_path(path: str) -> str:
    """A data file's path as compared between Iceberg's manifests and Spark's reads:
    `file:` URIs of local files as plain paths, other URIs as they are."""
    return _LOCAL.sub("/", path)


def snapshot_listing(table: Any, snapshot_id: int | None = None) -> SnapshotListing:
    """The partitions of `table`'s snapshot `snapshot_id` (default: the current one). A
    table's metadata file and a snapshot never change, so the listing of one read of them is
    kept (a few, most recent first): a collection lists the snapshot to register it, to read
    it and to publish it."""
    key = (table.metadata_location, snapshot_id)
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept
    listing = _listing(table, snapshot_id)
    with _KEPT_LOCK:
        _KEPT[key] = listing
        while len(_KEPT) > KEPT_LISTINGS:
            _KEPT.popitem(last=False)
    return listing


KEPT_LISTINGS = 8
_KEPT: OrderedDict[tuple[str, int | None], SnapshotListing] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def _listing(table: Any, snapshot_id: int | None) -> SnapshotListing:
    metadata = table.metadata
    snapshot = (
        table.current_snapshot() if snapshot_id is None else table.snapshot_by_id(snapshot_id)
    )
    if snapshot_id is not None and snapshot is None:
        raise IcebergUnavailable(f"snapshot {snapshot_id} of {table.name()} no longer exists")
    schema = table.schema()
    spec = table.spec()
    keys = [f.name for f in spec.fields]
    key_types = {f.name: _key_type(f, schema) for f in spec.fields}
    hidden = {
        schema.find_field(f.source_id).name
        for f in spec.fields
        if str(f.transform) == "identity" and schema.find_field(f.source_id).name == f.name
    }
    columns = _columns(schema, hidden)
    listing = SnapshotListing(
        DiscoveredDataset(
            location=local_path(metadata.location).rstrip("/"),
            format=FORMAT,
            keys=keys,
            partitions=[],
            sample_file="",
            columns=columns,
        ),
        None if snapshot is None else snapshot.snapshot_id,
        key_types=key_types,
        spec_id=spec.spec_id,
        transform_keys=[_transform_key(f, schema) for f in spec.fields],
        renamed=_renamed(metadata),
    )
    if snapshot is None:
        return listing
    grouped: dict[str, tuple[tuple[str | None, ...], list[DataFile]]] = {}
    for manifest in snapshot.manifests(table.io):
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True):
            data_file = entry.data_file
            if data_file.content.name != "DATA":
                listing.delete_files += 1
                continue
            if data_file.spec_id != spec.spec_id:
                raise RegistrationError(
                    f"Iceberg table {table.name()} has live files of an earlier partition spec "
                    f"({data_file.spec_id}, now {spec.spec_id}): statlas lists one spec; "
                    "rewrite the table's files (rewrite_data_files) to register it"
                )
            record = data_file.partition
            raw = tuple(_raw_value(f, schema, record[i]) for i, f in enumerate(spec.fields))
            name = spec.partition_to_path(record, schema) if spec.fields else ""
            grouped.setdefault(name, (raw, []))[1].append(
                DataFile(
                    data_file.file_path,
                    data_file.file_size_in_bytes,
                    data_file.record_count,
                    entry.snapshot_id,
                )
            )
            listing.records.setdefault(name, tuple(record[i] for i in range(len(spec.fields))))
    for name, (raw, files) in sorted(grouped.items()):
        files.sort(key=lambda f: f.path)
        listing.files[name] = files
        listing.dataset.partitions.append(
            DiscoveredPartition(
                name=name,
                raw_values=raw,
                location=f"{listing.dataset.location}#{name}" if name else listing.dataset.location,
                file_count=len(files),
                total_bytes=sum(f.size for f in files),
                modified_ns=_files_hash(files),
            )
        )
    if listing.dataset.partitions:
        listing.dataset.sample_file = listing.files[listing.dataset.partitions[0].name][0].path
    return listing


def _columns(schema: Any, hidden: set[str]) -> list[Column]:
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    arrow = schema_to_pyarrow(schema, include_field_ids=False)
    return [
        Column(f.name, arrow_type_name(f.type, timestamp_ntz=True), f.nullable)
        for f in arrow
        if f.name not in hidden
    ]


def _transform_key(partition_field: Any, schema: Any) -> TransformKey:
    """The key as a transform of its source column (optimizer.rewrite.transform_keys)."""
    from pyiceberg.io.pyarrow import schema_to_pyarrow

    source = schema.find_field(partition_field.source_id)
    arrow = schema_to_pyarrow(source.field_type, include_field_ids=False)
    return TransformKey(
        partition_field.name,
        str(partition_field.transform),
        source.name,
        arrow_type_name(arrow, timestamp_ntz=True),
    )


def _key_type(partition_field: Any, schema: Any) -> str:
    """The statlas key type of a partition field (by its transform's result type)."""
    from pyiceberg import types as t

    source = schema.find_field(partition_field.source_id)
    result = partition_field.transform.result_type(source.field_type)
    simple = {
        t.IntegerType: "int",
        t.LongType: "bigint",
        t.StringType: "string",
        t.DateType: "date",
        t.BooleanType: "boolean",
        t.TimestampType: "timestamp",
        t.TimestamptzType: "timestamp",
    }
    for kind, name in simple.items():
        if isinstance(result, kind):
            return name
    if isinstance(result, t.DecimalType):
        return f"decimal({result.precision},{result.scale})"
    raise RegistrationError(
        f"partition field {partition_field.name} ({partition_field.transform} of "
        f"{source.name}: {result}) cannot be a statlas partition key"
    )


def _raw_value(partition_field: Any, schema: Any, value: Any) -> str | None:
    """A partition value as the text statlas's key type parses: dates ISO, timestamps with a
    space, the integers of year/month/hour/bucket as numbers."""
    if value is None:
        return None
    from pyiceberg import types as t
    from pyiceberg.utils.datetime import days_to_date, micros_to_timestamp

    source = schema.find_field(partition_field.source_id)
    result = partition_field.transform.result_type(source.field_type)
    if isinstance(result, t.DateType):
        return days_to_date(int(value)).isoformat()
    if isinstance(result, t.TimestampType | t.TimestamptzType):
        return micros_to_timestamp(int(value)).isoformat(sep=" ")
    if isinstance(result, t.BooleanType):
        return "true" if value else "false"
    if isinstance(result, t.DecimalType):
        return str(value)
    return str(value)


def _files_hash(files: list[DataFile]) -> int:
    """A 62-bit hash of a partition's file paths: its fingerprint's third figure."""
    digest = hashlib.blake2b(digest_size=8)
    for f in files:
        digest.update(f.path.encode())
        digest.update(b"\0")
    return int.from_bytes(digest.digest(), "big") >> 2


def _renamed(metadata: Any) -> list[str]:
    """Columns whose name changed between the table's schemas (by field id)."""
    names: dict[int, set[str]] = {}
    for schema in metadata.schemas:
        for leaf in schema.columns:
            names.setdefault(leaf.field_id, set()).add(leaf.name)
    current = {c.field_id: c.name for c in metadata.schema().columns}
    return sorted(current[i] for i, spelled in names.items() if len(spelled) > 1 and i in current)
