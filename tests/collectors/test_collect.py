"""Collection with a real Spark (local[2]) into both databases: exact counts, min/max and
nulls, NDV within HLL's error, incremental runs, and a failed job that keeps the previous
statistics."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from metastore import Metastore, PartitionQuery
from metastore.partitions.names import partition_name
from metastore.statistics.summaries import table_statistics
from tests.support.partitions import corrupt_pages, write_partition

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


@pytest.fixture
def lake(tmp_path: Path) -> tuple[Path, dict[str, pa.Table]]:
    rng = random.Random(7)
    root = tmp_path / "sales"
    tables = {}
    for values in [
        ["2024-01-01", "emea"],
        ["2024-01-01", "apac"],
        ["2024-01-02", "emea"],
        [None, "emea"],
    ]:
        tables[partition_name(["dt", "region"], values)] = write_partition(root, values, rng, 400)
    return root, tables


def truth(tables: list[pa.Table]) -> dict[str, Any]:
    data = pa.concat_tables(tables)
    return {c: data[c].to_pylist() for c in data.column_names}


def test_collect_then_stats(
    metastore: Metastore, spark: Any, lake: tuple[Path, dict[str, pa.Table]]
) -> None:
    from collectors.collect import collect

    root, tables = lake
    metastore.register_table("sales", str(root))
    report = collect(metastore.engine, "sales", spark=spark)
    assert (report.partitions_scanned, report.partitions_skipped, report.rows) == (4, 0, 1600)

    summary = table_statistics(metastore.engine, "sales", buckets=8)
    exact = truth(list(tables.values()))
    assert summary.row_count == 1600
    assert summary.partitions == 4
    name = summary.columns["name"]
    names = [v for v in exact["name"] if v is not None]
    assert name.null_count == exact["name"].count(None)
    assert (name.min, name.max) == (min(names), max(names))
    assert (name.ndv, name.ndv_source) == (len(set(names)), "theta")  # exact below 4,096
    assert name.max_len == max(map(len, names))
    assert name.avg_len == pytest.approx(sum(map(len, names)) / len(names))
    amount = summary.columns["amount"]
    assert (amount.min, amount.max) == (min(exact["amount"]), max(exact["amount"]))
    assert amount.ndv == pytest.approx(len(set(exact["amount"])), rel=0.05)
    assert amount.ndv_source == "hll"
    # equi-depth bounds are quantiles: their true ranks within KLL's rank error (k 200)
    assert amount.equi_depth is not None
    values = sorted(exact["amount"])
    for i, bound in enumerate(amount.equi_depth.bounds[1:-1], start=1):
        rank = sum(v < bound for v in values) / len(values)
        assert abs(rank - i / 8) <= 0.0165
    assert amount.equi_depth is not None
    assert sum(amount.equi_depth.counts) == pytest.approx(1600)
    day = summary.columns["day"].as_json()
    assert (day["min"], day["max"]) == (
        min(exact["day"]).isoformat(),
        max(exact["day"]).isoformat(),
    )
    assert day["equi_width"]["bounds"][0] == min(exact["day"]).isoformat()
    hot = summary.columns["hot"]
    assert hot.mcv[0][0] == 1
    assert hot.mcv[0][1] >= exact["hot"].count(1)
    # 60 days of about 7 rows each in every partition: exact counts that tell nothing the
    # distinct count does not, kept nowhere (docs/design.md#sizes)
    assert summary.columns["day"].mcv == []
    assert summary.columns["rate"].mcv[0][0] == Decimal("0.10")
    assert summary.columns["rate"].as_json()["mcv"][0][0] == "0.10"
    tags = summary.columns["tags"]  # nested: counts and nulls only
    assert tags.null_count == exact["tags"].count(None)
    assert tags.ndv is None

    # without sketches: what the database adds up itself, the same figures
    sizes = table_statistics(metastore.engine, "sales", sketches=False)
    assert (sizes.row_count, sizes.partitions) == (1600, 4)
    for column, full in summary.columns.items():
        assert sizes.columns[column].null_count == full.null_count
        assert sizes.columns[column].avg_len == pytest.approx(full.avg_len)
        assert sizes.columns[column].max_len == full.max_len
        assert sizes.columns[column].ndv is None

    # a subset rolls up exactly those partitions
    emea = table_statistics(metastore.engine, "sales", PartitionQuery.of({"region": ["emea"]}))
    emea_truth = truth([t for n, t in tables.items() if "region=emea" in n])
    assert emea.partitions == 3
    assert emea.row_count == 1200
    assert emea.columns["id"].min == min(emea_truth["id"])
    assert emea.columns["id"].ndv == len(set(emea_truth["id"]))


def test_incremental_runs(
    metastore: Metastore, spark: Any, lake: tuple[Path, dict[str, pa.Table]]
) -> None:
    import shutil

    from collectors.collect import collect

    root, _ = lake
    metastore.register_table("sales", str(root))
    collect(metastore.engine, "sales", spark=spark)
    again = collect(metastore.engine, "sales", spark=spark)
    assert (again.partitions_scanned, again.partitions_skipped) == (0, 4)

    # collect lists the directory again: one partition written, one deleted
    write_partition(root, ["2024-01-03", "apac"], random.Random(1), 100)
    shutil.rmtree(root / "dt=2024-01-02")
    third = collect(metastore.engine, "sales", spark=spark)
    assert (third.partitions_scanned, third.partitions_skipped, third.rows) == (1, 3, 100)
    assert (third.partitions_added, third.partitions_removed) == (1, 1)
    summary = table_statistics(metastore.engine, "sales")
    assert summary.partitions == 4
    assert summary.row_count == 1300
    full = collect(metastore.engine, "sales", spark=spark, full=True)
    assert full.partitions_scanned == 4

    from sqlalchemy import func, select

    from metastore.models import CollectionRun, ColumnStats, PartitionStats

    metastore.drop_table("sales")  # statistics and runs go with the table
    with metastore.engine.connect() as conn:
        for model in (PartitionStats, ColumnStats, CollectionRun):
            assert conn.execute(select(func.count()).select_from(model)).scalar_one() == 0


def test_failed_job_keeps_previous_statistics(
    metastore: Metastore, spark: Any, lake: tuple[Path, dict[str, pa.Table]]
) -> None:
    from sqlalchemy import select

    from collectors.collect import CollectionFailed, collect
    from metastore.models import CollectionRun

    root, _ = lake
    metastore.register_table("sales", str(root))
    collect(metastore.engine, "sales", spark=spark)
    broken = root / "dt=2024-01-01" / "region=emea" / "part-00000.parquet"
    corrupt_pages(broken)  # its footer intact, its pages not: Spark's scan fails
    metastore.register_table("sales", str(root))
    with pytest.raises(CollectionFailed, match="previous statistics kept"):
        collect(metastore.engine, "sales", spark=spark)
    summary = table_statistics(metastore.engine, "sales")
    assert summary.row_count == 1600  # the statistics of the last good run
    with metastore.engine.connect() as conn:
        statuses = conn.execute(select(CollectionRun.status).order_by(CollectionRun.id)).all()
    assert [s for (s,) in statuses] == ["succeeded", "failed"]


def test_scan_settings_hold_for_the_scan_only(
    metastore: Metastore, spark: Any, lake: tuple[Path, dict[str, pa.Table]]
) -> None:
    from collectors.collect import SCAN_SETTINGS, collect
    from collectors.spark_session import session_settings

    key = "spark.sql.adaptive.advisoryPartitionSizeInBytes"
    assert key in SCAN_SETTINGS
    spark.conf.set(key, "32m")
    # a collection on the caller's session leaves the caller's setting as it was
    metastore.register_table("sales", str(lake[0]))
    assert collect(metastore.engine, "sales", spark=spark).partitions_scanned == 4
    assert spark.conf.get(key) == "32m"
    spark.conf.unset("spark.sql.statlas.test.unset")
    with session_settings(spark, {key: "1m", "spark.sql.statlas.test.unset": "x"}):
        assert spark.conf.get(key) == "1m"
        assert spark.conf.get("spark.sql.statlas.test.unset") == "x"
    assert spark.conf.get(key) == "32m"
    assert spark.conf.get("spark.sql.statlas.test.unset", None) is None
    spark.conf.unset(key)
