"""key_lookup's fast paths answer as the plain computations do: the membership of one value
in a sample's distinct keys (a binary search) as np.isin, for numbers (NaN included),
strings and values of another type; the weighted most-common values over a column's codes
kept with its sample as over np.unique of the kept rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metastore.samples import Sample
from optimizer.estimate.key_lookup import (
    _coded_members,
    _holds,
    _kept_values,
    _members,
    value_codes,
    weighted_mcvs,
)

numbers = st.lists(st.one_of(st.integers(-50, 50).map(float), st.just(float("nan"))), max_size=40)
strings = st.lists(st.one_of(st.text("abc", max_size=3), st.none()), max_size=40)


def _distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct non-NULL values (NULL: NaN or None)."""
    if values.dtype == object:
        return np.unique(np.asarray([v for v in values if v is not None], dtype=object))
    return np.unique(values[~np.isnan(values)])


@given(numbers, numbers, st.data())
def test_key_survival_from_codes_is_membership(
    keys: list[float], other: list[float], data: st.DataObject
) -> None:
    """Which of one side's keys the other side's kept rows hold: from the columns' distinct
    codes (a count per code, a binary search) as np.isin over np.unique of the kept rows."""
    drawn = data.draw(st.lists(st.booleans(), min_size=len(other), max_size=len(other)))
    passed = np.asarray(drawn, dtype=bool)
    mine = Sample({"k": np.asarray(keys, dtype=np.float64)}, np.ones(len(keys)), 1)
    theirs = Sample({"k": np.asarray(other, dtype=np.float64)}, np.ones(len(other)), 1)
    kept = _kept_values(theirs, "k", passed)
    plain = np.unique(np.asarray(other, dtype=np.float64)[passed])
    assert list(kept) == [v for v in plain if not np.isnan(v)]
    distinct, codes = value_codes(mine.columns["k"])
    found = _coded_members(codes, _members(distinct, kept))
    assert list(found) == list(np.isin(mine.columns["k"], plain[~np.isnan(plain)]))


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


def test_a_key_column_of_nulls_survives_nothing() -> None:
    """A side whose sampled keys are all NULL: no row meets the other side (it was an
    IndexError: every row's code -1 indexed an empty array of distinct values)."""
    from optimizer.estimate.key_lookup import ScanSample, surviving_mcvs

    mine = Sample({"k": np.array([np.nan, np.nan]), "v": np.array([1.0, 1.0])}, np.ones(2), 1)
    other = Sample({"k": np.array([1.0, 2.0])}, np.ones(2), 1)
    found = surviving_mcvs(
        ScanSample("a", lambda: mine),
        "k",
        ScanSample("b", lambda: other, every_partition=True),
        "k",
        {"v": ((1.0, 1.0),)},
        1.0,
    )
    assert found == {"v": ((1.0, 0.0),)}


@given(numbers, st.data())
def test_key_weights_from_codes_as_by_binary_search(keys: list[float], data: st.DataObject) -> None:
    """The weights of a unique-key side's rows read through the keys' codes (kept with the
    sample) equal those of a binary search of every row among the heavy keys."""
    from optimizer.estimate.key_lookup import key_weights

    column = np.asarray(keys, dtype=np.float64)
    n = len(keys)
    passed = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    heavy_keys = data.draw(st.lists(st.integers(-60, 60).map(float), max_size=6, unique=True))
    heavy = {k: float(data.draw(st.integers(1, 1000))) for k in heavy_keys}
    row_weights = np.full(n, 2.5)
    plain = key_weights(column, passed, row_weights, heavy, 3.0)
    coded = key_weights(column, passed, row_weights, heavy, 3.0, coded=value_codes(column))
    assert coded.tolist() == plain.tolist()
