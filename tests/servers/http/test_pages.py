"""GET /tables?summary=true (metastore.hive.summaries), GET
/tables/{name}/partitions/page (metastore.catalog.pages) and POST /explain's level and
per-node estimate sources, before any collection (no Spark): the CLI's JSON.
test_statistics checks the figures after a collection."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from metastore import Metastore
from tests.servers.http.helpers import DAYS, REGIONS, TestClient, add_run, assert_error, cli_json

PAGE = "/tables/sales/partitions/page"
KEYS = ["dt", "region"]


def ordered_values(db_url: str) -> list[list[str | None]]:
    """sales' partitions' values ordered by (dt, region), NULL as each database orders it
    in an ascending index: first on SQLite, last on PostgreSQL."""
    rows: list[list[str | None]] = [[d, r] for d in DAYS for r in REGIONS]
    rows += [[None, "emea"], ["2024-01-01", None]]
    nulls_first = db_url.startswith("sqlite")

    def key(row: list[str | None]) -> tuple[tuple[bool, str], ...]:
        return tuple(((v is None) != nulls_first, v or "") for v in row)

    return sorted(rows, key=key)


def partition_name(values: list[str | None]) -> str:
    return "/".join(
        f"{k}={'__HIVE_DEFAULT_PARTITION__' if v is None else v}"
        for k, v in zip(KEYS, values, strict=True)
    )


def page_args(**params: Any) -> list[str]:
    argv = ["partitions", "sales"]
    for name, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            argv += [f"--{name}", str(item)]
    return argv


def test_pages_are_ordered_slices_of_the_selection(
    client: TestClient, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = ordered_values(db_url)
    whole = client.get(PAGE, params={"limit": 1000})
    assert whole.status_code == 200, whole.text
    answer = whole.json()
    assert (answer["table"], answer["keys"], answer["total"]) == ("sales", KEYS, 11)
    assert (answer["offset"], answer["limit"]) == (0, 1000)
    assert [p["values"] for p in answer["partitions"]] == expected
    first = answer["partitions"][0]
    assert first["name"] == partition_name(expected[0])
    assert first["location"] == str(tmp_path / "sales" / first["name"])
    [data_file] = (tmp_path / "sales" / first["name"]).iterdir()
    assert (first["files"], first["bytes"]) == (1, data_file.stat().st_size)
    modified = dt.datetime.fromtimestamp(data_file.stat().st_mtime_ns // 10**9, dt.UTC)
    assert first["modified"] == modified.isoformat().replace("+00:00", "Z")
    assert (first["rows"], first["collected"], first["stale"]) == (None, None, True)
    # the default page, and slices
    default = client.get(PAGE).json()
    assert (default["offset"], default["limit"], len(default["partitions"])) == (0, 50, 11)
    for offset, limit in [(0, 1), (3, 4), (9, 5), (11, 3), (40, 2)]:
        page = client.get(PAGE, params={"offset": offset, "limit": limit}).json()
        assert page["total"] == 11
        assert [p["values"] for p in page["partitions"]] == expected[offset : offset + limit]
        assert page == cli_json(capsys, db_url, *page_args(offset=offset, limit=limit))
    # a selection: IN lists and where
    params = {"in": ["region=emea,amer"], "where": "dt >= '2024-01-02'", "limit": 3}
    chosen = client.get(PAGE, params=params).json()
    selected = [v for v in expected if v[1] in ("emea", "amer") and v[0] and v[0] >= DAYS[1]]
    assert chosen["total"] == len(selected) == 4
    assert [p["values"] for p in chosen["partitions"]] == selected[:3]
    assert chosen == cli_json(capsys, db_url, *page_args(**params))
    defaults = client.get(PAGE, params={"in": "region=__HIVE_DEFAULT_PARTITION__"}).json()
    assert [p["values"] for p in defaults["partitions"]] == [["2024-01-01", None]]


def test_page_errors(client: TestClient, db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert_error(client.get("/tables/nope/partitions/page"), 404, "unknown table 'nope'")
    assert_error(client.get(PAGE, params={"in": "dt=someday"}), 400)
    assert_error(client.get(PAGE, params={"in": "dt"}), 400)
    assert_error(client.get(PAGE, params={"in": "color=red"}), 404)
    assert_error(client.get(PAGE, params={"where": "dt >>"}), 400)
    beyond = 2**63  # past what a database's OFFSET takes (the fuzzer's find: a 500 once)
    for params in ({"offset": -1}, {"limit": 0}, {"limit": 1001}, {"offset": "x"}):
        assert_error(client.get(PAGE, params=params), 422)
    assert_error(client.get(PAGE, params={"offset": beyond}), 422)
    from statlas.cli import main

    capsys.readouterr()
    assert main(["--db", db_url, "partitions", "sales", "--limit", "1001", "--json"]) == 2
    assert "limit must be from 1 to 1000" in capsys.readouterr().err
    assert main(["--db", db_url, "partitions", "sales", "--offset", str(beyond)]) == 2
    assert f"offset must be from 0 to {beyond - 1}" in capsys.readouterr().err
    # the lookup itself is unchanged
    lookup = client.get("/tables/sales/partitions", params={"in": "region=emea"})
    assert lookup.status_code == 200
    assert lookup.json()["count"] == 4


def test_summary_before_and_after_runs(
    sales: Metastore,
    client: TestClient,
    db_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plain = client.get("/tables").json()
    assert "summary" not in plain["tables"][0]
    files = [f for f in (tmp_path / "sales").rglob("*") if f.is_file()]
    assert len(files) == 11
    summarised = client.get("/tables", params={"summary": "true"})
    assert summarised.status_code == 200, summarised.text
    [table] = summarised.json()["tables"]
    assert {k: v for k, v in table.items() if k != "summary"} == plain["tables"][0]
    summary = table["summary"]
    assert summary == {
        "database": "default",
        "rows": None,
        "bytes": sum(f.stat().st_size for f in files),
        "files": len(files),
        "collected_partitions": 0,
        "stale_partitions": 11,
        "last_collection": None,
        "last_run_status": None,
        "statistics_served": "none (not collected by statlas, none written by an engine)",
    }
    assert summarised.json()["tables"] == cli_json(capsys, db_url, "table", "list", "--summary")
    # runs: the latest succeeded one's end, and the latest one's status
    started = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    add_run(sales, "sales", started, "succeeded")
    add_run(sales, "sales", started + dt.timedelta(hours=1), "failed", error="boom")
    add_run(sales, "sales", started - dt.timedelta(hours=1), "succeeded")
    summary = client.get("/tables", params={"summary": True}).json()["tables"][0]["summary"]
    assert summary["last_collection"] == "2026-01-02T03:04:35Z"  # started + 30 s
    assert summary["last_run_status"] == "failed"
    add_run(sales, "sales", started + dt.timedelta(hours=2), "running")
    summary = client.get("/tables", params={"summary": True}).json()["tables"][0]["summary"]
    assert (summary["last_collection"], summary["last_run_status"]) == (
        "2026-01-02T03:04:35Z",
        "running",
    )
    assert [t["summary"] for t in cli_json(capsys, db_url, "table", "list", "--summary")] == [
        summary
    ]


def test_explain_level_and_each_nodes_estimate_source(
    client: TestClient, db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sql = "SELECT a.region, count(*) FROM sales a JOIN sales b ON a.id = b.id GROUP BY a.region"
    default = client.post("/explain", json={"sql": sql})
    assert default.status_code == 200, default.text
    assert default.json()["level"] == "sketch"
    basic = client.post("/explain", json={"sql": sql, "level": "basic"})
    assert basic.status_code == 200, basic.text
    assert basic.json()["level"] == "basic"
    assert basic.json() == cli_json(capsys, db_url, "explain", "--sql", sql, "--level", "basic")
    assert_error(client.post("/explain", json={"sql": sql, "level": "exact"}), 422)

    def nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
        return [node, *(n for child in node["children"] for n in nodes(child))]

    for answer in (default.json(), basic.json()):
        found = nodes(answer["plan"])
        assert len(found) >= 4
        for node in found:
            assert isinstance(node["source"], str)
            assert node["source"]
            assert isinstance(node["precision"], str)
            assert {"op", "detail", "rows", "row_size", "size", "cost", "job"} <= set(node)
    estimated = client.post("/estimate", json={"sql": sql, "level": "basic"}).json()
    assert basic.json()["plan"]["precision"] == estimated["plan"]["precision"]
