"""An aggregate's estimates: its groups (docs/design.md#group-by: at level `basic` the Hive
CBO proposal's largest distinct count, above it the product of the keys' distinct counts
capped by the rows, at `sketch` grouping columns read from one scan's row sample counted as
one key); ROLLUP, CUBE and GROUPING SETS the sum over their sets; COUNT per group a
zero-truncated Poisson law (docs/estimator.md: `_correlated_group_ndvs`,
`group_sizes.group_size_points`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sqlglot import exp

from optimizer.estimate.column import ColumnEstimate, changed, unknown_column
from optimizer.estimate.group_sizes import group_size_points
from optimizer.estimate.key_degrees import NOT_KNOWN
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.expressions import expression_column, value_bounds
from optimizer.estimate.partition_groups import partition_pairs
from optimizer.estimate.predicates import BASIC, SKETCH, Level
from optimizer.estimate.sample_distinct import distinct_tuples
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.selectivity import (
    drawn_distinct,
    group_by_rows,
    occupied_groups,
    seed_group_by_rows,
)
from optimizer.estimate.values import ESTIMATED, EXACT, Estimate, weakest
from optimizer.plan import Aggregate

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery

INDEPENDENT_SHARE = 0.9  # sampled combinations at least this share of independent columns'
DETERMINES_TOLERANCE = 0.01  # a column with 99% of the combinations' count determines them


def derive(stats: StatsQuery, node: Aggregate) -> NodeStats:
    child = stats.of(node.child)

    def pairs(keys: tuple[exp.Expr, ...]) -> float | None:
        if stats.level != SKETCH:
            return None
        return partition_pairs(stats, node.child, child, keys)

    if node.grouping_sets:  # ROLLUP, CUBE, GROUPING SETS: the sets' groups together
        counts = [groups(child, keys, stats.level, pairs(keys)) for keys in node.grouping_sets]
        rows = Estimate(
            sum(c.value for c in counts),
            weakest(*(c.precision for c in counts)),
            f"grouping sets: sum of {len(counts)} groupings",
        )
    else:
        rows = groups(child, node.group_by, stats.level, pairs(node.group_by))
    columns = {}
    for ref, expression in node.outputs:
        if isinstance(expression, exp.Count) and node.group_by and stats.level != BASIC:
            columns[ref] = _count_column(child.rows.value, rows.value)
        elif expression.find(exp.AggFunc) is not None:
            columns[ref] = _aggregate_column(expression, child, rows.value, stats.level)
        else:
            column = expression_column(expression, child)
            if column.mcv and stats.level == SKETCH:
                column = changed(column, grouped=True)
            if stats.level == SKETCH:  # one row per group: not its input's rows per value
                column = changed(column, degrees=NOT_KNOWN)
            columns[ref] = column
    return NodeStats(rows, sum(c.width for c in columns.values()), columns)


def groups(
    child: NodeStats,
    group_by: tuple[exp.Expr, ...],
    level: Level,
    pairs: float | None = None,
) -> Estimate:
    """The number of groups of GROUP BY `group_by` over the child's rows; at level `sketch`
    filled by `pairs` where the keys are functions of a partitioned table's
    partition key and one of its columns (optimizer.estimate.partition_groups)."""
    keys = [expression_column(k, child) for k in group_by]
    ndvs = [k.ndv.value for k in keys]
    if level == SKETCH and len(keys) > 1:
        ndvs = _correlated_group_ndvs(keys, ndvs)
    if not group_by:
        return Estimate(1.0, EXACT, "no grouping keys")
    if level == BASIC:
        return Estimate(
            min(seed_group_by_rows(ndvs), child.rows.value),
            weakest(ESTIMATED, *(k.ndv.precision for k in keys)),
            "seed:max(V)",
        )
    if level == SKETCH:
        if pairs is not None and pairs < child.rows.value:
            return Estimate(
                occupied_groups(ndvs, pairs, every_value=False),
                weakest(ESTIMATED, *(k.ndv.precision for k in keys)),
                "combinations the partitions' pairs fill",
            )
        return Estimate(
            occupied_groups(ndvs, child.rows.value),
            weakest(ESTIMATED, *(k.ndv.precision for k in keys)),
            "combinations the rows fill",
        )
    return Estimate(
        group_by_rows(ndvs, child.rows.value),
        weakest(ESTIMATED, *(k.ndv.precision for k in keys)),
        "product(V) capped",
    )


def _aggregate_column(
    expression: exp.Expr, child: NodeStats, groups: float, level: Level
) -> ColumnEstimate:
    """An aggregate's output: nothing known of its values but their bounds, where its
    argument's bounds give them (`aggregate_bounds`)."""
    column = unknown_column(groups, "aggregate")
    bounds = aggregate_bounds(expression, child) if level != BASIC else None
    if bounds is None:
        return column
    low, high = bounds
    return ColumnEstimate(
        "double", column.ndv, low=low, high=high, width=column.width, source_rows=groups
    )


Bounds = tuple[float | None, float | None]


def aggregate_bounds(expression: exp.Expr, child: NodeStats) -> Bounds | None:
    """Bounds of an aggregate's values from its argument's (operators.expressions.
    value_bounds): MIN, MAX and AVG within the argument's; SUM at least the argument's
    lowest value when no value is negative, at most its highest when none is positive (a
    group has a row), so that `SUM(x) > 0` of a non-negative x keeps its groups (TPC-DS's
    yearly totals). A window aggregate over the groups (`AVG(SUM(x)) OVER (...)`) bounds
    its values as the same aggregate of the inner aggregate's. None: nothing known."""
    if isinstance(expression, exp.Window):
        expression = expression.this
    if not isinstance(expression, exp.Sum | exp.Min | exp.Max | exp.Avg):
        return None
    argument = expression.this
    bounds: Bounds | None = (
        aggregate_bounds(argument, child)
        if isinstance(argument, exp.AggFunc | exp.Window)
        else value_bounds(argument, child)
    )
    if bounds is None:
        return None
    low, high = bounds
    if isinstance(expression, exp.Sum):
        low = low if low is not None and low >= 0 else None
        high = high if high is not None and high <= 0 else None
    return (low, high) if low is not None or high is not None else None


def _count_column(input_rows: float, groups: float) -> ColumnEstimate:
    """COUNT(...) per group: at least one, input rows / groups on average, spread as
    optimizer.estimate.group_sizes says."""
    mean = input_rows / groups if groups > 0 else 1.0
    points = group_size_points(mean)
    if points is None:
        return ColumnEstimate("bigint", Estimate(1.0, ESTIMATED, "group sizes"), low=1, high=1)
    counts, _ = points
    return ColumnEstimate(
        "bigint",
        Estimate(float(min(len(counts), max(groups, 1.0))), ESTIMATED, "group sizes"),
        low=1,
        high=int(counts[-1]),
        points=points,
    )


def _correlated_group_ndvs(keys: list[ColumnEstimate], ndvs: list[float]) -> list[float]:
    """Grouping columns read from one scan's row sample count as one key. Where the
    sample shows one of them determining the rest (as many combinations as its own
    values: a ticket number and its customer), the groups are that column's values;
    otherwise the product of their distinct values times the share of that product the
    sample shows as combinations (sample_distinct.distinct_tuples), never fewer than the largest
    of them. statlas's rule (docs/design.md#group-by), not a product of distinct values."""
    by_sample: dict[ScanSample, list[int]] = {}  # samples hash by identity
    for position, key in enumerate(keys):
        if key.origin is not None:
            by_sample.setdefault(key.origin[0], []).append(position)
    result = list(ndvs)
    for members in by_sample.values():
        names = tuple(dict.fromkeys(keys[i].origin[1] for i in members))
        if len(names) < 2:
            continue
        counted = distinct_tuples(keys[members[0]].origin[0], names)
        if counted is None:
            continue
        combinations, singles, drawn = counted
        values = {keys[i].origin[1]: ndvs[i] for i in members}
        determining = [
            values[name]
            for name, single in zip(names, singles, strict=True)
            if single >= combinations * (1.0 - DETERMINES_TOLERANCE)
        ]
        if determining:
            combined = min(determining)
        else:
            share = min(1.0, combinations / math.prod(max(1, d) for d in singles))
            product = math.prod(max(v, 1.0) for v in values.values())
            combined = max(max(values.values()), product * share)
            population = _kept_population(keys[members[0]].origin[0])
            if population > drawn and combinations >= INDEPENDENT_SHARE * occupied_groups(
                singles, drawn
            ):
                # the sample's combinations are those of independent columns: its share of
                # the product is its sparseness, not a correlation; the combinations its
                # draws imply instead, at most the product, and at most one more for each
                # row the sample stands for beyond its own
                most = min(product, combinations * population / drawn)
                combined = max(combined, drawn_distinct(combinations, drawn, most))
        result[members[0]] = combined
        for i in members[1:]:
            result[i] = 1.0
    return result


def _kept_population(side: ScanSample) -> float:
    """The rows the sampled rows a side's filter kept stand for (their weights' sum)."""
    loaded = side.rows()
    if loaded is None:
        return 0.0
    sample, passed = loaded
    return float(sample.weights[passed].sum())
