"""Schedules without a daemon: add, list and remove through the Python API, the CLI and
HTTP, on SQLite and PostgreSQL; they live in the Alembic-owned `apscheduler_jobs` table;
invalid schedules are one-line errors (exit 2 / a JSON error with its status)."""

from __future__ import annotations

import datetime as dt
import json
import pickle
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from apscheduler.util import ref_to_obj
from fastapi import FastAPI
from sqlalchemy import func, select, update
from starlette.exceptions import StarletteDeprecationWarning

from metastore import Metastore
from metastore.errors import InvalidValue, UnknownTable
from metastore.migrate import downgrade
from metastore.models import SchedulerJob
from pruner.daemon.job_store import JOB_KINDS
from pruner.daemon.scheduler import refresh_table
from pruner.daemon.schedules import (
    Schedule,
    Schedules,
    UnknownSchedule,
    crontab_weekdays,
    every_seconds,
)
from servers.http.app import create_app
from servers.http.routes.schedules import schedules_router
from statlas.cli import main
from tests.support.partitions import write_partitions

with warnings.catch_warnings():  # starlette asks for httpx2; the httpx installed works
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient


@pytest.fixture
def sales(metastore: Metastore, tmp_path: Path) -> Metastore:
    write_partitions(tmp_path / "sales", ["dt"], [["2024-01-01"], ["2024-01-02"]])
    metastore.register_table("sales", str(tmp_path / "sales"))
    write_partitions(tmp_path / "orders", [], [[]])
    metastore.register_table("orders", str(tmp_path / "orders"))
    return metastore


@pytest.fixture
def book(sales: Metastore, db_url: str) -> Iterator[Schedules]:
    schedules = Schedules(db_url)
    yield schedules
    schedules.close()


def stored_jobs(ms: Metastore) -> int:
    with ms.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(SchedulerJob)).scalar_one())


def test_add_list_remove_through_the_python_api(
    book: Schedules, sales: Metastore, db_url: str
) -> None:
    before = dt.datetime.now(dt.UTC)
    added = book.add("SALES", every="15m")
    assert (added.table, added.kind, added.expression) == ("sales", "every", "15m")
    assert added.next_run is not None
    assert dt.timedelta(minutes=14) < added.next_run - before <= dt.timedelta(minutes=16)
    hourly = book.add("orders", cron="0 * * * *")
    assert hourly.next_run is not None
    assert hourly.next_run.minute == 0
    assert stored_jobs(sales) == 2

    # a fresh process (another book) sees the same schedules: they live in the metastore
    other = Schedules(db_url)
    try:
        assert [s.as_json() for s in other.list()] == [
            {"table": "orders", "cron": "0 * * * *", "every": None, "next_run": _iso(hourly)},
            {"table": "sales", "cron": None, "every": "15m", "next_run": _iso(added)},
        ]
        replaced = other.add("sales", cron="30 2 * * 0")  # a table has one schedule
        assert replaced.next_run is not None
        assert (replaced.next_run.hour, replaced.next_run.minute) == (2, 30)
        assert replaced.next_run.weekday() == 6  # crontab's 0 is Sunday
    finally:
        other.close()
    assert [(s.table, s.kind) for s in book.list()] == [("orders", "cron"), ("sales", "cron")]

    assert book.remove("sales") == "sales"
    assert [s.table for s in book.list()] == ["orders"]
    with pytest.raises(UnknownSchedule, match="sales has no schedule"):
        book.remove("sales")
    assert stored_jobs(sales) == 1


def _iso(schedule: Schedule) -> str:
    next_run = schedule.next_run
    assert next_run is not None
    return next_run.astimezone(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def test_stored_jobs_name_their_kind_not_a_module_path(book: Schedules, sales: Metastore) -> None:
    """A stored job names its kind ("refresh"), which the code maps to the function that
    runs it (pruner.daemon.job_store): moving the function orphans no stored job."""
    book.add("sales", every="1h")
    with sales.engine.connect() as conn:
        state = pickle.loads(conn.execute(select(SchedulerJob.job_state)).scalar_one())
    assert state["func"] == "refresh"
    assert ref_to_obj(JOB_KINDS["refresh"]) is refresh_table
    assert [s.table for s in book.list()] == ["sales"]


def test_migration_0012_turns_stored_module_paths_into_kinds(sales: Metastore, db_url: str) -> None:
    """A schedule stored by a release before 0012 (its function as the module path
    pruner.scheduler:refresh_table) is the same schedule after the upgrade, by kind; a
    downgrade writes the path back."""
    book = Schedules(db_url)
    book.add("sales", every="1h")
    book.close()
    with sales.engine.begin() as conn:
        state = pickle.loads(conn.execute(select(SchedulerJob.job_state)).scalar_one())
        state["func"] = "pruner.scheduler:refresh_table"  # as releases up to 0011 stored it
        conn.execute(update(SchedulerJob).values(job_state=pickle.dumps(state)))
    downgrade(sales.engine, "0011")  # the schema an earlier release left, its job in it
    sales.upgrade("0012")
    with sales.engine.connect() as conn:
        state = pickle.loads(conn.execute(select(SchedulerJob.job_state)).scalar_one())
    assert state["func"] == "refresh"
    sales.upgrade()  # the schedules are read by the current release
    book = Schedules(db_url)
    try:
        [schedule] = book.list()
    finally:
        book.close()
    assert (schedule.table, schedule.kind, schedule.expression) == ("sales", "every", "1h")
    downgrade(sales.engine, "0011")
    with sales.engine.connect() as conn:
        state = pickle.loads(conn.execute(select(SchedulerJob.job_state)).scalar_one())
    assert state["func"] == "pruner.scheduler:refresh_table"
    sales.upgrade()


def test_invalid_schedules_are_refused(book: Schedules, sales: Metastore) -> None:
    with pytest.raises(UnknownTable):
        book.add("nope", every="1h")
    with pytest.raises(InvalidValue, match="exactly one of cron"):
        book.add("sales")
    with pytest.raises(InvalidValue, match="exactly one of cron"):
        book.add("sales", cron="* * * * *", every="1m")
    with pytest.raises(InvalidValue, match="duration"):
        book.add("sales", every="15")
    with pytest.raises(InvalidValue, match="5 fields"):
        book.add("sales", cron="* * *")
    with pytest.raises(InvalidValue, match="invalid cron expression"):
        book.add("sales", cron="61 * * * *")
    assert stored_jobs(sales) == 0


def test_cli_add_list_remove(
    sales: Metastore, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schedule", "add", "sales", "--every", "3s", "--db", db_url, "--json"]) == 0
    added = json.loads(capsys.readouterr().out)
    assert (added["table"], added["every"], added["cron"]) == ("sales", "3s", None)
    assert main(["schedule", "add", "orders", "--cron", "0 * * * *", "--db", db_url]) == 0
    assert capsys.readouterr().out.startswith("scheduled orders\tcron 0 * * * *\tnext run ")
    assert main(["schedule", "list", "--db", db_url, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(s["table"], s["cron"], s["every"]) for s in listed] == [
        ("orders", "0 * * * *", None),
        ("sales", None, "3s"),
    ]
    assert main(["schedule", "remove", "orders", "--db", db_url]) == 0
    assert capsys.readouterr().out == "removed the schedule of orders\n"
    assert main(["schedule", "list", "--db", db_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("sales\tevery 3s\tnext run ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["add", "nope", "--every", "1h"], "unknown table 'nope'"),
        (["add", "sales", "--every", "1x"], "every wants a duration such as 30s"),
        (["add", "sales", "--cron", "* * * * 9"], "invalid day of week '9'"),
        (["add", "sales"], "give exactly one of cron"),
        (["add", "sales", "--every", "1m", "--cron", "* * * * *"], "give exactly one of cron"),
        (["remove", "sales"], "table sales has no schedule"),
    ],
)
def test_cli_errors_are_one_line(
    sales: Metastore,
    db_url: str,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    assert main(["schedule", *argv, "--db", db_url]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"statlas: error: {message}")
    assert captured.err.count("\n") == 1
    assert stored_jobs(sales) == 0


def test_http_schedules(sales: Metastore, db_url: str) -> None:
    changes: list[str] = []
    router = schedules_router(db_url, on_change=lambda: changes.append("changed"))
    app: FastAPI = create_app(db_url, token="t0ken", routers=[router])
    auth = {"Authorization": "Bearer t0ken"}
    with TestClient(app) as client:
        assert client.get("/schedules").status_code == 401  # the API's token guards it too
        assert client.get("/schedules", headers=auth).json() == []
        created = client.post("/schedules", json={"table": "sales", "every": "2h"}, headers=auth)
        assert created.status_code == 201, created.text
        assert created.json()["every"] == "2h"
        assert created.json()["next_run"].endswith("Z")
        assert [s["table"] for s in client.get("/schedules", headers=auth).json()] == ["sales"]
        for body, status, message in [
            ({"table": "nope", "every": "2h"}, 404, "unknown table"),
            ({"table": "sales"}, 400, "exactly one of cron"),
            ({"table": "sales", "cron": "x"}, 400, "5 fields"),
            ({"table": "sales", "every": 5}, 400, "every must be a string"),
            ({"every": "5m"}, 400, "table is required"),
            ({"table": "sales", "every": "5m", "at": 1}, 400, "unknown field(s) at"),
            ([1], 400, "must be {"),
        ]:
            answer = client.post("/schedules", json=body, headers=auth)
            assert answer.status_code == status, (body, answer.text)
            assert message in answer.json()["error"], body
        bad_json = client.post("/schedules", content=b"{", headers=auth)
        assert bad_json.status_code == 400
        assert bad_json.json() == {"error": "the request body is not JSON"}
        removed = client.delete("/schedules/sales", headers=auth)
        assert removed.json() == {"table": "sales", "removed": True}
        missing = client.delete("/schedules/sales", headers=auth)
        assert missing.status_code == 404
        assert missing.json() == {"error": "table sales has no schedule"}
    assert changes == ["changed", "changed"]
    assert stored_jobs(sales) == 0


def test_http_schedules_when_the_database_is_unreachable() -> None:
    url = "postgresql+psycopg2://postgres@127.0.0.1:1/test"
    with TestClient(create_app(url, routers=[schedules_router(url)])) as client:
        answer = client.get("/schedules")
    assert answer.status_code == 503
    assert answer.json()["error"].startswith("cannot reach the metastore")


def test_durations() -> None:
    assert [every_seconds(t) for t in ("3s", "15m", "2h", "1d", "1h30m", " 10M ")] == [
        3,
        900,
        7200,
        86400,
        5400,
        600,
    ]
    for bad in ("", "15", "m", "1x", "0s", "-5m", "1.5h"):
        with pytest.raises(InvalidValue):
            every_seconds(bad)


def test_crontab_weekdays_count_from_sunday() -> None:
    assert crontab_weekdays("*") == "*"
    assert crontab_weekdays("0") == crontab_weekdays("7") == "sun"
    assert crontab_weekdays("1-5") == "mon,tue,wed,thu,fri"
    assert crontab_weekdays("5-7") == "sun,fri,sat"
    assert crontab_weekdays("*/2") == "sun,tue,thu,sat"
    assert crontab_weekdays("sat,SUN") == "sun,sat"
    for bad in ("8", "5-1", "mon-", "*/0", "x", "1/a"):
        with pytest.raises(InvalidValue):
            crontab_weekdays(bad)
