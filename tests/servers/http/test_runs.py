"""GET /runs (servers.http.routes.runs): collection runs newest first, their times in
the one format the API prints."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from metastore import Metastore
from servers.http.app import create_app
from servers.http.routes.schedules import schedules_router
from tests.servers.http.helpers import TestClient, add_run
from tests.support.partitions import write_partitions


def test_runs_newest_first(sales: Metastore, client: TestClient, tmp_path: Path) -> None:
    write_partitions(tmp_path / "other", ["n"], [["1"]])
    sales.register_table("other", str(tmp_path / "other"))
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    add_run(
        sales, "sales", now - dt.timedelta(hours=3), "succeeded", partitions_scanned=11, rows=33
    )
    add_run(sales, "sales", now - dt.timedelta(hours=2), "failed", error="executor lost")
    add_run(sales, "other", now - dt.timedelta(hours=1), "running")
    every = client.get("/runs").json()["runs"]
    assert [(r["table"], r["status"]) for r in every] == [
        ("other", "running"),
        ("sales", "failed"),
        ("sales", "succeeded"),
    ]
    oldest = every[-1]
    assert set(oldest) == {
        "id",
        "table",
        "started",
        "finished",
        "status",
        "partitions_scanned",
        "partitions_skipped",
        "partitions_removed",
        "rows",
        "error",
    }
    assert dt.datetime.fromisoformat(oldest["started"]) == now - dt.timedelta(hours=3)
    assert dt.datetime.fromisoformat(oldest["finished"]) == now - dt.timedelta(
        hours=2, minutes=59, seconds=30
    )
    assert (oldest["partitions_scanned"], oldest["rows"], oldest["error"]) == (11, 33, None)
    assert every[0]["finished"] is None
    assert every[1]["error"] == "executor lost"
    of_sales = client.get("/runs", params={"table": "Sales", "limit": 1}).json()["runs"]
    assert [(r["table"], r["status"]) for r in of_sales] == [("sales", "failed")]


def test_runs_print_times_as_schedules_do(sales: Metastore, db_url: str) -> None:
    """Every time the API prints is one format (formats.utc_text): ISO 8601 in UTC to the
    second, `Z` for the zone; /runs printed microseconds and +00:00 where /schedules
    printed this."""
    started = dt.datetime(2024, 3, 5, 14, 30, 7, 250_000, tzinfo=dt.UTC)
    add_run(sales, "sales", started, "succeeded")
    app = create_app(db_url, routers=[schedules_router(db_url)])
    with TestClient(app) as client:
        assert client.post("/schedules", json={"table": "sales", "every": "1h"}).status_code == 201
        [run] = client.get("/runs").json()["runs"]
        [schedule] = client.get("/schedules").json()
    assert (run["started"], run["finished"]) == ("2024-03-05T14:30:07Z", "2024-03-05T14:30:37Z")
    one_format = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert one_format.fullmatch(schedule["next_run"]), schedule
