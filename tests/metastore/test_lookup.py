"""The IN-list partition lookup: per-key lists, exact tuples, --where, and bad input."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from metastore import Metastore, TupleList
from metastore.errors import InvalidLookup, InvalidValue, UnknownColumn, UnknownTable
from tests.support.partitions import SALES_DAYS, SALES_REGIONS, register_sales, write_partitions

DAYS, REGIONS = SALES_DAYS, SALES_REGIONS


@pytest.fixture
def sales(metastore: Metastore, tmp_path: Path) -> Metastore:
    return register_sales(metastore, tmp_path)


def names(ms: Metastore, **kwargs: object) -> list[str]:
    return ms.partitions("sales", **kwargs).names()  # type: ignore[arg-type]


def test_no_condition_lists_everything(sales: Metastore) -> None:
    assert len(sales.partitions("sales")) == 11


def test_per_key_lists_are_a_conjunction(sales: Metastore) -> None:
    assert names(
        sales, in_lists={"dt": ["2024-01-01", "2024-01-03", "2030-01-01"], "region": ["emea"]}
    ) == ["dt=2024-01-01/region=emea", "dt=2024-01-03/region=emea"]
    assert names(sales, in_lists={"DT": [dt.date(2024, 1, 2)]}) == [
        "dt=2024-01-02/region=amer",
        "dt=2024-01-02/region=apac",
        "dt=2024-01-02/region=emea",
    ]


def test_null_in_a_list_matches_the_default_partition(sales: Metastore) -> None:
    assert names(sales, in_lists={"dt": [None]}) == ["dt=__HIVE_DEFAULT_PARTITION__/region=emea"]
    assert names(
        sales, in_lists={"region": ["__HIVE_DEFAULT_PARTITION__", "amer"], "dt": ["2024-01-01"]}
    ) == ["dt=2024-01-01/region=__HIVE_DEFAULT_PARTITION__", "dt=2024-01-01/region=amer"]


def test_tuples_do_not_over_select_the_cross_product(sales: Metastore) -> None:
    rows = [["2024-01-01", "emea"], ["2024-01-02", "apac"], [None, "emea"], ["2024-01-09", "x"]]
    assert names(sales, tuples=[TupleList(("dt", "region"), rows)]) == [
        "dt=2024-01-01/region=emea",
        "dt=2024-01-02/region=apac",
        "dt=__HIVE_DEFAULT_PARTITION__/region=emea",
    ]
    # the per-key lists of the same values select the cross product: 4 partitions, not 2
    assert (
        len(names(sales, in_lists={"dt": ["2024-01-01", "2024-01-02"], "region": ["emea", "apac"]}))
        == 4
    )
    reversed_keys = [TupleList(("region", "dt"), [["apac", "2024-01-02"]])]
    assert names(sales, tuples=reversed_keys) == ["dt=2024-01-02/region=apac"]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (
            "dt >= '2024-01-03'",
            ["dt=2024-01-03/region=amer", "dt=2024-01-03/region=apac", "dt=2024-01-03/region=emea"],
        ),
        (
            "dt > DATE '2024-01-01' AND region IN ('emea', 'apac')",
            [
                "dt=2024-01-02/region=apac",
                "dt=2024-01-02/region=emea",
                "dt=2024-01-03/region=apac",
                "dt=2024-01-03/region=emea",
            ],
        ),
        (
            # NOT region = 'emea' is NULL, not true, for the default region
            "dt BETWEEN '2024-01-01' AND '2024-01-02' AND NOT region = 'emea'",
            [
                "dt=2024-01-01/region=amer",
                "dt=2024-01-01/region=apac",
                "dt=2024-01-02/region=amer",
                "dt=2024-01-02/region=apac",
            ],
        ),
        (
            "dt IS NULL OR region IS NULL",
            [
                "dt=2024-01-01/region=__HIVE_DEFAULT_PARTITION__",
                "dt=__HIVE_DEFAULT_PARTITION__/region=emea",
            ],
        ),
        (
            "dt IS NOT NULL AND region <> 'amer'",
            [
                "dt=2024-01-01/region=apac",
                "dt=2024-01-01/region=emea",
                "dt=2024-01-02/region=apac",
                "dt=2024-01-02/region=emea",
                "dt=2024-01-03/region=apac",
                "dt=2024-01-03/region=emea",
            ],
        ),
        ("dt = NULL", []),
        (
            "'2024-01-02' = dt",
            ["dt=2024-01-02/region=amer", "dt=2024-01-02/region=apac", "dt=2024-01-02/region=emea"],
        ),
        (
            # NULL in the list matches nothing: the default region is not selected
            "region IN ('emea', NULL)",
            [
                "dt=2024-01-01/region=emea",
                "dt=2024-01-02/region=emea",
                "dt=2024-01-03/region=emea",
                "dt=__HIVE_DEFAULT_PARTITION__/region=emea",
            ],
        ),
        (
            "(dt < '2024-01-02' OR dt > '2024-01-02') AND region = 'apac'",
            ["dt=2024-01-01/region=apac", "dt=2024-01-03/region=apac"],
        ),
    ],
)
def test_where(sales: Metastore, where: str, expected: list[str]) -> None:
    """The exact partitions each condition selects (SQL's NULL logic: a comparison with the
    default partition's NULL is not true)."""
    assert names(sales, where=where) == expected


def test_where_combines_with_lists(sales: Metastore) -> None:
    assert names(sales, in_lists={"region": ["emea"]}, where="dt >= '2024-01-02'") == [
        "dt=2024-01-02/region=emea",
        "dt=2024-01-03/region=emea",
    ]


def test_values_are_coerced_to_the_key_type(metastore: Metastore, tmp_path: Path) -> None:
    write_partitions(tmp_path / "t", ["n", "flag"], [["1", "true"], ["2", "false"]])
    from metastore.catalog.tables import parse_partition_types

    metastore.register_table(
        "t", str(tmp_path / "t"), partition_types=parse_partition_types("flag:boolean")
    )
    assert metastore.partitions("t", {"n": ["01", 2]}).names() == [
        "n=1/flag=true",
        "n=2/flag=false",
    ]
    assert metastore.partitions("t", {"flag": [False]}).names() == ["n=2/flag=false"]
    assert len(metastore.partitions("t", where="n >= '02'")) == 1
    with pytest.raises(InvalidValue, match=r"'1\.5' is not a valid int for key n"):
        metastore.partitions("t", {"n": ["1.5"]})
    with pytest.raises(InvalidValue, match="not a valid int"):
        metastore.partitions("t", where="n = 'x'")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"in_lists": {"dt": ["2024-1-5"]}}, InvalidValue, "'2024-1-5' is not a valid date"),
        ({"in_lists": {"nope": ["1"]}}, UnknownColumn, "unknown partition key 'nope'"),
        ({"in_lists": {"id": ["1"]}}, InvalidLookup, "data column"),
        ({"in_lists": {"dt": []}}, InvalidLookup, "empty value list"),
        (
            {"tuples": [TupleList(("dt", "region"), [["2024-01-01"]])]},
            InvalidLookup,
            "has 1 values, expected 2",
        ),
        (
            {"tuples": [TupleList(("dt", "dt"), [["2024-01-01", "2024-01-01"]])]},
            InvalidLookup,
            "repeat",
        ),
        ({"tuples": [TupleList(("dt", "region"), [])]}, InvalidLookup, "empty tuple list"),
        ({"where": "dt >="}, InvalidLookup, "cannot parse --where"),
        ({"where": "upper(region) = 'EMEA'"}, InvalidLookup, "unsupported in --where"),
        ({"where": "dt = region"}, InvalidLookup, "unsupported in --where"),
        ({"where": "label = 'a'"}, InvalidLookup, "data column"),
        ({"where": "zone = 'a'"}, UnknownColumn, "unknown partition key 'zone'"),
        ({"where": "dt >= '2024-13-01'"}, InvalidValue, "not a valid date"),
        ({"where": "  "}, InvalidLookup, "--where is empty"),
    ],
)
def test_bad_input(
    sales: Metastore, kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as raised:
        sales.partitions("sales", **kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(raised.value)


def test_unknown_table(metastore: Metastore) -> None:
    with pytest.raises(UnknownTable, match="unknown table 'ghost'"):
        metastore.partitions("ghost")


@pytest.mark.slow
def test_a_million_values_in_one_list(metastore: Metastore, tmp_path: Path) -> None:
    write_partitions(tmp_path / "t", ["n"], [[str(i)] for i in (5, 999_999, 2_000_000)])
    metastore.register_table("t", str(tmp_path / "t"))
    result = metastore.partitions("t", {"n": list(range(1_000_000))})
    assert result.names() == ["n=5", "n=999999"]
    tuples = [TupleList(("n",), [[i] for i in range(1_000_000)])]
    assert len(metastore.partitions("t", tuples=tuples)) == 2
