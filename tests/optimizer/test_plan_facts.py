"""Where a join comes from in the statement travels with the join (optimizer.plan.Join:
`select`, `scalar`, `semi`): a join rebuilt over new children keeps it, so a join the
reordering rebuilds is still written out with its hint. And shuffle elimination leaves the
physical plan it reads as it is: the counts before and after come from one plan.
Planned over made-up TPC-H statistics (no Spark)."""

from __future__ import annotations

import pytest

from benchmarks.tpch_queries import QUERIES
from optimizer.cost.params import cost_params
from optimizer.estimate.stats_query import StatsQuery
from optimizer.physical.api import emit, plan_query
from optimizer.physical.build import to_physical
from optimizer.physical.context import PlanningContext, needed_columns
from optimizer.physical.correlation import counts, eliminate_shuffles
from optimizer.physical.join_order import Ordering
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import Join, Limit, Node, walk, with_children
from optimizer.sql_to_plan import build_qualified_plan
from tests.support.tpch import MadeUpStatistics

SOURCE = MadeUpStatistics()

# an inner join group under a LEFT JOIN: reordering the group rebuilds the LEFT JOIN, whose
# small side (nation) is broadcast
LEFT_OVER_GROUP = (
    "SELECT c.c_name, n.n_name, SUM(o.o_totalprice) FROM lineitem l "
    "JOIN orders o ON l.l_orderkey = o.o_orderkey JOIN customer c ON o.o_custkey = c.c_custkey "
    "LEFT JOIN nation n ON c.c_nationkey = n.n_nationkey "
    "WHERE c.c_mktsegment = 'BUILDING' GROUP BY c.c_name, n.n_name"
)


def joins(plan: Node) -> list[Join]:
    return [n for n in walk(plan) if isinstance(n, Join)]


FACTS = {"q2": {"select", "scalar"}, "q17": {"select", "scalar"}, "q21": {"select", "semi"}}


@pytest.mark.parametrize("name", list(FACTS))
def test_a_join_rebuilt_over_new_children_keeps_where_it_comes_from(name: str) -> None:
    """FROM-list joins (`select`), decorrelated scalar subqueries (`scalar`) and EXISTS
    subqueries (`semi`)."""
    found = joins(build_qualified_plan(QUERIES[name], SOURCE.table).plan)
    facts = {f for j in found for f in ("select", "scalar", "semi") if getattr(j, f) is not None}
    assert facts == FACTS[name]
    for join in found:
        rebuilt = with_children(join, [Limit(child, 1) for child in join.children])
        assert isinstance(rebuilt, Join)
        assert rebuilt is not join
        assert rebuilt.select is join.select
        assert rebuilt.scalar is join.scalar
        assert rebuilt.semi is join.semi


def test_a_join_the_reordering_rebuilds_keeps_its_select_and_its_hint() -> None:
    qualified = build_qualified_plan(LEFT_OVER_GROUP, SOURCE.table)
    (left,) = [j for j in joins(qualified.plan) if j.kind == "left"]
    context = PlanningContext(StatsQuery(SOURCE), cost_params(), needed_columns(qualified.plan))
    (reordered,) = [j for j in joins(Ordering(context).reorder(qualified.plan)) if j.kind == "left"]
    assert reordered is not left  # rebuilt over the reordered group
    assert reordered.select is left.select is not None
    emitted = emit(plan_query(None, LEFT_OVER_GROUP, source=SOURCE))
    assert "BROADCAST(n)" in emitted  # the LEFT JOIN's hash-table side, hinted in its SELECT


def _physical(sql: str) -> PhysicalNode:
    """Planned without map joins: common joins whose shuffles correlate."""
    qualified = build_qualified_plan(sql, SOURCE.table)
    params = cost_params({"map_join_threshold": "1"})
    context = PlanningContext(StatsQuery(SOURCE), params, needed_columns(qualified.plan))
    return to_physical(Ordering(context).reorder(qualified.plan), context)


def _removed(root: PhysicalNode) -> list[tuple[bool, str]]:
    return [(s.removed, s.why_removed) for n in root.walk() for s in n.shuffles if s is not None]


@pytest.mark.parametrize("name", ["q13", "q17", "q18"])
def test_shuffle_elimination_leaves_the_plan_it_reads_as_it_is(name: str) -> None:
    physical = _physical(QUERIES[name])
    untouched = _removed(physical)
    multiway = eliminate_shuffles(physical, multiway_only=True)
    assert _removed(physical) == untouched
    eliminated = eliminate_shuffles(physical)
    assert _removed(physical) == untouched
    assert any(removed for removed, _ in _removed(eliminated))
    assert counts(eliminated).shuffles < counts(physical).shuffles
    # the same plan each time: the first pass changed nothing the second reads
    assert _removed(eliminate_shuffles(physical, multiway_only=True)) == _removed(multiway)
    assert _removed(eliminate_shuffles(physical)) == _removed(eliminated)
