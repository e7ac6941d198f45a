"""The estimation formulas: one test per Hive CBO rule (docs/design.md#estimates), the
PostgreSQL MCV join, the sketch join, and properties every selectivity must have."""

from __future__ import annotations

import datetime as dt

import pytest
from datasketches import kll_doubles_sketch
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import parse_one

from optimizer.estimate.column import (
    ColumnEstimate,
    distinct_after_sampling,
    encode,
    encode_string,
)
from optimizer.estimate.predicates import (
    BASIC,
    DEFAULT_SELECTIVITY,
    HISTOGRAM,
    SKETCH,
    selectivity,
)
from optimizer.estimate.selectivity import (
    SEED_INEQUALITY,
    eqjoin_mcv,
    group_by_rows,
    occupied_groups,
    seed_and,
    seed_column_equality,
    seed_equality,
    seed_full_outer_join_rows,
    seed_group_by_rows,
    seed_inner_join_rows,
    seed_join_distinct,
    seed_join_selectivity,
    seed_not_equal,
    seed_or_rows,
    seed_outer_join_rows,
    sketch_join_rows,
)
from optimizer.estimate.values import ESTIMATED, Estimate


def test_seed_filter_rules() -> None:
    assert seed_equality(50) == 1 / 50  # = literal: 1/V(R,A)
    assert seed_column_equality(10, 40) == 1 / 40  # column = column: 1/max(V(R,A), V(R,B))
    assert SEED_INEQUALITY == 1 / 3  # < > <= >=: 1/3
    assert seed_not_equal(4) == 3 / 4  # <>: (V-1)/V
    assert seed_or_rows(100, 20, 50) == pytest.approx(100 * (1 - 0.8 * 0.5))  # OR
    assert seed_and([0.5, 0.2, 0.1]) == pytest.approx(0.01)  # AND: product


def test_seed_join_rules() -> None:
    assert seed_join_selectivity([(10, 100)]) == 1 / 100  # 1/max(V(R1,a), V(R2,a))
    assert seed_join_selectivity([(10, 100), (7, 3)]) == 1 / (100 * 7)  # product over keys
    assert seed_inner_join_rows([1000, 200], 1 / 100) == 2000  # product * selectivity
    assert seed_outer_join_rows(50, 1000) == 1000  # max(inner, outer side)
    assert seed_outer_join_rows(5000, 1000) == 5000
    assert seed_full_outer_join_rows(50, 1000, 200) == 1200  # max(inner, left + right)


def test_seed_distinct_rules() -> None:
    assert seed_join_distinct(10, 30) == 30  # both sides: max(V(R1,a), V(R2,a))
    assert seed_group_by_rows([5, 12, 3]) == 12  # V(G, a, b, c) = max(V(R,a), ...)
    assert group_by_rows([5, 12, 3], 100) == 100  # the product, capped at the input
    assert group_by_rows([5, 3], 100) == 15
    assert group_by_rows([], 100) == 1


def test_occupied_groups_counts_the_combinations_rows_fill() -> None:
    # 100 rows over 10 x 10 combinations: 100 (1 - 0.99^100) = 63.4 filled, not 100
    assert occupied_groups([10, 10], 100) == pytest.approx(100 * (1 - 0.99**100))
    assert occupied_groups([10, 10], 100) == pytest.approx(63.40, abs=0.01)
    # far more rows than combinations: every one is filled
    assert occupied_groups([5, 3], 100_000) == pytest.approx(15)
    # far fewer rows than combinations: about one group per row
    assert occupied_groups([1_000, 1_000], 100) == pytest.approx(100, rel=1e-3)
    assert occupied_groups([1e9, 1e9], 1e6) == pytest.approx(1e6, rel=1e-6)
    assert occupied_groups([], 100) == 1
    assert occupied_groups([4], 1) == 1
    # one key: its distinct values are the groups (each value is in some row)
    assert occupied_groups([150_000], 150_000) == 150_000
    assert occupied_groups([150_000, 1], 150_000) == 150_000
    # never fewer than the largest key's values: 25 rows over 25 x 25 are 25 groups
    assert occupied_groups([25, 25], 25) == 25
    assert occupied_groups([90, 2], 100) == 90
    assert occupied_groups([4], 0.5) == 0.5  # below one row, the rows (as the product rule)


def test_eqjoin_matches_mcvs_then_spreads_the_rest() -> None:
    # no MCVs: (1 - nulls1)(1 - nulls2)/max(V1, V2)
    assert eqjoin_mcv([], [], 0.1, 0.0, 10, 20) == pytest.approx(0.9 / 20)
    # both sides all-MCV: exactly the matched products
    left = [("a", 0.5), ("b", 0.5)]
    right = [("a", 0.25), ("c", 0.75)]
    assert eqjoin_mcv(left, right, 0, 0, 2, 2) == pytest.approx(0.125)


def test_sketch_join_uses_heavy_hitters_on_both_sides() -> None:
    # 100 shared keys; key "h" has 500 rows left and 300 right; the rest one row each side
    rows = sketch_join_rows(599, 399, 100, 100, 100, {"h": 500}, {"h": 300})
    assert rows == pytest.approx(500 * 300 + 99 * 1 * 1)
    # no heavy hitters, FK -> PK: every left row finds one right row
    assert sketch_join_rows(6000, 100, 100, 100, 100, {}, {}) == pytest.approx(6000)


def test_distinct_after_sampling() -> None:
    assert distinct_after_sampling(100, 10_000, 10_000) == pytest.approx(100)
    assert distinct_after_sampling(100, 10_000, 0) == 0
    assert distinct_after_sampling(10_000, 10_000, 100) == pytest.approx(100)  # unique
    assert 0 < distinct_after_sampling(100, 10_000, 50) < 50


def test_string_encoding_preserves_order() -> None:
    words = ["", "a", "ab", "abc", "b", "ba", "z"]
    codes = [encode_string(w) for w in words]
    assert codes == sorted(codes)
    assert encode(dt.date(1970, 1, 2)) == 1.0


def kll(values: list[float]) -> kll_doubles_sketch:
    sketch = kll_doubles_sketch(200)
    for value in values:
        sketch.update(value)
    return sketch


def numeric_column(values: list[float], nulls: float = 0.0) -> ColumnEstimate:
    return ColumnEstimate(
        "double",
        Estimate(float(len(set(values))), ESTIMATED, "test"),
        null_fraction=nulls,
        low=min(values),
        high=max(values),
        kll=kll(values),
    )


COLUMNS = {("t", "x"): numeric_column([float(i % 1000) for i in range(10_000)], 0.1)}


def sel(sql: str, level: str = HISTOGRAM) -> float:
    estimate, _ = selectivity(parse_one(sql, read="spark"), COLUMNS, level)
    return estimate.value


def test_histogram_ranges_condition_each_other() -> None:
    one_interval = sel("t.x BETWEEN 100 AND 199")
    two_conjuncts = sel("t.x >= 100 AND t.x <= 199")
    assert one_interval == pytest.approx(0.9 * 0.1, abs=0.02)
    assert two_conjuncts == pytest.approx(one_interval, abs=0.02)  # not 0.9 * 0.9
    assert sel("t.x = 5000") == 0  # outside [min, max]
    assert sel("t.x IS NULL") == pytest.approx(0.1)
    assert sel("t.x IN (1, 2, 3)") == pytest.approx(3 * 0.9 / 1000, rel=0.01)
    assert sel("t.x IN (1, 2, 5000)") == pytest.approx(2 * 0.9 / 1000, rel=0.01)
    assert sel("t.x = 1", BASIC) == 1 / 1000
    assert sel("t.x < 10", BASIC) == 1 / 3
    assert sel("t.x BETWEEN 1 AND 5", BASIC) == pytest.approx(1 / 9)
    assert sel("t.x <> 1", BASIC) == pytest.approx(999 / 1000)
    assert sel("t.x <> 1") == pytest.approx(0.9 - 0.9 / 1000)  # NULLs are not <> 1


PREDICATES = st.sampled_from(
    [
        "t.x < {a}",
        "t.x >= {a}",
        "t.x BETWEEN {a} AND {b}",
        "t.x = {a}",
        "t.x <> {a}",
        "t.x IN ({a}, {b})",
        "NOT t.x < {a}",
        "t.x < {a} OR t.x > {b}",
        "t.x IS NULL",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    PREDICATES,
    PREDICATES,
    st.integers(-100, 1100),
    st.integers(-100, 1100),
    st.sampled_from([BASIC, HISTOGRAM, SKETCH]),
)
def test_selectivity_properties(p: str, q: str, a: int, b: int, level: str) -> None:
    lo, hi = min(a, b), max(a, b)
    first, second = p.format(a=lo, b=hi), q.format(a=lo, b=hi)
    s1, s2 = sel(first, level), sel(second, level)
    both = sel(f"({first}) AND ({second})", level)
    assert 0.0 <= s1 <= 1.0
    assert 0.0 <= s2 <= 1.0
    assert 0.0 <= both <= 1.0
    assert both <= min(s1, s2) + 1e-9  # AND is never above either side


@settings(max_examples=100, deadline=None)
@given(st.integers(-100, 1100), st.integers(0, 600), st.integers(0, 600))
def test_ranges_are_monotone_in_width(low: int, narrow: int, extra: int) -> None:
    wide = narrow + extra
    assert (
        sel(f"t.x BETWEEN {low} AND {low + narrow}")
        <= sel(f"t.x BETWEEN {low} AND {low + wide}") + 1e-9
    )


def test_unknown_predicates_fall_back_to_a_named_default() -> None:
    estimate, _ = selectivity(parse_one("abs(t.x) > 3", read="spark"), COLUMNS, HISTOGRAM)
    assert (estimate.value, estimate.source, estimate.precision) == (
        1 / 3,
        "default:1/3",
        "default",
    )
    # the same comparison on the bare column is estimated from the column, not defaulted
    known, _ = selectivity(parse_one("t.x > 3", read="spark"), COLUMNS, HISTOGRAM)
    assert (known.source, known.precision) == ("kll", ESTIMATED)
    assert known.value != pytest.approx(DEFAULT_SELECTIVITY)
    # a conjunction names the default it took for its unknown side only
    both, _ = selectivity(parse_one("abs(t.x) > 3 AND t.x > 3", read="spark"), COLUMNS, HISTOGRAM)
    assert both.source == "and(default:1/3,kll)"
    assert both.value == pytest.approx(DEFAULT_SELECTIVITY * known.value)


@pytest.mark.parametrize(
    ("low", "high", "predicate", "share"),
    [
        (0.0, None, "t.s > 0", 0.75),  # all but the bound's one value of four
        (0.0, None, "t.s >= 0", 1.0),
        (0.0, None, "t.s > -5", 1.0),
        (0.0, None, "t.s < 0", 0.0),
        (0.0, None, "t.s <= -1", 0.0),
        (0.0, None, "t.s > 5", None),  # the bound does not decide: the default
        (None, 10.0, "t.s < 10", 0.75),
        (None, 10.0, "t.s <= 10", 1.0),
        (None, 10.0, "t.s > 10", 0.0),
        (None, 10.0, "t.s < 3", None),
    ],
)
def test_one_sided_bound_decides_a_comparison(
    low: float | None, high: float | None, predicate: str, share: float | None
) -> None:
    """A column known only to lie above (or below) a bound, as a sum of non-negative values:
    comparisons past the bound keep every row or none (predicates._within_one_bound)."""
    column = ColumnEstimate("double", Estimate(4.0, ESTIMATED, "test"), low=low, high=high)
    estimate, _ = selectivity(parse_one(predicate, read="spark"), {("t", "s"): column}, SKETCH)
    assert estimate.value == pytest.approx(1 / 3 if share is None else share)
