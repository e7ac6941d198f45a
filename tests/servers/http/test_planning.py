"""POST /estimate and /explain (servers.http.routes.planning), with the statistics
they read, before any collection (no Spark): the CLI's JSON."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.servers.http.helpers import TestClient, cli_json


def test_statistics_and_estimate_are_the_cli_json(
    client: TestClient, app: FastAPI, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any collection: zero rows, and the estimate says it has no statistics."""
    stats = client.get("/tables/sales/statistics", params={"in": "dt=2024-01-01"})
    assert stats.status_code == 200
    expected = cli_json(capsys, db_url, "stats", "sales", "--in", "dt=2024-01-01")
    assert stats.json() == expected
    assert expected["row_count"] == 0
    sql = "SELECT * FROM sales WHERE dt = '2024-01-01'"
    estimate = client.post("/estimate", json={"sql": sql, "level": "basic"})
    assert estimate.status_code == 200
    assert estimate.json() == cli_json(capsys, db_url, "estimate", "--sql", sql, "--level", "basic")
    sql = "SELECT a.id, count(*) FROM sales a JOIN sales b ON a.id = b.id GROUP BY a.id"
    explained = client.post("/explain", json={"sql": sql, "config": {"CPUc": "2"}})
    assert explained.status_code == 200, explained.text
    assert explained.json() == cli_json(
        capsys, db_url, "explain", "--sql", sql, "--json", "--config", "CPUc=2"
    )
    emitted = client.post("/explain", json={"sql": sql, "emit": "spark"}).json()["spark_sql"]
    assert "JOIN" in emitted
    assert emitted.startswith("SELECT")
    assert app.state.service.spark.started is False
