"""A projection's estimates: its input's rows, each output column as its expression makes
it (optimizer.estimate.operators.expressions), the row size the sum of their widths
(docs/design.md#group-by: a projection keeps its rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.expressions import expression_column
from optimizer.plan import Project

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def derive(stats: StatsQuery, node: Project) -> NodeStats:
    child = stats.of(node.child)
    columns = {ref: expression_column(expression, child) for ref, expression in node.outputs}
    return NodeStats(child.rows, sum(c.width for c in columns.values()), columns)
