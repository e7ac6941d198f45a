"""Histograms for any set of partitions, derived from mergeable sketches.

- equi_depth / equi_width: from a KLL quantile sketch (the union of the partitions'
  sketches): bounds from quantiles at ranks i/N, or evenly spaced between min and max with
  counts from the sketch's CDF. Accurate to KLL's normalised rank error (1.65% at k 200).
- seed_uniform: the seed "cost-based-optimizer" (Design Choice) histogram for a column
  without sketches, built from min, max, NDV and the table's cardinality alone.

Pure functions over numbers: values of dates and timestamps are passed as their numeric
encodings (days, microseconds since the epoch), as they are sketched.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from datasketches import (
    PyDoublesSerDe,
    PyLongsSerDe,
    PySerDe,
    PyStringsSerDe,
    compact_theta_sketch,
    frequent_items_error_type,
    frequent_items_sketch,
    hll_sketch,
    hll_union,
    kll_doubles_sketch,
    theta_union,
)

HLL_LG_K = 12
THETA_LG_K = 12
KLL_K = 200


@dataclass(frozen=True)
class Histogram:
    """Buckets [bounds[i], bounds[i+1]) (the last one closed) with their row counts."""

    bounds: tuple[float, ...]
    counts: tuple[float, ...]

    def as_json(self) -> dict[str, list[float]]:
        return {"bounds": list(self.bounds), "counts": list(self.counts)}


def equi_depth(sketch: kll_doubles_sketch, buckets: int) -> Histogram:
    """N buckets holding about n/N rows each: bounds are the quantiles at ranks i/N."""
    _check_buckets(buckets)
    if sketch.is_empty():
        return Histogram((), ())
    ranks = [i / buckets for i in range(1, buckets)]
    inner = sketch.get_quantiles(ranks) if ranks else []
    bounds = _distinct([sketch.get_min_value(), *inner, sketch.get_max_value()])
    return Histogram(tuple(bounds), _counts(sketch, bounds))


def equi_width(sketch: kll_doubles_sketch, buckets: int) -> Histogram:
    """N buckets of equal width between min and max, counts from the sketch's CDF."""
    _check_buckets(buckets)
    if sketch.is_empty():
        return Histogram((), ())
    low, high = sketch.get_min_value(), sketch.get_max_value()
    if low == high:
        return Histogram((low, high), (float(sketch.n),))
    width = (high - low) / buckets
    bounds = [low + i * width for i in range(buckets)] + [high]
    return Histogram(tuple(bounds), _counts(sketch, bounds))


def seed_uniform(low: float, high: float, ndv: int, rows: int) -> Histogram:
    """The seed's uniform histogram (cost-based-optimizer, Design Choice):
    buckets = (max - min) / NDV, width = (max - min) / buckets, height = rows / buckets.
    At least one bucket; a single value is one bucket of all rows."""
    if rows <= 0 or ndv <= 0:
        return Histogram((), ())
    span = high - low
    count = max(1, math.floor(span / ndv)) if span > 0 else 1
    width = span / count if span > 0 else 0.0
    bounds = tuple(low + i * width for i in range(count)) + (high,)
    return Histogram(bounds, tuple(rows / count for _ in range(count)))


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
    union = hll_union(lg_k)
    for blob in blobs:
        union.update(hll_sketch.deserialize(blob))
    return union.get_result()


def merge_kll(blobs: Iterable[bytes], k: int = KLL_K) -> kll_doubles_sketch:
    merged = kll_doubles_sketch(k)
    for blob in blobs:
        merged.merge(kll_doubles_sketch.deserialize(blob))
    return merged


def merge_theta(blobs: Iterable[bytes]) -> compact_theta_sketch:
    union = theta_union()
    for blob in blobs:
        union.update(compact_theta_sketch.deserialize(blob))
    return union.get_result()


def items_serde(items: str | None) -> PySerDe:
    """The serialiser of a heavy-hitters sketch's items: Spark writes longs, doubles and
    strings with DataSketches' ArrayOfLongs/Doubles/StringsSerDe, which these mirror."""
    if items == "longs":
        return PyLongsSerDe()
    if items == "doubles":
        return PyDoublesSerDe()
    return PyStringsSerDe()


def merge_frequent_items(
    blobs: Iterable[bytes], items: str | None, lg_max_k: int = 10
) -> frequent_items_sketch:
    serde = items_serde(items)
    merged = frequent_items_sketch(lg_max_k)
    for blob in blobs:
        merged.merge(frequent_items_sketch.deserialize(blob, serde))
    return merged


def most_common(sketch: frequent_items_sketch, limit: int) -> list[tuple[Any, int]]:
    """The heaviest items with their estimated counts (no false positives), heaviest first."""
    items = sketch.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)
    ordered = sorted(items, key=lambda item: (-item[1], str(item[0])))  # ties: stable order
    return [(item, int(estimate)) for item, estimate, _, _ in ordered[:limit]]
