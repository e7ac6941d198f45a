"""GET and POST /tables/{name}/statistics (servers.http.routes.statistics) with
statistics collected by Spark, and the estimate, run and staleness that follow."""

from __future__ import annotations

from typing import Any

import pytest

from metastore import Metastore
from tests.servers.http.helpers import TestClient, cli_json, sample


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_statistics_estimate_and_runs_after_a_collection(
    sales: Metastore,
    client: TestClient,
    db_url: str,
    spark: Any,
    capsys: pytest.CaptureFixture[str],
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
