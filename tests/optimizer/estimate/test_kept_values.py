"""The share of a value's sampled rows a filter kept, from value codes (kept with the sample)
and the kept rows per code, as comparing the whole column with the value gives it: numbers
(NaN included), strings (NULL included), values of the other type, values no row holds."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metastore.statistics.samples import Sample
from optimizer.estimate.kept_values import KeptShares

numbers = st.lists(st.one_of(st.integers(-5, 5).map(float), st.just(float("nan"))), max_size=40)
strings = st.lists(st.one_of(st.text("ab", max_size=2), st.none()), max_size=40)
number_probes = st.one_of(st.integers(-6, 6).map(float), st.just(float("nan")), st.text("a"))
string_probes = st.one_of(st.text("ab", max_size=2), st.integers(0, 2).map(float))


def _plain(values: np.ndarray, passed: np.ndarray, probe: float | str) -> float | None:
    """The share by a comparison of every sampled value with the probe."""
    if values.dtype == object:
        holds = np.asarray([v is not None and v == probe for v in values], dtype=bool)
    elif isinstance(probe, str):
        return None
    else:
        holds = values == probe
    seen = int(holds.sum())
    return int((holds & passed).sum()) / seen if seen else None


@given(numbers, st.lists(number_probes, min_size=1, max_size=4), st.data())
def test_numbers(values: list[float], probes: list[float | str], data: st.DataObject) -> None:
    column = np.asarray(values, dtype=np.float64)
    drawn = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    passed = np.asarray(drawn, dtype=bool)
    sample = Sample({"k": column}, np.ones(len(values)), 1)
    shares = KeptShares(sample, passed, "k")
    for probe in probes:  # several values of one filter: its kept rows per value read again
        assert shares(probe) == _plain(column, passed, probe)
    # the same sample under the opposite filter: its own kept rows, not the first filter's
    other = KeptShares(sample, ~passed, "k")
    for probe in probes:
        assert other(probe) == _plain(column, ~passed, probe)


@given(strings, st.lists(string_probes, min_size=1, max_size=4), st.data())
def test_strings(values: list[str | None], probes: list[float | str], data: st.DataObject) -> None:
    column = np.asarray(values, dtype=object)
    drawn = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    passed = np.asarray(drawn, dtype=bool)
    sample = Sample({"s": column}, np.ones(len(values)), 1)
    shares = KeptShares(sample, passed, "s")
    for probe in probes:
        expected = _plain(column, passed, probe) if isinstance(probe, str) else None
        assert shares(probe) == expected


def test_a_column_the_sample_lacks() -> None:
    sample = Sample({"k": np.asarray([1.0])}, np.ones(1), 1)
    assert KeptShares(sample, np.asarray([True]), "missing")(1.0) is None
