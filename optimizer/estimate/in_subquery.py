"""`x IN (subquery)` where it cannot be a semi join (under an OR, a NOT or a CASE): the
share of the rows whose x the uncorrelated subquery returns, from the distinct values of
its output (its own plan, estimated) over x's (docs/estimator.md, rules beyond the
proposal). A correlated subquery, or one that cannot be planned alone, is left to the
default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlglot import exp

from metastore.errors import StatlasError
from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.predicates import BASIC
from optimizer.estimate.selectivity import in_subquery_fraction
from optimizer.estimate.values import ESTIMATED, Estimate
from optimizer.plan import ColumnRef, column_of
from optimizer.sql_to_plan import build_plan

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def in_subquery_selectivities(
    stats: StatsQuery, condition: exp.Expr, columns: Mapping[ColumnRef, ColumnEstimate]
) -> dict[int, Estimate]:
    """By id() of each `x IN (subquery)` of `condition` that can be estimated, its
    selectivity over rows with `columns`."""
    known: dict[int, Estimate] = {}
    if stats.level == BASIC:  # the proposal's rules only
        return known
    for node in condition.find_all(exp.In):
        query = node.args.get("query")
        ref = column_of(node.this)
        if query is None or ref is None or ref not in columns:
            continue
        distinct = _output_distinct(stats, query.this if isinstance(query, exp.Subquery) else query)
        if distinct is None:
            continue
        column = columns[ref]
        value = in_subquery_fraction(distinct, column.ndv.value, column.null_fraction)
        known[id(node)] = Estimate(value, ESTIMATED, "in subquery:V(subquery)/V")
    return known


def _output_distinct(stats: StatsQuery, query: exp.Expr) -> float | None:
    """Distinct values of the one output column of an uncorrelated `query`; None when it
    cannot be planned on its own (it refers to the outer query) or has other columns.
    Once per request and subquery."""
    sql = query.sql(dialect="spark")
    if sql not in stats.subquery_distinct:
        stats.subquery_distinct[sql] = _planned_distinct(stats, sql)
    return stats.subquery_distinct[sql]


def _planned_distinct(stats: StatsQuery, sql: str) -> float | None:
    try:
        plan = build_plan(sql, stats.table)
    except StatlasError:
        return None
    output = plan.output()
    if len(output) != 1:
        return None
    figures = stats.of(plan)
    column = figures.columns.get(output[0])
    if column is None:
        return None
    return min(column.ndv.value, figures.rows.value)
