"""A multi-key join's floor of one match per row, tested on the two sides' row samples
(docs/estimator.md#composite-joins-the-samples-test)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.catalog.lookup import PartitionQuery
from metastore.statistics.samples import Sample
from optimizer.estimate.sample_join import _joined_pairs, sampled_join
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.selectivity import composite_floor_refuted
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Join, walk
from optimizer.sql_to_plan import build_plan
from tests.support.tpch import KeyedStatistics


def _sample(weight: float, **columns: list[float]) -> Sample:
    arrays = {name: np.asarray(values, dtype=np.float64) for name, values in columns.items()}
    size = len(next(iter(arrays.values())))
    return Sample(arrays, np.full(size, weight), 1)


def test_the_samples_joined_count_matching_pairs_by_their_weights() -> None:
    left = _sample(10.0, a=[1, 1, 2, np.nan], b=[5, 6, 5, 5])
    right = _sample(100.0, x=[1, 1, 2, 3], y=[5, 5, 7, 5])
    found = sampled_join(
        ScanSample("l", lambda: left), ("a", "b"), ScanSample("r", lambda: right), ("x", "y")
    )
    assert found is not None
    assert found.pairs == 2  # (1, 5) twice on the right; (2, 5) and the NULL meet nothing
    assert found.selectivity == pytest.approx(2 * 10.0 * 100.0 / (40.0 * 400.0))
    assert found.covering_pairs == pytest.approx(4 * 4 / 400.0)
    # only the rows a side's filter kept
    kept = ScanSample("l", lambda: left, np.array([False, True, True, True]))
    found = sampled_join(kept, ("a", "b"), ScanSample("r", lambda: right), ("x", "y"))
    assert found is not None
    assert found.pairs == 0
    assert found.selectivity == 0.0
    assert sampled_join(kept, ("a", "z"), ScanSample("r", lambda: right), ("x", "y")) is None


def test_a_floor_is_refuted_only_by_enough_sampled_pairs_missing() -> None:
    assert composite_floor_refuted(2, 16.0)  # 16 pairs due, 2 seen
    assert not composite_floor_refuted(12, 16.0)
    assert not composite_floor_refuted(0, 8.0)  # too few due to tell


PARTS, SUPPLIERS = 2000, 4
KEYED = {"l_partkey": 200_000, "l_suppkey": 10_000, "ps_partkey": 200_000, "ps_suppkey": 10_000}


class SampledStatistics(KeyedStatistics):
    """partsupp's sample: each of 2,000 parts with 4 suppliers (8,000 rows for 800,000);
    lineitem's: 12,000 rows for 6,000,000, their (part, supplier) pairs partsupp's when
    `referencing`, else suppliers partsupp never has."""

    def __init__(self, referencing: bool) -> None:
        super().__init__(KEYED)
        rng = np.random.default_rng(7)
        pairs = rng.integers(0, PARTS * SUPPLIERS, 12_000)
        offset = 0 if referencing else 1_000
        self.line = _sample(
            500.0, l_partkey=pairs // SUPPLIERS, l_suppkey=pairs % SUPPLIERS + offset
        )
        every = np.arange(PARTS * SUPPLIERS)
        self.partsupp = _sample(100.0, ps_partkey=every // SUPPLIERS, ps_suppkey=every % SUPPLIERS)

    def sample(self, name: str, query: PartitionQuery) -> Sample | None:
        return {"lineitem": self.line, "partsupp": self.partsupp}.get(name)


SQL = "SELECT * FROM lineitem, partsupp WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey"


def _join_rows(source: SampledStatistics) -> float:
    plan = build_plan(SQL, source.table)
    join = next(n for n in walk(plan) if isinstance(n, Join))
    return StatsQuery(source).of(join).rows.value


def test_a_composite_join_keeps_its_floor_when_the_samples_show_it() -> None:
    # every sampled line meets its partsupp row: one row per row of partsupp at least
    assert _join_rows(SampledStatistics(referencing=True)) >= 800_000


def test_a_composite_join_the_samples_refute_meets_at_random() -> None:
    # 16 matching pairs were due under the floor, none seen: the keys' independent product
    # (6,000,000 x 800,000 / 200,000 / 10,000 = 2,400 rows), not partsupp's 800,000
    assert _join_rows(SampledStatistics(referencing=False)) == pytest.approx(2_400.0)


@settings(deadline=None, max_examples=60)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["a", "b", "c", None])), max_size=40),
    st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["a", "b", "d", None])), max_size=40),
    st.data(),
)
def test_coded_pairs_are_the_hash_joins(
    left_rows: list[tuple[int, str | None]],
    right_rows: list[tuple[int, str | None]],
    data: st.DataObject,
) -> None:
    """The samples' pairs counted on codes both samples share (a NULL, a NaN and a value
    the other side lacks matching nothing) are Arrow's hash join's, and weigh the same."""

    def sample(rows: list[tuple[int, str | None]]) -> tuple[Sample, np.ndarray]:
        numbers = np.asarray([np.nan if n == 6 else float(n) for n, _ in rows], dtype=np.float64)
        texts = np.asarray([t for _, t in rows], dtype=object)
        weights = np.asarray(
            data.draw(st.lists(st.integers(1, 9), min_size=len(rows), max_size=len(rows))),
            dtype=np.float64,
        )
        kept = np.asarray(
            data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows))), dtype=bool
        )
        return Sample({"n": numbers, "s": texts}, weights, 1), kept

    (left, kept_left), (right, kept_right) = sample(left_rows), sample(right_rows)
    _assert_hash_joins(left, kept_left, right, kept_right)
    # the same samples under other filters (the pair's index is kept with the sample)
    for side in (left, right):
        again = data.draw(st.lists(st.booleans(), min_size=side.size, max_size=side.size))
        if side is left:
            kept_left = np.asarray(again, dtype=bool)
        else:
            kept_right = np.asarray(again, dtype=bool)
    _assert_hash_joins(left, kept_left, right, kept_right)


def _assert_hash_joins(
    left: Sample, kept_left: np.ndarray, right: Sample, kept_right: np.ndarray
) -> None:
    found = sampled_join(
        ScanSample("l", lambda: left, kept_left),
        ("n", "s"),
        ScanSample("r", lambda: right, kept_right),
        ("n", "s"),
    )
    if found is None:  # a side kept no row
        assert not kept_left.any() or not kept_right.any()
        return
    pairs, weight = _joined_pairs(left, kept_left, ("n", "s"), right, kept_right, ("n", "s"))
    total = left.weights[kept_left].sum() * right.weights[kept_right].sum()
    assert found.pairs == pairs
    assert found.selectivity == pytest.approx(weight / total)


def test_a_pairs_index_is_built_once_and_never_lent_to_another_sample() -> None:
    """The shared key codes of a pair of samples are kept with the first, under the other
    sample's token: a later request reuses them; another sample with the same columns (a
    new collection run's) gets its own."""
    left = _sample(1.0, a=[1, 2, 3, 4], b=[1, 1, 1, 1])
    right = _sample(1.0, x=[1, 2, 2, 9], y=[1, 1, 1, 1])
    other = _sample(1.0, x=[3, 3, 3, 3], y=[1, 1, 1, 1])

    def join(with_right: Sample) -> tuple[int, float] | None:
        found = sampled_join(
            ScanSample("l", lambda: left),
            ("a", "b"),
            ScanSample("r", lambda: with_right),
            ("x", "y"),
        )
        return None if found is None else (found.pairs, found.selectivity)

    assert join(right) == (3, 3 / 16)
    kept = [k for k in left._derived if k[0] == "pair index"]
    index = left._derived[kept[0]]
    assert join(right) == (3, 3 / 16)
    assert left._derived[kept[0]] is index
    assert join(other) == (4, 4 / 16)


def test_a_side_whose_keys_are_all_null_meets_nothing() -> None:
    left = _sample(10.0, a=[np.nan, np.nan], b=[5, 6])
    right = _sample(100.0, x=[1, 1], y=[5, 5])
    found = sampled_join(
        ScanSample("l", lambda: left), ("a", "b"), ScanSample("r", lambda: right), ("x", "y")
    )
    assert found is not None
    assert (found.pairs, found.selectivity) == (0, 0.0)
