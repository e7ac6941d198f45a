"""GET /daemons and `statlas daemons`: the daemons of the metastore as the heartbeats of
metastore.daemons list them, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from metastore import Metastore
from metastore.models import utcnow
from servers.http.app import create_app
from statlas.cli import main
from tests.metastore.test_daemons import beat, identity
from tests.servers.http.helpers import TestClient


def test_get_daemons_and_the_cli(
    metastore: Metastore, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    now = utcnow()
    beat(metastore, identity("a:1", now), now, since=now)
    beat(
        metastore, identity("b:2", now - dt.timedelta(hours=1)), now - dt.timedelta(minutes=1), None
    )
    with TestClient(create_app(db_url)) as client:
        answer = client.get("/daemons")
    assert answer.status_code == 200
    body = answer.json()
    assert (body["heartbeat_seconds"], body["silent_after_seconds"]) == (5.0, 15.0)
    assert body["leader"] == "a:1"
    assert [(d["node"], d["state"], d["leader"]) for d in body["daemons"]] == [
        ("a:1", "serving", True),
        ("b:2", "silent", False),
    ]

    capsys.readouterr()
    assert main(["daemons", "--db", db_url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["daemons"] == body["daemons"]
    assert main(["daemons", "--db", db_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("a:1\tserving\tleader since ")
    assert lines[1].startswith("b:2\tsilent\t-\thttp://b:8080\t")
