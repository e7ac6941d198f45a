"""A merge-on-read delete committed to an Iceberg table, as Spark's and Trino's Iceberg writers
make one and pyiceberg 0.12 cannot: a position delete file (Parquet rows of `file_path`, `pos`
with the spec's reserved field ids) in a delete manifest, added by a new snapshot whose
manifest list keeps the table's manifests (Iceberg spec, "Position Delete Files")."""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    FileFormat,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestWriterV2,
    write_manifest_list,
)
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.snapshots import Operation, Snapshot, Summary
from pyiceberg.table.update import AddSnapshotUpdate, SetSnapshotRefUpdate

FILE_PATH_ID, POS_ID = 2147483546, 2147483545  # the spec's reserved field ids


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def delete_first_row(catalog: Any, identifier: str) -> int:
    """Commit a position delete of the first row of the table's first data file; the new
    snapshot's id."""
    table = catalog.load_table(identifier)
    current = table.current_snapshot()
    task = next(iter(table.scan().plan_files()))
    location = table.metadata.location.rstrip("/")
    path = f"{location}/data/deletes-{uuid.uuid4()}.parquet"
    rows = pa.table(
        [pa.array([task.file.file_path]), pa.array([0], pa.int64())],
        schema=pa.schema(
            [
                pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": str(FILE_PATH_ID)}),
                pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": str(POS_ID)}),
            ]
        ),
    )
    with table.io.new_output(path).create() as out:
        pq.write_table(rows, out)
    size = len(table.io.new_input(path).open().read())
    snapshot_id = table.metadata.new_snapshot_id()
    spec = table.specs()[task.file.spec_id]
    deletes = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=task.file.partition,
        record_count=1,
        file_size_in_bytes=size,
    )
    deletes.spec_id = spec.spec_id
    manifest_path = f"{location}/metadata/{uuid.uuid4()}-m-deletes.avro"
    with _DeleteManifestWriter(
        spec, table.schema(), table.io.new_output(manifest_path), snapshot_id, "zstandard"
    ) as writer:
        writer.add(
            ManifestEntry.from_args(
                status=ManifestEntryStatus.ADDED, snapshot_id=snapshot_id, data_file=deletes
            )
        )
    manifests = [*current.manifests(table.io), writer.to_manifest_file()]
    sequence = table.metadata.next_sequence_number()
    list_path = f"{location}/metadata/snap-{snapshot_id}-{uuid.uuid4()}.avro"
    with write_manifest_list(
        2, table.io.new_output(list_path), snapshot_id, current.snapshot_id, sequence, "zstandard"
    ) as listing:
        listing.add_manifests(manifests)
    snapshot = Snapshot(
        **{
            "snapshot-id": snapshot_id,
            "parent-snapshot-id": current.snapshot_id,
            "sequence-number": sequence,
            "manifest-list": list_path,
            "summary": Summary(Operation.DELETE),
            "schema-id": table.schema().schema_id,
        }
    )
    ref = SetSnapshotRefUpdate(
        **{"ref-name": "main", "type": SnapshotRefType.BRANCH, "snapshot-id": snapshot_id}
    )
    catalog.commit_table(table, (), (AddSnapshotUpdate(snapshot=snapshot), ref))
    return snapshot_id
