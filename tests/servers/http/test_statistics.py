"""GET and POST /tables/{name}/statistics (servers.http.routes.statistics) with
statistics collected by Spark, and the estimate, run and staleness that follow."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

import pytest

from metastore import Metastore
from tests.servers.http.helpers import TestClient, add_run, cli_json, sample


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_statistics_estimate_and_runs_after_a_collection(
    sales: Metastore,
    client: TestClient,
    db_url: str,
    spark: Any,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from collectors.collect import collect

    report = collect(sales.ready(), "sales", spark=spark)
    assert (report.partitions_scanned, report.rows) == (11, 33)
    body = {"in": {"dt": ["2024-01-01"]}, "columns": ["id", "label"], "buckets": 4}
    stats = client.post("/tables/sales/statistics", json=body)
    assert stats.status_code == 200, stats.text
    assert stats.json() == cli_json(
        capsys,
        db_url,
        "stats",
        "sales",
        "--in",
        "dt=2024-01-01",
        "--column",
        "id",
        "--column",
        "label",
        "--buckets",
        "4",
    )
    assert (stats.json()["partitions"], stats.json()["row_count"]) == (4, 12)
    assert stats.json()["columns"]["id"]["min"] == 1
    assert stats.json()["columns"]["id"]["max"] == 3
    assert stats.json()["columns"]["label"]["null_count"] == 4
    got = client.get("/tables/sales/statistics", params={"in": "dt=2024-01-01", "column": "ID"})
    assert list(got.json()["columns"]) == ["id"]
    figures = ("min", "max", "ndv", "null_count")
    posted, fetched = stats.json()["columns"]["id"], got.json()["columns"]["id"]
    assert {f: fetched[f] for f in figures} == {f: posted[f] for f in figures}
    sql = "SELECT * FROM sales WHERE dt = '2024-01-01' AND id = 2"
    estimate = client.post("/estimate", json={"sql": sql})
    assert estimate.status_code == 200, estimate.text
    assert estimate.json() == cli_json(capsys, db_url, "estimate", "--sql", sql)
    assert 1 <= estimate.json()["rows"] <= 12
    [run] = client.get("/runs", params={"table": "sales"}).json()["runs"]
    assert (run["status"], run["partitions_scanned"], run["rows"]) == ("succeeded", 11, 33)
    staleness = sample(
        client.get("/metrics").text, "statlas_table_staleness_seconds", table="sales"
    )
    assert staleness is not None
    assert 0 <= staleness < 300
    summary_and_pages_after_the_collection(sales, client, db_url, tmp_path, capsys)


def summary_and_pages_after_the_collection(
    sales: Metastore,
    client: TestClient,
    db_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """GET /tables?summary=true and the partition pages after the collection, then after a
    partition changed (stale) and a failed run."""
    [run] = client.get("/runs", params={"table": "sales"}).json()["runs"]

    def summary() -> dict[str, Any]:
        [table] = client.get("/tables", params={"summary": "true"}).json()["tables"]
        assert [table] == cli_json(capsys, db_url, "table", "list", "--summary")
        return dict(table["summary"])

    collected = summary()
    assert (collected["rows"], collected["collected_partitions"]) == (33, 11)
    assert (collected["stale_partitions"], collected["last_run_status"]) == (0, "succeeded")
    assert collected["last_collection"] == run["finished"]
    assert collected["statistics_served"].startswith("statlas's collection of ")
    page = client.get("/tables/sales/partitions/page", params={"limit": 20}).json()
    assert page == cli_json(capsys, db_url, "partitions", "sales", "--limit", "20")
    assert sum(p["rows"] for p in page["partitions"]) == 33
    assert {p["collected"] for p in page["partitions"]} == {run["finished"]}
    assert not any(p["stale"] for p in page["partitions"])
    # one partition's file touched, the table listed again: that partition is stale
    [data_file] = (tmp_path / "sales" / "dt=2024-01-02" / "region=apac").iterdir()
    modified = data_file.stat().st_mtime_ns + 10**10
    os.utime(data_file, ns=(modified, modified))
    sales.register_table("sales", str(tmp_path / "sales"))
    changed = summary()
    assert (changed["stale_partitions"], changed["collected_partitions"]) == (1, 11)
    assert changed["rows"] == 33
    page = client.get("/tables/sales/partitions/page", params={"in": "region=apac"}).json()
    stale = {p["values"][0]: p["stale"] for p in page["partitions"]}
    assert stale == {"2024-01-01": False, "2024-01-02": True, "2024-01-03": False}
    add_run(sales, "sales", dt.datetime.now(dt.UTC), "failed", error="boom")
    failed = summary()
    assert failed["last_run_status"] == "failed"
    assert failed["last_collection"] == run["finished"]
