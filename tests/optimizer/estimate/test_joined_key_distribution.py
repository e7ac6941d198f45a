"""An inner join's key columns take the joined rows' distribution (issue 47): a value's rows
are its rows on one side times its rows on the other, so a following join on the same key
sees the keys heavy on both sides (optimizer.estimate.operators.join._joined_mcv)."""

from __future__ import annotations

import pytest

from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.join import _joined_mcv
from optimizer.estimate.values import ESTIMATED, Estimate


def key(ndv: float, mcv: tuple[tuple[object, float], ...] = ()) -> ColumnEstimate:
    return ColumnEstimate("bigint", Estimate(ndv, ESTIMATED, "test"), mcv=mcv)


def side(rows: float) -> NodeStats:
    return NodeStats(Estimate(rows, ESTIMATED, "test"), 8.0, {})


def test_a_fact_key_joined_with_a_unique_key_keeps_the_facts_heavy_values() -> None:
    # posts: owner 1 has half of 1,000 rows, the other 500 spread over 99 owners; owners unique
    posts, owners = side(1_000), side(100)
    joined = _joined_mcv(key(100, ((1, 0.5),)), key(100), posts, owners, rows=1_000)
    assert joined is not None
    assert dict(joined)[1] == pytest.approx(0.5)  # 500 x 1 of the 1,000 joined rows


def test_values_heavy_on_both_sides_multiply() -> None:
    # 1,000 rows each, value 7 has 100 on the left and 200 on the right; the others average
    # (900 / 99 and 800 / 99 rows per value)
    left, right = side(1_000), side(1_000)
    rows = 100 * 200 + 99 * (900 / 99) * (800 / 99)
    joined = _joined_mcv(key(100, ((7, 0.1),)), key(100, ((7, 0.2),)), left, right, rows)
    assert joined is not None
    assert dict(joined)[7] == pytest.approx(100 * 200 / rows)


def test_a_value_heavy_on_one_side_only_meets_the_others_average() -> None:
    left, right = side(1_000), side(1_000)
    joined = _joined_mcv(key(100, ((7, 0.1),)), key(100), left, right, rows=10_000)
    assert joined is not None
    assert dict(joined)[7] == pytest.approx(100 * (1_000 / 100) / 10_000)


def test_no_heavy_value_on_either_side_leaves_the_distribution_alone() -> None:
    assert _joined_mcv(key(100), key(100), side(1_000), side(1_000), rows=10_000) is None


def test_a_group_keys_input_frequencies_are_not_taken_as_the_joins() -> None:
    # after GROUP BY owner, owner 1 heads one group: its 50% of the input rows is not 50% of
    # the groups, so it joins as an average value
    grouped = ColumnEstimate(
        "bigint", Estimate(100, ESTIMATED, "test"), mcv=((1, 0.5),), grouped=True
    )
    assert _joined_mcv(grouped, key(100), side(100), side(100), rows=100) is None
    joined = _joined_mcv(grouped, key(100, ((1, 0.5),)), side(100), side(1_000), rows=1_000)
    assert joined is not None
    assert dict(joined)[1] == pytest.approx(1 * 500 / 1_000)
