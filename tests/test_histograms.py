"""Histograms from KLL sketches, the seed's uniform histogram, and sketch merges that make
the statistics of any set of partitions a roll-up."""

from __future__ import annotations

import random

import pytest
from datasketches import (
    PyLongsSerDe,
    PyStringsSerDe,
    frequent_items_sketch,
    hll_sketch,
    kll_doubles_sketch,
    update_theta_sketch,
)

from metastore.histograms import (
    equi_depth,
    equi_width,
    merge_frequent_items,
    merge_hll,
    merge_kll,
    merge_theta,
    most_common,
    seed_uniform,
)

RANK_ERROR = kll_doubles_sketch.get_normalized_rank_error(200, False)  # 1.33% single rank


def kll(values: list[float]) -> kll_doubles_sketch:
    sketch = kll_doubles_sketch(200)
    for value in values:
        sketch.update(value)
    return sketch


def test_equi_depth_buckets_hold_equal_shares() -> None:
    rng = random.Random(1)
    values = [rng.expovariate(1 / 100) for _ in range(50_000)]
    histogram = equi_depth(kll(values), 10)
    assert len(histogram.bounds) == 11 and len(histogram.counts) == 10
    ordered = sorted(values)
    for i, count in enumerate(histogram.counts):
        low, high = histogram.bounds[i], histogram.bounds[i + 1]
        exact = sum(1 for v in ordered if low <= v < high or (i == 9 and v == high))
        assert abs(count - exact) <= 2 * RANK_ERROR * len(values)
        assert abs(count - 5_000) <= 2 * RANK_ERROR * len(values)
    assert sum(histogram.counts) == pytest.approx(len(values))


def test_equi_width_counts_follow_the_data() -> None:
    values = [float(v) for v in range(1000)] + [5.0] * 1000  # a spike in the first bucket
    histogram = equi_width(kll(values), 4)
    assert histogram.bounds[0] == 0.0 and histogram.bounds[-1] == 999.0
    exact = [1250, 250, 250, 250]
    for count, expected in zip(histogram.counts, exact, strict=True):
        assert abs(count - expected) <= 2 * RANK_ERROR * len(values)


def test_degenerate_sketches() -> None:
    assert equi_depth(kll([]), 4).counts == ()
    single = equi_width(kll([7.0, 7.0]), 4)
    assert single.bounds == (7.0, 7.0) and single.counts == (2.0,)
    assert equi_depth(kll([3.0] * 10), 4).counts == (10.0,)
    with pytest.raises(ValueError):
        equi_depth(kll([1.0]), 0)


def test_seed_uniform_histogram() -> None:
    # seed: buckets = (max - min) / NDV, width = (max - min) / buckets, height = rows / buckets
    histogram = seed_uniform(0, 1000, 100, 5000)
    assert len(histogram.counts) == 10
    assert histogram.bounds[1] - histogram.bounds[0] == pytest.approx(100)
    assert set(histogram.counts) == {500}
    assert seed_uniform(5, 5, 1, 42).counts == (42,)
    assert seed_uniform(0, 10, 100, 7).counts == (7,)  # fewer than one bucket: one
    assert seed_uniform(0, 10, 0, 0).counts == ()


def test_merges_roll_partitions_up() -> None:
    halves = [[f"v{i}" for i in range(0, 3000)], [f"v{i}" for i in range(2000, 5000)]]
    hlls, thetas, freqs, klls = [], [], [], []
    for half in halves:
        h, t, f = hll_sketch(12), update_theta_sketch(), frequent_items_sketch(6)
        for value in half:
            h.update(value)
            t.update(value)
            f.update(value)
        f.update("hot", 500)
        hlls.append(h.serialize_compact())
        thetas.append(t.compact().serialize())
        freqs.append(f.serialize(PyStringsSerDe()))
        klls.append(kll([float(v[1:]) for v in half]).serialize())
    assert merge_hll(hlls).get_estimate() == pytest.approx(5000, rel=0.05)
    assert merge_theta(thetas).get_estimate() == pytest.approx(5000, rel=0.05)
    frequent = merge_frequent_items(freqs, "strings")
    [(item, estimate)] = most_common(frequent, 1)
    assert item == "hot" and estimate >= 1000
    assert frequent.get_lower_bound("hot") <= 1000 <= frequent.get_upper_bound("hot")
    merged = merge_kll(klls)
    assert merged.n == 6000 and merged.get_min_value() == 0 and merged.get_max_value() == 4999


def test_heavy_hitters_of_longs_merge() -> None:
    blobs = []
    for hot in (7, 7, 9):
        sketch = frequent_items_sketch(6)
        for value in range(100):
            sketch.update(value)
        sketch.update(hot, 300)
        blobs.append(sketch.serialize(PyLongsSerDe()))
    merged = merge_frequent_items(blobs, "longs")
    assert [item for item, _ in most_common(merged, 2)] == [7, 9]
    assert merged.get_lower_bound(7) <= 602 <= merged.get_upper_bound(7)
    assert merged.get_lower_bound(9) <= 301 <= merged.get_upper_bound(9)
