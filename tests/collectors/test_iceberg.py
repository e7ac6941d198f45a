"""Iceberg tables written by pyiceberg (issue 50, docs/iceberg.md), on SQLite and PostgreSQL:
registered from pyiceberg's SQL catalog and from statlas's own Hive Metastore API with their
partitions typed by the transforms (identity, day, bucket); collected by the one-pass scan
over the current snapshot's data files, again only where files changed after appends,
deletes and overwrites; and published as a Puffin statistics file that pyiceberg reads back,
whose Theta blobs hash each value as Iceberg serialises it (checked here with MurmurHash3
directly, not DataSketches) and whose `ndv` is within the sketch's error of the exact count;
a commit by another writer during publication leaves both commits."""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mmh3
import pyarrow as pa
import pytest
from datasketches import compact_theta_sketch
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table.puffin import PuffinFile
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import (
    DateType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
)
from sqlalchemy import func, select

from collectors.collect import collect
from collectors.iceberg.publish import publish
from collectors.iceberg.register import register_iceberg_table
from collectors.iceberg.source import IcebergSource, IcebergUnavailable
from metastore import Metastore, PartitionQuery
from metastore.catalog.tables import describe_table
from metastore.models import ColumnStats, PartitionStats
from statlas.cli import main

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "region", StringType(), required=False),
    NestedField(3, "d", DateType(), required=False),
    NestedField(4, "n", IntegerType(), required=False),
    NestedField(5, "x", DoubleType(), required=False),
    NestedField(6, "s", StringType(), required=False),
)
SPEC = PartitionSpec(
    PartitionField(2, 1000, IdentityTransform(), "region"),
    PartitionField(3, 1001, DayTransform(), "d_day"),
    PartitionField(1, 1002, BucketTransform(4), "id_bucket"),
)
BUCKETS = 4
ARROW = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("region", pa.string()),
        pa.field("d", pa.date32()),
        pa.field("n", pa.int32()),
        pa.field("x", pa.float64()),
        pa.field("s", pa.string()),
    ]
)
THETA_12 = 1 / 64  # Theta's relative standard error at lgK 12
# each value as Iceberg serialises it (spec, Appendix D: single-value serialisation)
SERIALISED: dict[str, Callable[[Any], bytes]] = {
    "id": lambda v: struct.pack("<q", v),
    "region": lambda v: v.encode(),
    "d": lambda v: struct.pack("<i", (v - dt.date(1970, 1, 1)).days),
    "n": lambda v: struct.pack("<i", v),
    "x": lambda v: struct.pack("<d", v),
    "s": lambda v: v.encode(),
}


def rows(start: int, count: int, days: range) -> pa.Table:
    ids = list(range(start, start + count))
    return pa.table(
        {
            "id": ids,
            "region": [("emea", "apac", "amer", None)[i % 4] for i in ids],
            "d": [dt.date(2024, 1, 1) + dt.timedelta(days=days[i // 4 % len(days)]) for i in ids],
            "n": [i % 97 for i in ids],
            "x": [i / 7 for i in ids],
            "s": [f"v{i % 1500}" for i in ids],
        },
        schema=ARROW,
    )


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[SqlCatalog]:
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    uri = f"sqlite:///{tmp_path / 'iceberg.db'}"
    iceberg = SqlCatalog("default", uri=uri, warehouse=f"file://{warehouse}")
    iceberg.create_namespace("ns")
    yield iceberg
    iceberg.engine.dispose()


def source_of(catalog: SqlCatalog) -> IcebergSource:
    return IcebergSource("ns.events", str(catalog.engine.url))


def blobs(table: Any, snapshot_id: int) -> dict[str, tuple[dict[str, str], Any]]:
    """Each column's published (properties, sketch) for snapshot `snapshot_id`."""
    [stats] = [s for s in table.metadata.statistics if s.snapshot_id == snapshot_id]
    puffin = PuffinFile(table.io.new_input(stats.statistics_path).open().read())
    assert stats.file_size_in_bytes == len(table.io.new_input(stats.statistics_path).open().read())
    found = {}
    for blob in puffin.footer.blobs:
        assert blob.type == "apache-datasketches-theta-v1"
        assert blob.snapshot_id == snapshot_id
        name = table.schema().find_field(blob.fields[0]).name
        found[name] = (
            blob.properties,
            compact_theta_sketch.deserialize(puffin.get_blob_payload(blob)),
        )
    return found


def check_blobs(table: Any, data: pa.Table) -> dict[str, int]:
    """Every column's blob against the data: its hashes are MurmurHash3 (seed 9001) of the
    serialised values below the sketch's theta, its ndv within 3 standard errors of exact."""
    published = blobs(table, table.current_snapshot().snapshot_id)
    assert set(published) == set(SERIALISED)
    ndv = {}
    for name, (properties, sketch) in published.items():
        values = {v for v in data[name].to_pylist() if v is not None}
        hashes = {mmh3.hash64(SERIALISED[name](v), seed=9001, signed=False)[0] >> 1 for v in values}
        assert set(sketch) == {h for h in hashes if h < sketch.theta64}, name
        estimate = int(properties["ndv"])
        assert abs(estimate - len(values)) <= 3 * THETA_12 * len(values) + 1, name
        ndv[name] = estimate
    return ndv


def test_a_pyiceberg_table_is_registered_collected_and_published(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    first = rows(0, 6_000, range(5))
    table.append(first)
    source = source_of(catalog)

    report, _ = register_iceberg_table(metastore.ready(), "events", source)
    keys = [(k.name, str(k.type)) for k in report.partition_keys]
    assert keys == [("region", "string"), ("d_day", "date"), ("id_bucket", "int")]
    info = describe_table(metastore.engine, "events")
    assert info.format == "iceberg"
    assert [c.name for c in info.columns] == ["id", "d", "n", "x", "s"]  # region: the key
    # four regions (one NULL) x five days x four buckets
    assert report.partitions == 4 * 5 * BUCKETS
    picked = metastore.lookup(
        "events", PartitionQuery.of(where="d_day = '2024-01-02' AND region IN ('emea', 'apac')")
    )
    assert len(picked.names()) == 2 * BUCKETS
    assert all("d_day=2024-01-02" in name for name in picked.names())

    collected = collect(metastore.engine, "events", spark=spark)
    assert collected.partitions_scanned == report.partitions
    assert collected.rows == first.num_rows
    with metastore.engine.connect() as conn:
        total = conn.execute(select(func.sum(PartitionStats.row_count))).scalar_one()
        serialised = conn.execute(
            select(func.count()).where(ColumnStats.iceberg_theta.is_not(None))
        ).scalar_one()
    assert total == first.num_rows
    assert serialised == report.partitions * 3  # d, n, x: hashed otherwise by statlas

    table = catalog.load_table("ns.events")
    published = collected.published
    assert published is not None
    assert published["snapshot_id"] == table.current_snapshot().snapshot_id
    ndv = check_blobs(table, first)
    assert ndv["region"] == 3
    assert ndv["d"] == 5
    assert ndv["n"] == 97


def test_only_changed_partitions_are_scanned_after_appends_deletes_and_overwrites(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    table.append(rows(0, 2_000, range(3)))
    source = source_of(catalog)
    register_iceberg_table(metastore.ready(), "events", source)
    collect(metastore.engine, "events", spark=spark)
    before = catalog.load_table("ns.events").current_snapshot().snapshot_id

    # an append of a new day: its partitions alone are scanned
    catalog.load_table("ns.events").append(rows(2_000, 400, range(7, 8)))
    appended = collect(metastore.engine, "events", spark=spark)
    assert appended.partitions_added == appended.partitions_scanned == 4 * BUCKETS
    assert appended.partitions_skipped == 4 * 3 * BUCKETS
    table = catalog.load_table("ns.events")
    assert {s.snapshot_id for s in table.metadata.statistics} == {
        before,
        table.current_snapshot().snapshot_id,
    }  # the older snapshot keeps its own (Iceberg's expiry removes them with it)
    check_blobs(table, table.scan().to_arrow())

    # a delete of whole partitions (copy-on-write: their files leave the snapshot)
    table.delete("region == 'emea'")
    deleted = collect(metastore.engine, "events", spark=spark)
    assert deleted.partitions_removed == 4 * BUCKETS
    assert deleted.partitions_scanned == 0
    table = catalog.load_table("ns.events")
    remaining = table.scan().to_arrow()
    assert check_blobs(table, remaining)["region"] == 2
    with metastore.engine.connect() as conn:
        total = conn.execute(select(func.sum(PartitionStats.row_count))).scalar_one()
    assert total == remaining.num_rows

    # an overwrite of everything: every partition is new
    table.overwrite(rows(10_000, 900, range(2)))
    overwritten = collect(metastore.engine, "events", spark=spark)
    table = catalog.load_table("ns.events")
    assert overwritten.rows == 900
    assert overwritten.partitions_scanned == 4 * 2 * BUCKETS
    check_blobs(table, table.scan().to_arrow())

    # nothing changed: nothing scanned, nothing published again
    again = collect(metastore.engine, "events", spark=spark)
    assert again.partitions_scanned == 0
    assert again.published is None


def test_a_commit_during_publication_leaves_both_commits(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    table.append(rows(0, 1_000, range(2)))
    source = source_of(catalog)
    register_iceberg_table(metastore.ready(), "events", source)
    collect(metastore.engine, "events", spark=spark)
    collected = catalog.load_table("ns.events").current_snapshot().snapshot_id
    info = describe_table(metastore.engine, "events")

    def another_writer() -> None:  # commits between publication's read and its commit
        catalog.load_table("ns.events").append(rows(5_000, 10, range(9, 10)))

    publication = publish(metastore.engine, info, source, collected, before_commit=another_writer)
    table = catalog.load_table("ns.events")
    assert table.current_snapshot().snapshot_id != collected  # the append is there
    assert table.scan().to_arrow().num_rows == 1_010
    assert [s.snapshot_id for s in table.metadata.statistics] == [collected]
    assert publication.replaced is not None  # the collection's own file, for that snapshot
    assert not Path(publication.replaced.removeprefix("file://")).exists()
    assert Path(publication.path.removeprefix("file://")).exists()


def test_an_iceberg_table_of_statlas_hive_metastore_api(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    """Created and appended to by pyiceberg's Hive catalog through statlas's Thrift API,
    registered with no catalog URI (read in statlas's database), published by a
    check-and-swap of its metadata_location there, which a concurrent append beats once."""
    from pyiceberg.catalog.hive import HiveCatalog

    from servers.hive_metastore.server import ThriftService

    warehouse = tmp_path / "warehouse"
    service = ThriftService(metastore.ready(), "127.0.0.1", 0, str(warehouse), 5.0)
    service.start()
    try:
        hive = HiveCatalog(
            "statlas", uri=f"thrift://127.0.0.1:{service.port}", warehouse=f"file://{warehouse}"
        )
        hive.create_table("default.events", SCHEMA, partition_spec=SPEC)
        hive.load_table("default.events").append(rows(0, 1_200, range(3)))
        source = IcebergSource("default.events")
        report, _ = register_iceberg_table(metastore.ready(), "events_stats", source)
        assert report.partitions == 4 * 3 * BUCKETS
        collected = collect(metastore.engine, "events_stats", spark=spark)
        assert collected.published is not None
        table = hive.load_table("default.events")
        check_blobs(table, table.scan().to_arrow())

        snapshot = table.current_snapshot().snapshot_id
        info = describe_table(metastore.engine, "events_stats")
        publication = publish(
            metastore.engine,
            info,
            source,
            snapshot,
            before_commit=lambda: hive.load_table("default.events").append(
                rows(9_000, 5, range(1))
            ),
        )
        assert publication.attempts == 2  # its first swap found the append's metadata
        table = hive.load_table("default.events")
        assert table.scan().to_arrow().num_rows == 1_205
        assert [s.snapshot_id for s in table.metadata.statistics] == [snapshot]
    finally:
        service.stop()


def test_a_renamed_column_is_refused_in_one_line(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    table.append(rows(0, 100, range(1)))
    with table.update_schema() as update:
        update.rename_column("s", "label")
    register_iceberg_table(metastore.ready(), "events", source_of(catalog))
    with pytest.raises(IcebergUnavailable, match=r"renamed column.*label") as raised:
        collect(metastore.engine, "events", spark=spark)
    assert "\n" not in str(raised.value)
    with metastore.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(PartitionStats)).scalar_one() == 0


def test_the_cli_registers_and_collects_an_iceberg_table(
    db_url: str, catalog: SqlCatalog, spark: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    table.append(rows(0, 300, range(2)))
    uri = str(catalog.engine.url)
    assert main(["--db", db_url, "db", "upgrade"]) == 0
    argv = ["--db", db_url, "table", "register", "events", "--iceberg-table", "ns.events"]
    assert main([*argv, "--iceberg-catalog", uri]) == 0
    assert "registered events: 32 partitions" in capsys.readouterr().out
    assert main(["--db", db_url, "collect", "events"]) == 0
    out = capsys.readouterr().out
    assert "scanned 32 partitions" in out
    assert "published the NDV of 6 columns" in out
    assert main([*argv, "--iceberg-catalog", uri, "--format", "orc"]) != 0
    assert "comes from the Iceberg table" in capsys.readouterr().err
    assert (
        main(
            [
                "--db",
                db_url,
                "table",
                "register",
                "x",
                "--iceberg-table",
                "ns.nothing",
                "--iceberg-catalog",
                uri,
            ]
        )
        != 0
    )
    err = capsys.readouterr().err
    assert "ns.nothing" in err
    assert "does not exist" in err
    assert err.count("\n") == 1
