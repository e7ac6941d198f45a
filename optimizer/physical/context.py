"""What the physical planner reads: estimates of plan nodes, the catalog, the cost variables,
and the columns the query reads (row sizes count only those, as a columnar scan does)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from metastore.catalog.tables import TableInfo
from optimizer.cost.params import CostParams
from optimizer.estimate.stats_query import StatsQuery
from optimizer.physical.algorithms import Side
from optimizer.plan import (
    Aggregate,
    ColumnRef,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Scan,
    Sort,
    columns_in,
    walk,
)

DEFAULT_WIDTH = 8.0


@dataclass
class PlanningContext:
    stats: StatsQuery
    params: CostParams
    needed: set[ColumnRef] = field(default_factory=set)
    _table_rows: dict[str, float] = field(default_factory=dict)

    def rows(self, node: Node) -> float:
        return max(self.stats.of(node).rows.value, 0.0)

    def row_size(self, node: Node) -> float:
        """Bytes per row of the node's output columns the query reads (at least 1)."""
        columns = self.stats.of(node).columns
        total = 0.0
        for ref in node.output():
            if ref in self.needed:
                column = columns.get(ref)
                total += column.width if column is not None else DEFAULT_WIDTH
        return max(total, 1.0)

    def table(self, name: str) -> TableInfo:
        return self.stats.source.table(name)

    def side(self, node: Node, keys: tuple[ColumnRef, ...], rows: float | None = None) -> Side:
        """A join input as the algorithm choice sees it."""
        rows = self.rows(node) if rows is None else rows
        label = describe(node)
        scan = base_scan(node)
        share, values = self.heavy(node, keys)
        size = self.row_size(node)
        if scan is None:
            relation = len({a for a, _ in node.output()}) == 1
            return Side(
                rows, size, label, heavy_share=share, heavy_values=values, relation=relation
            )
        info = self.table(scan.table)
        # the whole table's rows serve only the big-table policies of bucketed joins
        table_rows = max(info_rows(self, scan), rows) if info.bucketing is not None else 0.0
        return Side(
            rows,
            size,
            label,
            bucketing=info.bucketing,
            key_columns=tuple(c for a, c in keys if a == scan.alias),
            table_bytes=table_rows * size,
            partitions=max(info.partition_count, 1),
            heavy_share=share,
            heavy_values=values,
        )

    def heavy(self, node: Node, keys: tuple[ColumnRef, ...]) -> tuple[float, tuple[object, ...]]:
        """The largest share of the node's rows one value of a join key holds, and the
        values above the skew threshold (from the heavy hitters)."""
        columns = self.stats.of(node).columns
        best, values = 0.0, []
        for key in keys:
            column = columns.get(key)
            if column is None or not column.mcv:
                continue
            for value, fraction in column.mcv:
                best = max(best, fraction)
                if fraction >= self.params.skew_share:
                    values.append(value)
        return best, tuple(values)


def info_rows(context: PlanningContext, scan: Scan) -> float:
    """Rows of the whole table (all partitions), for the big-table policies."""
    if scan.table not in context._table_rows:
        whole = Scan(scan.table, scan.alias, scan.columns, scan.partition_keys)
        context._table_rows[scan.table] = context.rows(whole)
    return context._table_rows[scan.table]


def base_scan(node: Node) -> Scan | None:
    """The one table scan a node reads, through filters and projections."""
    while isinstance(node, Filter | Project | Limit | Sort):
        node = node.child
    return node if isinstance(node, Scan) else None


def describe(node: Node) -> str:
    aliases = sorted({a for a, _ in node.output()})
    scan = base_scan(node)
    if scan is not None:
        return scan.alias if scan.alias == scan.table else f"{scan.table} {scan.alias}"
    if len(aliases) == 1:
        return aliases[0]
    return "the join of " + ", ".join(aliases)


def needed_columns(plan: Node) -> set[ColumnRef]:
    """Every column the query reads: those its expressions name, and its result."""
    needed: set[ColumnRef] = set(plan.output())
    for node in walk(plan):
        for expression in expressions_of(node):
            needed |= columns_in(expression)
        if isinstance(node, Join):
            for a, b in node.keys:
                needed |= {a, b}
        if isinstance(node, Project | Aggregate):
            for ref, _ in node.outputs:
                needed.add(ref)
    return needed


def expressions_of(node: Node) -> list[exp.Expr]:
    if isinstance(node, Filter):
        return [node.condition]
    if isinstance(node, Scan):
        return list(node.partition_filter)
    if isinstance(node, Join):
        return [node.residual] if node.residual is not None else []
    if isinstance(node, Project):
        return [e for _, e in node.outputs]
    if isinstance(node, Aggregate):
        return list(node.group_by) + [e for _, e in node.outputs]
    if isinstance(node, Sort):
        return list(node.keys)
    return []
