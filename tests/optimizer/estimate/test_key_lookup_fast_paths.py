"""key_lookup's fast paths answer as the plain computations do: the membership of one value
in a sample's distinct keys (a binary search) as np.isin, for numbers (NaN included),
strings and values of another type; the weighted most-common values over a column's codes
kept with its sample as over np.unique of the kept rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from optimizer.estimate.key_lookup import _distinct, _holds, value_codes, weighted_mcvs

numbers = st.lists(st.one_of(st.integers(-50, 50).map(float), st.just(float("nan"))), max_size=40)
strings = st.lists(st.one_of(st.text("abc", max_size=3), st.none()), max_size=40)


@given(numbers, st.one_of(st.integers(-60, 60).map(float), st.just(float("nan")), st.text("1")))
def test_numbers(values: list[float], probe: float | str) -> None:
    distinct = _distinct(np.asarray(values, dtype=np.float64))
    assert _holds(distinct, probe) == bool(np.isin(probe, distinct))


@given(strings, st.one_of(st.text("abcd", max_size=3), st.integers(0, 3).map(float)))
def test_strings(values: list[str | None], probe: str | float) -> None:
    distinct = _distinct(np.asarray(values, dtype=object))
    assert _holds(distinct, probe) == bool(np.isin(probe, distinct))


def test_a_kept_key_is_found_and_a_dropped_one_is_not() -> None:
    distinct = _distinct(np.asarray([5.0, 1.0, 3.0, 3.0]))
    assert [_holds(distinct, v) for v in (1.0, 2.0, 3.0, 5.0, 6.0)] == [
        True,
        False,
        True,
        True,
        False,
    ]


def plain_weighted_mcvs(
    values: np.ndarray, weights: np.ndarray, limit: int
) -> list[tuple[float, float]]:
    """weighted_mcvs as np.unique of the kept rows computes it (numbers, as doubles)."""
    total = float(weights.sum())
    keep = ~np.isnan(values) & (weights > 0)
    if total <= 0 or not keep.any():
        return []
    distinct, inverse = np.unique(values[keep], return_inverse=True)
    mass = np.bincount(inverse, weights=weights[keep])
    top = np.argsort(-mass, kind="stable")[:limit]
    return [(float(distinct[i]), float(mass[i]) / total) for i in top]


@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 12).map(float), st.just(float("nan"))),
            st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.25]),
        ),
        max_size=60,
    ),
    st.integers(1, 8),
)
def test_weighted_mcvs_over_kept_codes(rows: list[tuple[float, float]], limit: int) -> None:
    values = np.asarray([v for v, _ in rows], dtype=np.float64)
    weights = np.asarray([w for _, w in rows], dtype=np.float64)
    coded = weighted_mcvs(values, weights, "double", limit, value_codes(values))
    assert [(float(v), f) for v, f in coded] == plain_weighted_mcvs(values, weights, limit)
