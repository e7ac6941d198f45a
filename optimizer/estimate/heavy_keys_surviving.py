"""Heavy values of one join side that survive the other side's filter, through both sides'
row samples (level `sketch`, docs/estimator.md; heavy_keys_carried is the other way round).

When the unique side's sample holds every row of its table, it says exactly which keys its
filter kept, and the heavy side's own sample says which of its heavy values (of any join-key
candidate) have rows with those keys (`surviving_mcvs`): a hot part dropped by a brand
filter takes its suppliers' rows with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metastore.statistics.samples import Sample, as_number
from optimizer.estimate.scan_sample import ScanSample, value_codes

MIN_SAMPLED_ROWS = 5  # sampled rows of a heavy value before its own survival is trusted


def surviving_mcvs(
    side: ScanSample,
    key: str,
    other: ScanSample,
    other_key: str,
    targets: dict[str, tuple[tuple[Any, float], ...]],
    scale: float,
) -> dict[str, tuple[tuple[Any, float], ...]]:
    """The most-common values of this side's columns `targets` (name -> MCVs) in the output
    of a join with `other`, whose `other_key` is (nearly) unique and whose sample holds every
    row of its table (else {}: nothing says which keys it lacks): a value keeps the share of
    its sampled rows whose `key` finds a row the other side's filter kept (its own sampled
    rows when it has enough, else the side's average), `scale` turns fractions of this side's
    rows into fractions of the output's. A hot part the filter drops takes its suppliers'
    rows with it."""
    mine, theirs = side.rows(), other.rows()
    if mine is None or theirs is None:
        return {}
    sample, passed = mine
    other_sample, other_passed = theirs
    numeric = sample.numeric(key)
    if numeric is None or numeric != other_sample.numeric(other_key):
        return {}
    if not other.every_partition or not _every_row(other_sample):
        return {}  # only a sample of every row of the table says which keys it lacks
    rows = np.flatnonzero(passed)  # the kept rows' positions: every figure reads only them
    if numeric:
        kept, found = _numeric_key_matches(sample, key, rows, other_sample, other_key, other_passed)
    else:  # strings, compared in Arrow (never turned into Python strings row by row)
        kept_strings = pc.unique(
            pc.drop_null(pc.filter(other_sample.arrow(other_key), pa.array(other_passed)))
        )
        mine_kept = sample.arrow(key).take(pa.array(rows))
        met = pc.is_in(mine_kept, value_set=kept_strings).fill_null(False)
        found = np.asarray(met.to_numpy(zero_copy_only=False), dtype=bool)
        kept = np.sort(np.array(kept_strings.to_pylist(), dtype=object))
    tally = _Tally.of(found)
    average = tally.matched / len(found) if len(found) else 0.0
    every = len(rows) == len(passed)  # no filter: the rows per value are kept with the sample

    def survival(value: Any, own_key: bool, sampled: tuple[int, float] | None) -> float:
        probe = value if isinstance(value, str) else as_number(value)
        if probe is None:
            return 0.0  # NULL joins nothing
        if own_key:
            return 1.0 if _holds(kept, probe) else 0.0
        if sampled is None or sampled[0] < MIN_SAMPLED_ROWS:
            return average
        return sampled[1] / sampled[0]

    result = {}
    for name, mcvs in targets.items():
        if name not in sample.columns or not mcvs:
            continue
        try:
            probes = [v if isinstance(v, str) else as_number(v) for v, _ in mcvs]
            index = sample.derived(
                ("probes", name, tuple(probes)),
                partial(_probe_index, sample, name, probes),
            )
            held = None
            if every:
                held = sample.derived(
                    ("probe rows", name, tuple(probes)),
                    partial(_rows_per_probe, index, len(probes)),
                )
            counted = _rows_per_value(index if every else index[rows], tally, len(probes), held)
            result[name] = tuple(
                (v, min(1.0, f * survival(v, name == key, counted[i]) * scale))
                for i, (v, f) in enumerate(mcvs)
            )
        except TypeError:  # a value the sample does not hold as a number
            continue
    return result


def _every_row(sample: Sample) -> bool:
    """Each sampled row stands for itself alone (weight 1): the sample holds every row of
    what it was drawn from (kept with the sample)."""
    return bool(sample.derived(("every row",), lambda: np.all(sample.weights <= 1.0 + 1e-9)))


def _probe_index(sample: Sample, name: str, probes: list[Any]) -> np.ndarray:
    """Per sampled row, which of `probes` its column `name` holds (-1: none), in one
    vectorised pass: Arrow's index_in for strings, a sorted search for numbers."""
    values = sample.columns[name]
    if values.dtype == object:
        wanted = [p if isinstance(p, str) else None for p in probes]
        found = pc.index_in(sample.arrow(name), value_set=pa.array(wanted, type=pa.string()))
        return np.asarray(found.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    numbers = np.array([float(p) if isinstance(p, int | float) else np.nan for p in probes])
    order = np.argsort(numbers, kind="stable")
    position = np.searchsorted(numbers[order], values).clip(max=len(probes) - 1)
    return np.where(numbers[order][position] == values, order[position], -1)


@dataclass(frozen=True)
class _Tally:
    """Which kept rows found a match, by the positions of the fewer kind: the matched rows
    per value are counted over those alone (all of them, or all but the unmatched)."""

    positions: np.ndarray
    matched_listed: bool  # `positions` are the matched rows (else the unmatched ones)
    matched: int

    @staticmethod
    def of(found: np.ndarray) -> _Tally:
        matched = np.flatnonzero(found)
        if 2 * len(matched) <= len(found):
            return _Tally(matched, True, len(matched))
        return _Tally(np.flatnonzero(~found), False, len(matched))


def _rows_per_probe(index: np.ndarray, probes: int) -> np.ndarray:
    """Per probe, the rows holding it (`index`: which probe each row holds, -1 for none);
    shifted by one, the rows holding none fall in a first bin left out."""
    return np.bincount(index + 1, minlength=probes + 1)[1:]


def _rows_per_value(
    index: np.ndarray, tally: _Tally, probes: int, held: np.ndarray | None = None
) -> list[tuple[int, float] | None]:
    """Per probe: the sampled rows holding it (`index`: which probe each row holds, -1 for
    none; `held`, when known), and how many of them match (`tally`); None for a probe no
    row holds."""
    rows = held if held is not None else _rows_per_probe(index, probes)
    listed = _rows_per_probe(index[tally.positions], probes)
    matched = listed if tally.matched_listed else rows - listed
    return [(int(r), float(m)) if r else None for r, m in zip(rows, matched, strict=True)]


def _holds(distinct: np.ndarray, probe: Any) -> bool:
    """`probe` is one of `distinct` (sorted): a binary search,
    not np.isin's sort of the whole array for one value."""
    if (distinct.dtype == object) != isinstance(probe, str):  # a value of another type
        return bool(np.isin(probe, distinct))
    at = int(np.searchsorted(distinct, probe))
    return at < len(distinct) and bool(distinct[at] == probe)


def _numeric_key_matches(
    sample: Sample,
    key: str,
    rows: np.ndarray,
    other: Sample,
    other_key: str,
    other_passed: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of `other_key` among the rows of `other` its filter kept
    (`other_passed`; sorted), and per sampled row of `sample` at the positions `rows`
    whether its `key` is one of them (NULL never is): each distinct value of `key` is
    placed among the other's once per pair of samples (`_values_among`), so a request only
    flags and gathers."""
    other_distinct, kept_flags = _kept_flags(other, other_key, other_passed)
    codes = sample.derived(("value codes", key), partial(value_codes, sample.columns[key]))[1]
    into_other = sample.derived(
        ("values among", key, other.token, other_key),
        partial(_values_among, sample, key, other, other_key),
    )
    # per kept row: its value's place among the other's distinct values, and whether a
    # row the other's filter kept holds that value (only the kept rows are read)
    kept_codes = codes[rows]
    found = np.zeros(len(rows), dtype=bool)
    present = kept_codes >= 0
    if len(kept_flags):
        among = into_other[kept_codes[present]]
        found[present] = (among >= 0) & kept_flags[np.maximum(among, 0)]
    return other_distinct[kept_flags], found


def _kept_flags(sample: Sample, name: str, passed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A numeric column's distinct values (sorted, NaN left out; kept with the sample) and,
    per distinct value, whether a sampled row `passed` kept holds it."""
    distinct, codes = sample.derived(
        ("value codes", name), partial(value_codes, sample.columns[name])
    )
    if passed.all():
        return distinct, np.ones(len(distinct), dtype=bool)
    present = codes[passed]
    counts = np.bincount(present[present >= 0], minlength=len(distinct))
    return distinct, counts > 0


def _values_among(sample: Sample, name: str, other: Sample, other_name: str) -> np.ndarray:
    """Per distinct value of a numeric column of `sample`, its index among the distinct
    values of `other_name` in `other` (-1: other lacks it); kept with the sample under the
    other's token, so a request reads it, not a search of every value."""
    distinct = sample.derived(("value codes", name), partial(value_codes, sample.columns[name]))[0]
    theirs = other.derived(
        ("value codes", other_name), partial(value_codes, other.columns[other_name])
    )[0]
    into = np.full(len(distinct), -1, dtype=np.int64)
    if len(theirs):
        at = np.searchsorted(theirs, distinct).clip(max=len(theirs) - 1)
        found = theirs[at] == distinct
        into[found] = at[found]
    return into
