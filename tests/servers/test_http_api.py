"""The HTTP API: the CLI's JSON over HTTP, one-line JSON errors with their statuses, the
bearer token, collection runs, Prometheus metrics, a database that is down, and a
schemathesis fuzz of the OpenAPI schema. On SQLite and PostgreSQL alike."""

from __future__ import annotations

import datetime as dt
import doctest
import json
import re
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import APIRouter, FastAPI
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from sqlalchemy import insert, select
from starlette.exceptions import StarletteDeprecationWarning
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from metastore import Metastore
from metastore.engine import run_write
from metastore.models import CatalogTable, CollectionRun
from servers.authorization import HTTP_TOKEN_PRINCIPAL, Role, Roles
from servers.http import metrics
from servers.http.app import create_app
from servers.http.routes.schedules import schedules_router
from statlas.cli import main
from tests.support.partitions import SALES_DAYS, SALES_REGIONS, register_sales, write_partitions

with warnings.catch_warnings():  # starlette asks for httpx2; the httpx installed works
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from fastapi.testclient import TestClient

DAYS, REGIONS = SALES_DAYS, SALES_REGIONS
CLOSED_PORT_PG = "postgresql+psycopg2://postgres@127.0.0.1:1/test"
TOKEN = "s3cret-token"
JSON_CONTENT = {"content-type": "application/json"}
FUZZ_EXAMPLES = 12  # per operation, mode and backend: about 20 s in all


@pytest.fixture
def sales(metastore: Metastore, tmp_path: Path) -> Metastore:
    """`sales` by dt (date) x region (string), with a default partition on each key."""
    return register_sales(metastore, tmp_path)


@pytest.fixture
def app(sales: Metastore, db_url: str) -> FastAPI:
    return create_app(db_url)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client


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


# --- health and tables -----------------------------------------------------------------


def test_health(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


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


# --- lookups ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "cli_args", "expected"),
    [
        (
            [("in", "dt=2024-01-01,2024-01-03,2030-01-01"), ("in", "region=emea")],
            ["--in", "dt=2024-01-01,2024-01-03,2030-01-01", "--in", "region=emea"],
            ["dt=2024-01-01/region=emea", "dt=2024-01-03/region=emea"],
        ),
        (
            [("in", "dt=__HIVE_DEFAULT_PARTITION__")],
            ["--in", "dt=__HIVE_DEFAULT_PARTITION__"],
            ["dt=__HIVE_DEFAULT_PARTITION__/region=emea"],
        ),
        (
            [("where", "dt >= '2024-01-03' OR region IS NULL")],
            ["--where", "dt >= '2024-01-03' OR region IS NULL"],
            [
                "dt=2024-01-01/region=__HIVE_DEFAULT_PARTITION__",
                "dt=2024-01-03/region=amer",
                "dt=2024-01-03/region=apac",
                "dt=2024-01-03/region=emea",
            ],
        ),
        (
            [("in", "region=apac,amer"), ("where", "dt BETWEEN '2024-01-02' AND '2024-01-09'")],
            ["--in", "region=apac,amer", "--where", "dt BETWEEN '2024-01-02' AND '2024-01-09'"],
            [
                "dt=2024-01-02/region=amer",
                "dt=2024-01-02/region=apac",
                "dt=2024-01-03/region=amer",
                "dt=2024-01-03/region=apac",
            ],
        ),
    ],
    ids=["in-lists", "default-partition", "where", "in-and-where"],
)
def test_get_lookup_is_the_cli_json(
    client: TestClient,
    db_url: str,
    capsys: pytest.CaptureFixture[str],
    params: list[tuple[str, str]],
    cli_args: list[str],
    expected: list[str],
) -> None:
    response = client.get("/tables/sales/partitions", params=params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    assert names(response.json()) == expected
    assert response.json() == cli_json(capsys, db_url, "partitions", "sales", *cli_args)


def test_lookup_json_of_every_key_type_is_the_cli_json(
    metastore: Metastore, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Integers as numbers, booleans as booleans, decimals, dates and timestamps as text,
    NULL as null: the API assembles the answer itself, byte for byte the CLI's JSON."""
    from metastore.catalog import parse_partition_types

    keys = ["n", "big", "amount", "ts", "flag", "s"]
    rows: list[list[str | None]] = [
        ["1", "9000000000", "12.50", "2024-01-01 10:00:00", "true", "a/b"],
        ["2", "-3", "0.05", "2024-01-01 10:00:00.250", "false", 'quote"é'],
        ["1", "9000000000", "12.50", "2024-01-02 00:00:00", "true", "a/b"],
        [None, None, None, None, None, None],
    ]
    write_partitions(tmp_path / "typed", keys, rows)
    types = "n:int,big:bigint,amount:decimal(10,2),ts:timestamp,flag:boolean,s:string"
    metastore.register_table("typed", str(tmp_path / "typed"), None, parse_partition_types(types))
    with TestClient(create_app(db_url)) as client:
        answer = client.get("/tables/typed/partitions")
        assert answer.status_code == 200
        assert answer.json() == cli_json(capsys, db_url, "partitions", "typed")
        values = [p["values"] for p in answer.json()["partitions"]]
        assert values[0] == {
            "n": 1,
            "big": 9000000000,
            "amount": "12.50",
            "ts": "2024-01-01 10:00:00",
            "flag": True,
            "s": "a/b",
        }
        assert values[-1] == dict.fromkeys(keys)
        some = client.post("/tables/typed/partitions", json={"in": {"flag": [False]}}).json()
        assert [p["values"]["s"] for p in some["partitions"]] == ['quote"é']


def compact_json(value: Any) -> bytes:
    """What json.dumps writes for the CLI's --json, compact: the bytes an answer must be."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("keys", [0, 1, 2, 3])
def test_lookup_answer_is_byte_for_byte_json_dumps(keys: int) -> None:
    """partitions_json (orjson, column by column) writes the very bytes of json.dumps of
    as_json(), for every type of key value, raw values with decoders (SQLite), strings
    that need escaping, no key at all and no partition at all."""
    import decimal

    from metastore.lookup import PartitionList
    from servers.http.lookup import partitions_json

    strange = ['q"uote\\', "tab\tnew\nline\x01\x7f", "é€😀\u2028", "", "__x__"]
    values: list[list[Any]] = [
        [3, -(2**63), True, None, 7],
        [dt.date(2024, 1, 5), dt.date(1, 1, 1), dt.date(9999, 12, 31), None, dt.date(999, 3, 4)],
        strange,
        [dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 1, 0, 0, 0, 250), None, None, None],
        [decimal.Decimal("12.50"), decimal.Decimal("-0.05"), None, decimal.Decimal(0), None],
    ]
    for chosen in ([0, 1, 2], [1, 3, 4], [2]):
        columns = [values[i] for i in chosen][:keys]
        names = tuple(f"k{i}" for i in range(len(columns)))
        rows = [
            (f"p{5 - r}", *(c[r] for c in columns), f"/lake/{strange[r]}/{r}") for r in range(5)
        ]
        found = PartitionList("db.t", names, rows)
        assert partitions_json(found) == compact_json(found.as_json())
        assert partitions_json(PartitionList("t", names, [])) == compact_json(
            {"table": "t", "count": 0, "partitions": []}
        )
    # raw values and their decoders, as SQLite answers
    raw = [("b", "2024-01-02", "1250", "/b"), ("a", None, "-5", "/a")]
    decoders = (dt.date.fromisoformat, lambda v: decimal.Decimal(int(v)).scaleb(-2))
    found = PartitionList("t", ("d", "m"), raw, decoders)
    assert partitions_json(found) == compact_json(found.as_json())


class FastAPIRouting:
    """ASGI, placed innermost (between the fast path and FastAPI's router): the method of
    each lookup request that reaches FastAPI's routing, in order. What the fast path
    (servers.http.fast_path.LookupFastPath) answers never gets here."""

    def __init__(self, app: ASGIApp, seen: list[str]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and re.fullmatch(r"/tables/[^/]+/partitions", scope["path"]):
            self.seen.append(scope["method"])
        await self.app(scope, receive, send)


def test_lookup_fast_path_answers_and_leaves_the_rest_to_fastapi(app: FastAPI) -> None:
    """Well-formed lookups (a JSON body, or GET parameters the schema takes) are answered
    by the fast path and never reach FastAPI's routing; the others get FastAPI's answer:
    JSON with a charset, a body that is not JSON, query parameters FastAPI refuses."""
    fastapi_saw: list[str] = []
    app.user_middleware.append(Middleware(FastAPIRouting, seen=fastapi_saw))  # innermost
    with TestClient(app) as client:
        body = json.dumps({"in": {"dt": ["2024-01-02"], "region": ["emea"]}}).encode()
        fast = client.post("/tables/sales/partitions", content=body, headers=JSON_CONTENT)
        assert fast.status_code == 200
        assert names(fast.json()) == ["dt=2024-01-02/region=emea"]
        fast_get = client.get("/tables/sales/partitions", params={"in": "dt=2024-01-02"})
        assert names(fast_get.json()) == [
            "dt=2024-01-02/region=amer",
            "dt=2024-01-02/region=apac",
            "dt=2024-01-02/region=emea",
        ]
        unknown = client.post("/tables/nope/partitions", content=body, headers=JSON_CONTENT)
        assert_error(unknown, 404)  # the app's own error handler, from the fast path
        assert fastapi_saw == []
        with_charset = client.post(
            "/tables/sales/partitions",
            content=body,
            headers={"content-type": "application/json; charset=utf-8"},
        )
        assert with_charset.status_code == 200
        assert with_charset.content == fast.content
        assert fastapi_saw == ["POST"]
        assert_error(
            client.post(
                "/tables/sales/partitions", content=body, headers={"content-type": "text/plain"}
            ),
            422,
        )
        assert_error(
            client.post("/tables/sales/partitions", content=b"", headers=JSON_CONTENT), 422
        )
        assert_error(
            client.post("/tables/sales/partitions", content=b"[1]", headers=JSON_CONTENT), 422
        )
        bad_get = client.get("/tables/sales/partitions", params={"in": "region=a\x00"})
        assert_error(bad_get, 422)
        assert fastapi_saw == ["POST", "POST", "POST", "POST", "GET"]
        # a trailing slash (redirected) and other methods are FastAPI's to answer
        assert client.get("/tables/sales/partitions/", follow_redirects=False).status_code == 307
        assert client.put("/tables/sales/partitions", json={}).status_code == 405


PLAIN_TEXT = st.one_of(st.text(max_size=6), st.sampled_from(["a\x00", "\x00", "2024-01-01"]))
DOCUMENTS = st.one_of(
    st.dictionaries(
        st.sampled_from(["in", "in_", "where", "tuples", "x"]),
        st.one_of(
            st.dictionaries(
                st.text(max_size=4),
                st.one_of(
                    st.lists(PLAIN_TEXT, max_size=4),
                    st.lists(st.one_of(PLAIN_TEXT, st.integers(), st.none()), max_size=3),
                    PLAIN_TEXT,
                ),
                max_size=3,
            ),
            PLAIN_TEXT,
            st.none(),
        ),
        max_size=2,
    ),
    st.lists(PLAIN_TEXT, max_size=2),
)


PLAIN_DOCUMENTS = st.fixed_dictionaries(
    {"in": st.dictionaries(st.text(max_size=4), st.lists(st.text(max_size=6)), max_size=3)}
).filter(lambda document: "\x00" not in json.dumps(document, ensure_ascii=False))


def plain(document: Any) -> bool:
    """The commonest selection, which plain_in_lists reads without pydantic:
    {"in": {key: [text, ...], ...}} with no NUL character in any text."""
    if not isinstance(document, dict) or list(document) != ["in"]:
        return False
    lists = document["in"]
    return isinstance(lists, dict) and all(
        isinstance(values, list) and all(isinstance(v, str) and "\x00" not in v for v in values)
        for values in lists.values()
    )


@given(st.one_of(PLAIN_DOCUMENTS, DOCUMENTS))
@example({"in": {"dt": ["2024-01-01", ""], "region": []}})
@example({"in": {"dt": ["2024-01-01", None]}})
def test_plain_in_lists_are_what_the_schema_makes_of_them(document: Any) -> None:
    """plain_in_lists takes every plain document, and gives the query the schema makes of
    it; anything else it leaves to the schema (None)."""
    from pydantic import ValidationError

    from servers.http.fast_path import plain_in_lists
    from servers.http.models import Selection

    quick = plain_in_lists(document)
    if not plain(document):
        assert quick is None, f"plain_in_lists took {document!r}, which is not plain"
        return
    assert quick is not None, f"plain_in_lists left {document!r} to the schema"
    try:
        assert quick == Selection.model_validate(document).query()
    except ValidationError:
        pytest.fail(f"plain_in_lists took {document!r}, which the schema refuses")


def test_lookups_after_a_restart_of_the_app(sales: Metastore, db_url: str) -> None:
    """The lifespan stops the lookup threads and closes the connections; started again,
    the app makes new ones."""
    app = create_app(db_url)
    for _ in range(2):
        with TestClient(app) as test_client:
            answer = test_client.get("/tables/sales/partitions", params={"in": "dt=2024-01-03"})
            assert answer.status_code == 200
            assert answer.json()["count"] == 3


def test_get_lookup_without_condition_lists_every_partition(client: TestClient) -> None:
    answer = client.get("/tables/sales/partitions").json()
    assert answer["table"] == "sales"
    assert answer["count"] == len(answer["partitions"]) == 11


def test_post_lookup_lists_tuples_and_where(client: TestClient) -> None:
    body = {
        "in": {"dt": ["2024-01-01", None, "2024-01-02"], "REGION": ["emea", "apac"]},
        "where": "dt <> '2024-01-02'",
    }
    answer = client.post("/tables/sales/partitions", json=body).json()
    assert names(answer) == ["dt=2024-01-01/region=apac", "dt=2024-01-01/region=emea"]
    # null in a list matches the default partition; --where follows SQL's NULL logic
    del body["where"]
    answer = client.post("/tables/sales/partitions", json=body).json()
    assert answer["count"] == 5
    assert answer["partitions"][-1]["values"] == {"dt": None, "region": "emea"}
    rows = [["2024-01-01", "emea"], ["2024-01-02", "apac"], [None, "emea"], ["2024-01-09", "x"]]
    tuples = {"tuples": [{"keys": ["dt", "region"], "rows": rows}]}
    answer = client.post("/tables/sales/partitions", json=tuples).json()
    assert names(answer) == [
        "dt=2024-01-01/region=emea",
        "dt=2024-01-02/region=apac",
        "dt=__HIVE_DEFAULT_PARTITION__/region=emea",
    ]
    assert answer["partitions"][2]["values"] == {"dt": None, "region": "emea"}


def test_post_lookup_of_100000_values(client: TestClient) -> None:
    start = dt.date(1900, 1, 1)
    days = [(start + dt.timedelta(i)).isoformat() for i in range(100_000)]  # 1900 to 2173
    body = {"in": {"dt": days, "region": ["emea", "__HIVE_DEFAULT_PARTITION__"]}}
    started = time.perf_counter()
    answer = client.post("/tables/sales/partitions", json=body).json()
    seconds = time.perf_counter() - started
    assert names(answer) == [
        "dt=2024-01-01/region=__HIVE_DEFAULT_PARTITION__",
        "dt=2024-01-01/region=emea",
        "dt=2024-01-02/region=emea",
        "dt=2024-01-03/region=emea",
    ]
    assert seconds < 10, f"a 100,000-value lookup took {seconds:.1f} s"


@pytest.mark.slow
def test_post_lookup_of_1000000_values(client: TestClient) -> None:
    regions = [f"r{i}" for i in range(999_999)] + ["apac"]
    answer = client.post("/tables/sales/partitions", json={"in": {"region": regions}}).json()
    assert answer["count"] == 3
    assert {p["values"]["region"] for p in answer["partitions"]} == {"apac"}


# --- errors ----------------------------------------------------------------------------


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


def test_token_guards_every_route_but_health(sales: Metastore, db_url: str) -> None:
    router = APIRouter()

    @router.get("/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    with TestClient(create_app(db_url, token=TOKEN, routers=[router])) as client:
        assert client.get("/health").status_code == 200
        for path in ("/tables", "/tables/sales/partitions", "/metrics", "/runs", "/ping", "/docs"):
            assert_error(client.get(path), 401, "missing or wrong bearer token")
        wrong = {"Authorization": "Bearer nope"}
        assert_error(client.get("/tables", headers=wrong), 401)
        assert_error(client.get("/tables", headers={"Authorization": TOKEN}), 401)
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get("/tables", headers=good).status_code == 200
        assert client.get("/ping", headers=good).json() == {"pong": "yes"}
        found = client.post("/tables/sales/partitions", json={}, headers=good)
        assert found.json()["count"] == 11
        schema = client.get("/openapi.json", headers=good).json()
        assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert "/ping" in schema["paths"]


def test_the_tokens_role_decides_what_it_may_change(sales: Metastore, db_url: str) -> None:
    """With a roles file the bearer token's holder ("api-token") is a reader, writer or
    admin: a reader queries (GET and the reading POSTs) and may not change schedules."""
    good = {"Authorization": f"Bearer {TOKEN}"}
    for role, may_change in (("reader", False), ("writer", True)):
        roles = Roles({HTTP_TOKEN_PRINCIPAL: Role[role.upper()]}, None)
        app = create_app(db_url, token=TOKEN, routers=[schedules_router(db_url)], roles=roles)
        with TestClient(app) as client:
            assert client.get("/tables", headers=good).status_code == 200
            found = client.post("/tables/sales/partitions", json={}, headers=good)
            assert found.json()["count"] == 11
            assert client.get("/schedules", headers=good).status_code == 200
            added = client.post("/schedules", json={"table": "sales", "every": "1h"}, headers=good)
            removed = client.delete("/schedules/sales", headers=good)
            if may_change:
                assert (added.status_code, removed.status_code) == (201, 200), added.text
            else:
                message = "Permission denied: api-token (role reader) may not POST /schedules"
                assert message in assert_error(added, 403)
                assert_error(removed, 403)
                assert client.get("/schedules", headers=good).json() == []
    nobody = create_app(db_url, token=TOKEN, roles=Roles({}, None))
    with TestClient(nobody) as client:
        assert "has no role" in assert_error(client.get("/tables", headers=good), 403)
        assert client.get("/health").status_code == 200


# --- statistics and estimates without Spark ---------------------------------------------


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


def test_prune_with_nothing_to_prune_does_not_start_spark(client: TestClient, app: FastAPI) -> None:
    """Nothing to prune is an answer (issue 21): not pruned, the partitions the query's own
    filters keep, and no Spark started to say so."""
    response = client.post("/prune", json={"sql": "SELECT * FROM sales WHERE dt = '2024-01-01'"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["pruned"], body["table"], body["rejected"]) == (False, "sales", [])
    assert body["partitions_before"] == body["partitions_after"] == 4  # 3 regions + default
    assert_error(client.post("/prune", json={"sql": "SELECT 1", "max_values": 0}), 422)
    assert app.state.service.spark.started is False


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


def test_runs_newest_first(sales: Metastore, client: TestClient, tmp_path: Path) -> None:
    write_partitions(tmp_path / "other", ["n"], [["1"]])
    sales.register_table("other", str(tmp_path / "other"))
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    add_run(
        sales, "sales", now - dt.timedelta(hours=3), "succeeded", partitions_scanned=11, rows=33
    )
    add_run(sales, "sales", now - dt.timedelta(hours=2), "failed", error="executor lost")
    add_run(sales, "other", now - dt.timedelta(hours=1), "running")
    every = client.get("/runs").json()["runs"]
    assert [(r["table"], r["status"]) for r in every] == [
        ("other", "running"),
        ("sales", "failed"),
        ("sales", "succeeded"),
    ]
    oldest = every[-1]
    assert set(oldest) == {
        "id",
        "table",
        "started",
        "finished",
        "status",
        "partitions_scanned",
        "partitions_skipped",
        "partitions_removed",
        "rows",
        "error",
    }
    assert dt.datetime.fromisoformat(oldest["started"]) == now - dt.timedelta(hours=3)
    assert dt.datetime.fromisoformat(oldest["finished"]) == now - dt.timedelta(
        hours=2, minutes=59, seconds=30
    )
    assert (oldest["partitions_scanned"], oldest["rows"], oldest["error"]) == (11, 33, None)
    assert every[0]["finished"] is None
    assert every[1]["error"] == "executor lost"
    of_sales = client.get("/runs", params={"table": "Sales", "limit": 1}).json()["runs"]
    assert [(r["table"], r["status"]) for r in of_sales] == [("sales", "failed")]


def test_formats_examples() -> None:
    """The examples in servers.http.formats's docstring (the time format, the NUL rule)."""
    from servers.http import formats

    assert doctest.testmod(formats).failed == 0


def test_runs_print_times_as_schedules_do(sales: Metastore, db_url: str) -> None:
    """Every time the API prints is one format (formats.utc_text): ISO 8601 in UTC to the
    second, `Z` for the zone; /runs printed microseconds and +00:00 where /schedules
    printed this."""
    started = dt.datetime(2024, 3, 5, 14, 30, 7, 250_000, tzinfo=dt.UTC)
    add_run(sales, "sales", started, "succeeded")
    app = create_app(db_url, routers=[schedules_router(db_url)])
    with TestClient(app) as client:
        assert client.post("/schedules", json={"table": "sales", "every": "1h"}).status_code == 201
        [run] = client.get("/runs").json()["runs"]
        [schedule] = client.get("/schedules").json()
    assert (run["started"], run["finished"]) == ("2024-03-05T14:30:07Z", "2024-03-05T14:30:37Z")
    one_format = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert one_format.fullmatch(schedule["next_run"]), schedule


# --- metrics ---------------------------------------------------------------------------


def sample(text: str, name: str, **labels: str) -> float | None:
    """The value of one sample of a Prometheus exposition text (None if absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    return None


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


# --- a database that is down -----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [CLOSED_PORT_PG, "sqlite:////nonexistent-statlas-dir/statlas.db"],
    ids=["postgres-closed-port", "sqlite-missing-dir"],
)
def test_database_down_is_503(url: str) -> None:
    with TestClient(create_app(url)) as client:
        health = client.get("/health")
        assert health.status_code == 503
        assert health.json()["status"] == "degraded"
        assert health.json()["database"] == "unavailable"
        assert "\n" not in health.json()["error"]
        assert "cannot reach the metastore" in assert_error(
            client.get("/tables/sales/partitions", params={"in": "dt=2024-01-01"}), 503
        )
        assert_error(client.post("/tables/sales/partitions", json={"in": {"dt": ["x"]}}), 503)
        assert_error(client.get("/tables"), 503)
        assert_error(client.get("/runs"), 503)
        scraped = client.get("/metrics")
        assert scraped.status_code == 200
        assert sample(scraped.text, "statlas_metastore_up") == 0


@pytest.mark.postgres
def test_schema_not_upgraded_is_503(pg_url: str) -> None:
    """A PostgreSQL metastore is upgraded explicitly: until then the API is unavailable."""
    with TestClient(create_app(pg_url)) as client:
        assert client.get("/health").status_code == 200  # the database itself answers
        assert "statlas db upgrade" in assert_error(client.get("/tables"), 503)


# --- any lookup: an answer or a one-line error, never a server error -----------------------

KEYS = st.sampled_from(["dt", "dt", "region", "region", "REGION", "label", "zone"])
VALUES = st.one_of(
    st.text(max_size=12),
    st.dates().map(str),
    st.sampled_from([*DAYS, *REGIONS, "__HIVE_DEFAULT_PARTITION__", "em\x00ea", "9" * 30]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.booleans(),
    st.none(),
)
CONDITIONS = st.one_of(
    st.none(),
    st.text(max_size=20),
    st.builds(
        "{} {} '{}'".format,
        KEYS,
        st.sampled_from(["=", "<>", "<", ">=", "IN", "BETWEEN"]),
        st.text(max_size=10),
    ),
)
TUPLES = st.fixed_dictionaries(
    {
        "keys": st.lists(KEYS, min_size=1, max_size=2),
        "rows": st.lists(st.lists(VALUES, max_size=3), max_size=3),
    }
)
LOOKUPS = st.one_of(
    st.builds(lambda key, values: {"in": {key: values}}, KEYS, st.lists(VALUES, max_size=4)),
    st.builds(lambda where: {"where": where}, CONDITIONS),
    st.builds(lambda tuples: {"tuples": [tuples]}, TUPLES),
    st.fixed_dictionaries(
        {},
        optional={
            "in": st.dictionaries(KEYS, st.lists(VALUES, max_size=5), max_size=3),
            "tuples": st.lists(TUPLES, max_size=2),
            "where": CONDITIONS,
        },
    ),
)


def test_any_lookup_answers_or_fails_in_one_json_line(client: TestClient) -> None:
    """Lists of any values (wrong types, NUL characters, huge numbers, NaN), tuples of any
    shape and conditions of any text: 200, or a 4xx {"error": ...}."""

    @given(body=LOOKUPS)
    @settings(
        max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def answers(body: dict[str, Any]) -> None:
        response = client.post(
            "/tables/sales/partitions", content=json.dumps(body), headers=JSON_CONTENT
        )
        assert response.status_code < 500, f"{body!r}: {response.text}"
        if response.status_code != 200:
            assert_error(response, response.status_code)

    answers()


# --- fuzzing the OpenAPI schema ---------------------------------------------------------


def operation_cases(operation: Any, mode: GenerationMode) -> st.SearchStrategy[Any]:
    """Requests schemathesis draws for `operation`; for /tables/{name}/... half of them
    name the registered table, so that fuzzed lists and conditions reach the database."""
    drawn = operation.as_strategy(generation_mode=mode)
    if "{name}" not in operation.path:
        return drawn  # type: ignore[no-any-return]
    return st.one_of(drawn, operation.as_strategy(generation_mode=mode, path_parameters=SALES))


SALES = {"name": "sales"}


@pytest.mark.slow  # about 20 s in all: make test runs it, make check does not
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fuzz_finds_no_server_error(sales: Metastore, db_url: str, mode: GenerationMode) -> None:
    """Every operation but /prune (it may start Spark), with data that fits the schema and
    data that does not: never a 5xx, and every error is {"error": ...}."""
    app = create_app(db_url)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app).exclude(path="/prune")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9

    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not (len(operation.query) or len(operation.body)):
            continue  # nothing of it can break its schema

        @given(case=operation_cases(operation, mode))
        @settings(
            max_examples=FUZZ_EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def answers_without_server_error(case: Any) -> None:
            response = case.call()
            where = f"{case.method} {case.formatted_path} {case.query} {case.body!r}"
            assert response.status_code < 500, f"{where}: {response.text}"
            if response.status_code >= 400:
                assert list(response.json()) == ["error"], f"{where}: {response.text}"

        answers_without_server_error()
    assert app.state.service.spark.started is False


# --- with statistics collected by Spark ---------------------------------------------------


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
