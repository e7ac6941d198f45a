"""Predicates that cannot become semi joins or column filters, estimated rather than taken
at the 1/3 default: `x IN (uncorrelated subquery)` under an OR (the subquery's distinct
values over x's), and `f(x) IN (list)` for a string function of one column (each listed
value one of x's values). TPC-DS q45: `substr(ca_zip, 1, 5) IN (...) OR i_item_id IN
(SELECT ...)` kept 0.09% of its rows and was estimated at 56%. Made-up statistics, no
Spark."""

from __future__ import annotations

import numpy as np
import pytest
from datasketches import kll_doubles_sketch
from hypothesis import given
from hypothesis import strategies as st
from sqlglot import parse_one

from metastore.statistics.samples import Sample
from optimizer.estimate.column import ColumnEstimate, encode_string
from optimizer.estimate.predicates import (
    BASIC,
    FUNCTION_OF_COLUMN,
    SKETCH,
    Level,
    selectivity,
)
from optimizer.estimate.sample_filter import count_on_sample, worth_sampling
from optimizer.estimate.selectivity import function_in_list_fraction, in_subquery_fraction
from optimizer.estimate.stats_query import StatsQuery
from optimizer.estimate.values import ESTIMATED, Estimate
from optimizer.sql_to_plan import build_plan
from tests.support.tpch import ROWS, KeyedStatistics

NATIONS = 25
SOURCE = KeyedStatistics({"c_nationkey": NATIONS, "n_nationkey": NATIONS, "n_name": NATIONS})
CUSTOMERS = float(ROWS["customer"])


def rows(sql: str, level: Level = SKETCH) -> float:
    return StatsQuery(SOURCE, level).of(build_plan(sql, SOURCE.table, "spark")).rows.value


def test_formulas() -> None:
    assert in_subquery_fraction(1, 25, 0.0) == pytest.approx(0.04)
    assert in_subquery_fraction(50, 25, 0.2) == pytest.approx(0.8)
    assert in_subquery_fraction(3, 0, 0.0) == 0.0
    assert function_in_list_fraction(3, 1000, 0.5) == pytest.approx(0.0015)
    assert function_in_list_fraction(30, 10, 0.0) == 1.0


def test_in_subquery_under_or_is_the_subquerys_share_of_the_keys() -> None:
    one_nation = (
        "SELECT * FROM customer WHERE c_custkey = 7 OR c_nationkey IN "
        "(SELECT n_nationkey FROM nation WHERE n_name = 'FRANCE')"
    )
    # c_custkey = 7 keeps 1/1,000 (made-up NDV), the subquery one nation of 25
    expected = CUSTOMERS * (1 - (1 - 1 / 1000) * (1 - 1 / NATIONS))
    assert rows(one_nation) == pytest.approx(expected, rel=0.01)
    every_nation = (
        "SELECT * FROM customer WHERE c_custkey = 7 OR c_nationkey IN "
        "(SELECT n_nationkey FROM nation)"
    )
    assert rows(every_nation) == pytest.approx(CUSTOMERS, rel=0.01)


def test_correlated_or_basic_in_subquery_keeps_the_default() -> None:
    correlated = (
        "SELECT * FROM customer WHERE c_custkey = 7 OR c_nationkey IN "
        "(SELECT n_nationkey FROM nation WHERE n_regionkey = c_custkey)"
    )
    default = CUSTOMERS * (1 - (1 - 1 / 1000) * (2 / 3))
    assert rows(correlated) == pytest.approx(default, rel=0.01)
    one_nation = (
        "SELECT * FROM customer WHERE c_custkey = 7 OR c_nationkey IN "
        "(SELECT n_nationkey FROM nation WHERE n_name = 'FRANCE')"
    )
    assert rows(one_nation, BASIC) == pytest.approx(default, rel=0.01)


def zip_column(zips: list[str]) -> ColumnEstimate:
    """A string column with the KLL sketch of its values' order-preserving codes."""
    sketch = kll_doubles_sketch(200)
    for value in zips:
        sketch.update(encode_string(value))
    return ColumnEstimate(
        "string",
        Estimate(float(len(set(zips))), ESTIMATED, "test"),
        low=min(zips),
        high=max(zips),
        kll=sketch,
    )


# 10,000 nine-digit codes whose three-digit prefixes run evenly over 100..119 (5% each)
ZIPS = [f"{100 + i % 20}{i % 7919:06d}" for i in range(10_000)]
ZIP_STATE = {("t", "zip"): zip_column(ZIPS)}


def test_prefix_of_a_column_in_a_list_is_its_prefix_ranges() -> None:
    listed = ("101", "105", "118")
    share = sum(z[:3] in listed for z in ZIPS) / len(ZIPS)  # 15%
    sql = "SELECT 1 FROM t WHERE substr(t.zip, 1, 3) IN ('101', '105', '118')"
    where = parse_one(sql, read="spark").args["where"].this
    estimate, _ = selectivity(where, ZIP_STATE, SKETCH)
    assert estimate.value == pytest.approx(share, rel=0.25)
    assert estimate.source == f"{FUNCTION_OF_COLUMN}prefix ranges"
    left = parse_one("SELECT 1 FROM t WHERE left(t.zip, 3) IN ('105')", read="spark")
    value, _ = selectivity(left.args["where"].this, ZIP_STATE, SKETCH)
    assert value.value == pytest.approx(share / 3, rel=0.5)
    # not a prefix, or the proposal's rules only: the default
    middle = parse_one("SELECT 1 FROM t WHERE substr(t.zip, 2, 2) IN ('01')", read="spark")
    value, _ = selectivity(middle.args["where"].this, ZIP_STATE, SKETCH)
    assert value.value == pytest.approx(1 / 3)
    value, _ = selectivity(where, ZIP_STATE, BASIC)
    assert value.value == pytest.approx(1 / 3)


def test_case_of_a_column_in_a_list_is_one_value_each() -> None:
    upper = "SELECT * FROM customer WHERE upper(c_name) IN ('A', 'B')"
    assert rows(upper) == pytest.approx(CUSTOMERS * 2 / 1000, rel=0.01)
    # a prefix of a column without a distribution: the default, not 1/V (c_phone is
    # nearly unique, its two-digit prefixes are 25)
    prefix = "SELECT * FROM customer WHERE substr(c_phone, 1, 2) IN ('13', '31', '23')"
    assert rows(prefix) == pytest.approx(CUSTOMERS / 3, rel=0.01)


@given(
    st.lists(st.one_of(st.text(alphabet="ab1ß😀", max_size=5), st.none()), min_size=1),
    st.integers(1, 4),
    st.integers(0, 3),
    st.lists(st.text(alphabet="ab1ß😀", max_size=3), min_size=1, max_size=4),
)
def test_substring_in_list_counts_on_the_sample_as_python_slices(
    values: list[str | None], start: int, length: int, listed: list[str]
) -> None:
    sample = Sample({"s": np.asarray(values, dtype=object)}, np.ones(len(values)), 1)
    items = ", ".join(f"'{v}'" for v in listed)
    sql = f"SELECT 1 FROM t WHERE substr(t.s, {start}, {length}) IN ({items})"
    counted = count_on_sample(parse_one(sql).args["where"].this, sample, "t", {"s": "string"})
    assert counted is not None
    wanted = set(listed)
    expected = sum(
        1 for v in values if v is not None and v[start - 1 : start - 1 + length] in wanted
    )
    assert counted.matches == expected


def test_a_function_of_one_column_is_worth_counting_on_the_sample() -> None:
    sql = "SELECT 1 FROM t WHERE substr(t.zip, 1, 3) IN ('101', '105')"
    where = parse_one(sql, read="spark").args["where"].this
    estimate, _ = selectivity(where, ZIP_STATE, SKETCH)
    assert worth_sampling(where, estimate)
    plain = parse_one("SELECT 1 FROM t WHERE t.zip < '105'", read="spark").args["where"].this
    estimate, _ = selectivity(plain, ZIP_STATE, SKETCH)
    assert not worth_sampling(plain, estimate)


def test_a_requests_in_subquery_is_planned_once() -> None:
    """A join's residual is weighed once per candidate join: its IN subquery's distinct
    values are worked out once per request (StatsQuery.subquery_distinct)."""
    sql = (
        "SELECT * FROM customer JOIN orders ON c_custkey = o_custkey "
        "WHERE o_orderkey = 7 OR c_nationkey IN "
        "(SELECT n_nationkey FROM nation WHERE n_name = 'FRANCE')"
    )
    stats = StatsQuery(SOURCE, SKETCH)
    first = stats.of(build_plan(sql, SOURCE.table, "spark")).rows.value
    assert list(stats.subquery_distinct.values()) == [pytest.approx(1.0)]
    assert stats.of(build_plan(sql, SOURCE.table, "spark")).rows.value == first
    assert len(stats.subquery_distinct) == 1
