"""Histograms from KLL sketches, the uniform histogram, and sketch merges that make
the statistics of any set of partitions a roll-up (docs/design.md#histograms)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest
from datasketches import (
    PyDoublesSerDe,
    PyLongsSerDe,
    PyStringsSerDe,
    frequent_items_error_type,
    frequent_items_sketch,
    hll_sketch,
    hll_union,
    kll_doubles_sketch,
    tgt_hll_type,
    theta_union,
    update_theta_sketch,
)
from hypothesis import given
from hypothesis import strategies as st

from metastore.statistics.exact_sets import HASHED_SET, exact_count, exact_values
from metastore.statistics.histograms import (
    HLL_LG_K,
    KLL_K,
    PARTITION_KLL_K_LEAST,
    PARTITION_LG_K_LEAST,
    THETA_LG_K,
    Histogram,
    equi_depth,
    equi_width,
    from_grid,
    grid_edges,
    inflated,
    merge_frequent_items,
    merge_hll,
    merge_kll,
    merge_theta,
    most_common,
    number_form,
    partition_kll_k,
    partition_theta_lg_k,
    seed_uniform,
    sparse_key_lg_k,
    sparse_theta_lg_k,
    stored_hll,
    stored_top_k,
    text_form,
    text_forms,
    to_grid,
    uniform_counts,
)
from tests.support.exact_sets import exact_set

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
    assert len(histogram.bounds) == 11
    assert len(histogram.counts) == 10
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
    assert histogram.bounds[0] == 0.0
    assert histogram.bounds[-1] == 999.0
    exact = [1250, 250, 250, 250]
    for count, expected in zip(histogram.counts, exact, strict=True):
        assert abs(count - expected) <= 2 * RANK_ERROR * len(values)


def test_degenerate_sketches() -> None:
    assert equi_depth(kll([]), 4).counts == ()
    single = equi_width(kll([7.0, 7.0]), 4)
    assert single.bounds == (7.0, 7.0)
    assert single.counts == (2.0,)
    assert equi_depth(kll([3.0] * 10), 4).counts == (10.0,)
    with pytest.raises(ValueError, match="at least one bucket"):
        equi_depth(kll([1.0]), 0)


def test_seed_uniform_histogram() -> None:
    # buckets = (max - min) / NDV, width = (max - min) / buckets, height = rows / buckets
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
    assert item == "hot"
    assert estimate >= 1000
    assert frequent.get_lower_bound("hot") <= 1000 <= frequent.get_upper_bound("hot")
    merged = merge_kll(klls)
    assert merged.n == 6000
    assert merged.get_min_value() == 0
    assert merged.get_max_value() == 4999


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


def test_heavy_hitters_are_stored_deflated_and_read_in_either_form() -> None:
    """issue 49: heavy hitters are stored deflated where that is smaller; those stored
    before (as Spark writes them) still read, alone or merged with new ones."""
    from metastore.statistics.column_pieces import figures_of

    sketch = frequent_items_sketch(6)
    counts = ((0.0, 219), (0.01, 230), (0.02, 201), (0.05, 210), (0.08, 224), (0.1, 207))
    for value, weight in counts:
        sketch.update(value, weight)
    raw = sketch.serialize(PyDoublesSerDe())
    stored = stored_top_k(raw)
    assert stored is not None
    assert len(stored) < 0.7 * len(raw)
    assert stored[0] == 0x78
    expected = [(0.01, 230), (0.08, 224), (0.0, 219), (0.05, 210), (0.1, 207), (0.02, 201)]
    assert most_common(merge_frequent_items([stored], "doubles"), 10) == expected
    assert most_common(merge_frequent_items([raw], "doubles"), 10) == expected
    both = dict(most_common(merge_frequent_items([raw, stored], "doubles"), 10))
    assert both == {item: 2 * count for item, count in expected}
    row: dict[str, Any] = dict.fromkeys(("min_value", "max_value", "total_len", "max_len"))
    row.update(null_count=0, hll=None, kll=None, theta=None, top_k=stored, top_k_items="doubles")
    assert figures_of(type("Row", (), row))["top_k"] == raw
    empty = frequent_items_sketch(6).serialize(PyDoublesSerDe())
    assert stored_top_k(empty) == empty  # eight bytes: deflating would only add to them


# ---- bounds on the column's grid (issue 21, part 5) -----------------------------------


def exact_counts(values: list[float], bounds: tuple[float, ...]) -> list[int]:
    """Rows in [bounds[i], bounds[i+1]), the last bucket closed."""
    last = len(bounds) - 2
    return [
        sum(1 for v in values if bounds[i] <= v < bounds[i + 1] or (i == last and v == bounds[-1]))
        for i in range(len(bounds) - 1)
    ]


def test_grid_edges() -> None:
    # width ceil((max - min + 1) / N): the demo's bigint order_id, 0..9107 in 4 buckets
    assert grid_edges(0, 9107, 4) == [0, 2277, 4554, 6831, 9107]
    assert grid_edges(0, 9, 4) == [0, 3, 6, 9, 9]  # the last bucket is the value 9
    assert grid_edges(0, 8, 4) == [0, 3, 6, 8]  # width 3 covers nine in three buckets
    assert grid_edges(0, 2, 8) == [0, 1, 2, 2]  # three integers: three buckets
    assert grid_edges(-5, -5, 3) == [-5, -5]
    with pytest.raises(ValueError, match="at least one bucket"):
        grid_edges(0, 9, 0)


@given(st.integers(-(10**12), 10**12), st.integers(0, 10**6), st.integers(1, 300))
def test_grid_edges_properties(low: int, extra: int, buckets: int) -> None:
    high = low + extra
    edges = grid_edges(low, high, buckets)
    size, count = extra + 1, len(edges) - 1
    width = -(-size // buckets)
    assert edges[0] == low
    assert edges[-1] == high
    assert 1 <= count <= buckets
    assert count == min(buckets, size) or size % buckets  # fewer only when rounding needs it
    assert all(b - a == width for a, b in itertools.pairwise(edges[:-1]))
    assert 1 <= high - edges[-2] + 1 <= width  # the last, closed bucket holds 1..width values


def test_equi_width_integer_bounds_count_exactly() -> None:
    values = [float(v * 7) for v in range(180)]  # 0..1253, few enough for an exact sketch
    histogram = equi_width(kll(values), 4, scale=0)
    assert histogram.bounds == (0, 314, 628, 942, 1253)  # not 313.25, 626.5, 939.75
    assert list(histogram.counts) == exact_counts(values, histogram.bounds)
    flags = [float(v % 3) for v in range(90)]
    assert equi_width(kll(flags), 8, scale=0) == Histogram((0, 1, 2, 2), (30, 30, 30))
    assert equi_width(kll([7.0, 7.0]), 4, scale=0) == Histogram((7, 7), (2,))


@given(st.lists(st.integers(-50, 50), min_size=1, max_size=150), st.integers(1, 40))
def test_equi_width_on_integers_no_bucket_empty_by_rounding(values: list[int], n: int) -> None:
    data = [float(v) for v in values]
    histogram = equi_width(kll(data), n, scale=0)
    assert all(float(b).is_integer() for b in histogram.bounds)
    assert list(histogram.counts) == exact_counts(data, histogram.bounds)
    assert sum(histogram.counts) == len(values)
    if len(set(values)) == max(values) - min(values) + 1:  # every integer of the range
        assert all(histogram.counts)


def test_equi_width_decimal_bounds_on_the_scale() -> None:
    prices = [(1 + (i * 7919) % 50_000) / 100 for i in range(180)]  # decimal(10,2) as doubles
    histogram = equi_width(kll(prices), 4, scale=2)
    # width ceil((498.20 - 0.01 + 0.01) / 4) = 124.55, bounds the decimals' own doubles
    assert histogram.bounds == (0.01, 124.56, 249.11, 373.66, 498.2)
    assert list(histogram.counts) == exact_counts(prices, histogram.bounds)
    assert to_grid(2277.81, 2) == 227781
    assert from_grid(227781, 2) == 2277.81


def test_equi_depth_bounds_on_the_grid() -> None:
    rng = random.Random(5)
    days = [float(rng.randrange(19_700, 19_800)) for _ in range(20_000)]  # dates, as days
    sketch = kll(days)
    histogram = equi_depth(sketch, 10, scale=0)
    assert all(float(b).is_integer() for b in histogram.bounds)
    assert histogram == equi_depth(sketch, 10)  # quantiles are values: nothing moves
    noisy = kll([0.1 + 0.2, 0.5, 0.7])  # 0.30000000000000004, a decimal(3,1) off its grid
    assert equi_depth(noisy, 2, scale=1).bounds[0] == 0.3


def test_seed_uniform_on_integers() -> None:
    # 0..1000 with NDV 100: the uniform histogram's ten buckets, now 101 integers wide (the last 92)
    histogram = seed_uniform(0, 1000, 100, 5000, scale=0)
    assert histogram.bounds == (0, 101, 202, 303, 404, 505, 606, 707, 808, 909, 1000)
    assert histogram.counts[0] == pytest.approx(5000 * 101 / 1001, abs=1e-3)
    assert histogram.counts[-1] == pytest.approx(5000 * 92 / 1001, abs=1e-3)
    assert sum(histogram.counts) == pytest.approx(5000, abs=1e-9)
    assert seed_uniform(0, 989, 180, 180, scale=0).bounds == (0, 198, 396, 594, 792, 989)
    assert seed_uniform(5, 5, 1, 42, scale=0) == Histogram((5, 5), (42,))
    assert seed_uniform(0.01, 9.99, 10, 7, scale=2).bounds == (0.01, 9.99)
    assert uniform_counts([0, 3, 6, 9, 9], 10) == (3.0, 3.0, 3.0, 1.0)


@pytest.mark.parametrize(
    ("items", "values"), [("longs", [7, -3, 2**62, 0]), ("doubles", [0.1, -2.5, 1e300, 3.0])]
)
def test_heavy_hitters_of_numbers_through_text_and_back(items: str, values: list[Any]) -> None:
    """Numbers are merged as their text by the native strings sketch and written back in
    their own serial form: Spark's bytes, which the Python serde reads as they were."""
    serde = PyLongsSerDe() if items == "longs" else PyDoublesSerDe()
    sketch = frequent_items_sketch(6)
    for weight, value in enumerate(values, start=1):
        sketch.update(value, weight * 10)
    blob = sketch.serialize(serde)
    assert number_form(text_form(blob, items), items) == blob
    merged = merge_frequent_items([blob, blob], items)
    back = frequent_items_sketch.deserialize(merged.serialize(), serde)
    expected = {v: 2 * 10 * w for w, v in enumerate(values, start=1)}
    assert {
        i: e for i, e, _, _ in back.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)
    } == expected
    assert dict(most_common(merged, 10)) == expected


def test_heavy_hitters_of_many_sketches_in_text_form_at_once() -> None:
    """text_forms converts a block's sketches together, each as text_form would alone:
    empty sketches, repeated values formatted once, and -0.0 kept apart from 0.0."""
    values = [[0.0, 2.5], [-0.0], [], [2.5, 1e300, float("nan")], [7.0] * 3]
    blobs = []
    for group in values:
        sketch = frequent_items_sketch(6)
        for value in group:
            sketch.update(value, 3)
        blobs.append(sketch.serialize(PyDoublesSerDe()))
    forms = text_forms(blobs, "doubles")
    assert [number_form(form, "doubles") for form in forms] == blobs
    merged = merge_frequent_items(blobs, "doubles").sketch
    texts = {
        i for i, _, _, _ in merged.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)
    }
    assert {"0.0", "-0.0", "2.5", "1e+300", "nan", "7.0"} == texts


@pytest.mark.parametrize("partitions", [1, 8, 9, 64, 100, 200, 1_000, 2_526, 10**6])
def test_partition_theta_sketches_are_sized_to_the_table(partitions: int) -> None:
    lg_k = partition_theta_lg_k(partitions)
    assert PARTITION_LG_K_LEAST <= lg_k <= THETA_LG_K
    bounded = lg_k in (PARTITION_LG_K_LEAST, THETA_LG_K)
    # a sixteenth of the partitions hold a union's 4,096 hashes, with half as many they would not
    assert bounded or 2**lg_k * partitions / 16 >= 2**THETA_LG_K > 2 ** (lg_k - 1) * partitions / 16
    assert lg_k == THETA_LG_K or 2**lg_k * partitions / 16 >= 2**THETA_LG_K
    assert partition_theta_lg_k(2_526) == 7
    assert partition_theta_lg_k(200) == 9


@given(
    st.one_of(
        st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=300, unique=True),
        # steps of one byte each (dates, dense keys): read without the varints' loop
        st.lists(st.integers(19_000, 19_400), min_size=1, max_size=300, unique=True),
    )
)
def test_exact_sets_of_values_read_back(values: list[int]) -> None:
    """An exact set reads back whatever the steps between values (LEB128 varints of up to
    ten bytes), and counts its values without reading them."""
    ordered = sorted(values)
    blob = exact_set(values)
    back = exact_values(blob)
    assert back is not None
    assert back.tolist() == ordered
    assert exact_count(blob) == len(ordered)
    assert merge_hll([blob]).get_estimate() == pytest.approx(len(ordered), rel=0.03)


def test_a_union_of_exact_sets_is_fed_each_value_once_with_the_same_result() -> None:
    """merge_hll feeds a value once however many sets hold it (a value fed again changes
    no register and no coupon): the same sketch, to its bytes, as feeding every set's every
    value in turn, with sketches and a decimal column's hashed sets among them."""
    rng = random.Random(11)
    # each set's values below the one before's, so that the order values are fed in tells
    sets = [rng.sample(range(20_000 - 500 * i, 21_500 - 500 * i), 400) for i in range(6)]
    decimals = [rng.sample(range(10**6 - 400 * i, 10**6 + 900 - 400 * i), 300) for i in range(3)]
    other = hll_sketch(HLL_LG_K, tgt_hll_type.HLL_4)
    for value in range(30_000, 30_500):
        other.update(value)
    exact = [exact_set(s) for s in sets]
    groups = [exact, [*exact[:2], stored_hll(other), *exact[2:]]]
    groups.append([exact_set(d, HASHED_SET) for d in decimals])
    for group in groups:
        expected = hll_union(HLL_LG_K)
        for blob in group:
            values = exact_values(blob)
            if values is None:
                expected.update(hll_sketch.deserialize(inflated(blob)))
                continue
            for value in values.tolist():
                expected.update(value)
        merged = merge_hll(group)
        assert merged.serialize_compact() == expected.get_result().serialize_compact()
        assert exact_count(group[0]) in (400, 300)


def test_sparse_integral_sketches_are_sized_to_their_share_of_the_range() -> None:
    # the least a sparse column's sketch takes: the sixteenth rule without the floor of 7
    assert [sparse_theta_lg_k(p) for p in (8, 200, 1_000, 1_024, 2_526, 10**6)] == [
        12,
        9,
        7,
        6,
        5,
        5,
    ]
    # TPC-H lineitem's partitions by ship date: 2,375 order keys of 1..6,000,000, 2,375 part
    # keys of 1..200,000, 2,100 supplier keys of 1..10,000
    assert sparse_key_lg_k(2_375, 1, 6_000_000, 5, 7) == 5
    assert sparse_key_lg_k(2_375, 1, 200_000, 5, 7) == 6
    assert sparse_key_lg_k(2_100, 1, 10_000, 5, 7) == 7
    # partitions that share the values of their range union to no more than it holds: a
    # union of every partition keeps about 2**12 hashes, however many partitions share them
    rng = np.random.default_rng(49)
    union, seen = theta_union(THETA_LG_K), set()
    for _ in range(400):
        values = rng.choice(200_000, 2_000, replace=False)
        seen.update(values.tolist())
        lg_k = sparse_key_lg_k(2_000, 0, 199_999, 5, 12)
        sketch = update_theta_sketch(lg_k)
        for v in values.tolist():
            sketch.update(v)
        union.update(sketch.compact())
    merged = union.get_result()
    assert merged.num_retained >= 0.9 * 2**THETA_LG_K
    assert merged.get_estimate() == pytest.approx(len(seen), rel=3 / 64)


def test_partition_kll_sketches_are_sized_to_the_table() -> None:
    # a sixteenth of a table's partitions, each sketched at the table's k, merged: within
    # one k 200 sketch's rank error at every percentile (about 0.5% here, where one
    # partition alone errs about 2%)
    rng = np.random.default_rng(7)
    partitions = 256
    k = partition_kll_k(partitions)
    values = [rng.lognormal(3.0 + 0.002 * i, 1.0, 2_000) for i in range(partitions // 16)]
    merged = kll_doubles_sketch(KLL_K)
    for part in values:
        sketch = kll_doubles_sketch(k)
        for value in part:
            sketch.update(float(value))
        merged.merge(sketch)
    every = np.concatenate(values)
    for q in np.linspace(0.01, 0.99, 99):
        assert abs(merged.get_rank(float(np.quantile(every, q))) - q) <= RANK_ERROR, q
    sizes = [partition_kll_k(n) for n in (1, 16, 64, 200, 2_526)]
    assert sizes == [KLL_K, KLL_K, 100, 57, PARTITION_KLL_K_LEAST]
    assert partition_kll_k(10**6) == PARTITION_KLL_K_LEAST
