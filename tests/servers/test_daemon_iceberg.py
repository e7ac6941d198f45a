"""A running `statlas daemon` keeps an Iceberg table's NDV current (issue 50, docs/iceberg.md),
on SQLite and PostgreSQL: pyiceberg's Hive catalog creates the table and appends through the
daemon's Thrift API, the table is registered from statlas's Hive Metastore API and scheduled,
and each append's snapshot gets its statistics file within a tick of the schedule, with no
`statlas collect` run by hand."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from pyiceberg.catalog.hive import HiveCatalog

from tests.collectors.test_iceberg import SCHEMA, SPEC, check_blobs, rows
from tests.support.hms_daemon import STATLAS, hms_daemon
from tests.support.processes import statlas_env

pytestmark = [pytest.mark.spark, pytest.mark.slow]

TICK = "2s"
PATIENCE = 120.0  # the first tick starts the daemon's Spark session


def statlas(db_url: str, cwd: Path, *argv: str) -> str:
    done = subprocess.run(
        [str(STATLAS), *argv], cwd=cwd, env=statlas_env(db_url), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def published(hive: HiveCatalog) -> bool:
    table = hive.load_table("default.events")
    current = table.current_snapshot()
    return current is not None and any(
        s.snapshot_id == current.snapshot_id for s in table.metadata.statistics
    )


def wait_published(hive: HiveCatalog, log: Path) -> float:
    started = time.monotonic()
    while not published(hive):
        assert time.monotonic() - started < PATIENCE, log.read_text()[-3000:]
        time.sleep(0.2)
    return time.monotonic() - started


def test_each_append_is_published_by_the_schedule(db_url: str, tmp_path: Path) -> None:
    with hms_daemon(db_url, tmp_path) as (port, log):
        warehouse = tmp_path / "warehouse"
        hive = HiveCatalog(
            "statlas", uri=f"thrift://127.0.0.1:{port}", warehouse=f"file://{warehouse}"
        )
        hive.create_table("default.events", SCHEMA, partition_spec=SPEC)
        hive.load_table("default.events").append(rows(0, 800, range(2)))
        statlas(db_url, tmp_path, "table", "register", "events_stats", "--iceberg-table",
                "default.events")  # fmt: skip
        statlas(db_url, tmp_path, "schedule", "add", "events_stats", "--every", TICK)
        wait_published(hive, log)
        for day in (5, 6):  # each new snapshot, within a tick once Spark runs
            hive.load_table("default.events").append(rows(day * 1000, 300, range(day, day + 1)))
            assert not published(hive)
            assert wait_published(hive, log) < 30
        table = hive.load_table("default.events")
        check_blobs(table, table.scan().to_arrow())
        assert len(table.metadata.statistics) == 3  # one per snapshot collected
