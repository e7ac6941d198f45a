"""A sort's and a limit's estimates: a sort keeps its input's rows, `LIMIT n` at most n of
them (docs/design.md#group-by, "Other nodes")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.values import Estimate
from optimizer.plan import Limit, Sort

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def derive_sort(stats: StatsQuery, node: Sort) -> NodeStats:
    """A sort keeps its input's rows and columns."""
    return stats.of(node.child)


def derive_limit(stats: StatsQuery, node: Limit) -> NodeStats:
    """LIMIT n: at most n of its input's rows, the columns as they were."""
    child = stats.of(node.child)
    if child.rows.value <= node.count:
        return child
    rows = Estimate(float(node.count), child.rows.precision, "limit")
    return NodeStats(rows, child.row_size, child.columns)
