"""The logical plan (joins already ordered) to a physical plan: each operator's rows, row size
and cost (docs/design.md#operator-costs), each join's algorithm, the shuffles (ReduceSinks) where
joins, aggregations and ORDER BY need them, and map-join chains grouped into map stages.
"""

from __future__ import annotations

import math
from functools import singledispatch

from optimizer.cost import formulas as f
from optimizer.estimate.explain import detail
from optimizer.physical.algorithms import choose_join
from optimizer.physical.context import PlanningContext
from optimizer.physical.plan import PhysicalNode, Shuffle
from optimizer.physical.pruning_side import pruning_side
from optimizer.plan import (
    Aggregate,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Scan,
    Sort,
    Union,
    Window,
    column_of,
)
from optimizer.sql_text import sql_text


def to_physical(node: Node, context: PlanningContext) -> PhysicalNode:
    children = [to_physical(child, context) for child in node.children]
    physical = _convert(node, children, context)
    if node.op == "join" and physical.algorithm in ("map", "bucket_map"):
        _place_in_map_stage(physical, context)
    return physical


def reducers(input_bytes: float, context: PlanningContext) -> int:
    """Hive's reducer estimate: input bytes / bytes per reducer, at most the maximum."""
    p = context.params
    return int(min(max(1, math.ceil(input_bytes / p.bytes_per_reducer)), p.max_reducers))


def _base(node: Node, context: PlanningContext) -> tuple[float, float, str]:
    return context.rows(node), context.row_size(node), detail(node)


@singledispatch
def _convert(node: Node, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    raise TypeError(type(node).__name__)


@_convert.register
def _scan(node: Scan, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    rows, size, text = _base(node, context)
    cost = f.table_scan(f.Input(rows, size), context.params)
    return PhysicalNode(node, "scan", children, rows, size, cost, text)


@_convert.register
def _filter(node: Filter, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    rows, size, text = _base(node, context)
    child = children[0]
    cost = f.filter_(f.Input(child.rows, child.row_size), rows, context.params)
    return PhysicalNode(node, "filter", children, rows, size, cost, text)


@_convert.register(Project)
@_convert.register(Limit)
def _select(node: Node, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    rows, size, text = _base(node, context)
    cost = f.select(f.Input(children[0].rows, children[0].row_size))
    return PhysicalNode(node, node.op, children, rows, size, f.Cost(cost.cpu, cost.io, rows), text)


@_convert.register
def _join(node: Join, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    rows, size, text = _base(node, context)
    left_keys = tuple(a for a, _ in node.keys)
    right_keys = tuple(b for _, b in node.keys)
    left = context.side(node.left, left_keys, children[0].rows)
    right = context.side(node.right, right_keys, children[1].rows)
    pruning = pruning_side(node.left, node.right, node.keys)
    choice = choose_join(left, right, node.kind, bool(node.keys), rows, context.params, pruning)
    physical = PhysicalNode(
        node,
        "join",
        children,
        rows,
        size,
        choice.cost,
        text,
        algorithm=choice.algorithm,
        reason=choice.reason,
        streamed=choice.streamed,
        skew_values=choice.skew_values,
    )
    if choice.algorithm in ("common", "skew"):
        count = reducers(children[0].bytes + children[1].bytes, context)
        physical.shuffles = [Shuffle(left_keys, count), Shuffle(right_keys, count)]
    elif choice.algorithm in ("map", "bucket_map"):
        assert choice.streamed is not None
        physical.broadcast[1 - choice.streamed] = True
    return physical


@_convert.register
def _aggregate(
    node: Aggregate, children: list[PhysicalNode], context: PlanningContext
) -> PhysicalNode:
    """GROUP BY; with grouping sets, Spark's Expand first copies each input row once per
    set (and the shuffle carries the grouping id beside the keys)."""
    rows, size, text = _base(node, context)
    child = children[0]
    copies = max(len(node.grouping_sets), 1)
    expanded = f.Input(child.rows * copies, child.row_size)
    cost = f.group_by(expanded, rows, context.params)
    keys = tuple(column_of(k) or sql_text(k, "spark") for k in node.group_by)
    if node.grouping_sets:
        keys += ("spark_grouping_id",)
    shuffle = (
        Shuffle(keys, reducers(expanded.bytes, context)) if keys else Shuffle((), 1, fixed=True)
    )
    return PhysicalNode(node, "aggregate", children, rows, size, cost, text, shuffles=[shuffle])


@_convert.register
def _window(node: Window, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    """Window functions: Spark shuffles the rows by the PARTITION BY keys (all to one
    partition without them) and sorts each partition. Not in Hive's CBO: costed as a Group By
    of its input (a sort and a shuffle), every row kept."""
    rows, size, text = _base(node, context)
    child = children[0]
    cost = f.group_by(f.Input(child.rows, child.row_size), rows, context.params)
    keys = tuple(column_of(k) or sql_text(k, "spark") for k in node.partition_by)
    shuffle = Shuffle(keys, reducers(child.bytes, context)) if keys else Shuffle((), 1, fixed=True)
    return PhysicalNode(node, "window", children, rows, size, cost, text, shuffles=[shuffle])


@_convert.register
def _union(node: Union, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    rows, size, text = _base(node, context)
    inputs = [f.Input(c.rows, c.row_size) for c in children]
    cost = f.union_all(inputs, context.params)
    physical = PhysicalNode(node, "union", children, rows, size, cost, text)
    if node.distinct:  # UNION = UNION ALL + DISTINCT over every column
        total = f.Input(sum(i.rows for i in inputs), size)
        cost = cost + f.group_by(total, rows, context.params)
        count = reducers(total.bytes, context)
        physical.cost = cost
        physical.shuffles = [Shuffle(tuple(c.logical.output()), count) for c in children]
    return physical


@_convert.register
def _sort(node: Sort, children: list[PhysicalNode], context: PlanningContext) -> PhysicalNode:
    """ORDER BY: a total order through one reducer. Not in Hive's CBO: costed as the common
    join's sort and shuffle of its one input."""
    rows, size, text = _base(node, context)
    child = children[0]
    cost = f.common_join([f.Input(child.rows, child.row_size)], rows, context.params)
    keys = tuple(
        column_of(k.this if k.key == "ordered" else k) or sql_text(k, "spark") for k in node.keys
    )
    return PhysicalNode(
        node, "sort", children, rows, size, cost, text, shuffles=[Shuffle(keys, 1, fixed=True)]
    )


def _place_in_map_stage(join: PhysicalNode, context: PlanningContext) -> None:
    """docs/design.md#join-algorithms: consecutive map joins whose small sides fit the threshold
    together run in one map stage; when the next does not fit, it starts a new stage (a
    map-only job of its own) instead of falling back to a common join."""
    assert join.streamed is not None
    small = join.children[1 - join.streamed].bytes
    below = _stage_load(join.children[join.streamed])
    if below and below + small > context.params.map_join_threshold:
        join.stage_break[join.streamed] = True
        join.reason += f"; starts a new map stage ({below:,.0f} B of hash tables below)"


def _stage_load(node: PhysicalNode) -> float:
    """Bytes of hash tables already held by the map stage a node's output streams through."""
    load = 0.0
    while True:
        if node.op in ("filter", "project", "limit"):
            node = node.children[0]
            continue
        if node.op == "join" and node.algorithm in ("map", "bucket_map"):
            assert node.streamed is not None
            load += node.children[1 - node.streamed].bytes
            if node.stage_break[node.streamed]:
                return load
            node = node.children[node.streamed]
            continue
        if node.op == "join" and node.algorithm == "smb":
            assert node.streamed is not None
            node = node.children[node.streamed]
            continue
        return load
