"""A filter's estimates: its predicate's selectivity (docs/design.md#filter-selectivity,
optimizer.estimate.predicates), at level `sketch` over a scan counted on the scan's row
sample (optimizer.estimate.sample_filter; exact where the sample holds every row), and the
distinct values its rows keep (docs/design.md#distinct-values). Rules beyond the Hive CBO
proposal: docs/estimator.md (`holds_every_row`, `_counted_on`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from metastore.statistics.samples import Sample
from optimizer.estimate.column import (
    ColumnEstimate,
    SampledColumn,
    changed,
    distinct_after_sampling,
)
from optimizer.estimate.in_subquery import in_subquery_selectivities
from optimizer.estimate.kept_values import KeptShares
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.key_sets import conjuncts_of, with_conditions
from optimizer.estimate.operators.scan import scan_partitions
from optimizer.estimate.predicates import BASIC, SKETCH, Level, selectivity
from optimizer.estimate.sample_distinct import distinct_in
from optimizer.estimate.sample_filter import (
    SampleCount,
    combine_with_sample,
    count_on_sample,
    holds_every_row,
    worth_sampling,
)
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.values import ESTIMATED, EXACT, Estimate, Precision
from optimizer.plan import ColumnRef, Filter, Node, Scan

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def derive(stats: StatsQuery, node: Filter) -> NodeStats:
    child = stats.of(node.child)
    known = in_subquery_selectivities(stats, node.condition, child.columns)
    estimate, columns = selectivity(node.condition, child.columns, stats.level, known)
    count, sample, alias, table = None, None, "", ""
    if stats.level == SKETCH and isinstance(node.child, Scan):
        alias, table = node.child.alias, node.child.table
        count, sample = _on_sample(stats, node.child, node.condition)
        if count is not None and sample is not None and holds_every_row(sample):
            # the sample is the table: its count is the filter's
            precision: Precision = EXACT if child.rows.precision == EXACT else ESTIMATED
            estimate = Estimate(count.fraction, precision, "sample: every row")
        elif count is not None and worth_sampling(node.condition, estimate, count):
            estimate = combine_with_sample(estimate, count, child.rows.value)
    rows = child.rows.scaled(estimate)
    columns = _after_filter(child, columns, rows.value, stats.level)
    if _filters_over_scan(node):  # the scan's key sets, with this filter too
        columns = with_conditions(columns, conjuncts_of([node.condition]))
    scan_sample = None
    if count is not None and sample is not None:  # after: it compares columns by identity
        columns = _with_sampled_keys(alias, columns, child, sample, count)
        every = child.sample is not None and child.sample.every_partition
        scan_sample = ScanSample(alias, lambda: sample, count.passed, every, table)
        complete = holds_every_row(sample) and count.passed is not None
        distinct = partial(_distinct_kept, sample, count, [])
        columns = {
            ref: _counted_on(c, scan_sample, ref[1], distinct if complete else None)
            if ref[0] == alias
            else c
            for ref, c in columns.items()
        }
    return NodeStats(rows, child.row_size, columns, scan_sample)


def _on_sample(
    stats: StatsQuery, scan: Scan, condition: exp.Expr
) -> tuple[SampleCount | None, Sample | None]:
    """The filter counted on the row sample of the scan's partitions (None: no sample,
    or a predicate it cannot evaluate; optimizer.estimate.sample_filter)."""
    sample = stats.source.sample(scan.table, scan_partitions(stats, scan)[1])
    if sample is None:
        return None, None
    info = stats.table(scan.table)
    types = {c.name: c.type for c in info.columns}
    types.update({k.name: str(k.type) for k in info.partition_keys})
    return count_on_sample(condition, sample, scan.alias, types), sample


def _after_filter(
    child: NodeStats, columns: dict[ColumnRef, ColumnEstimate], rows: float, level: Level
) -> dict[ColumnRef, ColumnEstimate]:
    """V(F, a) = V(R, a) at level basic (docs/design.md#distinct-values); else the distinct
    values a filter on other columns leaves (distinct_after_sampling), and never more than
    the rows."""
    if level == BASIC:
        return columns
    result = {}
    for ref, column in columns.items():
        before = child.columns.get(ref)
        if before is not None and column is before:  # not a column of the predicate
            kept = distinct_after_sampling(column.ndv.value, child.rows.value, rows)
            share = kept / column.ndv.value if column.ndv.value else 0.0
            column = changed(
                column,
                ndv=Estimate(kept, column.ndv.precision, column.ndv.source),
                theta_share=column.theta_share * share,
            )
        elif before is not None and before.ndv.value:
            share = min(1.0, column.ndv.value / before.ndv.value)
            column = changed(column, theta_share=before.theta_share * share)
        if column.ndv.value > rows:
            column = changed(column, ndv=Estimate(rows, column.ndv.precision, "capped:rows"))
        result[ref] = column
    return result


def _filters_over_scan(node: Filter) -> bool:
    child: Node = node.child
    while isinstance(child, Filter):
        child = child.child
    return isinstance(child, Scan)


def _with_sampled_keys(
    alias: str,
    columns: dict[ColumnRef, ColumnEstimate],
    child: NodeStats,
    sample: Sample,
    count: SampleCount,
) -> dict[ColumnRef, ColumnEstimate]:
    """Join-key candidates (columns with a Theta sketch) remember which sampled rows the
    filter kept, so a join can tell which of the other side's heavy keys survive it."""
    result = dict(columns)
    for ref, column in columns.items():
        before = child.columns.get(ref)
        if ref[0] != alias or column.theta is None or before is None:
            continue
        if ref[1] not in sample.columns:
            continue
        shares = KeptShares(sample, count.passed, ref[1])  # counted when first asked
        sampled = SampledColumn(shares, before, child.rows.value)
        result[ref] = changed(column, sampled=sampled)
    return result


def _distinct_kept(
    sample: Sample, count: SampleCount, positions: list[np.ndarray], name: str
) -> int | None:
    """Distinct values of a sampled column among the rows a filter's count kept, kept with
    the count (which is kept with its sample: a query asked again reads them); the kept
    rows' positions found once per request for all the scan's columns (`positions`)."""
    if name not in count.distinct:
        if not positions:
            positions.append(np.flatnonzero(count.passed))
        count.distinct[name] = distinct_in(sample, positions[0], name)
    return count.distinct[name]


def _counted_on(
    column: ColumnEstimate,
    scan: ScanSample,
    name: str,
    distinct_kept: Callable[[str], int | None] | None,
) -> ColumnEstimate:
    """A filtered scan's column with the filtered sample as its origin; where the sample
    holds every row of the scan (`distinct_kept` given), its distinct values are those the
    sample's kept rows show."""
    column = changed(column, origin=(scan, name))
    if distinct_kept is None:
        return column
    distinct = distinct_kept(name)
    if distinct is None or distinct >= column.ndv.value:
        return column
    share = distinct / column.ndv.value if column.ndv.value else 1.0
    return changed(
        column,
        ndv=Estimate(max(float(distinct), 1.0), column.ndv.precision, "sample: every row"),
        theta_share=column.theta_share * share,
    )
