"""What the tests of the HTTP API (servers.http) share: the test client, the CLI's JSON
to compare answers with, the one-line error every failure is, a row of
collection_runs, and a Prometheus sample."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from typing import Any

import pytest
from sqlalchemy import insert, select
from starlette.exceptions import StarletteDeprecationWarning

from metastore import Metastore
from metastore.engine import run_write
from metastore.models import CatalogTable, CollectionRun
from statlas.cli import main
from tests.support.partitions import SALES_DAYS, SALES_REGIONS

with warnings.catch_warnings():  # starlette asks for httpx2; the httpx installed works
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient as TestClient  # for the tests to import


DAYS, REGIONS = SALES_DAYS, SALES_REGIONS
JSON_CONTENT = {"content-type": "application/json"}


def cli_json(capsys: pytest.CaptureFixture[str], db_url: str, *argv: str) -> Any:
    """What `statlas ... --json` prints, parsed."""
    capsys.readouterr()
    assert main(["--db", db_url, *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def assert_error(response: Any, status: int, message: str | None = None) -> str:
    """The answer is {"error": "<one line>"} with `status` (and `message`, if given)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"]
    assert body["error"]
    assert "\n" not in body["error"]
    if message is not None:
        assert body["error"] == message
    return str(body["error"])


def names(answer: dict[str, Any]) -> list[str]:
    return [p["location"].split("/sales/")[1] for p in answer["partitions"]]


def add_run(ms: Metastore, table: str, started: dt.datetime, status: str, **fields: Any) -> None:
    """A row of collection_runs as collectors.collect writes it."""
    tables = CatalogTable.__table__.c

    def write(conn: Any) -> None:
        table_id = conn.execute(select(tables.id).where(tables.name == table)).scalar_one()
        finished = None if status == "running" else started + dt.timedelta(seconds=30)
        values = {"partitions_scanned": 0, "partitions_skipped": 0, "partitions_removed": 0}
        values |= {"rows": 0, **fields}
        conn.execute(
            insert(CollectionRun).values(
                table_id=table_id, started_at=started, finished_at=finished, status=status, **values
            )
        )

    run_write(ms.engine, write)


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one sample of a Prometheus exposition text (None if absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    return None
