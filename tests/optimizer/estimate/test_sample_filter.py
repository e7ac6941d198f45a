"""Filters counted on a row sample (optimizer.estimate.sample_filter): SQL's three-valued
logic over sampled columns, and how the sample's count and the per-column estimate
combine."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
import sqlglot
from hypothesis import given
from hypothesis import strategies as st

from metastore.statistics.samples import Sample, decode_sample, encode_sample, sample_rate
from optimizer.estimate.sample_filter import (
    SAMPLE_MIN_MATCHES,
    SampleCount,
    combine_with_sample,
    count_on_sample,
    worth_sampling,
)
from optimizer.estimate.values import ESTIMATED, Estimate

TYPES = {"flag": "string", "status": "string", "qty": "int", "price": "decimal(12,2)",
         "day": "date", "note": "string"}  # fmt: skip


def sample_of(rows: list[tuple[object, ...]], weights: list[float] | None = None) -> Sample:
    columns = list(TYPES.items())
    arrays = decode_sample(encode_sample(columns, rows))
    weight = np.array(weights if weights is not None else [1.0] * len(rows))
    return Sample(arrays, weight, 1)


ROWS = [
    ("R", "F", 1, 10.5, dt.date(1995, 1, 1), "quick fox"),
    ("A", "F", 2, 20.0, dt.date(1995, 6, 1), "lazy dog"),
    ("N", "O", 3, None, dt.date(1996, 1, 1), None),
    ("N", "F", None, 40.0, dt.date(1996, 6, 1), "quick dog"),
    (None, "O", 5, 50.0, None, "fox"),
]


def count(sql: str, rows: list[tuple[object, ...]] = ROWS) -> SampleCount | None:
    predicate = sqlglot.parse_one(f"SELECT 1 FROM t WHERE {sql}").args["where"].this
    return count_on_sample(predicate, sample_of(rows), "t", TYPES)


@pytest.mark.parametrize(
    ("sql", "matches"),
    [
        ("t.flag = 'R' AND t.status = 'O'", 0),
        ("t.flag = 'N' AND t.status = 'O'", 1),
        ("t.flag = 'N' OR t.qty >= 5", 3),
        ("NOT (t.flag = 'N')", 2),  # NULL flag is neither
        ("t.flag <> 'N' OR t.flag IS NULL", 3),
        ("t.qty BETWEEN 2 AND 3 AND t.price IS NULL", 1),
        ("t.price > 15 AND t.day < DATE '1996-03-01'", 1),
        ("t.day >= '1996-01-01' AND t.note LIKE '%dog'", 1),
        ("t.note LIKE 'quick%' AND t.qty IS NULL", 1),
        ("t.note ILIKE 'QUICK _OX'", 1),
        ("t.flag IN ('A', 'R') AND t.qty IN (1, 2, 7)", 2),
        ("t.flag NOT IN ('A', 'R')", 2),
        ("t.qty * t.price > 40", 1),  # 10.5, 40, NULL, NULL, 250
        ("t.qty < t.price", 3),
        ("t.status = t.flag", 0),
        ("1 < t.qty", 3),
        ("t.flag = 'N' AND NOT (t.qty > 2)", 0),  # NOT(NULL > 2) is unknown
    ],
)
def test_three_valued_logic_on_the_sample(sql: str, matches: int) -> None:
    result = count(sql)
    assert result is not None
    assert result.matches == matches
    assert result.size == len(ROWS)
    assert result.fraction == pytest.approx(matches / len(ROWS))


@pytest.mark.parametrize(
    "sql",
    [
        "t.flag = u.flag",  # another relation
        "t.missing = 1",  # not sampled
        "UPPER(t.flag) = 'R'",  # a function
        "t.qty IN (SELECT 1)",
        "t.flag = 'R' AND t.qty = t.flag",  # string against number
    ],
)
def test_what_the_sample_cannot_evaluate(sql: str) -> None:
    assert count(sql) is None


def test_partition_weights_make_a_ratio_estimate() -> None:
    rows = [("R", "F", 1, 1.0, None, None), ("A", "F", 1, 1.0, None, None)]
    predicate = sqlglot.parse_one("SELECT 1 FROM t WHERE t.flag = 'R'").args["where"].this
    weighted = count_on_sample(predicate, sample_of(rows, [30.0, 10.0]), "t", TYPES)
    assert weighted is not None
    assert weighted.fraction == pytest.approx(0.75)


def test_combining_follows_the_sample_when_it_has_enough_matches() -> None:
    independent = Estimate(0.3, ESTIMATED, "mcv")
    chosen = combine_with_sample(independent, SampleCount(SAMPLE_MIN_MATCHES, 1000, 0.03), 1e6)
    assert chosen.value == pytest.approx(0.03)
    assert chosen.source == "sample"


def test_combining_keeps_an_estimate_the_sample_cannot_refute() -> None:
    independent = Estimate(0.004, ESTIMATED, "mcv")  # 4 expected in 1,000: 3 seen
    chosen = combine_with_sample(independent, SampleCount(3, 1000, 0.003), 1e6)
    assert chosen.value == 0.004
    assert chosen.source == "mcv+sample"


def test_combining_no_match_bounds_the_estimate_by_the_rule_of_three() -> None:
    independent = Estimate(0.125, ESTIMATED, "mcv")  # 125 expected in 1,000: none seen
    chosen = combine_with_sample(independent, SampleCount(0, 1000, 0.0), 6e6)
    upper, floor = 3 / 1000, 1 / 6e6
    assert chosen.value == pytest.approx((floor * upper) ** 0.5)
    assert chosen.source == "sample bounds"


@given(
    st.floats(0, 1),
    st.integers(0, 200),
    st.integers(1, 100_000),
    st.floats(1, 1e9),
)
def test_combined_selectivity_is_a_fraction(
    independent: float, matches: int, size: int, rows: float
) -> None:
    matches = min(matches, size)
    fraction = matches / size
    value = combine_with_sample(
        Estimate(independent, ESTIMATED, "x"), SampleCount(matches, size, fraction), rows
    ).value
    assert 0.0 <= value <= 1.0
    if matches >= SAMPLE_MIN_MATCHES:
        assert value == pytest.approx(fraction)


def test_worth_sampling_needs_two_columns_or_a_default() -> None:
    one = sqlglot.parse_one("SELECT 1 FROM t WHERE t.a = 1 AND t.a < 5").args["where"].this
    two = sqlglot.parse_one("SELECT 1 FROM t WHERE t.a = 1 AND t.b < 5").args["where"].this
    assert not worth_sampling(one, Estimate(0.1, ESTIMATED, "mcv"))
    assert worth_sampling(one, Estimate(0.1, ESTIMATED, "default:like"))
    assert worth_sampling(two, Estimate(0.1, ESTIMATED, "mcv"))


def test_a_range_the_sample_knows_better_than_kll_is_counted_on_it() -> None:
    # a 1% range: KLL's rank error (1.65% each way) only bounds it; 4%: KLL's own estimate
    narrow = sqlglot.parse_one("SELECT 1 FROM t WHERE t.a BETWEEN 1 AND 3000").args["where"]
    assert worth_sampling(narrow.this, Estimate(0.01, ESTIMATED, "kll"))
    assert not worth_sampling(narrow.this, Estimate(0.04, ESTIMATED, "kll"))
    assert not worth_sampling(narrow.this, Estimate(0.01, ESTIMATED, "mcv"))
    # where the sample knows the share better than the sketch: 4% of 100,000 sampled rows
    # (+- 0.06%, against the sketch's +- 0.64%); not 40 rows of one partition (+- 8%)
    many = SampleCount(4_100, 100_000, 0.041)
    few = SampleCount(20, 40, 0.5)
    assert worth_sampling(narrow.this, Estimate(0.04, ESTIMATED, "kll"), many)
    assert not worth_sampling(narrow.this, Estimate(0.5, ESTIMATED, "kll"), few)
    assert not worth_sampling(narrow.this, Estimate(0.04, ESTIMATED, "mcv"), many)


def test_sample_rate_targets_the_sample_size() -> None:
    assert sample_rate(0, 10**9, None) == 0.0
    assert sample_rate(100, 1000, None) == 1.0  # 31 rows expected at 32 bytes a row
    assert sample_rate(100_000, 320_000_000, None) == pytest.approx(0.01)
    assert sample_rate(100_000, 10**9, 0.001) == pytest.approx(0.1)  # measured rows per byte
    # a small table is kept whole unless sample_rows was set
    assert sample_rate(100_000, 10**8, 0.002, whole_below=250_000) == 1.0
    assert sample_rate(100_000, 10**9, 0.001, whole_below=250_000) == pytest.approx(0.1)


def test_sample_encoding_round_trips_types_and_nulls() -> None:
    arrays = decode_sample(encode_sample(list(TYPES.items()), ROWS))
    assert arrays["day"][0] == (dt.date(1995, 1, 1) - dt.date(1970, 1, 1)).days
    assert np.isnan(arrays["price"][2])
    assert np.isnan(arrays["day"][4])
    assert arrays["flag"][4] is None
    assert arrays["note"][0] == "quick fox"


def test_a_predicate_is_counted_once_per_sample() -> None:
    """A predicate's count is kept with the sample under its text: asked again (the same
    query, or the planner weighing another join order) it is the same count, shared and
    read-only; another predicate, or the same one over another sample, is counted anew."""
    sample = sample_of(ROWS)

    def counted(sql: str, on: Sample = sample) -> SampleCount | None:
        predicate = sqlglot.parse_one(f"SELECT 1 FROM t WHERE {sql}").args["where"].this
        return count_on_sample(predicate, on, "t", TYPES)

    first = counted("t.flag = 'N'")
    assert first is not None
    assert first.matches == 2
    assert counted("t.flag = 'N'") is first
    assert not first.passed.flags.writeable
    other = counted("t.flag = 'A'")
    assert other is not None
    assert other.matches == 1
    fresh = counted("t.flag = 'N'", sample_of(ROWS[:1]))
    assert fresh is not None
    assert fresh.matches == 0


def test_a_filters_distinct_values_are_kept_with_its_count() -> None:
    """The distinct values of each column among a count's kept rows are worked out once
    and kept with the count (itself kept with the sample): a query asked again reads them."""
    from optimizer.estimate.operators.filter import _distinct_kept
    from optimizer.estimate.sample_distinct import distinct_in

    sample = sample_of(ROWS)
    predicate = sqlglot.parse_one("SELECT 1 FROM t WHERE t.status = 'F'").args["where"].this
    found = count_on_sample(predicate, sample, "t", TYPES)
    assert found is not None
    assert _distinct_kept(sample, found, [], "flag") == distinct_in(sample, found.passed, "flag")
    assert found.distinct == {"flag": 3}  # R, A and N among the three kept rows
    again = count_on_sample(predicate, sample, "t", TYPES)
    assert again is found
    assert again.distinct == {"flag": 3}
