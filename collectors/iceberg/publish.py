"""A collection's distinct counts published to its Iceberg table (docs/iceberg.md): a Puffin
statistics file with one `apache-datasketches-theta-v1` blob per column whose sketch hashes
values as Iceberg's single-value serialization does, and its estimate as the blob's `ndv`
property, committed as the statistics of the snapshot collected, together with the
snapshot's partition statistics file (collectors.iceberg.partition_statistics). Trino and
Spark read the `ndv` properties; the blob is what an Iceberg writer's own Theta sketch of
the column is.

Which sketch each column publishes: collectors.iceberg.sketches (statlas's own Theta sketch
where it hashes as Iceberg does, else the scan's second sketch of the serialised values). An
identity partition's key column is sketched from the partition values.

A commit another writer beats is retried on the reloaded table; the file of a commit that
did not happen, and the files new ones replace for the same snapshot, are deleted. The
statistics of older snapshots stay: Iceberg's snapshot expiry removes them with their
snapshots (the entries an expiry left behind, of snapshots that no longer exist, are
removed with their files by the next publication).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from collectors.iceberg.listing import snapshot_listing
from collectors.iceberg.partition_statistics import partition_statistics
from collectors.iceberg.puffin import THETA_BLOB, Blob, puffin_file
from collectors.iceberg.sketches import SERIALIZED_ALIKE
from collectors.iceberg.source import IcebergSource, IcebergUnavailable, load_table
from metastore.catalog.tables import TableInfo
from metastore.engine import run_read, run_write
from metastore.models import ColumnStats
from metastore.statistics.from_top_k import read_theta
from metastore.statistics.histograms import THETA_LG_K, inflated, merge_theta

COMMIT_ATTEMPTS = 10
CREATED_BY = "statlas"


@dataclass
class Publication:
    snapshot_id: int
    path: str
    columns: dict[str, int] = field(default_factory=dict)  # column: its ndv
    attempts: int = 1
    replaced: list[str] = field(default_factory=list)  # files replaced for the same snapshot
    partition_statistics: str | None = None  # the partition statistics file's path

    def as_json(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "statistics_path": self.path,
            "ndv": dict(self.columns),
            "partition_statistics_path": self.partition_statistics,
            "attempts": self.attempts,
        }


def column_sketches(engine: Engine, info: TableInfo) -> dict[str, bytes]:
    """Each qualifying column's Theta sketch of the whole table, merged from its
    partitions', compact and serialized: data columns from their statistics, identity keys
    from the partition values."""
    from datasketches import update_theta_sketch

    types = {c.name: c.type for c in info.columns}

    def read(conn: Any) -> tuple[dict[str, list[bytes]], dict[str, set[Any]]]:
        blobs: dict[str, list[bytes]] = {}
        stats = ColumnStats.__table__.c
        for name, theta, serialized, top_k, items in conn.execute(
            select(
                stats.column_name, stats.theta, stats.iceberg_theta, stats.top_k, stats.top_k_items
            ).where(
                stats.table_id == info.id,
                stats.column_name.in_(list(types)),
            )
        ):
            if serialized is not None:
                blobs.setdefault(name, []).append(bytes(serialized))
            elif theta is not None and types[name] in SERIALIZED_ALIKE:
                # a sketch its heavy hitters stand for, built again (from_top_k)
                heavy = None if top_k is None else inflated(bytes(top_k))
                read = read_theta(bytes(theta), heavy, items)
                if read is not None:
                    blobs.setdefault(name, []).append(read)
        keys = [k for k in info.partition_keys if str(k.type) in ("bigint", "string")]
        values: dict[str, set[Any]] = {k.name: set() for k in keys}
        if keys:
            store = info.store()
            columns = [store.column_of(k.name)[0] for k in keys]
            for row in conn.execute(select(*columns).distinct()):
                for key, value in zip(keys, row, strict=True):
                    if value is not None:
                        values[key.name].add(value)
        return blobs, values

    blobs, key_values = run_read(engine, read)
    sketches = {name: merge_theta(parts).serialize() for name, parts in blobs.items()}
    for name, values in key_values.items():
        sketch = update_theta_sketch(THETA_LG_K)
        for value in values:
            sketch.update(value)
        sketches[name] = sketch.compact().serialize()
    return sketches


def publish(
    engine: Engine,
    info: TableInfo,
    source: IcebergSource,
    snapshot_id: int,
    *,
    table: Any = None,
    before_commit: Callable[[], None] | None = None,
) -> Publication:
    """Write and commit the statistics file of `snapshot_id` from `info`'s collected
    statistics; `table`: the pyiceberg table as just read, if at hand (else it is read).
    `before_commit` runs once before the first commit attempt (tests use it to let another
    writer commit first)."""
    from datasketches import compact_theta_sketch
    from pyiceberg.table.statistics import BlobMetadata, StatisticsFile
    from pyiceberg.table.update import SetPartitionStatisticsUpdate, SetStatisticsUpdate

    table = load_table(engine, source) if table is None else table
    snapshot = table.snapshot_by_id(snapshot_id)
    if snapshot is None:
        raise IcebergUnavailable(
            f"snapshot {snapshot_id} of {source.describe()} no longer exists: not published"
        )
    schema = table.schema()
    sketches = column_sketches(engine, info)
    blobs, ndv = [], {}
    for name, payload in sorted(sketches.items()):
        found = schema.find_field(name, case_sensitive=False)
        estimate = round(compact_theta_sketch.deserialize(payload).get_estimate())
        ndv[name] = estimate
        blobs.append(
            Blob(
                THETA_BLOB,
                (found.field_id,),
                snapshot_id,
                snapshot.sequence_number or 0,
                payload,
                {"ndv": str(estimate)},
            )
        )
    written = puffin_file(blobs, {"created-by": CREATED_BY})
    location = table.metadata.location.rstrip("/")
    path = f"{location}/metadata/{snapshot_id}-{uuid.uuid4()}.stats"
    with table.io.new_output(path).create(overwrite=False) as out:
        out.write(written.content)
    statistics = StatisticsFile.model_validate(
        {
            "snapshot-id": snapshot_id,
            "statistics-path": path,
            "file-size-in-bytes": len(written.content),
            "file-footer-size-in-bytes": written.footer_size,
            "blob-metadata": [
                BlobMetadata.model_validate(
                    {
                        "type": b.type,
                        "snapshot-id": b.snapshot_id,
                        "sequence-number": b.sequence_number,
                        "fields": list(b.fields),
                        "properties": b.properties,
                    }
                )
                for b in blobs
            ],
        }
    )
    updates: list[Any] = [SetStatisticsUpdate.model_validate({"statistics": statistics})]
    written_paths = [path]
    counts = partition_statistics(table, snapshot_listing(table, snapshot_id))
    partitions_path = None
    if counts is not None:
        partitions_path = (
            f"{location}/metadata/partition-stats-{snapshot_id}-{uuid.uuid4()}.parquet"
        )
        with table.io.new_output(partitions_path).create(overwrite=False) as out:
            out.write(counts)
        written_paths.append(partitions_path)
        updates.append(
            SetPartitionStatisticsUpdate.model_validate(
                {
                    "partition-statistics": {
                        "snapshot-id": snapshot_id,
                        "statistics-path": partitions_path,
                        "file-size-in-bytes": len(counts),
                    }
                }
            )
        )
    publication = Publication(snapshot_id, path, ndv, partition_statistics=partitions_path)
    try:
        replaced = _commit(
            engine, source, table, snapshot_id, tuple(updates), publication, before_commit
        )
    except BaseException:
        for written_path in written_paths:  # committed nowhere
            table.io.delete(written_path)
        raise
    for old in replaced:
        if old not in written_paths:
            table.io.delete(old)
    publication.replaced = [old for old in replaced if old not in written_paths]
    return publication


def _commit(
    engine: Engine,
    source: IcebergSource,
    read: Any,
    snapshot_id: int,
    updates: tuple[Any, ...],
    publication: Publication,
    before_commit: Callable[[], None] | None,
) -> list[str]:
    """Commit `updates` to the table `read` (read again for each retry), retrying on a
    commit another writer made first; the paths of the
    statistics files they replaced for the same snapshot, and of those of snapshots that no
    longer exist, whose entries the commit removes (Java's snapshot expiry removes both
    kinds; pyiceberg's leaves the partition statistics of the snapshots it expires)."""
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table.update import RemovePartitionStatisticsUpdate, RemoveStatisticsUpdate

    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        publication.attempts = attempt
        table = read if attempt == 1 else load_table(engine, source)
        metadata = table.metadata
        replaced = [
            s.statistics_path
            for s in [*metadata.statistics, *metadata.partition_statistics]
            if s.snapshot_id == snapshot_id
        ]
        expired = [
            (kind, entry)
            for kind, entries in (
                (RemoveStatisticsUpdate, metadata.statistics),
                (RemovePartitionStatisticsUpdate, metadata.partition_statistics),
            )
            for entry in entries
            if table.snapshot_by_id(entry.snapshot_id) is None
        ]
        removals = tuple(
            kind.model_validate({"snapshot-id": entry.snapshot_id}) for kind, entry in expired
        )
        if before_commit is not None and attempt == 1:
            before_commit()
        try:
            if source.catalog is None:
                _commit_to_own_metastore(engine, source, table, removals + updates)
            else:
                table.catalog.commit_table(table, (), removals + updates)
            return replaced + [entry.statistics_path for _, entry in expired]
        except CommitFailedException:
            time.sleep(min(0.05 * attempt, 0.5))
    raise IcebergUnavailable(
        f"{source.describe()}: {COMMIT_ATTEMPTS} commits of its statistics were each beaten by "
        "another writer; not published"
    )


def _commit_to_own_metastore(
    engine: Engine, source: IcebergSource, table: Any, updates: tuple[Any, ...]
) -> None:
    """The commit a Hive catalog makes, made in statlas's own database: the new metadata
    file written, then the table's `metadata_location` swapped only if it is still the one
    read (metastore.hive.tables.alter_table's check-and-swap)."""
    import dataclasses

    from pyiceberg.catalog import MetastoreCatalog
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table.update import update_table_metadata

    from metastore.errors import StaleParameter
    from metastore.hive.catalog import get_stored_table
    from metastore.hive.tables import alter_table

    metadata = update_table_metadata(table.metadata, updates)
    version = MetastoreCatalog._parse_metadata_version(table.metadata_location) + 1
    location = table.metadata.location.rstrip("/")
    new_location = f"{location}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"
    MetastoreCatalog._write_metadata(metadata, table.io, new_location)
    database, _, name = source.identifier.rpartition(".")

    def swap(conn: Any) -> None:
        stored = get_stored_table(conn, database, name)
        parameters: Mapping[str, str] = stored.definition.parameters or {}
        changed = {
            **parameters,
            "metadata_location": new_location,
            "previous_metadata_location": table.metadata_location,
        }
        definition = dataclasses.replace(stored.definition, parameters=changed)
        alter_table(
            conn,
            database,
            name,
            definition,
            False,
            expected=("metadata_location", table.metadata_location),
        )

    try:
        run_write(engine, swap)
    except StaleParameter:
        table.io.delete(new_location)
        raise CommitFailedException(f"{source.identifier} changed while committing") from None


def published_snapshot(table: Any, snapshot_id: int) -> bool:
    """Whether the pyiceberg `table`'s snapshot `snapshot_id` has a statistics file."""
    return any(statistics.snapshot_id == snapshot_id for statistics in table.metadata.statistics)
