"""The share of a value's sampled rows a filter kept, from value codes counted once per
sample and filter, as comparing the whole column with the value gives it: numbers (NaN
included), strings (NULL included), values of the other type, values no row holds."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metastore.samples import Sample
from optimizer.estimate.kept_values import kept_share
from optimizer.estimate.sample_filter import SampleCount

numbers = st.lists(st.one_of(st.integers(-5, 5).map(float), st.just(float("nan"))), max_size=40)
strings = st.lists(st.one_of(st.text("ab", max_size=2), st.none()), max_size=40)
number_probes = st.one_of(st.integers(-6, 6).map(float), st.just(float("nan")), st.text("a"))
string_probes = st.one_of(st.text("ab", max_size=2), st.integers(0, 2).map(float))


def _plain(values: np.ndarray, passed: np.ndarray, probe: object) -> float | None:
    """The share by a comparison of every sampled value with the probe."""
    if values.dtype == object:
        holds = np.asarray([v is not None and v == probe for v in values], dtype=bool)
    elif isinstance(probe, str):
        return None
    else:
        holds = np.equal(values, probe)
    seen = int(holds.sum())
    return int((holds & passed).sum()) / seen if seen else None


def _count(passed: np.ndarray) -> SampleCount:
    return SampleCount(int(passed.sum()), len(passed), 0.5, passed=passed)


@given(numbers, st.lists(number_probes, min_size=1, max_size=4), st.data())
def test_numbers(values: list[float], probes: list[object], data: st.DataObject) -> None:
    column = np.asarray(values, dtype=np.float64)
    drawn = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    passed = np.asarray(drawn, dtype=bool)
    sample = Sample({"k": column}, np.ones(len(values)), 1)
    count = _count(passed)
    for probe in probes:  # several values of one count: its per-value rows read again
        assert kept_share(sample, count, "k", probe) == _plain(column, passed, probe)
    # the same sample under the opposite filter: its own kept rows, not the first count's
    other = _count(~passed)
    for probe in probes:
        assert kept_share(sample, other, "k", probe) == _plain(column, ~passed, probe)


@given(strings, st.lists(string_probes, min_size=1, max_size=4), st.data())
def test_strings(values: list[str | None], probes: list[object], data: st.DataObject) -> None:
    column = np.asarray(values, dtype=object)
    drawn = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    passed = np.asarray(drawn, dtype=bool)
    sample = Sample({"s": column}, np.ones(len(values)), 1)
    count = _count(passed)
    for probe in probes:
        expected = _plain(column, passed, probe) if isinstance(probe, str) else None
        assert kept_share(sample, count, "s", probe) == expected


def test_a_column_the_sample_lacks() -> None:
    sample = Sample({"k": np.asarray([1.0])}, np.ones(1), 1)
    assert kept_share(sample, _count(np.asarray([True])), "missing", 1.0) is None
