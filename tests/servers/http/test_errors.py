"""servers.http.errors: every failure is {"error": "<one line>"} with its status."""

from __future__ import annotations

from typing import Any

from tests.servers.http.helpers import TestClient, assert_error

ERRORS: list[tuple[str, str, dict[str, Any] | None, int, str | None]] = [
    ("GET", "/tables/nope/partitions", None, 404, "unknown table 'nope'"),
    ("GET", "/tables/nope", None, 404, "unknown table 'nope'"),
    (
        "GET",
        "/tables/sales/partitions?in=zone=1",
        None,
        404,
        "unknown partition key 'zone' of table sales (keys: dt, region)",
    ),
    (
        "GET",
        "/tables/sales/partitions?in=label=a",
        None,
        400,
        "label is a data column of sales, not a partition key (keys: dt, region)",
    ),
    (
        "GET",
        "/tables/sales/partitions?in=dt=2024-1-5",
        None,
        400,
        "'2024-1-5' is not a valid date for key dt",
    ),
    ("GET", "/tables/sales/partitions?in=dt=", None, 400, "empty value list for key dt"),
    ("GET", "/tables/sales/partitions?in=dt", None, 400, "in wants KEY=V1,V2,..., got 'dt'"),
    ("POST", "/tables/sales/partitions", {"in": {"dt": []}}, 400, None),
    ("POST", "/tables/sales/partitions", {"in": {"dt": [20240101]}}, 400, None),
    ("POST", "/tables/sales/partitions", {"where": "dt >"}, 400, None),
    ("POST", "/tables/sales/partitions", {"where": "nope = 1"}, 404, None),
    (
        "POST",
        "/tables/sales/partitions",
        {"tuples": [{"keys": ["dt", "region"], "rows": [["2024-01-01"]]}]},
        400,
        "tuple 1 has 1 values, expected 2 (dt, region)",
    ),
    ("POST", "/tables/sales/partitions", {"tuples": [{"keys": ["dt"], "rows": []}]}, 400, None),
    ("POST", "/tables/sales/partitions", {"in": {"dt": "2024-01-01"}}, 422, None),
    ("POST", "/tables/sales/partitions", {"inn": {}}, 422, None),
    ("POST", "/tables/sales/partitions", {"in": {"region": ["a\x00b"]}}, 422, None),
    ("POST", "/tables/sales/partitions", {"where": "region = 'a\x00'"}, 422, None),
    ("GET", "/tables/sales/partitions?where=region%3D%27a%00%27", None, 422, None),
    ("POST", "/estimate", {"sql": "SELECT * FROM sales WHERE region = 'a\x00'"}, 422, None),
    ("POST", "/tables/sales/statistics", {"buckets": 0}, 422, None),
    ("POST", "/tables/sales/statistics", {"columns": ["nope"]}, 404, None),
    ("GET", "/tables/bad%20name", None, 400, None),
    ("GET", "/no/such/route", None, 404, None),
    ("DELETE", "/tables/sales", None, 405, None),
    ("POST", "/estimate", {"sql": "SELECT 'unterminated"}, 400, None),
    ("POST", "/estimate", {"sql": "SELECT * FROM nope"}, 404, None),
    ("POST", "/estimate", {"sql": "SELECT 1", "level": "magic"}, 422, None),
    ("POST", "/explain", {"sql": "SELECT * FROM nope"}, 404, None),
    ("POST", "/explain", {"sql": "SELECT 'unterminated"}, 400, None),
    ("POST", "/explain", {"sql": "SELECT * FROM sales", "config": {"CPUc": "x"}}, 400, None),
    ("POST", "/explain", {"sql": "SELECT * FROM sales", "emit": "hive"}, 422, None),
    ("GET", "/runs?table=nope", None, 404, "unknown table 'nope'"),
    ("GET", "/runs?limit=0", None, 422, None),
]


def test_errors_are_one_json_line(client: TestClient) -> None:
    """Each of ERRORS, (method, path, body, status, message), on one app: the status, and
    {"error": "<one line>"} with the metastore's own message where one is given."""
    for method, path, body, status, message in ERRORS:
        response = client.request(method, path, json=body)
        assert response.status_code == status, f"{method} {path} {body!r}: {response.text}"
        assert_error(response, status, message)


def test_malformed_json_body_is_refused(client: TestClient) -> None:
    response = client.post(
        "/tables/sales/partitions",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert "json" in assert_error(response, 422).lower()
