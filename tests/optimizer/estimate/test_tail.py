"""The skewed-tail model (optimizer.estimate.tail) and its use by equality estimates."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import parse_one

from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.predicates import HISTOGRAM, selectivity
from optimizer.estimate.tail import tail_ratio
from optimizer.estimate.values import ESTIMATED, Estimate


def _counts(weights: np.ndarray, rows: int, seed: int = 7) -> np.ndarray:
    """Per-value row counts of `rows` rows drawn with `weights`, heaviest first, zeros
    (values never drawn) dropped."""
    drawn = np.random.default_rng(seed).multinomial(rows, weights / weights.sum())
    drawn = np.sort(drawn)[::-1]
    return drawn[drawn > 0]


def _typical_vs_model(counts: np.ndarray, heavy: int) -> tuple[float, float]:
    tail = counts[heavy:]
    average = tail.sum() / len(tail)
    model = tail_ratio([float(c) for c in counts[:heavy]], len(counts), float(tail.sum()))
    return float(np.exp(np.log(tail).mean())), model * average


def test_zipf_tail_is_its_geometric_mean_not_its_average() -> None:
    ranks = np.arange(1, 200_001, dtype=float)
    counts = _counts(ranks**-1.5, 6_000_000)
    typical, model = _typical_vs_model(counts, 100)
    average = counts[100:].mean()
    assert average > 5 * typical  # the average is far from a typical tail value
    assert abs(np.log(model / typical)) < np.log(1.25)


def test_zipf_1_tail() -> None:
    ranks = np.arange(1, 150_001, dtype=float)
    counts = _counts(ranks**-1.0, 1_500_000)
    typical, model = _typical_vs_model(counts, 50)
    assert abs(np.log(model / typical)) < np.log(1.5)


def test_uniform_column_keeps_the_average() -> None:
    counts = _counts(np.ones(200_000), 6_000_000)
    tail = counts[5:]
    ratio = tail_ratio([float(c) for c in counts[:5]], len(counts), float(tail.sum()))
    assert ratio > 0.97


def test_no_heavy_hitters_or_no_tail_changes_nothing() -> None:
    assert tail_ratio([], 1000, 5000) == 1.0
    assert tail_ratio([10.0, 9.0], 2, 0) == 1.0  # every value is a heavy hitter
    assert tail_ratio([3.0], 1000, 5000) == 1.0  # the last heavy hitter is below average
    assert tail_ratio([100.0], 1001, 900) == 1.0  # tail values occur about once


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(1, 1e6), min_size=1, max_size=50),
    st.floats(2, 1e7),
    st.floats(1, 1e8),
)
def test_ratio_is_a_fraction(heavy: list[float], ndv: float, rest: float) -> None:
    ratio = tail_ratio(heavy, ndv, rest)
    assert 0.0 < ratio <= 1.0


def test_equality_on_a_skewed_column_uses_the_tail() -> None:
    ref = ("t", "k")
    column = ColumnEstimate(
        "bigint",
        Estimate(30_000, ESTIMATED, "hll"),
        low=1,
        high=200_000,
        mcv=((5, 0.2), (9, 0.1)),
        tail=0.2,
    )
    flat = ColumnEstimate(column.type, column.ndv, low=1, high=200_000, mcv=column.mcv)
    skewed, _ = selectivity(parse_one("t.k = 77", read="spark"), {ref: column}, HISTOGRAM)
    even, _ = selectivity(parse_one("t.k = 77", read="spark"), {ref: flat}, HISTOGRAM)
    assert skewed.value == 0.2 * even.value
    assert "zipf tail" in skewed.source
    heavy, _ = selectivity(parse_one("t.k = 5", read="spark"), {ref: column}, HISTOGRAM)
    assert heavy.value == 0.2  # a heavy hitter keeps its own frequency
