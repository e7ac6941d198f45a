"""`statlas estimate`: a query's plan with every node's estimates, as JSON or as a tree.

{"rows": R, "level": L, "plan": {"op", "rows", "source", "precision", "row_size",
 "detail", "columns": {alias.column: {"ndv", "ndv_source", "ndv_precision",
 "null_fraction", "min", "max", "histogram"}}, "children": [...]}}
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from metastore.statistics.summaries import json_scalar
from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.stats_query import StatsQuery
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
)
from optimizer.sql_text import sql_text


def estimate_json(plan: Node, stats: StatsQuery) -> dict[str, Any]:
    root = stats.of(plan)
    return {
        "rows": round(root.rows.value, 3),
        "level": stats.named_level,
        "plan": _node(plan, stats),
    }


def _node(node: Node, stats: StatsQuery) -> dict[str, Any]:
    figures = stats.of(node)
    output = set(node.output())  # (once per node, not once per column)
    return {
        "op": node.op,
        "rows": round(figures.rows.value, 3),
        "source": figures.rows.source,
        "precision": figures.rows.precision,
        "row_size": round(figures.row_size, 1),
        "detail": detail(node),
        "columns": {
            f"{alias}.{name}": _column(column)
            for (alias, name), column in figures.columns.items()
            if (alias, name) in output
        },
        "children": [_node(child, stats) for child in node.children],
    }


def detail(node: Node) -> str:
    """One line saying what the node does."""
    if isinstance(node, Scan):
        where = " AND ".join(sql_text(p, "spark") for p in node.partition_filter)
        text = node.table + ("" if node.alias == node.table else f" AS {node.alias}")
        return text + (f" partitions: {where}" if where else "")
    if isinstance(node, Filter):
        return sql_text(node.condition, "spark")
    if isinstance(node, Join):
        keys = " AND ".join(f"{a[0]}.{a[1]} = {b[0]}.{b[1]}" for a, b in node.keys)
        residual = sql_text(node.residual, "spark") if node.residual is not None else ""
        return f"{node.kind} " + " AND ".join(p for p in (keys, residual) if p)
    if isinstance(node, Aggregate) and node.grouping_sets:
        sets = ", ".join(
            "(" + ", ".join(sql_text(k, "spark") for k in keys) + ")" for keys in node.grouping_sets
        )
        return f"group by grouping sets ({sets})"
    if isinstance(node, Aggregate):
        return "group by " + (", ".join(sql_text(k, "spark") for k in node.group_by) or "()")
    if isinstance(node, Window):
        keys = ", ".join(sql_text(k, "spark") for k in node.partition_by)
        return f"window partition by ({keys}): " + ", ".join(f"{ref[1]}" for ref, _ in node.outputs)
    if isinstance(node, Project):
        return ", ".join(f"{ref[1]}" for ref, _ in node.outputs)
    if isinstance(node, Sort):
        return ", ".join(sql_text(k, "spark") for k in node.keys)
    if isinstance(node, Limit):
        return str(node.count)
    if isinstance(node, Union):
        return "distinct" if node.distinct else "all"
    return ""


def _column(column: ColumnEstimate) -> dict[str, Any]:
    histogram = None
    if column.points is not None:
        histogram = "exact (partition listing)"
    elif column.kll is not None:
        histogram = "kll"
    elif column.mcv:
        histogram = "mcv"
    return {
        "ndv": round(column.ndv.value, 3),
        "ndv_source": column.ndv.source,
        "ndv_precision": column.ndv.precision,
        "null_fraction": round(column.null_fraction, 6),
        "min": _json(column.low),
        "max": _json(column.high),
        "histogram": histogram,
    }


def _json(value: Any) -> Any:
    if isinstance(value, exp.Expr):
        return sql_text(value, "spark")
    return json_scalar(value)


def estimate_text(plan: Node, stats: StatsQuery) -> str:
    """An indented tree: one line per node with its rows, source and precision."""
    lines = [f"estimated rows: {stats.of(plan).rows.value:,.0f} (level {stats.named_level})"]

    def visit(node: Node, depth: int) -> None:
        figures = stats.of(node)
        lines.append(
            f"{'  ' * depth}{node.op} {detail(node)}  "
            f"rows={figures.rows.value:,.1f} [{figures.rows.source}, {figures.rows.precision}]"
        )
        for child in node.children:
            visit(child, depth + 1)

    visit(plan, 0)
    return "\n".join(lines)
