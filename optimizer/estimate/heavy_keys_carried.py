"""Heavy join keys carried onto the other side's columns, through its row sample.

A join multiplies each row of one side by the rows of the other side with its key. When the
fact side's key is skewed (a few customers place most orders), the join's output is no
longer distributed like the dimension: if the hottest customers live in France, most
joined rows have c_nationkey = FRANCE, though France has 1/25 of the customers. Per-column
statistics cannot see this; a following join on c_nationkey (to nation, filtered by name)
would be off by the skew. statlas's rule (level `sketch`, docs/estimator.md): when a join key
is (nearly) unique on a side that is one table's scan with a row sample, every sampled row
of that side is weighted by the rows the other side has for its key (a heavy hitter's own
count, else the average of the other keys times the rows the sampled row stands for), and
the side's join-key candidates (columns with a Theta sketch) get the weighted distribution
as their most-common values. Heavy keys the sample does not hold spread like the rest.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from metastore.statistics.samples import NUMBER, Sample, as_number, from_number, sample_kind
from optimizer.estimate.scan_sample import ScanSample, value_codes

MCV_LIMIT = 100


def key_weights(
    keys: np.ndarray | None,
    passed: np.ndarray,
    row_weights: np.ndarray,
    heavy: dict[float, float],
    rest_per_key: float,
    coded: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Per sampled row of the unique-key side: the other side's rows it joins with. A heavy
    key's row takes its own count (it is the only row with that key); any other row stands
    for `row_weights` rows of `rest_per_key` matches each. With `coded` (the keys' distinct
    values and each row's code, `value_codes`, kept with the sample) the heavy keys are
    found among the distinct values, then read per row by its code: no binary search per
    row (and `keys` is not read: None will do)."""
    wanted = np.fromiter(heavy, dtype=np.float64, count=len(heavy))
    counts = np.fromiter(heavy.values(), dtype=np.float64, count=len(heavy))
    if coded is not None:
        distinct, codes = coded
        weights = np.where(passed & (codes >= 0), rest_per_key * row_weights, 0.0)
        if len(distinct) and len(wanted):
            at = np.clip(np.searchsorted(distinct, wanted), 0, len(distinct) - 1)
            found = distinct[at] == wanted
            if found.any():  # only the heavy keys' rows are written again
                own = np.zeros(len(distinct) + 1)  # the last: NULL (code -1), never heavy
                is_heavy = np.zeros(len(distinct) + 1, dtype=bool)
                own[at[found]] = counts[found]
                is_heavy[at[found]] = True
                hit = is_heavy[codes] & passed
                weights[hit] = own[codes[hit]]
        return weights
    weights = np.where(passed, rest_per_key * row_weights, 0.0)
    assert keys is not None, "the keys, or their codes"
    if heavy:
        order = np.argsort(wanted)
        wanted, counts = wanted[order], counts[order]
        at = np.clip(np.searchsorted(wanted, keys), 0, len(wanted) - 1)
        is_heavy = (wanted[at] == keys) & passed
        weights = np.where(is_heavy, counts[at], weights)
    return np.where(np.isnan(keys), 0.0, weights)


def weighted_mcvs(
    values: np.ndarray | None,
    weights: np.ndarray,
    type_: str,
    limit: int = MCV_LIMIT,
    coded: tuple[np.ndarray, np.ndarray] | None = None,
    total: float | None = None,
) -> tuple[tuple[Any, float], ...]:
    """The heaviest values of a sampled numeric column under `weights`, as fractions of
    the weighted total (NULLs count toward the total, not as values); `coded` is the
    column's `value_codes`, when kept with its sample (`values` is then not read: None
    will do); `total` the weights' sum when
    `values` and `weights` are only the rows of nonzero weight (carried_mcvs)."""
    total = float(weights.sum()) if total is None else total
    if coded is None:
        assert values is not None, "the values, or their codes"
        coded = value_codes(values)
    distinct, codes = coded
    if total <= 0 or not len(codes):
        return ()
    # shifted by one, NULL's rows fall in a first bin left out; a row of no weight adds 0.0
    # to its value's sum (no mask to gather by: the same sums, in the same order)
    positive = np.where(weights > 0, weights, 0.0)
    mass = np.bincount(codes + 1, weights=positive, minlength=len(distinct) + 1)[1:]
    present = np.flatnonzero(mass > 0)  # the values of kept rows (each weighs above 0)
    if 0 < limit < len(present):  # sorted: only those at least as heavy as the limit-th
        masses = mass[present]
        least = np.partition(masses, len(masses) - limit)[len(masses) - limit]
        present = present[masses >= least]  # (ties kept, in order: the sort is stable)
    top = present[np.argsort(-mass[present], kind="stable")[:limit]]
    return tuple((from_number(float(distinct[i]), type_), float(mass[i]) / total) for i in top)


def carried_mcvs(
    side: ScanSample,
    key: str,
    heavy: dict[Any, float],
    rest_per_key: float,
    targets: dict[str, str],
    key_range: tuple[float | None, float | None] = (None, None),
) -> dict[str, tuple[tuple[Any, float], ...]]:
    """Most-common values of the side's columns `targets` (name -> type) in the join's
    output, from its sample weighted by the other side's rows per `key` value, among the
    sampled rows whose key is inside `key_range` (encoded bounds) ({} when the sample
    cannot say)."""
    prepared = side.memo.get(("carried", key, key_range))
    if prepared is None:  # what does not depend on the other side: once per request
        prepared = side.memo[("carried", key, key_range)] = _carrying_rows(side, key, key_range)
    if not prepared:
        return {}
    sample, live, passed, row_weights, coded_keys, gathered = prepared
    numeric_heavy = {}
    for value, rows in heavy.items():
        try:
            number = as_number(value)
        except TypeError:
            continue
        if number is not None:
            numeric_heavy[number] = rows
    weights = key_weights(None, passed, row_weights, numeric_heavy, rest_per_key, coded_keys)
    total = _sum_among(weights, live, sample.size)
    result = {}
    for name, type_ in targets.items():
        if name == key or name not in sample.columns or sample_kind(type_) != NUMBER:
            continue  # (a cached sample's other columns stay unread)
        if name not in gathered:
            values = sample.columns[name]
            if values.dtype != np.float64:
                gathered[name] = None
            else:
                distinct, codes = sample.derived(
                    ("value codes", name), partial(value_codes, values)
                )
                gathered[name] = (distinct, codes[live])
        coded = gathered[name]
        if coded is None:
            continue
        mcvs = weighted_mcvs(None, weights, type_, coded=coded, total=total)
        if mcvs:
            result[name] = mcvs
    return result


_Carrying = tuple[
    Sample,
    np.ndarray | slice,
    np.ndarray,
    np.ndarray,
    tuple[np.ndarray, np.ndarray],
    dict[str, tuple[np.ndarray, np.ndarray] | None],
]


def _carrying_rows(
    side: ScanSample, key: str, key_range: tuple[float | None, float | None]
) -> _Carrying | None:
    """carried_mcvs' rows of the side, whatever the other side: the sample, the rows that
    weigh (`live`: the kept rows' positions, or every row), which of those passed, their
    row weights, the key's distinct values with the live rows' codes, and (filled as the
    targets are first read) each target column's (None: not a double column)."""
    loaded = side.rows()
    if loaded is None:
        return None
    sample, passed = loaded
    if not sample.numeric(key):
        return None
    keys = sample.columns[key]
    low, high = key_range
    with np.errstate(invalid="ignore"):
        if low is not None:
            passed = passed & (keys >= low)
        if high is not None:
            passed = passed & (keys <= high)
    # only the rows the filter kept weigh anything: when it kept few (a brand filter keeps
    # 1% of part's sample), weighted over those alone, in row order, so that every sum is
    # the one over all rows; else over all rows (gathering most of them costs more)
    distinct_keys, key_codes = sample.derived(("value codes", key), partial(value_codes, keys))
    live: np.ndarray | slice = slice(None)
    if np.count_nonzero(passed) * 2 < sample.size:
        live = np.flatnonzero(passed)
        passed = np.ones(len(live), dtype=bool)
    return sample, live, passed, sample.weights[live], (distinct_keys, key_codes[live]), {}


def _sum_among(values: np.ndarray, rows: np.ndarray | slice, size: int) -> float:
    """The sum of an array of `size` zeros holding `values` at `rows`: numpy's pairwise
    summation groups an array's elements by position, so the zeros keep the grouping (and
    the rounding) of the sum over every row."""
    if isinstance(rows, slice):  # every row
        return float(values.sum())
    spread = np.zeros(size)
    spread[rows] = values
    return float(spread.sum())
