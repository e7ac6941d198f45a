"""GET /metrics (servers.http.metrics): lookups, requests, jobs and staleness."""

from __future__ import annotations

import datetime as dt

import pytest

from metastore import Metastore
from servers.http import metrics
from tests.servers.http.helpers import DAYS, TestClient, add_run, sample


def test_metrics_count_lookups_requests_and_staleness(sales: Metastore, client: TestClient) -> None:
    before = client.get("/metrics")
    assert before.status_code == 200
    assert before.headers["content-type"].startswith("text/plain")
    lookups = sample(before.text, "statlas_lookups_total", table="sales") or 0.0
    route = {"route": "/tables/{name}/partitions", "method": "POST"}
    answered = sample(before.text, "statlas_requests_total", **route, status="200") or 0.0
    refused = sample(before.text, "statlas_requests_total", **route, status="400") or 0.0
    # the registry is the process's: every figure is read as its change over this test
    observed = sample(before.text, "statlas_lookup_values_count") or 0.0
    values = sample(before.text, "statlas_lookup_values_sum") or 0.0
    assert client.post("/tables/sales/partitions", json={"in": {"dt": DAYS}}).status_code == 200
    assert client.post("/tables/sales/partitions", json={"in": {"dt": []}}).status_code == 400
    after = client.get("/metrics").text
    assert sample(after, "statlas_lookups_total", table="sales") == lookups + 1
    assert sample(after, "statlas_requests_total", **route, status="200") == answered + 1
    assert sample(after, "statlas_requests_total", **route, status="400") == refused + 1
    assert sample(after, "statlas_lookup_values_count") == observed + 1  # the answered one
    assert sample(after, "statlas_lookup_values_sum") == pytest.approx(values + len(DAYS))
    assert sample(after, "statlas_metastore_up") == 1
    never_collected = sample(after, "statlas_table_staleness_seconds", table="sales")
    assert never_collected is not None
    assert 0 <= never_collected < 600  # since registration
    add_run(sales, "sales", dt.datetime.now(dt.UTC) - dt.timedelta(hours=2), "succeeded")
    add_run(sales, "sales", dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5), "failed")
    stale = sample(client.get("/metrics").text, "statlas_table_staleness_seconds", table="sales")
    assert stale is not None
    assert abs(stale - (2 * 3600 - 30)) < 60  # the succeeded run's end


def test_job_metrics(client: TestClient) -> None:
    labels = {"job": "collect", "table": "sales"}
    text = client.get("/metrics").text
    # the registry is the process's: every figure is read as its change over this test
    succeeded = sample(text, "statlas_job_runs_total", **labels, status="succeeded") or 0.0
    failed = sample(text, "statlas_job_runs_total", **labels, status="failed") or 0.0
    failures = sample(text, "statlas_job_failures_total", **labels) or 0.0
    runs = sample(text, "statlas_job_seconds_count", job="collect") or 0.0
    seconds = sample(text, "statlas_job_seconds_sum", job="collect") or 0.0
    metrics.record_job_run("collect", "sales", "succeeded", 12.5)
    metrics.record_job_run("collect", "sales", "failed", 3.0)
    text = client.get("/metrics").text
    assert sample(text, "statlas_job_runs_total", **labels, status="succeeded") == succeeded + 1
    assert sample(text, "statlas_job_runs_total", **labels, status="failed") == failed + 1
    assert sample(text, "statlas_job_failures_total", **labels) == failures + 1
    assert sample(text, "statlas_job_seconds_count", job="collect") == runs + 2
    assert sample(text, "statlas_job_seconds_sum", job="collect") == pytest.approx(seconds + 15.5)
