"""`POST /prune` answers a query no map join prunes with 200 (issue 21, part 2): `pruned:
false`, the partitions the query's own filters keep and each join's reason, without Spark
unless asked to run; unknown tables and malformed SQL stay errors. Both databases."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.exceptions import StarletteDeprecationWarning

from metastore import Metastore
from pruner.prune import LARGEST_PARTITIONED
from servers.http.app import create_app
from servers.http.models import PruneOut
from tests.support.partitions import write_partitions

with warnings.catch_warnings():  # starlette asks for httpx2; the httpx installed works
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
REGIONS = ["emea", "apac", "amer"]
LEFT_JOIN = "SELECT s.id FROM sales s LEFT JOIN dims d ON s.id = d.id WHERE s.region = 'emea'"


@pytest.fixture
def lake(metastore: Metastore, tmp_path: Path) -> Metastore:
    """`sales` by dt x region (3 rows a partition, a default partition on each key) and an
    unpartitioned `dims`, registered (no statistics collected)."""
    rows: list[list[str | None]] = [[d, r] for d in DAYS for r in REGIONS]
    rows += [[None, "emea"], ["2024-01-01", None]]
    write_partitions(tmp_path / "sales", ["dt", "region"], rows)
    write_partitions(tmp_path / "dims", [], [[]])
    metastore.register_table("sales", str(tmp_path / "sales"))
    metastore.register_table("dims", str(tmp_path / "dims"))
    return metastore


@pytest.fixture
def app(lake: Metastore, db_url: str) -> FastAPI:
    """The API. The Spark a /prune starts is the process's one session (getOrCreate): the
    tests' shared `spark`, which stops at the end of the run, not here."""
    return create_app(db_url, spark_master="local[1]")


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


def answer(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    PruneOut.model_validate(body)  # the documented answer is the answer
    return body


def test_nothing_to_prune_is_an_answer_without_spark(client: TestClient, app: FastAPI) -> None:
    body = answer(
        client.post("/prune", json={"sql": "SELECT * FROM sales WHERE dt = '2024-01-01'"})
    )
    assert (body["pruned"], body["table"], body["table_reason"]) == (
        False,
        "sales",
        LARGEST_PARTITIONED,
    )
    assert body["partitions_before"] == body["partitions_after"] == 4  # 3 regions + default
    assert (body["rejected"], body["candidates"], body["keys"]) == ([], [], [])
    assert "rows" not in body
    body = answer(client.post("/prune", json={"sql": LEFT_JOIN}))
    assert not body["pruned"]
    assert body["partitions_before"] == 4  # emea: 3 days + default
    [rejected] = body["rejected"]
    assert "preserved side of the left outer join" in rejected["reason"]
    assert app.state.service.spark.started is False


def test_errors_stay_errors(client: TestClient, app: FastAPI) -> None:
    unknown = client.post(
        "/prune", json={"sql": "SELECT * FROM sales s JOIN nope n ON s.id = n.id"}
    )
    assert unknown.status_code == 404
    assert "unknown table" in unknown.json()["error"]
    malformed = client.post("/prune", json={"sql": "SELECT * FROM sales s JOIN"})
    assert malformed.status_code == 400
    assert "malformed SQL" in malformed.json()["error"]
    negative = client.post("/prune", json={"sql": LEFT_JOIN, "map_join_threshold": -1})
    assert negative.status_code == 422
    assert app.state.service.spark.started is False


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.usefixtures("spark")
def test_nothing_to_prune_runs_the_query(lake: Metastore, client: TestClient, app: FastAPI) -> None:
    """Run: the query's rows. With statistics, the request's threshold is the plan's: 0
    makes the join a common one (not a map join), the default a map join."""
    from collectors.collect import collect

    body = answer(client.post("/prune", json={"sql": LEFT_JOIN, "run": True}))
    assert not body["pruned"]
    assert body["rows"] == 4 * 3  # four emea partitions of 3 rows
    spark = app.state.service.spark.session()
    for name in ("sales", "dims"):
        collect(lake.engine, name, spark=spark)
    [rejected] = answer(client.post("/prune", json={"sql": LEFT_JOIN}))["rejected"]
    assert "preserved side of the left outer join" in rejected["reason"]
    body = answer(client.post("/prune", json={"sql": LEFT_JOIN, "map_join_threshold": 0}))
    assert body["rejected"][0]["join"] == rejected["join"]
    assert body["rejected"][0]["reason"].startswith("not a map join: the plan runs it as a ")
