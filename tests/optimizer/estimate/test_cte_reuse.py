"""A CTE estimated once and reused (issue 24): the mapping plans a CTE's body at each
reference under other aliases; the estimator derives each shape once
(optimizer.estimate.node_shape) and gives the other references the same figures renamed.
Over the synthetic TPC-H statistics of benchmarks/planner_cpu (row samples and sketches:
the filter counted on a sample carries the sample's alias)."""

from __future__ import annotations

from dataclasses import fields
from functools import cache

from benchmarks.planner_cpu import SyntheticStatistics
from optimizer.estimate.explain import estimate_json
from optimizer.estimate.node_shape import SHAPED, UNSHAPED, Shapes
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.stats_query import _DERIVE, StatsQuery
from optimizer.physical.api import emit, plan_query
from optimizer.plan import Join, Node, Scan, walk
from optimizer.sql_to_plan import build_plan

BODY = (
    "SELECT l.l_suppkey AS supplier, SUM(l.l_extendedprice) AS revenue "
    "FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
    "WHERE o.o_orderpriority = '1-URGENT' AND l.l_quantity < 10 GROUP BY l.l_suppkey"
)
THREE = (
    f"WITH revenue AS ({BODY}) "
    "SELECT a.supplier, a.revenue, b.revenue, c.revenue FROM revenue a "
    "JOIN revenue b ON a.supplier = b.supplier JOIN revenue c ON b.supplier = c.supplier"
)


@cache
def source() -> SyntheticStatistics:
    return SyntheticStatistics()


def _reference(plan: Node, alias: str) -> Node:
    """The topmost node whose output is the reference `alias` (the CTE's body there)."""
    return next(n for n in reversed(walk(plan)) if {a for a, _ in n.output()} == {alias})


def _samples(stats: NodeStats) -> list[ScanSample]:
    """The row samples the figures name: the scan's, and those behind its columns."""
    found = [c.origin[0] for c in stats.columns.values() if c.origin is not None]
    return found + ([stats.sample] if stats.sample is not None else [])


def test_a_cte_used_three_times_is_estimated_once() -> None:
    plan = build_plan(THREE, source().table)
    stats = StatsQuery(source())
    estimate_json(plan, stats)  # every node's estimate
    body = len(walk(_reference(plan, "a")))
    assert body >= 5
    assert body == len(walk(_reference(plan, "c")))
    # the body's nodes derived once (at reference a), the two other references' taken
    assert stats.counts.derived == len(walk(plan)) - 2 * body
    assert stats.counts.shared == 2 * body


def test_the_shared_figures_are_those_a_reference_derives_alone() -> None:
    plan = build_plan(THREE, source().table)
    stats = StatsQuery(source())
    estimate_json(plan, stats)
    first = _reference(plan, "a")
    firsts = {id(s) for n in walk(first) for s in _samples(stats.of(n))}
    for alias in ("b", "c"):
        other = _reference(plan, alias)
        alone = StatsQuery(source())  # the first node of its shape there: derived
        for mine, theirs in zip(walk(other), walk(first), strict=True):
            shared, derived = stats.of(mine), alone.of(mine)
            assert shared.rows == derived.rows
            assert shared.row_size == derived.row_size
            assert shared.columns == derived.columns
            assert (shared.sample is None) == (derived.sample is None)
            if shared.sample is not None and derived.sample is not None:
                assert shared.sample.alias == derived.sample.alias
            assert stats.of(theirs).rows == shared.rows
            # another reference's scans are other scans: rules tell one scan's columns by
            # the identity of their sample (a self-join's two sides are not one scan)
            assert not firsts & {id(s) for s in _samples(shared)}


def test_shapes_equal_up_to_aliases_only() -> None:
    shapes = Shapes()
    one = build_plan(f"WITH r AS ({BODY}) SELECT * FROM r x", source().table)
    two = build_plan(f"WITH r AS ({BODY}) SELECT * FROM r y", source().table)
    other = build_plan(
        f"WITH r AS ({BODY.replace('< 10', '< 11')}) SELECT * FROM r x", source().table
    )
    assert shapes.of(one).key == shapes.of(two).key
    first, second = shapes.of(one).aliases, shapes.of(two).aliases
    assert first.index("x") == second.index("y")
    assert "y" not in first
    assert shapes.of(one).key != shapes.of(other).key
    # the renaming is one to one: two relations under one alias are not two under two
    same = Join(Scan("t", "a", ("x",)), Scan("t", "a", ("x",)), "cross")
    apart = Join(Scan("t", "a", ("x",)), Scan("t", "b", ("x",)), "cross")
    renamed = Join(Scan("t", "c", ("x",)), Scan("t", "d", ("x",)), "cross")
    assert shapes.of(same).key != shapes.of(apart).key == shapes.of(renamed).key


def test_every_field_of_a_node_is_shaped_or_named_unshaped() -> None:
    for kind in _DERIVE:
        children = {"child", "left", "right", "inputs"}
        declared = SHAPED[kind] | UNSHAPED | children
        assert {f.name for f in fields(kind)} <= declared, kind.__name__
        assert SHAPED[kind] <= {f.name for f in fields(kind)}, kind.__name__


def test_the_plan_and_its_sql_are_those_of_estimating_each_reference() -> None:
    """Planning reuses the body's estimates; the plan and the emitted SQL stay those of
    the inlined CTE (Spark inlines it too)."""
    planned = plan_query(None, THREE, source=source())
    counts = planned.ordering.context.stats.counts
    assert counts.shared > 0
    emitted = emit(planned)
    assert emitted.upper().count("WITH") == 1
    assert "revenue" in emitted
