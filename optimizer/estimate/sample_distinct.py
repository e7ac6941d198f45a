"""Distinct values, combinations, keys and functional dependencies counted on a scan's row
sample: grouping columns read from one scan as one key (`distinct_tuples`), a composite key
the sample proves (`key_in_sample`), a column that determines another (`determines`), and
the distinct values a join leaves (`distinct_left`); docs/estimator.md, the rules table and
#groups-a-partitions-pairs-fill.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from metastore.statistics.samples import Sample
from optimizer.estimate.scan_sample import ScanSample, sample_table, string_codes, value_codes


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


def _order(sample: Sample, name: str) -> np.ndarray:
    return sample.derived(("order", name), lambda: np.argsort(_codes(sample, name), kind="stable"))
