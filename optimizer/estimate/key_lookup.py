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

The other way round (`surviving_mcvs`): when the unique side's sample holds every row of
its table, it says exactly which keys its filter kept, and the heavy side's own sample says
which of its heavy values (of any join-key candidate) have rows with those keys: a hot part
dropped by a brand filter takes its suppliers' rows with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metastore.samples import NUMBER, Sample, as_number, from_number, sample_kind

MCV_LIMIT = 100


@dataclass(frozen=True, eq=False)
class ScanSample:
    """The row sample behind a scan (loaded when first needed) and which sampled rows its
    filter kept (None: all)."""

    alias: str
    load: Callable[[], Sample | None]
    passed: Any = None  # numpy bool array or None
    every_partition: bool = False  # the scan reads all of the table's partitions
    # what the request derived of this scan's sample: the sample itself, loaded once, and
    # what the joins weighed for each join order ask of it again (carried_mcvs)
    memo: dict[Hashable, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def loaded(self) -> Sample | None:
        """The sample, loaded once (each join order the planner weighs asks again)."""
        if "sample" not in self.memo:
            self.memo["sample"] = self.load()
        return self.memo["sample"]  # type: ignore[no-any-return]

    def rows(self) -> tuple[Sample, np.ndarray] | None:
        if "rows" not in self.memo:
            sample = self.loaded()
            if sample is None or sample.size == 0:
                self.memo["rows"] = None
            else:
                passed = self.passed
                if passed is None:
                    passed = np.ones(sample.size, dtype=bool)
                self.memo["rows"] = (sample, passed)
        return self.memo["rows"]  # type: ignore[no-any-return]


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


def value_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A numeric column's distinct values (sorted, NaN left out) and per row the index of
    its value among them (-1: NaN)."""
    present = ~np.isnan(values)
    distinct, inverse = np.unique(values[present], return_inverse=True)
    codes = np.full(len(values), -1, dtype=np.int32)  # a sample has fewer rows than 2**31
    codes[present] = inverse
    return distinct, codes


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


@dataclass(frozen=True)
class ListedJoin:
    """A partition key's join with a sampled column (`listed_key_join`): its rows, and
    which sampled rows of the other side met a listed key (among those its filter kept)."""

    rows: float
    matched: np.ndarray


def listed_key_join(
    listed: tuple[tuple[Any, float], ...],
    listed_rows: float,
    other: ScanSample,
    other_key: str,
    other_rows: float,
) -> ListedJoin | None:
    """An equi-join of a partition key, whose rows per value the partition listing gives
    exactly (`listed`: value, fraction of its side's `listed_rows`), with a scanned column
    whose filtered row sample says which of its values survive: each sampled row of the
    other side that passed its filter stands for its share of `other_rows` and meets the
    listed rows of its key (None when the sample cannot say). Unlike a distinct-count
    formula it sees which keys the two sides share: a fact table partitioned by day joined
    with a year of a calendar dimension meets that year's partitions, not 1/365 of all."""
    loaded = other.rows()
    if loaded is None or not listed:
        return None
    sample, passed = loaded
    if not sample.numeric(other_key):
        return None
    keys = sample.columns[other_key]
    numbers: list[float] = []
    counts: list[float] = []
    for value, fraction in listed:
        try:
            number = as_number(value)
        except TypeError:
            return None
        if number is not None:
            numbers.append(number)
            counts.append(fraction * listed_rows)
    weights = np.where(passed, sample.weights, 0.0)
    total = float(weights.sum())
    if not numbers or total <= 0:
        return ListedJoin(0.0, np.zeros(sample.size, dtype=bool)) if numbers else None
    wanted, rows = np.asarray(numbers), np.asarray(counts)
    order = np.argsort(wanted)
    wanted, rows = wanted[order], rows[order]
    at = np.clip(np.searchsorted(wanted, keys), 0, len(wanted) - 1)
    meets = np.where(wanted[at] == keys, rows[at], 0.0)
    joined = float((weights * meets).sum()) * other_rows / total
    return ListedJoin(joined, passed & (meets > 0))


def distinct_left(side: ScanSample, matched: np.ndarray, name: str) -> tuple[int, int] | None:
    """Distinct non-NULL values of the sampled column `name` among the rows the side's
    filter kept, and among the `matched` ones of those (None: the sample lacks the column)."""
    loaded = side.rows()
    if loaded is None:
        return None
    sample, passed = loaded
    before = distinct_in(sample, passed, name)
    return None if before is None else (before, distinct_in(sample, matched, name) or 0)


SPARSE_CODES = 16  # rows at most 1/16 of the sample's: their distinct codes sorted, not counted


def distinct_in(sample: Sample, rows: np.ndarray, name: str) -> int | None:
    """Distinct non-NULL values of the sampled column `name` among `rows` (a bool mask, or
    the rows' positions); None when the sample lacks the column. The codes of a few rows
    are sorted (np.unique), not counted into a bin per code of the whole sample."""
    if name not in sample.columns:
        return None
    codes = _codes(sample, name)[rows]  # the column's codes, kept with the sample
    codes = codes[codes >= 0]
    if not codes.size:
        return 0
    if codes.size * SPARSE_CODES <= sample.size:
        return int(np.unique(codes).size)
    return int(np.count_nonzero(np.bincount(codes)))


def sample_table(
    sample: Sample, names: tuple[str, ...], rows: np.ndarray | None = None
) -> pa.Table:
    """The sampled columns `names` as an Arrow table (NULLs as nulls: a string column's
    None, a number's NaN), of the `rows` of a bool mask if given."""
    arrays = {}
    for name in names:
        values = sample.columns[name]
        if values.dtype == object:
            arrays[name] = sample.arrow(name)
        else:
            arrays[name] = pa.array(values, from_pandas=True)
    table = pa.table(arrays)
    return table if rows is None else table.filter(pa.array(rows))


def distinct_tuples(side: ScanSample, names: tuple[str, ...]) -> tuple[int, list[int], int] | None:
    """Among the sampled rows the side's filter kept: the distinct combinations of the
    columns `names`, each column's distinct values (NULL counting as a value), and the
    rows. None when the sample lacks a column or kept no row."""
    loaded = side.rows()
    if loaded is None:
        return None
    sample, passed = loaded
    if not passed.any() or any(name not in sample.columns for name in names):
        return None
    # each column's codes (kept with the sample), NULL as one more value, then the
    # combinations as one mixed-radix number per row
    columns = [_codes(sample, name)[passed] + 1 for name in names]
    singles = [int(np.count_nonzero(np.bincount(codes))) for codes in columns]
    rows = int(passed.sum())
    if max(singles) == rows:  # a column with no value twice: every combination differs
        return rows, singles, rows
    combined = np.zeros(rows, dtype=np.int64)
    for codes in columns:
        radix = int(codes.max()) + 1
        if radix and combined.size and int(combined.max()) > (2**62) // radix:
            combined = _dense(combined)  # renumbered 0..k-1 (k <= rows): room again
        combined = combined * radix + codes
    return int(np.unique(combined).size), singles, rows


def _dense(numbers: np.ndarray) -> np.ndarray:
    """Each number's rank among the distinct `numbers` (equal numbers, equal ranks)."""
    return np.unique(numbers, return_inverse=True)[1].astype(np.int64).reshape(-1)


def distinct_tuple_share(side: ScanSample, names: tuple[str, ...]) -> float | None:
    """distinct_tuples' combinations over the product of each column's distinct values (1
    for independent columns, 1/10 for a category and its id). A ratio of two counts on the
    same rows: the sample's under-count of distinct values largely cancels."""
    counted = distinct_tuples(side, names)
    if counted is None:
        return None
    combinations, singles, _ = counted
    return min(1.0, combinations / math.prod(max(1, d) for d in singles))


def key_in_sample(side: ScanSample, names: tuple[str, ...]) -> bool | None:
    """Whether the columns `names` hold no combination twice among the sampled rows whose
    values are all non-NULL (every row of the table's sample, filtered or not: being a key
    is the table's property); None when the sample lacks a column or is empty. A uniform
    sample of n rows from a column pair with D combinations repeats one about n^2 / 2D
    times: lineitem's (part, supplier) shows thousands, partsupp's none."""
    sample = side.loaded()
    if sample is None or sample.size == 0 or any(n not in sample.columns for n in names):
        return None
    return sample.derived(("key", names), partial(_key_in_sample, sample, names))


def _key_in_sample(sample: Sample, names: tuple[str, ...]) -> bool | None:
    table = sample_table(sample, names).drop_null()
    if table.num_rows == 0:
        return None
    return bool(table.group_by(list(names)).aggregate([]).num_rows == table.num_rows)


@dataclass(frozen=True)
class SampledJoin:
    """Two scans' filtered row samples joined on a composite key (`sampled_join`)."""

    pairs: int  # sampled row pairs whose keys all match
    selectivity: float  # of the two scans' filtered rows: the pairs' weight / (rows x rows)
    covering_pairs: float  # the pairs due if every row of the smaller scan met one or more


def sampled_join(
    left: ScanSample, left_names: tuple[str, ...], right: ScanSample, right_names: tuple[str, ...]
) -> SampledJoin | None:
    """The join of two scans' row samples (the rows their filters kept) on the columns
    `left_names` = `right_names` pairwise, NULLs matching nothing: each matching pair of
    sampled rows stands for the product of their weights (Haas, Naughton, Seshadri and Swami
    1996, the cross-product sampling estimator). None when a sample lacks a column, the
    kinds differ, or a side kept no row."""
    loaded_left, loaded_right = left.rows(), right.rows()
    if loaded_left is None or loaded_right is None or len(left_names) != len(right_names):
        return None
    (first, kept_first), (second, kept_second) = loaded_left, loaded_right
    if any(n not in first.columns for n in left_names) or any(
        n not in second.columns for n in right_names
    ):
        return None
    if any(
        first.numeric(a) != second.numeric(b) for a, b in zip(left_names, right_names, strict=True)
    ):
        return None
    rows_first = float(first.weights[kept_first].sum())
    rows_second = float(second.weights[kept_second].sum())
    if rows_first <= 0 or rows_second <= 0:
        return None
    index = first.derived(
        ("pair index", left_names, second.token, right_names),
        partial(_pair_index, first, left_names, second, right_names),
    )
    if index is None:  # too many combinations for one int64: Arrow's hash join
        pairs, weight = _joined_pairs(
            first, kept_first, left_names, second, kept_second, right_names
        )
    else:
        pairs, weight = index.matched(first.weights, kept_first, second.weights, kept_second)
    covering = int(kept_first.sum()) * int(kept_second.sum()) / max(rows_first, rows_second)
    return SampledJoin(pairs, weight / (rows_first * rows_second), covering)


@dataclass(frozen=True)
class PairIndex:
    """Which sampled rows of two samples share a key combination, kept with the first sample
    (built once per pair of samples and key columns; a request then weighs its filters' kept
    rows in O(n), no sort): the other (`sorted_side`) sample's coded rows in key order, and
    for each coded row of the one side the range of equal keys among them."""

    one_rows: np.ndarray  # rows of the one side with a key the other side holds
    low: np.ndarray  # per such row, the first and one-past-last position of its key among
    high: np.ndarray  # the other side's rows in key order
    sorted_rows: np.ndarray  # the other side's coded rows in key order
    first_sorted: bool  # the first sample is the other (sorted) side

    def matched(
        self,
        first_weights: np.ndarray,
        kept_first: np.ndarray,
        second_weights: np.ndarray,
        kept_second: np.ndarray,
    ) -> tuple[int, float]:
        """The kept row pairs whose keys are equal, and the sum over them of the product of
        their weights (the prefix sums of the sorted side's kept weights, read at each kept
        row's range)."""
        one_weights, kept_one, other_weights, kept_other = (
            (second_weights, kept_second, first_weights, kept_first)
            if self.first_sorted
            else (first_weights, kept_first, second_weights, kept_second)
        )
        kept_sorted = kept_other[self.sorted_rows]
        counts = np.concatenate(([0], np.cumsum(kept_sorted, dtype=np.int64)))
        sums = np.concatenate(
            ([0.0], np.cumsum(np.where(kept_sorted, other_weights[self.sorted_rows], 0.0)))
        )
        chosen = kept_one[self.one_rows]
        low, high = self.low[chosen], self.high[chosen]
        pairs = int((counts[high] - counts[low]).sum())
        if not pairs:
            return 0, 0.0
        weights = one_weights[self.one_rows[chosen]]
        return pairs, float(np.dot(weights, sums[high] - sums[low]))


def _pair_index(
    first: Sample, first_names: tuple[str, ...], second: Sample, second_names: tuple[str, ...]
) -> PairIndex | None:
    """The PairIndex of two samples on their key columns (the smaller sample sorted); None
    when the combinations do not fit in an int64."""
    coded = _shared_key_codes(first, first_names, second, second_names)
    if coded is None:
        return None
    first_sorted = first.size < second.size
    sorted_codes, one_codes = (coded[0], coded[1]) if first_sorted else (coded[1], coded[0])
    present = np.flatnonzero(sorted_codes >= 0)
    sorted_rows = present[np.argsort(sorted_codes[present], kind="stable")]
    keys = sorted_codes[sorted_rows]
    one_rows = np.flatnonzero(one_codes >= 0)
    low = np.searchsorted(keys, one_codes[one_rows], side="left")
    high = np.searchsorted(keys, one_codes[one_rows], side="right")
    matching = high > low  # rows whose key the other side lacks never match: left out
    positions = np.int32 if max(first.size, second.size) < 2**31 else np.int64
    return PairIndex(
        one_rows[matching].astype(positions),
        low[matching].astype(positions),
        high[matching].astype(positions),
        sorted_rows.astype(positions),
        first_sorted,
    )


def _shared_key_codes(
    first: Sample, first_names: tuple[str, ...], second: Sample, second_names: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Per sampled row of each sample, its key columns' combination as one int64 in a code
    space both share (equal combinations, equal numbers; -1: a NULL or a value the other
    sample lacks), built from each column's codes kept with its sample; None when the
    combinations do not fit in an int64."""
    combined: list[np.ndarray] = [np.zeros(first.size, np.int64), np.zeros(second.size, np.int64)]
    room = 1
    for a, b in zip(first_names, second_names, strict=True):
        values_a, codes_a = _coded(first, a)
        values_b, codes_b = _coded(second, b)
        radix = len(values_b)
        room *= max(radix, 1)
        if room > 2**62:
            return None
        if isinstance(values_b, pa.Array):  # strings: the first's dictionary in the second's
            found = pc.index_in(values_a, value_set=values_b).fill_null(-1)
            into_b = np.asarray(found.to_numpy(zero_copy_only=False), dtype=np.int64)
        else:  # numbers: both sorted
            at = np.searchsorted(values_b, values_a)
            inside = at < len(values_b)
            into_b = np.full(len(values_a), -1, dtype=np.int64)
            into_b[inside] = np.where(values_b[at[inside]] == values_a[inside], at[inside], -1)
        into_b = np.append(into_b, -1)  # a NULL row's code, -1, reads this last -1
        mapped_a = into_b[codes_a]
        for index, codes in ((0, mapped_a), (1, codes_b.astype(np.int64))):
            missing = (codes < 0) | (combined[index] < 0)
            combined[index] = np.where(missing, -1, combined[index] * radix + codes)
    return combined[0], combined[1]


def _coded(sample: Sample, name: str) -> tuple[np.ndarray | pa.Array, np.ndarray]:
    """A sampled column's distinct values (numbers sorted; strings as Arrow's dictionary) and
    per row the index of its value among them (-1: NULL), kept with the sample."""
    if sample.numeric(name) is False:
        return string_codes(sample, name)
    values = sample.columns[name]
    return sample.derived(("value codes", name), partial(value_codes, values))


def _joined_pairs(
    first: Sample,
    kept_first: np.ndarray,
    left_names: tuple[str, ...],
    second: Sample,
    kept_second: np.ndarray,
    right_names: tuple[str, ...],
) -> tuple[int, float]:
    """PairIndex.matched's figures by Arrow's hash join of the two samples' kept rows."""
    keys = [f"k{i}" for i in range(len(left_names))]
    tables = []
    sides = ((first, kept_first, left_names), (second, kept_second, right_names))
    for sample, kept, names in sides:
        table = sample_table(sample, names, kept).rename_columns(keys)
        weights = pa.array(sample.weights[kept])
        tables.append(table.append_column("w", weights).drop_null())
    joined = tables[0].join(tables[1], keys, join_type="inner", left_suffix="_l", right_suffix="_r")
    pairs = joined.num_rows
    if not pairs:
        return 0, 0.0
    return pairs, float(pc.sum(pc.multiply(joined["w_l"], joined["w_r"])).as_py() or 0.0)


MIN_REPEATED_GROUPS = 20  # sampled values seen twice or more before a dependency is trusted


def determines(side: ScanSample, column: str, key: str) -> bool:
    """Whether the sampled rows sharing a value of `column` share one value of `key` (a
    functional dependency, as a sale's ticket number determines its date), on the values
    the table's row sample holds at least twice (at least MIN_REPEATED_GROUPS of them;
    else False). Kept with the sample."""
    sample = side.loaded()
    if sample is None or column not in sample.columns or key not in sample.columns:
        return False
    return sample.derived(("determines", column, key), partial(_determines, sample, column, key))


def _determines(sample: Sample, column: str, key: str) -> bool:
    """Sorted by the column (once per column), neighbours with one column value must have
    one key value: O(n) per key after the sort, not a grouping per pair."""
    values = _codes(sample, column)[_order(sample, column)]
    keys = _codes(sample, key)[_order(sample, column)]
    same = (values[1:] == values[:-1]) & (values[1:] >= 0) & (keys[1:] >= 0) & (keys[:-1] >= 0)
    if int(same.sum()) < MIN_REPEATED_GROUPS:
        return False
    return not bool(np.any(keys[1:][same] != keys[:-1][same]))


def _codes(sample: Sample, name: str) -> np.ndarray:
    """Per sampled row, an integer standing for its value of `name` (-1: NULL); kept."""
    if sample.numeric(name) is False:  # strings: coded by Arrow, never decoded
        return string_codes(sample, name)[1]
    return sample.derived(
        ("codes", name), lambda: value_codes(sample.columns[name])[1].astype(np.int64)
    )


def string_codes(sample: Sample, name: str) -> tuple[pa.Array, np.ndarray]:
    """A sampled string column's distinct values (Arrow's dictionary, in order of first
    appearance) and per sampled row the index of its value among them (-1: NULL); kept
    with the sample."""

    def compute() -> tuple[pa.Array, np.ndarray]:
        array = sample.arrow(name)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        encoded = pc.dictionary_encode(array)
        indices = encoded.indices.fill_null(-1)
        codes = np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        return encoded.dictionary, codes

    return sample.derived(("string codes", name), compute)


def _order(sample: Sample, name: str) -> np.ndarray:
    return sample.derived(("order", name), lambda: np.argsort(_codes(sample, name), kind="stable"))
