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
import pyarrow.parquet as pq
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


def check_partition_statistics(table: Any, data: pa.Table, partitions: int) -> None:
    """The snapshot's partition statistics file: a row per partition, sorted, with the
    spec's field ids, its counts adding up to the table's rows and files."""
    snapshot = table.current_snapshot().snapshot_id
    [entry] = [s for s in table.metadata.partition_statistics if s.snapshot_id == snapshot]
    content = table.io.new_input(entry.statistics_path).open().read()
    assert entry.file_size_in_bytes == len(content)
    read = pq.read_table(pa.BufferReader(content))
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in read.schema]
    assert ids == list(range(1, 13))
    assert read.num_rows == partitions
    assert sum(read["data_record_count"].to_pylist()) == data.num_rows
    files = table.inspect.files()
    assert sum(read["data_file_count"].to_pylist()) == files.num_rows
    assert sum(read["total_data_file_size_in_bytes"].to_pylist()) == sum(
        files["file_size_in_bytes"].to_pylist()
    )
    keys = [(p["region"] is not None, p["region"], p["d_day"], p["id_bucket"]) for p in
            read["partition"].to_pylist()]  # fmt: skip
    assert keys == sorted(keys)  # nulls first
    assert set(read["last_updated_snapshot_id"].to_pylist()) <= {
        s.snapshot_id for s in table.metadata.snapshots
    }


def collected_table(
    metastore: Metastore, spark: Any, catalog: SqlCatalog, count: int, days: range
) -> tuple[Any, IcebergSource]:
    """ns.events with `count` rows over `days`, registered as `events` and collected."""
    catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC).append(rows(0, count, days))
    source = source_of(catalog)
    register_iceberg_table(metastore.ready(), "events", source)
    collect(metastore.engine, "events", spark=spark)
    return catalog.load_table("ns.events"), source


def test_a_pyiceberg_table_is_registered_collected_and_published(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    first = rows(0, 6_000, range(5))
    table.append(first)
    source = source_of(catalog)

    report = register_iceberg_table(metastore.ready(), "events", source)
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
    check_partition_statistics(table, first, report.partitions)

    # `stats --where` on a transform key: the statistics of that day's partitions
    from metastore.statistics.summaries import table_statistics

    day = table_statistics(
        metastore.engine, "events", PartitionQuery.of(where="d_day = '2024-01-03'"), ["id", "n"]
    )
    on_day = [r for r in first.to_pylist() if r["d"] == dt.date(2024, 1, 3)]
    assert day.row_count == len(on_day)
    assert day.columns["id"].min == min(r["id"] for r in on_day)
    assert round(day.columns["n"].ndv or 0) == len({r["n"] for r in on_day})


def test_only_changed_partitions_are_scanned_after_appends_deletes_and_overwrites(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table, _ = collected_table(metastore, spark, catalog, 2_000, range(3))
    before = table.current_snapshot().snapshot_id

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

    # pyiceberg's snapshot expiry drops the expired snapshot's statistics file, not its
    # partition statistics file: the next publication removes that one, file and entry
    table.maintenance.expire_snapshots().by_id(before).commit()
    table = catalog.load_table("ns.events")
    assert before not in {s.snapshot_id for s in table.metadata.statistics}
    [left] = [s for s in table.metadata.partition_statistics if s.snapshot_id == before]

    # an append into existing days: those partitions read their new files alone, and their
    # statistics merged with the stored ones are what a full collection finds
    had = set(table.inspect.files()["file_path"].to_pylist())
    catalog.load_table("ns.events").append(rows(50_000, 480, range(3)))
    merged = collect(metastore.engine, "events", spark=spark)
    table = catalog.load_table("ns.events")
    files = table.inspect.files()
    added = [size for path, size in zip(files["file_path"].to_pylist(),
             files["file_size_in_bytes"].to_pylist(), strict=True) if path not in had]  # fmt: skip
    assert merged.rows == 480
    assert merged.bytes == sum(added)
    # a table this small is sampled whole: each appended partition's sample is its stored
    # rows (kept by its block: metastore.statistics.partition_samples) and its new ones
    with metastore.engine.connect() as conn:
        sampled, stored_rows = conn.execute(
            select(func.sum(PartitionStats.sample_size), func.sum(PartitionStats.row_count))
        ).one()
    assert sampled == stored_rows
    assert 0 < merged.partitions_scanned <= len(added)
    assert before not in {s.snapshot_id for s in table.metadata.partition_statistics}
    assert not Path(left.statistics_path.removeprefix("file://")).exists()
    incremental = figures(metastore)
    collect(metastore.engine, "events", spark=spark, full=True)
    assert incremental == figures(metastore)
    table = catalog.load_table("ns.events")  # the full collection published anew
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
    check_partition_statistics(table, table.scan().to_arrow(), 4 * 2 * BUCKETS)

    # nothing changed: nothing scanned, nothing published again
    again = collect(metastore.engine, "events", spark=spark)
    assert again.partitions_scanned == 0
    assert again.published is None


def figures(metastore: Metastore) -> dict[tuple[int, str], tuple[Any, ...]]:
    """Each partition's and column's exact figures and distinct count, as stored."""
    with metastore.engine.connect() as conn:
        stored = conn.execute(
            select(
                ColumnStats.partition_id,
                ColumnStats.column_name,
                PartitionStats.row_count,
                ColumnStats.null_count,
                ColumnStats.min_value,
                ColumnStats.max_value,
                ColumnStats.total_len,
                ColumnStats.theta,
                ColumnStats.iceberg_theta,
            ).join(
                PartitionStats,
                (PartitionStats.table_id == ColumnStats.table_id)
                & (PartitionStats.partition_id == ColumnStats.partition_id),
            )
        ).all()
    found = {}
    for pid, column, *exact, theta, serialised in stored:
        sketch = theta or serialised
        estimate = compact_theta_sketch.deserialize(sketch).get_estimate() if sketch else None
        found[(pid, column)] = (*exact, None if estimate is None else round(estimate))
    return found


def test_a_commit_during_publication_leaves_both_commits(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    table, source = collected_table(metastore, spark, catalog, 1_000, range(2))
    collected = table.current_snapshot().snapshot_id
    info = describe_table(metastore.engine, "events")

    def another_writer() -> None:  # commits between publication's read and its commit
        catalog.load_table("ns.events").append(rows(5_000, 10, range(9, 10)))

    publication = publish(metastore.engine, info, source, collected, before_commit=another_writer)
    table = catalog.load_table("ns.events")
    assert table.current_snapshot().snapshot_id != collected  # the append is there
    assert table.scan().to_arrow().num_rows == 1_010
    assert [s.snapshot_id for s in table.metadata.statistics] == [collected]
    assert len(publication.replaced) == 2  # the collection's own files, for that snapshot
    assert not any(Path(p.removeprefix("file://")).exists() for p in publication.replaced)
    assert Path(publication.path.removeprefix("file://")).exists()
    assert [s.snapshot_id for s in table.metadata.partition_statistics] == [collected]


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
        report = register_iceberg_table(metastore.ready(), "events_stats", source)
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


def test_a_snapshot_with_delete_files_is_refused_in_one_line(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    """A merge-on-read delete (a position delete file, as Spark's and Trino's writers make
    one): the data files' rows are not the table's, so nothing is collected or published."""
    from tests.support.iceberg_deletes import delete_first_row

    table, _ = collected_table(metastore, spark, catalog, 200, range(1))
    with metastore.engine.connect() as conn:
        before = conn.execute(select(func.sum(PartitionStats.row_count))).scalar_one()
    deleted = delete_first_row(catalog, "ns.events")
    assert catalog.load_table("ns.events").scan().to_arrow().num_rows == 199  # pyiceberg's read
    with pytest.raises(IcebergUnavailable, match=r"1 delete file\(s\) in snapshot") as raised:
        collect(metastore.engine, "events", spark=spark)
    assert str(deleted) in str(raised.value)
    assert "\n" not in str(raised.value)
    with metastore.engine.connect() as conn:  # the statistics of the snapshot before stay
        assert conn.execute(select(func.sum(PartitionStats.row_count))).scalar_one() == before
    table = catalog.load_table("ns.events")
    assert deleted not in {s.snapshot_id for s in table.metadata.statistics}


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


def scan_of(node: Any) -> Any:
    from optimizer.plan import Scan

    while not isinstance(node, Scan):
        node = node.children[0]
    return node


@pytest.mark.parametrize(
    ("where", "projection", "partitions"),
    [
        # day(d) of a date: a range of days (a strict bound stays strict)
        ("d BETWEEN DATE '2024-01-02' AND '2024-01-03'",
         "e.d_day BETWEEN '2024-01-02' AND '2024-01-03'", 4 * 2 * BUCKETS),
        ("d > DATE '2024-01-04'", "e.d_day > '2024-01-04'", 4 * BUCKETS),
        ("d IN (DATE '2024-01-01', DATE '2024-01-05')",
         "e.d_day IN ('2024-01-01', '2024-01-05')", 4 * 2 * BUCKETS),
        # bucket(id): an equality picks the value's bucket
        ("id = 17", "e.id_bucket = ", 4 * 5),
        # identity: the key itself, no projection needed
        ("region = 'emea'", None, 5 * BUCKETS),
        # what no transform projects: every partition
        ("id > 17", None, 4 * 5 * BUCKETS),
    ],
)  # fmt: skip
def test_filters_on_source_columns_choose_an_iceberg_tables_partitions(
    metastore: Metastore, catalog: SqlCatalog, where: str, projection: str | None, partitions: int
) -> None:
    from metastore.catalog.tables import get_table
    from optimizer.partition_predicates import static_selection
    from optimizer.sql_to_plan import build_plan

    table = catalog.create_table("ns.events", SCHEMA, partition_spec=SPEC)
    data = rows(0, 6_000, range(5))
    table.append(data)
    register_iceberg_table(metastore.ready(), "events", source_of(catalog))
    with metastore.engine.connect() as conn:
        info = get_table(conn, "events")
    scan = scan_of(build_plan(f"SELECT COUNT(*) FROM events e WHERE {where}", lambda _: info))
    written = [c.sql() for c in scan.partition_filter]
    if projection is None:
        assert all("region" in c for c in written)
    else:
        assert any(c.startswith(projection) for c in written), written
    selection, _ = static_selection(scan, info)
    picked = metastore.lookup("events", selection).names()
    assert len(picked) == partitions
    if where == "id = 17":  # one bucket kept: the one pyiceberg wrote id 17 into
        kept = {n.rsplit("=", 1)[1] for n in picked}
        written_to = {
            str(task.file.partition[2]) for task in table.scan(row_filter="id == 17").plan_files()
        }
        assert kept == written_to


def test_year_month_and_truncate_keys_are_typed_and_projected(
    metastore: Metastore, catalog: SqlCatalog
) -> None:
    from pyiceberg.transforms import MonthTransform, TruncateTransform, YearTransform
    from pyiceberg.types import TimestampType

    from metastore.catalog.tables import get_table
    from optimizer.partition_predicates import static_selection
    from optimizer.sql_to_plan import build_plan

    schema = Schema(
        NestedField(1, "ts", TimestampType(), required=False),
        NestedField(2, "d", DateType(), required=False),
        NestedField(3, "s", StringType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(1, 1000, MonthTransform(), "ts_month"),
        PartitionField(2, 1001, YearTransform(), "d_year"),
        PartitionField(3, 1002, TruncateTransform(2), "s_prefix"),
    )
    table = catalog.create_table("ns.events", schema, partition_spec=spec)
    start = dt.datetime(2023, 11, 20)
    table.append(
        pa.table(
            {
                "ts": [start + dt.timedelta(days=7 * i) for i in range(20)],
                "d": [dt.date(2023 + i % 2, 6, 1) for i in range(20)],
                "s": [("abc", "abd", "xyz")[i % 3] for i in range(20)],
            },
            schema=pa.schema([("ts", pa.timestamp("us")), ("d", pa.date32()), ("s", pa.string())]),
        )
    )
    report = register_iceberg_table(metastore.ready(), "events", source_of(catalog))
    assert [(k.name, str(k.type)) for k in report.partition_keys] == [
        ("ts_month", "int"),
        ("d_year", "int"),
        ("s_prefix", "string"),
    ]
    january = (2024 - 1970) * 12  # months since 1970, as Iceberg numbers them
    names = metastore.lookup("events", PartitionQuery.of(where=f"ts_month = {january}")).names()
    assert names
    assert all(n.startswith("ts_month=2024-01/") for n in names)
    with metastore.engine.connect() as conn:
        info = get_table(conn, "events")
    sql = (
        "SELECT COUNT(*) FROM events e WHERE e.ts >= TIMESTAMP '2024-02-15 00:00:00' "
        "AND e.d = DATE '2024-06-01' AND e.s = 'abd'"
    )
    scan = scan_of(build_plan(sql, lambda _: info))
    assert sorted(c.sql() for c in scan.partition_filter) == [
        f"e.d_year = {2024 - 1970}",
        "e.s_prefix = 'ab'",
        f"e.ts_month >= {january + 1}",
    ]
    selection, _ = static_selection(scan, info)
    picked = metastore.lookup("events", selection).names()
    truth = {
        table.specs()[0].partition_to_path(task.file.partition, table.schema())
        for task in table.scan(
            row_filter="ts >= '2024-02-15T00:00:00' and d == '2024-06-01' and s == 'abd'"
        ).plan_files()
    }
    assert truth
    assert truth <= set(picked)  # every partition the filter's rows are in, at least
    assert set(picked) <= {
        n for n in report_names(metastore) if "d_year=2024" in n and "s_prefix=ab" in n
    }


def report_names(metastore: Metastore) -> list[str]:
    return metastore.lookup("events", PartitionQuery()).names()


def _unscaled(value: Any) -> bytes:
    """A decimal's unscaled value as Java's BigInteger.toByteArray: the fewest big-endian
    two's-complement bytes."""
    n = int(value.scaleb(-value.as_tuple().exponent))
    length = 1
    while not -(1 << (8 * length - 1)) <= n < 1 << (8 * length - 1):
        length += 1
    return n.to_bytes(length, "big", signed=True)


def test_every_type_publishes_the_sketch_of_its_serialised_values(
    metastore: Metastore, spark: Any, catalog: SqlCatalog
) -> None:
    """Booleans, ints, floats, decimals, timestamps with and without a zone and binaries too,
    across a column added after the first write (its older rows NULL)."""
    from decimal import Decimal

    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    arrow = pa.schema(
        [
            ("flag", pa.bool_()),
            ("small", pa.int32()),
            ("ratio", pa.float32()),
            ("price", pa.decimal128(10, 2)),
            ("at", pa.timestamp("us")),
            ("at_utc", pa.timestamp("us", tz="UTC")),
            ("blob", pa.binary()),
        ]
    )
    count = 500
    first = pa.table(
        {
            "flag": [i % 3 == 0 for i in range(count)],
            "small": [i - 250 for i in range(count)],
            "ratio": [i / 8 for i in range(count)],
            "price": [Decimal(i * 37 - 9000) / 100 for i in range(count)],
            "at": [dt.datetime(2024, 1, 1) + dt.timedelta(seconds=7 * i) for i in range(count)],
            "at_utc": [epoch + dt.timedelta(minutes=i) for i in range(count)],
            "blob": [bytes([i % 256, i // 256]) for i in range(count)],
        },
        schema=arrow,
    )
    table = catalog.create_table("ns.typed", arrow)
    table.append(first)
    with table.update_schema() as update:
        update.add_column("late", LongType())
    later = first.append_column("late", pa.array(range(count), pa.int64()))
    catalog.load_table("ns.typed").append(later)
    source = IcebergSource("ns.typed", str(catalog.engine.url))
    register_iceberg_table(metastore.ready(), "typed", source)
    collect(metastore.engine, "typed", spark=spark)

    table = catalog.load_table("ns.typed")
    data = table.scan().to_arrow()
    naive_epoch = dt.datetime(1970, 1, 1)
    serialised: dict[str, Callable[[Any], bytes]] = {
        "flag": lambda v: b"\x01" if v else b"\x00",
        "small": lambda v: struct.pack("<i", v),
        "ratio": lambda v: struct.pack("<f", v),
        "price": _unscaled,
        "at": lambda v: struct.pack("<q", (v - naive_epoch) // dt.timedelta(microseconds=1)),
        "at_utc": lambda v: struct.pack("<q", (v - epoch) // dt.timedelta(microseconds=1)),
        "blob": bytes,
        "late": lambda v: struct.pack("<q", v),
    }  # fmt: skip
    published = blobs(table, table.current_snapshot().snapshot_id)
    assert set(published) == set(serialised)
    for name, (properties, sketch) in published.items():
        values = {v for v in data[name].to_pylist() if v is not None}
        hashes = {mmh3.hash64(serialised[name](v), seed=9001, signed=False)[0] >> 1 for v in values}
        assert set(sketch) == {h for h in hashes if h < sketch.theta64}, name
        assert abs(int(properties["ndv"]) - len(values)) <= 3 * THETA_12 * len(values) + 1, name
