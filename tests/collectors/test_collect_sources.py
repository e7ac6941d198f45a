"""Collection from every kind of source (ORC, unpartitioned, Spark catalog tables), changed
fingerprints, per-table Theta columns, and two collections of one table at once."""

from __future__ import annotations

import datetime as dt
import random
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from sqlalchemy import select

from metastore import Metastore, PartitionQuery
from metastore.errors import InvalidValue, UnknownColumn, UnknownTable
from metastore.models import CollectionRun, ColumnStats
from metastore.statistics.summaries import table_statistics
from tests.support.partitions import write_partition, write_partitions

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def small_table(rng: random.Random, rows: int) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([rng.randrange(1000) for _ in range(rows)], pa.int64()),
            "name": [None if rng.random() < 0.1 else f"n{rng.randrange(30)}" for _ in range(rows)],
            "day": pa.array(
                [dt.date(2024, 5, 1) + dt.timedelta(rng.randrange(30)) for _ in range(rows)],
                pa.date32(),
            ),
        }
    )


def test_orc_partitions(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect

    rng = random.Random(3)
    written = []
    for region in ("emea", "apac"):
        directory = tmp_path / "events" / f"region={region}"
        directory.mkdir(parents=True)
        data = small_table(rng, 300)
        orc.write_table(data, str(directory / "part-0.orc"))
        written.append(data)
    metastore.register_table("events", str(tmp_path / "events"), "orc")
    report = collect(metastore.engine, "events", spark=spark)
    assert (report.partitions_scanned, report.rows) == (2, 600)
    summary = table_statistics(metastore.engine, "events")
    ids = pa.concat_tables(written)["id"].to_pylist()
    assert (summary.columns["id"].min, summary.columns["id"].max) == (min(ids), max(ids))
    assert summary.columns["id"].ndv == pytest.approx(len(set(ids)), rel=0.02)


def test_unpartitioned_dataset(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect

    rng = random.Random(5)
    root = tmp_path / "flat"
    root.mkdir()
    parts = [small_table(rng, 250), small_table(rng, 150)]
    for i, data in enumerate(parts):
        pq.write_table(data, root / f"part-{i}.parquet")
    metastore.register_table("flat", str(root))
    report = collect(metastore.engine, "flat", spark=spark)
    assert (report.partitions_scanned, report.rows) == (1, 400)
    assert collect(metastore.engine, "flat", spark=spark).partitions_scanned == 0
    summary = table_statistics(metastore.engine, "flat")
    names = pa.concat_tables(parts)["name"].to_pylist()
    assert summary.row_count == 400
    assert summary.columns["name"].null_count == names.count(None)


def test_changed_fingerprint_rescans_only_that_partition(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect

    rng = random.Random(11)
    root = tmp_path / "sales"
    for values in (["2024-01-01", "emea"], ["2024-01-02", "emea"], ["2024-01-03", "apac"]):
        write_partition(root, list(values), rng, 200)
    metastore.register_table("sales", str(root))
    collect(metastore.engine, "sales", spark=spark)

    rewritten = write_partition(root, ["2024-01-02", "emea"], random.Random(99), 321)
    metastore.register_table("sales", str(root))
    report = collect(metastore.engine, "sales", spark=spark)
    assert (report.partitions_scanned, report.partitions_skipped, report.rows) == (1, 2, 321)
    summary = table_statistics(metastore.engine, "sales")
    assert summary.row_count == 200 + 321 + 200
    day = table_statistics(metastore.engine, "sales", columns=["id"])
    assert day.columns["id"].max >= max(rewritten["id"].to_pylist())


def test_theta_columns_are_configurable_per_table(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect

    root = tmp_path / "sales"
    write_partition(root, ["2024-01-01", "emea"], random.Random(1), 100)
    metastore.register_table("sales", str(root), properties={"theta_columns": "ID, day"})
    collect(metastore.engine, "sales", spark=spark)
    with metastore.engine.connect() as conn:
        with_theta = {
            name
            for (name,) in conn.execute(
                select(ColumnStats.column_name).where(ColumnStats.theta.is_not(None))
            )
        }
    assert with_theta == {"id", "day"}  # not name (a string, a default candidate)

    metastore.register_table("sales", str(root), properties={"theta_columns": "id,nope"})
    with pytest.raises(UnknownColumn, match=r"theta_columns .* 'nope'"):
        collect(metastore.engine, "sales", spark=spark, full=True)


def test_second_collection_of_a_table_is_refused_while_one_runs(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import CollectionRunning, collect

    root = tmp_path / "sales"
    for values in (["2024-01-01", "emea"], ["2024-01-02", "apac"]):
        write_partition(root, list(values), random.Random(2), 100)
    metastore.register_table("sales", str(root))
    scanning, release = threading.Event(), threading.Event()

    class Blocking:
        def update(self, phase: str, done: int, total: int) -> None:
            if phase == "receive":
                scanning.set()
                assert release.wait(60)

    outcome: list[Any] = []
    first = threading.Thread(
        target=lambda: outcome.append(
            collect(metastore.engine, "sales", spark=spark, progress=Blocking())
        )
    )
    first.start()
    try:
        assert scanning.wait(120)
        with pytest.raises(CollectionRunning, match="already running"):
            collect(metastore.engine, "sales", spark=spark)
    finally:
        release.set()
        first.join(120)
    assert outcome
    assert outcome[0].partitions_scanned == 2
    with metastore.engine.connect() as conn:
        statuses = [s for (s,) in conn.execute(select(CollectionRun.status))]
    assert statuses == ["succeeded"]  # the refused one never started a run
    assert table_statistics(metastore.engine, "sales").row_count == 200


def test_spark_catalog_table(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect
    from collectors.spark_tables import register_spark_table

    location = tmp_path / "warehouse" / "orders"
    spark.sql("DROP TABLE IF EXISTS default.statlas_orders")
    spark.sql(
        "CREATE TABLE default.statlas_orders (id BIGINT, amount DECIMAL(10,2), day DATE) "
        f"USING parquet PARTITIONED BY (day) LOCATION '{location}'"
    )
    try:
        spark.sql(
            "INSERT INTO default.statlas_orders VALUES "
            "(1, 10.50, DATE'2024-02-01'), (2, 3.25, DATE'2024-02-01'), "
            "(3, 7.00, DATE'2024-02-02'), (4, NULL, NULL)"
        )
        report = register_spark_table(metastore.engine, "orders", spark, "default.statlas_orders")
        assert report.partitions == 3
        info = metastore.table("orders")
        assert [(k.name, str(k.type)) for k in info.partition_keys] == [("day", "date")]
        assert info.format == "parquet"
        assert info.properties["spark_table"] == ("default.statlas_orders")
        found = metastore.lookup("orders", PartitionQuery.of({"day": [dt.date(2024, 2, 1)]}))
        assert len(found) == 1
        collected = collect(metastore.engine, "orders", spark=spark)
        assert (collected.partitions_scanned, collected.rows) == (3, 4)
        amount = table_statistics(metastore.engine, "orders").columns["amount"]
        assert (str(amount.min), str(amount.max), amount.null_count) == ("3.25", "10.50", 1)

        with pytest.raises(UnknownTable, match=r"default\.nope does not exist"):
            register_spark_table(metastore.engine, "nope", spark, "default.nope")
    finally:
        spark.sql("DROP TABLE IF EXISTS default.statlas_orders")


def test_row_samples_are_drawn_in_the_scan_and_pooled_per_partition_set(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect
    from metastore.statistics.block_reads import table_sample

    root = tmp_path / "sales"
    written = {
        region: write_partition(root, ["2024-01-01", region], random.Random(i), 800)
        for i, region in enumerate(("emea", "apac"))
    }
    metastore.register_table("sales", str(root))
    collect(metastore.engine, "sales", spark=spark)
    whole = table_sample(metastore.engine, "sales")  # 1,600 rows < 100,000: every row
    assert whole is not None
    assert whole.size == 1600
    assert whole.partitions == 2
    assert set(whole.weights) == {1.0}
    emea = table_sample(metastore.engine, "sales", PartitionQuery.of({"region": ["emea"]}))
    assert emea is not None
    assert emea.size == 800
    assert sorted(emea.columns["id"]) == sorted(float(v) for v in written["emea"]["id"].to_pylist())
    assert set(emea.columns["region"]) == {"emea"}  # partition keys filled in
    assert "tags" not in emea.columns  # nested: not sampled
    names = written["emea"]["name"].to_pylist()
    assert sum(v is None for v in emea.columns["name"]) == names.count(None)

    # a target of 400 rows: a Bernoulli sample at rate 1/4, each row standing for about 4
    metastore.register_table("sales", str(root), properties={"sample_rows": "400"})
    collect(metastore.engine, "sales", spark=spark, full=True)
    quarter = table_sample(metastore.engine, "sales")
    assert quarter is not None
    assert 300 <= quarter.size <= 500
    assert quarter.weights.sum() == pytest.approx(1600)
    ids = {float(v) for t in written.values() for v in t["id"].to_pylist()}
    assert set(quarter.columns["id"]) <= ids

    metastore.register_table("sales", str(root), properties={"sample_rows": "0"})
    collect(metastore.engine, "sales", spark=spark, full=True)
    assert table_sample(metastore.engine, "sales") is None

    metastore.register_table("sales", str(root), properties={"sample_rows": "many"})
    with pytest.raises(InvalidValue, match=r"sample_rows .* whole number"):
        collect(metastore.engine, "sales", spark=spark, full=True)


def test_a_local_collection_lists_the_partitions_in_the_driver(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    """Spark lists more than 32 directories with a job of one task per directory (7 s for
    TPC-H lineitem's 2,526 days); in local mode the driver lists them instead."""
    from collectors.collect import collect

    root = tmp_path / "daily"
    write_partitions(
        root,
        ["day"],
        [[f"2024-01-{d:02d}"] for d in range(1, 32)] + [[f"2024-02-{d:02d}"] for d in range(1, 10)],
    )
    metastore.register_table("daily", str(root))
    report = collect(metastore.engine, "daily", spark=spark)
    assert report.partitions_scanned == 40
    tracker = spark.sparkContext.statusTracker()
    jobs = tracker.getJobIdsForGroup(f"collect-daily-run-{report.run_id}")
    stages = [tracker.getStageInfo(s) for j in jobs for s in tracker.getJobInfo(j).stageIds]
    listings = [s.numTasks for s in stages if s is not None and s.numTasks == 40]
    assert jobs
    assert not listings
