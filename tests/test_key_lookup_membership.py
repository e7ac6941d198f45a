"""key_lookup's membership test of one value in a sample's distinct keys (a binary search)
answers as np.isin does, for numbers (NaN included), strings and values of another type."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from optimizer.estimate.key_lookup import _distinct, _holds

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
