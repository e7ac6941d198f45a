"""GET and POST /tables/{name}/partitions (servers.http.routes.partitions): the
CLI's JSON for every kind of lookup and key type, lists of 100,000 and 1,000,000
values, and any lookup at all: an answer or a one-line error, never a server error."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metastore import Metastore
from servers.http.app import create_app
from tests.servers.http.helpers import (
    DAYS,
    JSON_CONTENT,
    REGIONS,
    TestClient,
    assert_error,
    cli_json,
    names,
)
from tests.support.partitions import write_partitions


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
    from metastore.catalog.tables import parse_partition_types

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
