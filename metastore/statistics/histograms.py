"""Histograms for any set of partitions, derived from mergeable sketches.

- equi_depth / equi_width: from a KLL quantile sketch (the union of the partitions'
  sketches): bounds from quantiles at ranks i/N, or evenly spaced between min and max with
  counts from the sketch's CDF. Accurate to KLL's normalised rank error (1.65% at k 200).
- seed_uniform: the Hive CBO proposal's uniform histogram for a column without sketches,
  built from min, max, NDV and the table's cardinality alone (docs/design.md#uniform-histogram).

Pure functions over numbers: values of dates and timestamps are passed as their numeric
encodings (days, microseconds since the epoch), as they are sketched.

Bounds follow the column's type (issue 21, part 5): a column of discrete values passes
`scale`, its values being whole multiples of 10**-scale (scale 0 for integers, dates in
days and timestamps in microseconds; s for decimal(p,s)). Its edges are then values of
that grid: equi-width buckets are a whole number of steps wide, so a bucket [a, b) holds
exactly the values a, ..., b - step, and a narrow range gives fewer buckets rather than
empty ones. Without `scale` (float, double) the edges are real numbers, as before.
"""

from __future__ import annotations

import itertools
import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from datasketches import (
    compact_theta_sketch,
    frequent_items_error_type,
    frequent_items_sketch,
    frequent_strings_sketch,
    hll_sketch,
    hll_union,
    kll_doubles_sketch,
    theta_union,
)

from metastore.statistics.exact_sets import (
    EXACT_SET,
    HASHED_SET,
    exact_hll,
    exact_values,
    hashed_values,
    set_values,
)
from metastore.statistics.exact_top_k import EXACT_TOP_K, expanded
from metastore.statistics.from_top_k import NUMBER_ITEMS, counted_values, items_layout
from metastore.statistics.kll_packing import MARK as PACKED_KLL
from metastore.statistics.kll_packing import unpacked_kll

HLL_LG_K = 12
THETA_LG_K = 12  # of every union: a selection's distinct values, and the blocks'
KLL_K = 200
# a partition's Theta sketch is sized so that this share's inverse of a table's partitions
# unions to THETA_LG_K's hashes (partition_theta_lg_k), with at least 2**PARTITION_LG_K_LEAST
SELECTION_SHARE, PARTITION_LG_K_LEAST = 16, 7


def partition_theta_lg_k(partitions: int) -> int:
    """lgK of each partition's own Theta sketch in a table of `partitions` partitions
    (docs/design.md#sizes): the least with which a sixteenth of the table's partitions hold
    THETA_LG_K's hashes between them where their values differ, from PARTITION_LG_K_LEAST
    to THETA_LG_K (12 up to 8 partitions, 10 at 64, 9 at 200, 7 from 1,000). A union keeps
    the smallest hashes of its inputs, 2**THETA_LG_K of them, so such a selection is
    estimated as from lgK 12 sketches (1.6% relative standard error), and a partition alone
    within 1/sqrt(2**lgK) (8.8% at lgK 7) (Theta's error: Dasgupta et al., Theta Sketch
    Framework, 2016)."""
    wanted = SELECTION_SHARE * 2**THETA_LG_K / max(1, partitions)
    return min(THETA_LG_K, max(PARTITION_LG_K_LEAST, math.ceil(math.log2(wanted))))


SPARSE_LG_K_LEAST = 5  # a partition's Theta sketch of a sparse integral column: at least 32


def sparse_theta_lg_k(partitions: int) -> int:
    """The least lgK to which a partition's Theta sketch of an integral column may be
    trimmed where its values are sparse in their range (sparse_key_lg_k): the sixteenth
    rule of partition_theta_lg_k without its floor, from SPARSE_LG_K_LEAST (5 from 2,048
    partitions, 6 from 1,024, as partition_theta_lg_k below)."""
    wanted = SELECTION_SHARE * 2**THETA_LG_K / max(1, partitions)
    least = max(SPARSE_LG_K_LEAST, math.ceil(math.log2(wanted)))
    return min(partition_theta_lg_k(partitions), least)


def sparse_key_lg_k(distinct: float, low: int, high: int, least: int, most: int) -> int:
    """lgK of a partition's Theta sketch of an integral column (docs/design.md#sizes), between
    `least` (sparse_theta_lg_k) and `most` (partition_theta_lg_k): with the partition's
    `distinct` values a share d of its range [low, high], 2**THETA_LG_K x d hashes. Partitions
    that share their values union to no more distinct values than their range holds, so a
    union that fills it still keeps THETA_LG_K's hashes (TPC-H's l_suppkey: 21% of 1..10,000,
    kept at `most`); where values are few in a wide range (l_orderkey, l_partkey), they are
    mostly other partitions' distinct values, and the sixteenth rule (`least`) holds (Theta
    unions: Dasgupta et al., Theta Sketch Framework, 2016)."""
    share = distinct / max(1, high - low + 1)
    wanted = max(1.0, 2**THETA_LG_K * share)
    return min(most, max(least, math.ceil(math.log2(wanted))))


PARTITION_KLL_K_LEAST = 32  # a partition's KLL sketch's least k: 7.9% normalised rank error


def partition_kll_k(partitions: int) -> int:
    """k of each partition's own KLL sketch in a table of `partitions` partitions
    (docs/design.md#sizes): the least with which a sixteenth of the table's partitions
    merged are as accurate as one KLL_K sketch, from PARTITION_KLL_K_LEAST to KLL_K (200 up
    to 16 partitions, 100 at 64, 57 at 200, 32 from 625). The compactions of different
    partitions' sketches err independently, so m merged partitions of about equal rows err
    about 1/sqrt(m) as much, relatively, as one; and a sketch errs about as 1/k (Karnin,
    Lang and Liberty, Optimal Quantile Approximation in Streams, 2016)."""
    wanted = KLL_K * math.sqrt(SELECTION_SHARE / max(1, partitions))
    return min(KLL_K, max(PARTITION_KLL_K_LEAST, math.ceil(wanted)))


@dataclass(frozen=True)
class Histogram:
    """Buckets [bounds[i], bounds[i+1]) (the last one closed) with their row counts."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]

    def as_json(self) -> dict[str, list[float]]:
        return {"bounds": list(self.bounds), "counts": list(self.counts)}


def equi_depth(sketch: kll_doubles_sketch, buckets: int, scale: int | None = None) -> Histogram:
    """N buckets holding about n/N rows each: bounds are the quantiles at ranks i/N (values
    of the column; with `scale`, snapped to its grid against floating-point noise)."""
    _check_buckets(buckets)
    if sketch.is_empty():
        return Histogram((), ())
    ranks = [i / buckets for i in range(1, buckets)]
    inner = sketch.get_quantiles(ranks) if ranks else []
    values = [sketch.get_min_value(), *inner, sketch.get_max_value()]
    if scale is not None:
        values = [from_grid(to_grid(v, scale), scale) for v in values]
    bounds = _distinct(values)
    return Histogram(tuple(bounds), _counts(sketch, bounds))


def equi_width(sketch: kll_doubles_sketch, buckets: int, scale: int | None = None) -> Histogram:
    """N buckets of equal width between min and max, counts from the sketch's CDF; with
    `scale`, widths are whole grid steps (grid_edges: maybe fewer buckets, none empty)."""
    _check_buckets(buckets)
    if sketch.is_empty():
        return Histogram((), ())
    low, high = sketch.get_min_value(), sketch.get_max_value()
    if scale is not None:
        edges = grid_edges(to_grid(low, scale), to_grid(high, scale), buckets)
        bounds = [from_grid(edge, scale) for edge in edges]
        return Histogram(tuple(bounds), _counts(sketch, bounds))
    if low == high:
        return Histogram((low, high), (float(sketch.n),))
    if not math.isfinite(low) or not math.isfinite(high):
        return _equi_width_with_infinities(sketch, buckets, low, high)
    width = (high - low) / buckets
    bounds = [low + i * width for i in range(buckets)] + [high]
    return Histogram(tuple(bounds), _counts(sketch, bounds))


def _equi_width_with_infinities(
    sketch: kll_doubles_sketch, buckets: int, low: float, high: float
) -> Histogram:
    """Equal widths cannot span an infinite end (a double column's -Infinity or Infinity):
    each infinite end is a bucket of its own, and the buckets left are equally wide over the
    finite values between them (as far as the sketch's quantiles find them)."""
    ranks = [i / (4 * buckets) for i in range(4 * buckets + 1)]
    finite = [v for v in sketch.get_quantiles(ranks) if math.isfinite(v)]
    inner_count = max(1, buckets - (not math.isfinite(low)) - (not math.isfinite(high)))
    inner: list[float] = []
    if finite and finite[0] < finite[-1]:
        width = (finite[-1] - finite[0]) / inner_count
        inner = [finite[0] + i * width for i in range(inner_count)] + [finite[-1]]
    elif finite:
        inner = [finite[0]]
    bounds = _distinct([low, *inner, high])
    return Histogram(tuple(bounds), _counts(sketch, bounds))


def seed_uniform(
    low: float, high: float, ndv: int, rows: int, scale: int | None = None
) -> Histogram:
    """The uniform histogram (docs/design.md#uniform-histogram, Hive CBO proposal):
    buckets = (max - min) / NDV, width = (max - min) / buckets, height = rows / buckets.
    At least one bucket; a single value is one bucket of all rows. With `scale`, the edges
    are grid_edges for that many buckets and each bucket's rows its share of the grid's
    values (uniform_counts), which is rows / buckets where the buckets are equally wide."""
    if rows <= 0 or ndv <= 0:
        return Histogram((), ())
    span = high - low
    count = max(1, math.floor(span / ndv)) if span > 0 else 1
    if scale is not None:
        edges = grid_edges(to_grid(low, scale), to_grid(high, scale), count)
        bounds = tuple(from_grid(edge, scale) for edge in edges)
        return Histogram(bounds, uniform_counts(edges, rows))
    width = span / count if span > 0 else 0.0
    bounds = (*(low + i * width for i in range(count)), high)
    return Histogram(bounds, tuple(rows / count for _ in range(count)))


def grid_edges(low: int, high: int, buckets: int) -> list[int]:
    """Equi-width edges over integers low..high: width ceil(size/N), ceil(size/width) buckets."""
    # size = high - low + 1 integers; every bucket holds at least one of them (the last
    # one, closed at high, may be narrower), so there are fewer than N when size < N.
    _check_buckets(buckets)
    if high < low:
        raise ValueError(f"an empty range: {low} > {high}")
    size = high - low + 1
    width = -(-size // buckets)
    count = -(-size // width)
    return [low + i * width for i in range(count)] + [high]


def uniform_counts(edges: Sequence[int], rows: int) -> tuple[float, ...]:
    """The uniform assumption on integers: each bucket's rows are its share of them."""
    size = edges[-1] - edges[0] + 1
    # buckets [e_i, e_i+1), the last closed; from cumulative rows, so the counts add up
    below = [round(rows * (edge - edges[0]) / size, 3) for edge in edges[:-1]] + [float(rows)]
    return tuple(round(b - a, 3) for a, b in itertools.pairwise(below))


def to_grid(value: float, scale: int) -> int:
    """A value as the nearest whole number of steps 10**-scale (of a decimal(p, scale))."""
    # the nearest: KLL holds decimals as doubles, 2277.81 * 100 is 227780.99999999997
    return round(value * _power_of_ten(scale))


def from_grid(steps: int, scale: int) -> float:
    """Steps of 10**-scale back to a double, correctly rounded: the decimal's own double."""
    return steps / _power_of_ten(scale)


def _power_of_ten(scale: int) -> int:
    if scale < 0:
        raise ValueError(f"a negative scale: {scale}")
    power: int = 10**scale
    return power


def _counts(sketch: kll_doubles_sketch, bounds: Sequence[float]) -> tuple[float, ...]:
    """Rows in [b_i, b_i+1) for each bucket, the last bucket closed at the maximum."""
    n = sketch.n
    inner = list(bounds[1:-1])
    cdf = [0.0, *sketch.get_cdf(inner), 1.0] if inner else [0.0, 1.0]
    return tuple(round((cdf[i + 1] - cdf[i]) * n, 3) for i in range(len(bounds) - 1))


def _distinct(values: Iterable[float]) -> list[float]:
    result: list[float] = []
    for value in values:
        if not result or value > result[-1]:
            result.append(value)
    if len(result) == 1:
        result.append(result[0])
    return result


def _check_buckets(buckets: int) -> None:
    if buckets < 1:
        raise ValueError("a histogram needs at least one bucket")


def merge_hll(blobs: Iterable[bytes], lg_k: int = HLL_LG_K) -> hll_sketch:
    """The union of stored HLL sketches (stored_hll's forms, or exact sets of values, hashed
    into the union as the scan hashed them: exact_values). A value an earlier set fed the
    union is not fed again: it takes it as nothing new (no register and no coupon changes),
    so the result is the same, the sets' values hashed once. The order of the blobs tells
    (an exact set's values are fed in turn: HLL's running estimate follows them)."""
    union = hll_union(lg_k)
    seen: dict[int, set[int]] = {EXACT_SET: set(), HASHED_SET: set()}
    for blob in blobs:
        if (values := set_values(blob)) is None:
            union.update(hll_sketch.deserialize(inflated(blob)))
            continue
        fed = seen[blob[0]]
        fresh = [value for value in values.tolist() if value not in fed]
        fed.update(fresh)
        if blob[0] == HASHED_SET:
            fresh = hashed_values(np.array(fresh, dtype=np.int64)).tolist()
        for value in fresh:
            union.update(value)
    return union.get_result()


def stored_hll(sketch: hll_sketch) -> bytes:
    """An HLL sketch as stored: deflated where that is smaller (registers of HLL mode, about
    0.57 of their bytes; lists and sets of coupons are random and stay as they are)."""
    compact = sketch.serialize_compact()
    deflated_form = deflated(compact)
    return deflated_form if len(deflated_form) < len(compact) else compact


def stored_top_k(blob: bytes | None) -> bytes | None:
    """Heavy hitters as stored: deflated where that is smaller (their 8-byte weights and
    items: about half, 0.43 to 0.73 of lineitem's)."""
    if blob is None or blob[:1] in (bytes([ZLIB_HEADER]), bytes([EXACT_TOP_K])):
        return blob  # none, deflated already (by the scan's JVM), or items and counts
    deflated_form = deflated(blob)
    return deflated_form if len(deflated_form) < len(blob) else blob


ZLIB_HEADER = 0x78
"""The first byte of a zlib stream (deflate, 32 KB window). No sketch stored here begins with
it (a KLL sketch begins with its preamble's length, 2 or 5; a packed one with
kll_packing.MARK; a heavy-hitters sketch with its preamble's length in 8-byte words, 1 or 4),
so a stored sketch is deflated exactly when its first byte is this."""


def deflated(blob: bytes) -> bytes:
    """A sketch deflated (zlib, fastest level): HLL registers as stored, and KLL sketches as
    statistics collected before packing stored them."""
    return zlib.compress(blob, 1)


def inflated(blob: bytes) -> bytes:
    """A stored KLL, HLL or heavy-hitters sketch as DataSketches reads it: unpacked
    (kll_packing), built from an exact set of values (exact_values), from counted values
    (from_top_k, a KLL sketch of k KLL_K fed them) or from exact heavy hitters' items and
    counts (exact_top_k), inflated if it was
    deflated, or as it is (statistics collected before sketches were deflated, and Spark's
    own aggregates). An HLL sketch begins with its preamble's length (2, 3 or 10)."""
    if blob[:1] == bytes([PACKED_KLL]):
        return unpacked_kll(blob)
    if (sketch_bytes := expanded(blob)) is not None:
        return sketch_bytes
    if (counted := counted_values(blob)) is not None:
        sketch = kll_doubles_sketch(KLL_K)
        sketch.update(counted)
        return bytes(sketch.serialize())
    if (values := exact_values(blob)) is not None:
        return bytes(exact_hll(values, HLL_LG_K).serialize_compact())
    return zlib.decompress(blob) if blob[:1] == bytes([ZLIB_HEADER]) else blob


def merge_kll(blobs: Iterable[bytes], k: int = KLL_K) -> kll_doubles_sketch:
    merged = KllMerge(k)
    for blob in blobs:
        merged.add(blob)
    return merged.result()


class KllMerge:
    """Stored KLL sketches merged as they come (merge_kll: all at once); counted values
    (from_top_k) are fed as rows, all at once, by `result` (which ends the merge)."""

    def __init__(self, k: int = KLL_K) -> None:
        self._merged = kll_doubles_sketch(k)
        self._counted: list[np.ndarray] = []

    def add(self, blob: bytes) -> None:
        if (values := counted_values(blob)) is not None:
            self._counted.append(values)
            return
        self._merged.merge(kll_doubles_sketch.deserialize(inflated(blob)))

    def result(self) -> kll_doubles_sketch:
        if self._counted:
            self._merged.update(np.concatenate(self._counted))
            self._counted = []
        return self._merged


def merge_theta(blobs: Iterable[bytes], lg_k: int = THETA_LG_K) -> compact_theta_sketch:
    union = theta_union(lg_k)
    for blob in blobs:
        union.update(compact_theta_sketch.deserialize(blob))
    return union.get_result()


def text_form(blob: bytes, items: str | None) -> bytes:
    """A heavy-hitters sketch of longs or doubles with its items as text, which the native
    strings sketch reads (frequent_strings_sketch: merges in C++, no Python per item)."""
    return text_forms([blob], items)[0]


def text_forms(blobs: Sequence[bytes], items: str | None) -> list[bytes]:
    """text_form of each sketch, the items of all of them converted in one pass (a block of
    a table's partitions: thousands of sketches, one numpy conversion); stored sketches
    inflated first (stored_top_k)."""
    blobs = [inflated(blob) for blob in blobs]
    dtype = NUMBER_ITEMS.get(items or "")
    if dtype is None or not blobs:
        return list(blobs)
    layouts = [items_layout(blob) for blob in blobs]
    values = np.concatenate(
        [
            np.frombuffer(blob, dtype=dtype, count=count, offset=start)
            for blob, (count, start) in zip(blobs, layouts, strict=True)
        ]
    )
    encoded, sizes = _length_prefixed(_texts(values))
    item_ends = np.cumsum([count for count, _ in layouts])
    byte_ends = np.concatenate(([0], np.cumsum(sizes)))[item_ends].tolist()
    forms, at = [], 0
    for blob, (_, start), end in zip(blobs, layouts, byte_ends, strict=True):
        forms.append(blob[:start] + encoded[at:end])
        at = end
    return forms


def _texts(values: np.ndarray) -> np.ndarray:
    """Numbers as their shortest round-trip text (fixed-width bytes), each distinct value
    (by bit pattern: -0.0 is not 0.0) formatted once."""
    bits = values.view(np.int64)
    unique, where = np.unique(bits, return_inverse=True)
    return unique.view(values.dtype).astype("S32")[where.reshape(-1)]


def _length_prefixed(texts: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Fixed-width byte strings as DataSketches' string serial form (a 4-byte little-endian
    length, then the bytes), built without a Python loop over the items; with each item's
    size in that form."""
    count, width = texts.shape[0], texts.dtype.itemsize
    lengths = np.char.str_len(texts).astype("<u4")
    rows = np.empty((count, 4 + width), dtype=np.uint8)
    rows[:, :4] = lengths.view(np.uint8).reshape(count, 4)
    rows[:, 4:] = np.frombuffer(texts.tobytes(), dtype=np.uint8).reshape(count, width)
    kept = np.arange(4 + width) < (lengths[:, None].astype(np.int64) + 4)
    return rows[kept].tobytes(), lengths.astype(np.int64) + 4


def number_form(blob: bytes, items: str | None) -> bytes:
    """The inverse of text_form: items back as 8-byte longs or doubles."""
    dtype = NUMBER_ITEMS.get(items or "")
    if dtype is None:
        return blob
    count, start = items_layout(blob)
    parse = int if items == "longs" else float
    values, at = [], start
    for _ in range(count):
        size = int.from_bytes(blob[at : at + 4], "little")
        values.append(parse(blob[at + 4 : at + 4 + size]))
        at += 4 + size
    return blob[:start] + np.array(values, dtype=dtype).tobytes()


@dataclass(frozen=True)
class HeavyHitters:
    """A merged heavy-hitters sketch: DataSketches' native strings sketch over the items'
    text, read back as the items' kind (longs, doubles or strings)."""

    sketch: frequent_strings_sketch
    items: str | None

    def get_frequent_items(self, error_type: Any) -> list[tuple[Any, int, int, int]]:
        parse = {"longs": int, "doubles": float}.get(self.items or "", str)
        return [
            (parse(i), e, lo, hi) for i, e, lo, hi in self.sketch.get_frequent_items(error_type)
        ]

    def get_lower_bound(self, item: Any) -> int:
        return int(self.sketch.get_lower_bound(self._text(item)))

    def get_upper_bound(self, item: Any) -> int:
        return int(self.sketch.get_upper_bound(self._text(item)))

    def _text(self, item: Any) -> str:
        dtype = NUMBER_ITEMS.get(self.items or "")
        if dtype is None:
            return str(item)
        return bytes(_texts(np.array([item], dtype=dtype))[0]).decode()

    def serialize(self) -> bytes:
        """As Spark writes it (the items in their own serial form)."""
        return number_form(self.sketch.serialize(), self.items)


TOP_K_MERGE_LG_MAX = 10  # a merge of heavy hitters keeps a map of 2**10 items


def merge_frequent_items(
    blobs: Iterable[bytes], items: str | None, lg_max_k: int = TOP_K_MERGE_LG_MAX
) -> HeavyHitters:
    """The union of heavy-hitters sketches serialised as Spark writes them
    (`approx_top_k_accumulate`: DataSketches' ItemsSketch), merged natively."""
    return merge_text_items(text_forms(list(blobs), items), items, lg_max_k)


def merge_text_items(
    texts: Iterable[bytes], items: str | None, lg_max_k: int = TOP_K_MERGE_LG_MAX
) -> HeavyHitters:
    """The union of heavy-hitters sketches in text form (text_form; what pre-merged blocks
    store), merged natively."""
    merged = frequent_strings_sketch(lg_max_k)
    for blob in texts:
        merged.merge(frequent_strings_sketch.deserialize(blob))
    return HeavyHitters(merged, items)


def most_common(sketch: HeavyHitters | frequent_items_sketch, limit: int) -> list[tuple[Any, int]]:
    """The heaviest items with their estimated counts (no false positives), heaviest first."""
    items = sketch.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)
    ordered = sorted(items, key=lambda item: (-item[1], str(item[0])))  # ties: stable order
    return [(item, int(estimate)) for item, estimate, _, _ in ordered[:limit]]
