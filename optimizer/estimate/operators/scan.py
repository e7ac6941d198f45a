"""A scan's estimates: the statistics of exactly the partitions its partition-key conjuncts
select (the metastore's lookup and sketch roll-up, docs/design.md#roll-ups); partition keys
themselves described exactly by the per-partition row counts; key conjuncts the metastore
cannot evaluate estimated as a filter (docs/design.md#estimates). At level `sketch` the
scan's row sample rides along for filters and joins above it (docs/estimator.md)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from metastore.catalog.lookup import PartitionQuery
from metastore.column_type import ColumnType
from optimizer.estimate.column import ColumnEstimate, changed, unknown_column
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.key_sets import conjuncts_of, unqualified, with_key_sets
from optimizer.estimate.predicates import BASIC, SKETCH, Level, selectivity
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.tail import tail_ratio
from optimizer.estimate.values import DEFAULT, ESTIMATED, EXACT, Estimate, Precision
from optimizer.partition_predicates import selection_of, split_partition_conjuncts
from optimizer.plan import ColumnRef, Scan, conjunction

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery

OTHER_WIDTH = 8  # bytes of a value of a non-numeric type without a collected average length


def derive(stats: StatsQuery, node: Scan) -> NodeStats:
    (usable, rest), selected = scan_partitions(stats, node)
    partitions = stats.source.partitions(node.table, selected)
    summary = stats.source.summary(node.table, selected)
    rows = float(summary.row_count)
    info = stats.table(node.table)
    columns: dict[ColumnRef, ColumnEstimate] = {}
    for name, column in summary.columns.items():
        columns[(node.alias, name)] = _from_summary(column, rows, stats.level)
    types = tuple(str(key.type) for key in info.partition_keys)
    keys = stats.source.key_columns(node.table, selected, types, rows) if types else []
    for key, key_column in zip(info.partition_keys, keys, strict=True):
        columns[(node.alias, key.name)] = key_column
    for ref in node.output():
        columns.setdefault(ref, unknown_column(rows))
    row_size = sum(c.width for c in columns.values())
    precision: Precision = EXACT if partitions or not info.partition_keys else ESTIMATED
    source = "partition stats" if usable else "table stats"
    if not partitions and summary.partitions == 0:
        precision, source = DEFAULT, "no statistics (run statlas collect)"
    sample = None
    if stats.level == SKETCH:
        # the source's method, not a closure over `stats`: the request's figures hold this
        # sample, and a sample holding the request would make a cycle (its arrays freed only
        # by the garbage collector, long after the request)
        sample = ScanSample(
            node.alias,
            partial(stats.source.sample, node.table, selected),
            every_partition=not usable and not rest,
            table=node.table,
        )
    if sample is not None:
        columns = {ref: changed(c, origin=(sample, ref[1])) for ref, c in columns.items()}
    result = NodeStats(Estimate(rows, precision, source), row_size, columns, sample)
    if rest:  # partition conjuncts the metastore cannot evaluate: estimated instead
        estimate, after = selectivity(conjunction(rest), columns, stats.level)  # type: ignore[arg-type]
        result = NodeStats(result.rows.scaled(estimate), row_size, after)
    conditions = frozenset(unqualified(c) for c in conjuncts_of(node.partition_filter))
    return replace(result, columns=with_key_sets(result.columns, node.table, conditions))


def scan_partitions(
    stats: StatsQuery, node: Scan
) -> tuple[tuple[list[exp.Expr], list[exp.Expr]], PartitionQuery]:
    """The scan's partition-key conjuncts the metastore evaluates and the rest, and the
    metastore's query of the usable ones: found once per scan of a request (the scan's
    estimate and its filter's sample both ask; each finding writes the conjuncts as --where
    text and parses it back)."""
    found = stats.scans.get(node)
    if found is None:
        split = split_partition_conjuncts(node, stats.table(node.table))
        found = stats.scans[node] = (split, selection_of(split[0], stats.table(node.table)))
    return found


def _from_summary(column: Any, rows: float, level: Level) -> ColumnEstimate:
    non_null = rows - column.null_count
    if column.ndv is None:
        ndv = Estimate(max(non_null, 1.0), DEFAULT, "default:ndv=rows")
    else:
        exact_small = column.ndv_source == "theta" and column.ndv < 4096
        ndv = Estimate(
            max(1.0, float(column.ndv)), EXACT if exact_small else ESTIMATED, column.ndv_source
        )
    level_mcv = level != BASIC
    width = column.avg_len if column.avg_len is not None else _type_width(column.type)
    mcv = _provable_mcvs(column, rows) if level_mcv and rows else ()
    heavy = [f * rows for _, f in mcv]
    return ColumnEstimate(
        column.type,
        ndv,
        null_fraction=(column.null_count / rows) if rows else 0.0,
        low=column.min,
        high=column.max,
        mcv=mcv,
        kll=column.kll if level != BASIC else None,
        theta=column.theta if level == SKETCH else None,
        width=float(width),
        tail=tail_ratio(heavy, ndv.value, non_null - sum(heavy)) if heavy else 1.0,
        source_rows=rows,
        partition_distinct=float(column.partition_distinct or 0.0),
    )


def _provable_mcvs(column: Any, rows: float) -> tuple[tuple[Any, float], ...]:
    """The heavy hitters whose count is provably above an average value's (estimate minus
    the sketch's maximum error), as fractions of the rows: on a near-unique column the
    sketch's estimates are mostly its error, not frequencies."""
    if not column.mcv:
        return ()
    non_null = rows - column.null_count
    average = non_null / max(float(column.ndv or 1.0), 1.0)
    error = float(column.mcv_error or 0)
    if error == 0:  # an exact sketch: every value it holds, with its true count
        return tuple((v, c / rows) for v, c in column.mcv)
    return tuple((v, c / rows) for v, c in column.mcv if c - error > average)


def _type_width(type_: str) -> int:
    kind = ColumnType.of(type_)
    if kind.family in ("integral", "fractional") and kind.width is not None:
        return kind.width
    return OTHER_WIDTH
