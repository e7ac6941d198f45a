"""KLL sketches packed for storage (metastore/statistics/kll_packing.py) read back as the
same sketch: its rows, extremes, every quantile and every rank; decimals, integers, any
doubles and infinities alike; a sketch of one item or none is deflated as it is; the
packed form is smaller than the deflated one it replaces."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from datasketches import kll_doubles_sketch
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.statistics.histograms import KLL_K, inflated
from metastore.statistics.kll_packing import MARK, NO_SCALE, packed_kll, unpacked_kll

RANKS = [i / 64 for i in range(65)]


def sketch_of(values: np.ndarray, k: int = KLL_K) -> kll_doubles_sketch:
    sketch = kll_doubles_sketch(k)
    for value in values.tolist():
        sketch.update(value)
    return sketch


def assert_same(read: kll_doubles_sketch, sketch: kll_doubles_sketch, probes: list[float]) -> None:
    assert (read.n, read.num_retained) == (sketch.n, sketch.num_retained)
    if sketch.is_empty():
        assert read.is_empty()
        return
    assert (read.get_min_value(), read.get_max_value()) == (
        sketch.get_min_value(),
        sketch.get_max_value(),
    )
    assert read.get_quantiles(RANKS) == sketch.get_quantiles(RANKS)
    assert read.get_cdf(probes) == sketch.get_cdf(probes)


def values_of(kind: str, rng: np.random.Generator, n: int) -> np.ndarray:
    if kind == "integers":
        return rng.integers(-(10**7), 10**7, n).astype(np.float64)
    if kind == "cents":
        return np.round(rng.uniform(-1_000, 105_000, n), 2)
    if kind == "doubles":
        signs: np.ndarray = rng.choice([-1.0, 1.0], n)
        return signs * rng.lognormal(0, 8, n)
    if kind == "infinite":
        return np.concatenate([rng.normal(0, 1, n), [np.inf, -np.inf]])
    return rng.integers(0, 50, n).astype(np.float64)  # few values


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["integers", "cents", "doubles", "infinite", "few"]),
    n=st.integers(0, 30_000),
    k=st.sampled_from([8, 50, KLL_K]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_packed_sketch_reads_as_the_sketch(kind: str, n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = values_of(kind, rng, n)
    sketch = sketch_of(values, k)
    blob = packed_kll(sketch.serialize())
    read = kll_doubles_sketch.deserialize(inflated(blob))
    probes = sorted(set(rng.choice(values, 16).tolist())) if len(values) else []
    assert_same(read, sketch, probes)
    if sketch.n >= 2:
        assert blob[0] == MARK
        # it merges with another (compaction flips coins: the extremes and rows are exact)
        other = sketch_of(values_of("integers", rng, 500), k)
        read.merge(other)
        assert read.n == sketch.n + 500
        assert read.get_min_value() == min(sketch.get_min_value(), other.get_min_value())


@pytest.mark.parametrize(
    ("kind", "scale"), [("integers", 0), ("cents", 2), ("few", 0), ("doubles", NO_SCALE)]
)
def test_items_are_written_at_the_least_exact_scale(kind: str, scale: int) -> None:
    sketch = sketch_of(values_of(kind, np.random.default_rng(5), 5_000))
    blob = packed_kll(sketch.serialize())
    assert blob[1] == scale
    assert kll_doubles_sketch.deserialize(unpacked_kll(blob)).n == 5_000


@pytest.mark.parametrize("values", [[], [4.5]])
def test_a_sketch_of_one_item_or_none_is_deflated_as_it_is(values: list[float]) -> None:
    sketch = sketch_of(np.array(values, dtype=np.float64))
    blob = packed_kll(sketch.serialize())
    assert zlib.decompress(blob) == sketch.serialize()
    assert kll_doubles_sketch.deserialize(inflated(blob)).n == len(values)


@pytest.mark.parametrize("kind", ["integers", "cents", "few"])
def test_packed_is_smaller_than_deflated(kind: str) -> None:
    # a partition's column of 2,400 rows, as lineitem's by ship date
    serialized = sketch_of(values_of(kind, np.random.default_rng(9), 2_400)).serialize()
    assert len(packed_kll(serialized)) < 0.75 * len(zlib.compress(serialized, 1))
