"""GET /tables and /tables/{name} (servers.http.routes.tables): the CLI's JSON."""

from __future__ import annotations

import pytest

from tests.servers.http.helpers import TestClient, cli_json


def test_tables_are_the_cli_json(
    client: TestClient, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = client.get("/tables")
    assert listed.status_code == 200
    assert listed.json() == {"tables": cli_json(capsys, db_url, "table", "list")}
    assert listed.json()["tables"][0]["partitions"] == 11
    shown = client.get("/tables/SALES")
    assert shown.status_code == 200
    assert shown.json() == cli_json(capsys, db_url, "table", "show", "sales")
    assert [k["name"] for k in shown.json()["partition_keys"]] == ["dt", "region"]
