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
from optimizer.plan import Window

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery

RANK_POINTS = 1000  # ranks kept one by one in a rank's (even) distribution


def derive(stats: StatsQuery, node: Window) -> NodeStats:
    """Every input row kept; a rank (RANK, DENSE_RANK, ROW_NUMBER) runs from 1 to its
    partition's rows: spread evenly over 1 .. input rows / partitions, so that `rk <=
    100` keeps about 100 rows per partition. statlas's rule (docs/estimator.md)."""
    projected = project.derive(stats, node)
    partitions = aggregate.groups(stats.of(node.child), node.partition_by, stats.level).value
    per_partition = max(1.0, projected.rows.value / max(partitions, 1.0))
    columns = dict(projected.columns)
    for ref, expression in node.outputs:
        window = expression if isinstance(expression, exp.Window) else None
        if window is not None and isinstance(window.this, exp.Rank | exp.DenseRank | exp.RowNumber):
            top = max(1, round(per_partition))
            # every rank up to RANK_POINTS (top-k filters), a coarser grid above
            step = max(1, math.ceil(top / RANK_POINTS))
            dense = range(1, min(top, RANK_POINTS) + 1)
            coarse = range(RANK_POINTS + step, top, step)
            codes = tuple(
                float(k) for k in (*dense, *coarse, *([top] if top > RANK_POINTS else []))
            )
            columns[ref] = ColumnEstimate(
                "int",
                Estimate(float(top), ESTIMATED, "ranks per partition"),
                low=1,
                high=top,
                points=(codes, tuple(c / top for c in codes)),
            )
    return replace(projected, columns=columns)
