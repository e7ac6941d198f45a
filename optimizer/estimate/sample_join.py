"""Two scans' filtered row samples joined on a composite key (`sampled_join`): each matching
pair of sampled rows stands for the product of their weights (Haas, Naughton, Seshadri and
Swami 1996; docs/estimator.md#composite-joins-the-samples-test).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metastore.statistics.samples import Sample
from optimizer.estimate.scan_sample import ScanSample, sample_table, string_codes, value_codes


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
