"""The sample rules' fast paths answer as the plain computations do: the membership of one value
in a sample's distinct keys (a binary search) as np.isin, for numbers (NaN included),
strings and values of another type; the weighted most-common values over a column's codes
kept with its sample as over np.unique of the kept rows; the distinct values of a column
among kept rows, sorted when the rows are few for their values, as np.unique counts them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.statistics.samples import Sample
from optimizer.estimate.heavy_keys_carried import weighted_mcvs
from optimizer.estimate.heavy_keys_surviving import _holds, _numeric_key_matches
from optimizer.estimate.sample_distinct import distinct_in
from optimizer.estimate.scan_sample import ScanSample, value_codes

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
    """Which of one side's kept keys the other side's kept rows hold: from the columns'
    distinct codes (a count per code, a binary search) as np.isin over np.unique of the
    kept rows."""
    drawn = data.draw(st.lists(st.booleans(), min_size=len(other), max_size=len(other)))
    passed = np.asarray(drawn, dtype=bool)
    mine_drawn = data.draw(st.lists(st.booleans(), min_size=len(keys), max_size=len(keys)))
    rows = np.flatnonzero(np.asarray(mine_drawn, dtype=bool))
    mine = Sample({"k": np.asarray(keys, dtype=np.float64)}, np.ones(len(keys)), 1)
    theirs = Sample({"k": np.asarray(other, dtype=np.float64)}, np.ones(len(other)), 1)
    kept_keys = mine.columns["k"][rows]
    plain = np.unique(np.asarray(other, dtype=np.float64)[passed])
    listed, found = _numeric_key_matches(mine, "k", rows, theirs, "k", passed)
    assert list(listed) == [v for v in plain if not np.isnan(v)]
    assert list(found) == list(np.isin(kept_keys, plain[~np.isnan(plain)]))
    # the same samples under another filter: the values' places, kept with the sample, hold
    again = ~passed
    found = _numeric_key_matches(mine, "k", rows, theirs, "k", again)[1]
    held = np.unique(np.asarray(other, dtype=np.float64)[again])
    assert list(found) == list(np.isin(kept_keys, held[~np.isnan(held)]))


def test_key_matches_are_never_lent_to_another_sample() -> None:
    """Where one sample's values sit among another's is kept under the other's token: a new
    sample with the same column (a later collection's) is looked up anew."""
    mine = Sample({"k": np.array([1.0, 2.0, 3.0])}, np.ones(3), 1)
    first = Sample({"k": np.array([1.0, 2.0])}, np.ones(2), 1)
    second = Sample({"k": np.array([3.0, 9.0])}, np.ones(2), 1)
    everything, all_mine = np.ones(2, dtype=bool), np.arange(3)
    assert list(_numeric_key_matches(mine, "k", all_mine, first, "k", everything)[1]) == [1, 1, 0]
    assert list(_numeric_key_matches(mine, "k", all_mine, second, "k", everything)[1]) == [0, 0, 1]


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
    from optimizer.estimate.heavy_keys_surviving import surviving_mcvs
    from optimizer.estimate.scan_sample import ScanSample

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
    from optimizer.estimate.heavy_keys_carried import key_weights

    column = np.asarray(keys, dtype=np.float64)
    n = len(keys)
    passed = np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    heavy_keys = data.draw(st.lists(st.integers(-60, 60).map(float), max_size=6, unique=True))
    heavy = {k: float(data.draw(st.integers(1, 1000))) for k in heavy_keys}
    row_weights = np.full(n, 2.5)
    plain = key_weights(column, passed, row_weights, heavy, 3.0)
    coded = key_weights(column, passed, row_weights, heavy, 3.0, coded=value_codes(column))
    assert coded.tolist() == plain.tolist()


def _plain_tuples(columns: dict[str, np.ndarray], passed: np.ndarray) -> int:
    """The distinct combinations of the columns among the rows `passed` kept, as a set of
    Python tuples (a number's NaN and a string's None both as None)."""

    def value(v: object) -> object:
        return None if v is None or (isinstance(v, float) and np.isnan(v)) else v

    rows = zip(*(columns[name] for name in columns), strict=True)
    return len(
        {tuple(value(v) for v in row) for row, keep in zip(rows, passed, strict=True) if keep}
    )


def _tuples_side(columns: dict[str, np.ndarray], passed: np.ndarray) -> ScanSample:
    size = len(passed)
    sample = Sample(dict(columns), np.ones(size), size)
    return ScanSample("a", lambda: sample, passed)


@given(st.integers(1, 14), st.integers(1, 40), st.integers(1, 30), st.data())
def test_distinct_tuples_counts_the_combinations(
    width: int, size: int, spread: int, data: st.DataObject
) -> None:
    """distinct_tuples' count of combinations (mixed-radix numbers over the columns' codes,
    renumbered when they would overflow; a column with no value twice answers at once)
    equals a set of the kept rows' tuples: up to 14 columns of up to 31 values each, past
    what one int64 numbers (NULLs counted as a value)."""
    from optimizer.estimate.sample_distinct import distinct_tuples

    cells = st.one_of(st.integers(0, spread).map(float), st.just(float("nan")))
    columns = {
        f"c{i}": np.asarray(data.draw(st.lists(cells, min_size=size, max_size=size)))
        for i in range(width)
    }
    columns["s"] = np.asarray(
        data.draw(
            st.lists(st.one_of(st.sampled_from("xyz"), st.none()), min_size=size, max_size=size)
        ),
        dtype=object,
    )
    passed = np.asarray(data.draw(st.lists(st.booleans(), min_size=size, max_size=size)))
    counted = distinct_tuples(_tuples_side(columns, passed), tuple(columns))
    if not passed.any():
        assert counted is None
        return
    assert counted is not None
    assert counted[0] == _plain_tuples(columns, passed)


def test_distinct_tuples_past_one_int64_keeps_rows_apart() -> None:
    """A first column of 2 values, then 64 columns of one value or NULL (2 codes each: 2**64
    combinations after the first): numbered in one int64 without renumbering, the first
    column's digit would wrap away and rows differing only there would count once."""
    from optimizer.estimate.sample_distinct import distinct_tuples

    pattern_p = np.where(np.arange(64) % 3 == 0, np.nan, 1.0)
    pattern_q = np.where(np.arange(64) % 3 == 1, np.nan, 1.0)  # never NULL in both
    rows = [(0.0, pattern_p), (1.0, pattern_p), (0.0, pattern_q), (1.0, pattern_q)]
    columns = {"first": np.array([first for first, _ in rows])}
    for i in range(64):
        columns[f"c{i}"] = np.array([pattern[i] for _, pattern in rows])
    counted = distinct_tuples(_tuples_side(columns, np.ones(4, dtype=bool)), tuple(columns))
    assert counted is not None
    assert counted[0] == 4


def test_distinct_tuples_of_a_column_with_no_value_twice() -> None:
    """A column whose kept rows all differ (NULL once among them) makes every combination
    differ; a column one value short of that does not: two whole rows repeat."""
    from optimizer.estimate.sample_distinct import distinct_tuples

    key = np.array([1.0, 2.0, np.nan, 4.0, 4.0])
    other = np.array([7.0, 7.0, 7.0, 8.0, 8.0])
    passed = np.ones(5, dtype=bool)
    side = _tuples_side({"key": key, "other": other}, passed)
    assert distinct_tuples(side, ("key", "other")) == (4, [4, 2], 5)
    unique = _tuples_side({"key": np.array([1.0, 2.0, np.nan, 4.0, 5.0]), "other": other}, passed)
    assert distinct_tuples(unique, ("key", "other")) == (5, [5, 2], 5)


@given(st.integers(0, 300), st.data())
def test_carried_mcvs_over_the_kept_rows_as_over_every_row(size: int, data: st.DataObject) -> None:
    """carried_mcvs weighs only the rows its filter kept; its most-common values (values
    and fractions, to the last bit) are those of the weights of every row (zeros for the
    others) summed as one array."""
    from optimizer.estimate.heavy_keys_carried import carried_mcvs, key_weights
    from optimizer.estimate.scan_sample import ScanSample

    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    keys = rng.integers(0, 40, size).astype(np.float64)
    keys[rng.random(size) < 0.1] = np.nan
    values = rng.integers(0, 12, size).astype(np.float64)
    values[rng.random(size) < 0.1] = np.nan
    row_weights = rng.choice([0.1, 1 / 3, 7.25, 1e-3], size)
    passed = rng.random(size) < data.draw(st.sampled_from([0.02, 0.3, 1.0]))
    heavy = {float(k): float(rng.integers(1, 10**6)) / 7 for k in rng.integers(0, 40, 6)}
    rest = 1 / 3
    sample = Sample({"k": keys, "v": values}, row_weights, size)
    carried = carried_mcvs(
        ScanSample("a", lambda: sample, passed), "k", heavy, rest, {"v": "double"}
    )
    weights = key_weights(keys, passed, row_weights, heavy, rest, coded=value_codes(keys))
    plain = weighted_mcvs(values, weights, "double", coded=value_codes(values))
    assert carried.get("v", ()) == plain


@given(st.lists(st.tuples(st.integers(-1, 5), st.booleans()), max_size=50), st.integers(6, 8))
def test_rows_per_value_counts_each_probes_rows(rows: list[tuple[int, bool]], probes: int) -> None:
    """Per probe, its sampled rows and how many of them match (None: no row holds it), as a
    loop over the rows counts them; rows holding no probe (-1) count for none."""
    from optimizer.estimate.heavy_keys_surviving import _rows_per_probe, _rows_per_value, _Tally

    index = np.asarray([i for i, _ in rows], dtype=np.int64)
    found = np.asarray([m for _, m in rows], dtype=bool)
    plain = [
        (sum(1 for i, _ in rows if i == p), float(sum(1 for i, m in rows if i == p and m)))
        for p in range(probes)
    ]
    expected = [counted if counted[0] else None for counted in plain]
    tally = _Tally.of(found)
    assert _rows_per_value(index, tally, probes) == expected
    # the rows per probe given (kept with an unfiltered sample): the same figures
    assert _rows_per_value(index, tally, probes, _rows_per_probe(index, probes)) == expected


@given(
    st.lists(st.one_of(st.integers(0, 400).map(float), st.just(float("nan"))), max_size=60),
    st.lists(st.one_of(st.text("abcdefgh", max_size=4), st.none()), max_size=60),
    st.data(),
)
@settings(deadline=None)  # a loaded machine is no failure
def test_distinct_values_among_kept_rows(
    numbers: list[float], texts: list[str | None], data: st.DataObject
) -> None:
    """Either way of counting (sorting the few kept rows' codes of a column of many values,
    a count per code otherwise) gives np.unique's count of the kept non-NULL values."""
    size = min(len(numbers), len(texts))
    drawn = data.draw(st.lists(st.booleans(), min_size=size, max_size=size))
    passed = np.asarray(drawn, dtype=bool)
    columns = {
        "n": np.asarray(numbers[:size], dtype=np.float64),
        "s": np.asarray(texts[:size], dtype=object),
    }
    sample = Sample(columns, np.ones(size), 1)
    for name, values in columns.items():
        assert distinct_in(sample, passed, name) == len(_distinct(values[passed]))
    assert distinct_in(sample, passed, "missing") is None


def test_distinct_values_of_few_rows_among_many_values() -> None:
    """Three kept rows of 1,000 distinct values: counted by sorting their codes."""
    values = np.arange(1000, dtype=np.float64)
    values[10] = values[20] = 500.0  # the kept rows 10, 20 and 999: two values
    passed = np.zeros(1000, dtype=bool)
    passed[[10, 20, 999]] = True
    sample = Sample({"k": values}, np.ones(1000), 1)
    assert distinct_in(sample, passed, "k") == 2
    assert distinct_in(sample, ~passed, "k") == 997
