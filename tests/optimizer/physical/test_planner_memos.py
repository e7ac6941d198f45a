"""What keeps the planner's CPU down without changing a plan (the plans themselves:
tests/optimizer/test_plan_stability.py): a group's two orders share the joins they both
build, a join's row size is its leaves' column widths, and a sampled column counts a value
once."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from sqlglot import exp

from benchmarks.planner_cpu import QUERIES, SyntheticStatistics, plan
from metastore.statistics.samples import Sample
from optimizer.estimate.column import ColumnEstimate, SampledColumn
from optimizer.estimate.kept_values import KeptShares
from optimizer.estimate.operators import join_rows
from optimizer.estimate.stats_query import StatsQuery
from optimizer.estimate.values import Estimate
from optimizer.physical import join_order
from optimizer.physical.api import plan_query
from optimizer.plan import Join, Scan


def test_one_join_node_per_inputs_and_condition() -> None:
    joins = join_order._Joins(exp.Select(), {})
    a, b = Scan("t", "a", ("x",)), Scan("u", "b", ("y",))
    keys = ((("a", "x"), ("b", "y")),)
    first = joins.join(a, b, "inner", keys, [])
    assert joins.join(a, b, "inner", keys, []) is first
    assert joins.join(b, a, "inner", ((("b", "y"), ("a", "x")),), []) is not first
    assert joins.join(a, b, "cross", (), []) is not first


def _join_estimates(monkeypatch: pytest.MonkeyPatch, name: str) -> int:
    """Inner joins the estimator derives while planning `name` (each calls inner_join_rows
    once)."""
    derived: Counter[str] = Counter()
    original = join_rows.inner_join_rows

    def counting(self: StatsQuery, node: Join, *sides: Any) -> tuple[float, str]:
        derived["join"] += 1
        return original(self, node, *sides)

    monkeypatch.setattr(join_rows, "inner_join_rows", counting)
    plan(name)
    return derived["join"]


def test_the_written_and_implied_orders_estimate_a_shared_join_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # star s6: two orders of 8 relations over 130 parts; each estimated once was 191
    assert _join_estimates(monkeypatch, "s6") <= 100


def test_a_joins_row_size_is_its_estimates(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner's row size of every join it considers equals PlanningContext.row_size
    (which reads the join's estimate)."""
    checked: list[tuple[float, float]] = []
    original = join_order._Planner._row_size

    def compared(self: join_order._Planner, join: Any) -> float:
        size = original(self, join)
        checked.append((size, self.context.row_size(join)))
        return size

    monkeypatch.setattr(join_order._Planner, "_row_size", compared)
    for name in ("q2", "q5", "q8", "q9", "s6", "s8"):
        plan_query(None, QUERIES[name], source=SyntheticStatistics())
    assert checked and all(mine == theirs for mine, theirs in checked)


def test_a_sampled_column_counts_a_value_once(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = Sample({"k": np.asarray([1.0, 1.0, 2.0, 3.0])}, np.ones(4), 1)
    column = SampledColumn(
        KeptShares(sample, np.asarray([True, False, True, True]), "k"),
        ColumnEstimate("bigint", Estimate(3.0, "estimated", "test")),
        400.0,
    )
    counted: Counter[Any] = Counter()
    original = SampledColumn._count_kept

    def counting(self: SampledColumn, value: Any) -> float | None:
        counted[type(value), value] += 1
        return original(self, value)

    monkeypatch.setattr(SampledColumn, "_count_kept", counting)
    first = [column.kept_rows(v) for v in (1, 1, 2, 9, 9, 1.0)]
    assert first[0] == first[1] and first[0] is not None and first[0] > 0
    assert first[3] is None and first[4] is None
    assert counted == {(int, 1): 1, (int, 2): 1, (int, 9): 1, (float, 1.0): 1}
