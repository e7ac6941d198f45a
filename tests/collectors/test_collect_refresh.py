"""`collect` sees what changed on disk (new partitions scanned, vanished ones dropped with
their statistics, tables of a Spark catalog asked again), unless --no-refresh; and several
tables collect on one Spark session, a failed one not stopping the others (Python API and
CLI), on SQLite and PostgreSQL with a real Spark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from metastore import Metastore
from metastore.models import CollectionRun
from metastore.statistics.summaries import table_statistics
from statlas.cli import main
from tests.support.partitions import corrupt_pages, write_partitions

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def days(root: Path, *values: str) -> Path:
    return write_partitions(root, ["day"], [[v] for v in values])


def statuses(ms: Metastore) -> list[tuple[str, str]]:
    from metastore.models import CatalogTable

    with ms.engine.connect() as conn:
        rows = conn.execute(
            select(CatalogTable.name, CollectionRun.status)
            .join(CatalogTable, CatalogTable.id == CollectionRun.table_id)
            .order_by(CollectionRun.id)
        )
        return [(name, status) for name, status in rows]


def test_collect_lists_the_directory_again(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect

    root = days(tmp_path / "sales", "2024-03-01", "2024-03-02")
    metastore.register_table("sales", str(root))
    first = collect(metastore.engine, "sales", spark=spark)
    assert (first.partitions_scanned, first.partitions_added, first.rows) == (2, 0, 6)

    days(root, "2024-03-03")
    shutil.rmtree(root / "day=2024-03-01")
    skipped = collect(metastore.engine, "sales", spark=spark, refresh=False)
    assert (skipped.partitions_scanned, skipped.partitions_added) == (0, 0)
    assert table_statistics(metastore.engine, "sales").row_count == 6  # still the old listing

    second = collect(metastore.engine, "sales", spark=spark)
    assert (second.partitions_added, second.partitions_removed) == (1, 1)
    assert (second.partitions_scanned, second.partitions_skipped) == (1, 1)
    assert second.as_json()["partitions_added"] == 1
    assert metastore.partitions("sales").names() == ["day=2024-03-02", "day=2024-03-03"]
    summary = table_statistics(metastore.engine, "sales")
    assert (summary.partitions, summary.row_count) == (2, 6)

    shutil.rmtree(root)  # a directory gone: the run fails, the statistics stay
    with pytest.raises(Exception, match="sales"):
        collect(metastore.engine, "sales", spark=spark)
    assert table_statistics(metastore.engine, "sales").row_count == 6
    assert statuses(metastore)[-1] == ("sales", "failed")


def test_collect_asks_the_spark_catalog_again(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect
    from collectors.spark_tables import register_spark_table
    from metastore.errors import UnknownTable

    location = tmp_path / "orders"
    spark.sql("DROP TABLE IF EXISTS default.statlas_refresh_orders")
    spark.sql(
        "CREATE TABLE default.statlas_refresh_orders (id BIGINT, day DATE) USING parquet "
        f"PARTITIONED BY (day) LOCATION '{location}'"
    )
    try:
        spark.sql(
            "INSERT INTO default.statlas_refresh_orders SELECT id, DATE'2024-03-01' FROM range(10)"
        )
        register_spark_table(metastore.engine, "orders", spark, "default.statlas_refresh_orders")
        assert collect(metastore.engine, "orders", spark=spark).rows == 10
        spark.sql(
            "INSERT INTO default.statlas_refresh_orders SELECT id, DATE'2024-03-02' FROM range(5)"
        )
        report = collect(metastore.engine, "orders", spark=spark)
        assert (report.partitions_added, report.partitions_scanned, report.rows) == (1, 1, 5)
        assert table_statistics(metastore.engine, "orders").row_count == 15
    finally:
        spark.sql("DROP TABLE IF EXISTS default.statlas_refresh_orders")
    with pytest.raises(UnknownTable, match=r"registered from it.*--no-refresh"):
        collect(metastore.engine, "orders", spark=spark)
    # without the listing, the statistics are collected from what the metastore lists
    assert collect(metastore.engine, "orders", spark=spark, refresh=False).partitions_scanned == 0


def test_several_tables_on_one_session(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect_tables
    from collectors.spark_session import LazySession

    for name in ("a", "b"):
        metastore.register_table(name, str(days(tmp_path / name, "2024-03-01")))
    broken = days(tmp_path / "broken", "2024-03-01", "2024-03-02")
    metastore.register_table("broken", str(broken))
    corrupt_pages(broken / "day=2024-03-02" / "part-00000.parquet")  # Spark's scan fails
    sessions = LazySession(session=spark)
    outcomes = list(
        collect_tables(metastore.engine, ["a", "broken", "nope", "b", "a"], spark=sessions)
    )
    assert [(o.table, o.report is not None) for o in outcomes] == [
        ("a", True),
        ("broken", False),
        ("nope", False),
        ("b", True),
    ]
    assert "previous statistics kept" in str(outcomes[1].error)
    assert outcomes[2].as_json() == {
        "table": "nope",
        "status": "failed",
        "error": "unknown table 'nope'",
    }
    assert statuses(metastore) == [("a", "succeeded"), ("broken", "failed"), ("b", "succeeded")]


def test_lazy_session_starts_spark_only_when_needed(metastore: Metastore, tmp_path: Path) -> None:
    from collectors.collect import collect
    from collectors.spark_session import LazySession

    metastore.register_table("empty", str(days(tmp_path / "empty", "2024-03-01")))
    sessions = LazySession("local[1]")
    report = collect(metastore.engine, "empty", spark=sessions, refresh=False, full=False)
    assert report.partitions_scanned == 1
    assert sessions.started
    again = LazySession("local[1]")
    assert collect(metastore.engine, "empty", spark=again).partitions_scanned == 0
    assert not again.started  # a directory's listing and nothing to scan: no Spark


def test_cli_collects_several_tables(
    metastore: Metastore, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = metastore.engine.url.render_as_string(hide_password=False)
    for name in ("a", "b"):
        metastore.register_table(name, str(days(tmp_path / name, "2024-03-01", "2024-03-02")))
    code = main(["collect", "a", "nope", "b", "--json", "--db", url, "--master", "local[2]"])
    out, err = capsys.readouterr()
    assert code == 2
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(o["table"], o["status"]) for o in lines] == [
        ("a", "succeeded"),
        ("nope", "failed"),
        ("b", "succeeded"),
    ]
    assert lines[0]["partitions_scanned"] == 2
    assert lines[2]["rows"] == 6
    assert "statlas: error: unknown table 'nope'" in err.splitlines()

    days(tmp_path / "b", "2024-03-03")
    assert main(["collect", "--all", "--db", url]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines() == [
        "a: nothing to scan (2 partitions unchanged, 0 removed)",
        out.splitlines()[1],
    ]
    assert out.splitlines()[1].startswith("b: scanned 1 partitions, 1 new (3 rows")
    assert main(["collect", "--db", url]) == 2
    assert "name the tables to collect, or give --all" in capsys.readouterr().err


def test_cli_registers_several_spark_tables(
    metastore: Metastore, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = metastore.engine.url.render_as_string(hide_password=False)
    spark.sql("CREATE DATABASE IF NOT EXISTS statlas_shop")
    made = ["default.statlas_reg_a", "statlas_shop.statlas_reg_b"]
    try:
        for identifier in made:
            spark.sql(
                f"CREATE TABLE {identifier} (id BIGINT, day DATE) USING parquet "
                f"PARTITIONED BY (day) LOCATION '{tmp_path / identifier}'"
            )
            spark.sql(f"INSERT INTO {identifier} SELECT id, DATE'2024-03-01' FROM range(3)")
        code = main(
            ["table", "register", "--spark-table", *made, "default.nope", "--json", "--db", url]
        )
        out, err = capsys.readouterr()
        assert code == 2
        reports = [json.loads(line) for line in out.splitlines()]
        assert [(r.get("table"), r.get("partitions")) for r in reports] == [
            ("statlas_reg_a", 1),
            ("statlas_shop.statlas_reg_b", 1),
            (None, None),
        ]
        assert reports[2]["spark_table"] == "default.nope"
        assert reports[2]["status"] == "failed"
        assert "default.nope does not exist" in err
        assert sorted(t.name for t in metastore.tables()) == [
            "statlas_reg_a",
            "statlas_shop.statlas_reg_b",
        ]
        assert main(["table", "register", "x", "--spark-table", *made, "--db", url]) == 2
        assert "give no NAME with several --spark-table" in capsys.readouterr().err
    finally:
        for identifier in made:
            spark.sql(f"DROP TABLE IF EXISTS {identifier}")
        spark.sql("DROP DATABASE IF EXISTS statlas_shop")
