"""A window's estimates: a projection keeping every input row, where a rank (RANK,
DENSE_RANK, ROW_NUMBER) runs evenly from 1 to its partition's rows, so that `WHERE rk <= 100`
keeps about 100 rows per partition (docs/estimator.md, statlas's rule; the partitions are
counted as GROUP BY counts its groups, docs/design.md#group-by)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators import aggregate, project
from optimizer.estimate.values import ESTIMATED, Estimate
from optimizer.plan import Aggregate, ColumnRef, Filter, Node, Window, column_of

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery

RANK_POINTS = 1000  # ranks kept one by one in a rank's (even) distribution


def derive(stats: StatsQuery, node: Window) -> NodeStats:
    """Every input row kept; a rank (RANK, DENSE_RANK, ROW_NUMBER) runs from 1 to its
    partition's rows: spread evenly over 1 .. input rows / partitions (its own window's
    PARTITION BY), so that `rk <= 100` keeps about 100 rows per partition. statlas's rule
    (docs/estimator.md)."""
    projected = project.derive(stats, node)
    child = stats.of(node.child)
    columns = dict(projected.columns)
    for ref, partition_by in _rank_windows(node):
        partitions = aggregate.groups(child, partition_by, stats.level).value
        per_partition = max(1.0, projected.rows.value / max(partitions, 1.0))
        top = max(1, round(per_partition))
        # every rank up to RANK_POINTS (top-k filters), a coarser grid above
        step = max(1, math.ceil(top / RANK_POINTS))
        dense = range(1, min(top, RANK_POINTS) + 1)
        coarse = range(RANK_POINTS + step, top, step)
        codes = tuple(float(k) for k in (*dense, *coarse, *([top] if top > RANK_POINTS else [])))
        columns[ref] = ColumnEstimate(
            "int",
            Estimate(float(top), ESTIMATED, "ranks per partition"),
            low=1,
            high=top,
            points=(codes, tuple(c / top for c in codes)),
        )
    return replace(projected, columns=columns)


def _rank_windows(node: Window) -> list[tuple[ColumnRef, tuple[exp.Expr, ...]]]:
    """Each output a rank function computes, with its window's PARTITION BY as expressions
    over the node's child. A window over a GROUP BY is computed with the aggregate below
    (through its HAVING): this node passes its outputs on, and the window's partition keys,
    written over the aggregate's input, are read as the aggregate's outputs of the same
    expressions (a key it does not output leaves the rank as the aggregate has it)."""
    below: Node = node.child
    while isinstance(below, Filter):
        below = below.child
    computed = dict(below.outputs) if isinstance(below, Aggregate) else {}
    found = []
    for ref, expression in node.outputs:
        window: exp.Expr | None = expression
        partition_by: tuple[exp.Expr, ...] | None = None
        if isinstance(expression, exp.Window):
            partition_by = tuple(expression.args.get("partition_by") or ())
        else:
            passed = column_of(expression)
            window = computed.get(passed) if passed is not None else None
            if isinstance(window, exp.Window):
                partition_by = _as_outputs(window, computed)
        if (
            isinstance(window, exp.Window)
            and isinstance(window.this, exp.Rank | exp.DenseRank | exp.RowNumber)
            and partition_by is not None
        ):
            found.append((ref, partition_by))
    return found


def _as_outputs(
    window: exp.Window, outputs: dict[ColumnRef, exp.Expr]
) -> tuple[exp.Expr, ...] | None:
    """The window's partition keys as columns of the aggregate that outputs each of them
    (None when one is not among its outputs)."""
    keys = []
    for key in window.args.get("partition_by") or ():
        ref = next((r for r, e in outputs.items() if e == key), None)
        if ref is None:
            return None
        keys.append(exp.column(ref[1], table=ref[0]))
    return tuple(keys)
