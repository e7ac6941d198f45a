"""`statlas explain`: a query's physical plan (join order, join algorithms, shuffles, jobs,
costs), as JSON or an indented tree, and as Spark SQL (`--emit spark`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import Engine
from sqlglot import exp

from optimizer.cost.params import CostParams, cost_params
from optimizer.estimate.predicates import SKETCH, Level
from optimizer.estimate.sources import MetastoreSource, StatisticsSource, consistently
from optimizer.estimate.stats_query import StatsQuery
from optimizer.physical.build import to_physical
from optimizer.physical.context import PlanningContext, needed_columns
from optimizer.physical.correlation import (
    Counts,
    before_correlation,
    counts,
    eliminate_shuffles,
    job_of_nodes,
)
from optimizer.physical.emit_spark import emit_spark
from optimizer.physical.join_order import Ordering
from optimizer.physical.plan import PhysicalNode
from optimizer.sql_to_plan import QualifiedPlan, build_qualified_plan


@dataclass
class PhysicalPlan:
    root: PhysicalNode
    before: Counts
    after: Counts
    ordering: Ordering
    statement: exp.Expr
    params: CostParams
    level: Level
    sql: str
    merged: int = 0  # groups of aggregates read once (optimizer.rewrite.merge_aggregates)
    stats: StatsQuery | None = None  # the estimates planned with (each node's rows' source)


def plan_query(
    engine: Engine | None,
    sql: str,
    dialect: str = "spark",
    config: Mapping[str, str] | None = None,
    source: StatisticsSource | None = None,
    level: Level = SKETCH,
) -> PhysicalPlan:
    """Plan `sql`: order joins, choose algorithms, place shuffles, eliminate the unnecessary
    ones. Statistics come from `source` (default: the metastore behind `engine`), of one
    committed state of each table (planned again when a collection commits meanwhile)."""
    params = cost_params(config)
    source = source if source is not None else MetastoreSource(engine, memo=True)
    return consistently(source, partial(_plan, sql, dialect, params, source, level))


def _plan(
    sql: str, dialect: str, params: CostParams, source: StatisticsSource, level: Level
) -> PhysicalPlan:
    """The plan of `sql`; with merge_aggregates, of `sql` with its one-row aggregates over
    the same relations merged when that plan costs less (docs/design.md#merged-aggregates)."""
    merge = params.merge_aggregates == 1
    qualified = build_qualified_plan(sql, source.table, dialect, source.prepare, merge)
    plan = _plan_qualified(qualified, sql, params, source, level)
    if not qualified.merged.groups:
        return plan
    unmerged = build_qualified_plan(sql, source.table, dialect, source.prepare)
    alternative = _plan_qualified(unmerged, sql, params, source, level)
    separate = alternative.root.total_cost().total
    for subquery in qualified.merged.scalar_subqueries:  # each one more job of Spark's
        alone = build_qualified_plan(subquery.sql(dialect=dialect), source.table, dialect)
        separate += _plan_qualified(alone, sql, params, source, level).root.total_cost().total
    return plan if plan.root.total_cost().total < separate else alternative


def _plan_qualified(
    qualified: QualifiedPlan, sql: str, params: CostParams, source: StatisticsSource, level: Level
) -> PhysicalPlan:
    stats = StatsQuery(source, level)
    context = PlanningContext(stats, params, needed_columns(qualified.plan))
    ordering = Ordering(context)
    physical = to_physical(ordering.reorder(qualified.plan), context)
    root = eliminate_shuffles(physical)
    before, after = before_correlation(physical), counts(root)
    return PhysicalPlan(
        root,
        before,
        after,
        ordering,
        qualified.statement,
        params,
        level,
        sql,
        qualified.merged.groups,
        stats,
    )


def explain(
    engine: Engine | None,
    sql: str,
    dialect: str = "spark",
    config: Mapping[str, str] | None = None,
    source: StatisticsSource | None = None,
    level: Level = SKETCH,
) -> dict[str, Any]:
    return explain_json(plan_query(engine, sql, dialect, config, source, level))


def emit(plan: PhysicalPlan) -> str:
    return emit_spark(
        plan.statement,
        plan.ordering.groups,
        plan.root,
        plan.params.common_hint,
        None if plan.merged else plan.sql,  # a merged statement is written even unchanged
        plan.ordering.semi_transfers,
        plan.params.semi_join_hints == 1,
    )


def explain_json(plan: PhysicalPlan) -> dict[str, Any]:
    jobs = job_of_nodes(plan.root)
    total = plan.root.total_cost()
    return {
        "jobs": {"before": plan.before.jobs, "after": plan.after.jobs},
        "shuffles": {"before": plan.before.shuffles, "after": plan.after.shuffles},
        "scans": {"before": plan.before.scans, "after": plan.after.scans},
        "cost": {"cpu": total.cpu, "io": total.io, "total": total.total, "rows": total.rows},
        "level": plan.level,
        "plan": _node(plan.root, jobs, plan.stats),
    }


def _node(
    node: PhysicalNode, jobs: dict[PhysicalNode, int], stats: StatsQuery | None
) -> dict[str, Any]:
    rows = stats.of(node.logical).rows if stats is not None else None
    result: dict[str, Any] = {
        "op": node.op,
        "detail": node.detail,
        "rows": round(node.rows, 3),
        "source": None if rows is None else rows.source,
        "precision": None if rows is None else rows.precision,
        "row_size": round(node.row_size, 1),
        "size": round(node.bytes, 1),
        "cost": {"cpu": node.cost.cpu, "io": node.cost.io},
        "job": jobs[node],
    }
    if node.op == "join":
        result["algorithm"] = node.algorithm
        result["reason"] = node.reason
        if node.streamed is not None:
            result["streamed"] = ("left", "right")[node.streamed]
        if node.skew_values:
            result["skew_values"] = [str(v) for v in node.skew_values]
    inputs = []
    for index in range(len(node.children)):
        shuffle = node.shuffles[index]
        inputs.append(
            {
                "shuffle": None if shuffle is None else shuffle.label(),
                "removed": None if shuffle is None or not shuffle.removed else shuffle.why_removed,
                "broadcast": node.broadcast[index],
                "new_map_stage": node.stage_break[index],
            }
        )
    if inputs:
        result["inputs"] = inputs
    result["children"] = [_node(child, jobs, stats) for child in node.children]
    return result


def explain_text(plan: PhysicalPlan) -> str:
    data = explain_json(plan)
    cost = data["cost"]
    lines = [
        f"jobs {data['jobs']['before']} -> {data['jobs']['after']}, "
        f"shuffles {data['shuffles']['before']} -> {data['shuffles']['after']}, "
        f"table scans {data['scans']['before']} -> {data['scans']['after']} "
        "(before -> after shuffle elimination)",
        f"cost: cpu {cost['cpu']:.4g} ns, io {cost['io']:.4g} ns, rows {cost['rows']:,.0f}",
    ]

    def visit(node: dict[str, Any], depth: int) -> None:
        pad = "  " * depth
        head = node["op"] + (f" [{node['algorithm']}]" if "algorithm" in node else "")
        lines.append(
            f"{pad}{head} {node['detail']}  rows={node['rows']:,.0f} size={node['size']:,.0f}B "
            f"cpu={node['cost']['cpu']:.3g} io={node['cost']['io']:.3g} job={node['job']}"
        )
        if node.get("reason"):
            lines.append(f"{pad}  why: {node['reason']}")
        for edge, child in zip(node.get("inputs", []), node["children"], strict=False):
            if edge["shuffle"]:
                state = f" -- removed: {edge['removed']}" if edge["removed"] else ""
                lines.append(f"{pad}  <{edge['shuffle']}{state}>")
            if edge["broadcast"]:
                lines.append(f"{pad}  <broadcast hash table>")
            if edge["new_map_stage"]:
                lines.append(f"{pad}  <new map stage>")
            visit(child, depth + 1)
        for child in node["children"][len(node.get("inputs", [])) :]:
            visit(child, depth + 1)

    visit(data["plan"], 0)
    return "\n".join(lines)
