"""The CLI with Spark, as a user runs it: a table of a Hive metastore (Derby, in a temporary
directory) registered with --spark-table, collected with plain progress lines off a
terminal, and its statistics shown as a bar chart and drawn with --plot."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def test_hive_table_register_collect_stats_plot(tmp_path: Path) -> None:
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true"
        ),
    }
    env = {**os.environ, "STATLAS_DB_URL": f"sqlite:///{tmp_path / 'statlas.db'}"}
    create = textwrap.dedent(
        f"""
        from collectors.spark_session import spark_session
        spark = spark_session("local[1]", {conf!r})
        spark.sql("CREATE DATABASE shop")
        spark.sql(
            "CREATE TABLE shop.orders (id BIGINT, amount DECIMAL(10,2), day DATE) "
            "USING parquet PARTITIONED BY (day)"
        )
        spark.sql(
            "INSERT INTO shop.orders SELECT id, CAST(id % 997 AS DECIMAL(10,2)), "
            "date_add(DATE'2024-03-01', CAST(id % 5 AS INT)) FROM range(5000)"
        )
        spark.stop()
        """
    )
    made = subprocess.run(
        [sys.executable, "-c", create], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr[-2000:]

    statlas = str(Path(sys.executable).parent / "statlas")
    spark_options = [arg for k, v in conf.items() for arg in ("--spark-conf", f"{k}={v}")]

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [statlas, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    registered = run(
        "table", "register", "orders", "--spark-table", "shop.orders", "--json", *spark_options
    )
    assert registered.returncode == 0, registered.stderr
    report = json.loads(registered.stdout)
    assert report["partitions"] == 5
    assert report["partition_keys"] == [{"name": "day", "type": "date"}]

    missing = run("table", "register", "x", "--spark-table", "shop.nope", *spark_options)
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines()[-1] == (
        "statlas: error: Spark table shop.nope does not exist in the session's catalog"
    )

    collected = run("collect", "orders", "--master", "local[1]", *spark_options)
    assert collected.returncode == 0, collected.stderr
    assert "orders: scanned 5 partitions (5,000 rows" in collected.stdout
    progress = [line for line in collected.stderr.splitlines() if line.startswith("collect")]
    assert "collect orders: receiving partitions 5/5 (100%)" in progress
    assert progress[-1] == "collect orders: writing 1/1 (100%)"

    plot = tmp_path / "amount.png"
    shown = run("stats", "orders", "--column", "amount", "--buckets", "8", "--plot", str(plot))
    assert shown.returncode == 0, shown.stderr
    assert plot.read_bytes().startswith(b"\x89PNG")
    bars = [line for line in shown.stdout.splitlines() if "\u2588" in line]
    assert len(bars) == 8
    assert bars[0].strip().startswith("[0, ")
    assert "amount decimal(10,2): nulls 0, ndv 9" in shown.stdout  # HLL: about 997
    assert "min 0.00, max 996.00" in shown.stdout

    two = run("stats", "orders", "--plot", str(plot))
    assert two.returncode == 2
    assert "give exactly one --column" in two.stderr
