"""A join's estimates (docs/design.md#join-cardinality): its rows from the rows of its
matches (operators.join_rows) after the transfer of ranges between its keys
(operators.join_ranges), a residual condition as a filter, outer joins as the Hive CBO
proposal's max of the inner rows and the preserved side's, semi and anti joins the share of
the left rows that match; its columns' distinct values (docs/design.md#distinct-values),
NULLs padding an outer join's unmatched rows, and at level `sketch` what the row samples
show (docs/estimator.md: `_matched_by_listing`, `_thinned_with_keys`, `_outer_nulls`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from optimizer.estimate.carried_degrees import Rescaled, Reweighted, degrees_of
from optimizer.estimate.column import ColumnEstimate, KeySet, changed, distinct_after_sampling
from optimizer.estimate.in_subquery import in_subquery_selectivities
from optimizer.estimate.key_degrees import (
    NOT_KNOWN,
    SAMPLED_PAIRS_LEAST,
    JoinedDegrees,
    KeyDegrees,
    NotKnown,
    joined,
)
from optimizer.estimate.listed_join import ListedJoin
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators import join_rows
from optimizer.estimate.operators.join_heavy_keys import carry_heavy_keys
from optimizer.estimate.operators.join_partitions import (
    matched_partition_keys,
    narrowed_to_partitions,
)
from optimizer.estimate.operators.join_ranges import transfer_ranges
from optimizer.estimate.predicates import BASIC, SKETCH, selectivity
from optimizer.estimate.sample_distinct import determines, distinct_left
from optimizer.estimate.sample_filter import holds_every_row
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.selectivity import (
    seed_full_outer_join_rows,
    seed_join_distinct,
    seed_outer_join_rows,
)
from optimizer.estimate.values import ESTIMATED, Estimate, clamp_fraction, weakest
from optimizer.plan import ColumnRef, Join

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def derive(stats: StatsQuery, node: Join) -> NodeStats:
    left, right = stats.of(node.left), stats.of(node.right)
    # partition-key joins through the listing, on the sides as their nodes estimate
    # them (the transfer of ranges below keeps neither samples nor listings)
    listed = {(a, b): join_rows.listed_join(stats, (left, right), a, b) for a, b in node.keys}
    sides = (left, right)
    if stats.level != BASIC and node.kind in ("inner", "semi"):
        left, right = transfer_ranges(node, left, right)
    inner, source = join_rows.inner_join_rows(stats, node, left, right, listed)
    degrees = _key_degrees(stats, node, sides, listed)
    if degrees is not None and _degrees_decide(node, sides, degrees) and not degrees.weak:
        inner, source = degrees.rows, "key degrees"
    precision = weakest(left.rows.precision, right.rows.precision, ESTIMATED)
    if node.residual is not None:
        combined = {**left.columns, **right.columns}
        known = in_subquery_selectivities(stats, node.residual, combined)
        residual, _ = selectivity(node.residual, combined, stats.level, known)
        inner *= residual.value
    rows = inner
    if node.kind == "left":
        rows = seed_outer_join_rows(inner, left.rows.value)
    elif node.kind == "right":
        rows = seed_outer_join_rows(inner, right.rows.value)
    elif node.kind == "full":
        rows = seed_full_outer_join_rows(inner, left.rows.value, right.rows.value)
    elif node.kind in ("semi", "anti"):
        matched = join_rows.semi_fraction(stats, node, left, right)
        fraction = matched if node.kind == "semi" else 1.0 - matched
        rows = left.rows.value * fraction
        source = f"{node.kind}:{source}"
    columns = _join_columns(stats, node, left, right, rows, degrees)
    if degrees is not None:
        columns = _reweighted(node, sides, columns, degrees)
    if node.kind in ("left", "right", "full") and stats.level != BASIC:
        columns = _outer_nulls(node, left, right, columns, inner, rows)
    if node.kind == "inner":
        for found in listed.values():
            if found is not None:
                columns = _matched_by_listing(columns, *found)
        columns = _read_partitions(stats, node, sides, listed, columns)
    if stats.level == SKETCH and node.kind == "inner":
        columns = carry_heavy_keys(node, left, right, columns, rows)
    size = left.row_size + (0.0 if node.kind in ("semi", "anti") else right.row_size)
    return NodeStats(Estimate(max(rows, 0.0), precision, source), size, columns)


def _key_degrees(
    stats: StatsQuery,
    node: Join,
    sides: tuple[NodeStats, NodeStats],
    listed: dict[tuple[ColumnRef, ColumnRef], tuple[NodeStats, ListedJoin] | None],
) -> JoinedDegrees | None:
    """An inner join's rows and its key's degrees from the two sides' (level sketch, one key
    pair, not through a partition listing: optimizer.estimate.key_degrees)."""
    if not stats.joint_fanouts or node.kind != "inner" or len(node.keys) != 1:
        return None
    if any(found is not None for found in listed.values()):
        return None
    ((a, b),) = node.keys
    left, right = sides
    found_left = degrees_of(left.columns.get(a), left.rows.value)
    found_right = degrees_of(right.columns.get(b), right.rows.value)
    if found_left is None or found_right is None:
        return None
    return joined(found_left, found_right)


def _reweighted(
    node: Join,
    sides: tuple[NodeStats, NodeStats],
    columns: dict[ColumnRef, ColumnEstimate],
    degrees: JoinedDegrees,
) -> dict[ColumnRef, ColumnEstimate]:
    """After an inner join on one key, the columns of the scan each key was read from weigh
    each sampled row by the other side's rows holding its key (carried_degrees.Reweighted; the
    sides' degrees those the join's were multiplied from)."""
    ((a, b),) = node.keys
    result = dict(columns)
    for side, key, other, other_key, other_degrees in (
        (sides[0], a, sides[1], b, degrees.right),
        (sides[1], b, sides[0], a, degrees.left),
    ):
        key_column = side.columns.get(key)
        if key_column is None or key_column.origin is None:
            continue
        other_column = other.columns[other_key]
        scan, key_name = key_column.origin
        factor = (key_name, other_degrees, other_column.ndv.value)
        for ref, column in side.columns.items():
            if ref == key or column.origin is None or column.origin[0] is not scan:
                continue
            if ref in result and isinstance(column.degrees, KeyDegrees | Rescaled):
                # a key of an earlier join: its degrees times what this join gave its rows
                _rescale(result, column.degrees, scan, column.origin[1], factor)
                continue
            if ref not in result or isinstance(column.degrees, NotKnown):
                continue
            before = column.degrees
            if not isinstance(before, Reweighted):
                before = Reweighted(scan, column.origin[1], ())
            result[ref] = changed(result[ref], degrees=before.then(*factor))
    return result


def _rescale(
    columns: dict[ColumnRef, ColumnEstimate],
    carried: KeyDegrees | Rescaled,
    scan: ScanSample,
    name: str,
    factor: tuple[str, KeyDegrees, float],
) -> None:
    """Every column carrying `carried` (both keys of the join that made them) takes them
    rescaled by a join on another column of `scan` (carried_degrees.Rescaled), in place."""
    found = Rescaled(carried, scan, name, factor)
    for ref, column in columns.items():
        if column.degrees is carried:
            columns[ref] = changed(column, degrees=found)


def _degrees_decide(node: Join, sides: tuple[NodeStats, NodeStats], degrees: JoinedDegrees) -> bool:
    """Whether a join's rows are its key's degrees' product: where both sides' samples hold
    every row (the product is exact), where SAMPLED_PAIRS_LEAST sampled row pairs of two
    sampled sides meet (the product's noise is then below the sketch rules' error on keys
    whose fan-outs differ), or where a side's key was a key of an earlier join (its degrees
    carried), whose fan-outs the sketches cannot see."""
    if degrees.exact or degrees.sampled_pairs >= SAMPLED_PAIRS_LEAST:
        return True
    ((a, b),) = node.keys
    return any(
        isinstance(
            getattr(side.columns.get(ref), "degrees", None), KeyDegrees | Reweighted | Rescaled
        )
        for side, ref in zip(sides, (a, b), strict=True)
    )


def _join_columns(
    stats: StatsQuery,
    node: Join,
    left: NodeStats,
    right: NodeStats,
    rows: float,
    degrees: JoinedDegrees | None = None,
) -> dict[ColumnRef, ColumnEstimate]:
    sides = [left] if node.kind in ("semi", "anti") else [left, right]
    columns: dict[ColumnRef, ColumnEstimate] = {}
    for position, side in enumerate(sides):
        keys = [pair[position] for pair in node.keys]
        thinned = (
            _thinned_with_keys(side, keys, rows)
            if stats.level == SKETCH and node.kind in ("inner", "semi")
            else {}
        )
        dropping = stats.level != BASIC and node.kind in ("inner", "semi")
        for ref, column in side.columns.items():
            if ref in thinned:
                column = thinned[ref]
            elif dropping and ref not in keys:
                column = _thinned_at_random(column, side.rows.value, rows)
            if column.sampled is not None:  # the sample shows the scan's rows, not these
                column = changed(column, sampled=None)
            if stats.level != BASIC and column.ndv.value > rows:
                share = rows / column.ndv.value  # of its distinct values, at most these
                column = changed(
                    column,
                    ndv=Estimate(rows, ESTIMATED, "capped:rows"),
                    theta_share=column.theta_share * share,
                )
            columns[ref] = column
    for a, b in node.keys:  # join keys: docs/design.md#distinct-values
        if a in columns and b in columns and node.kind == "inner":
            left_ndv, right_ndv = columns[a].ndv.value, columns[b].ndv.value
            ndv = (
                seed_join_distinct(left_ndv, right_ndv)
                if stats.level == BASIC
                else min(left_ndv, right_ndv)  # a key in the output matched both sides
            )
            # each key's values are the other's: both in the sets semi joins put either in
            within = _merged(columns[a].within, columns[b].within)
            joined = (
                _joined_mcv(left.columns.get(a), right.columns.get(b), left, right, rows)
                if stats.joint_fanouts and len(node.keys) == 1  # a key pair of several
                else None  # matches only with the others: its own product overcounts
            )
            carried: Any = None
            if degrees is not None and degrees.rows > 0:
                carried = degrees.degrees
                joined = carried.most_common(degrees.rows, columns[a].type)
            elif stats.level == SKETCH:
                carried = NOT_KNOWN
            for ref in (a, b):
                columns[ref] = changed(
                    columns[ref],
                    ndv=Estimate(ndv, ESTIMATED, "join key"),
                    within=within,
                    degrees=carried,
                )
                if joined is not None:
                    columns[ref] = changed(columns[ref], mcv=joined, tail=1.0, grouped=False)
        elif a in columns and b in right.columns and node.kind == "semi":
            # a semi join keeps only keys the right side has: at most its distinct count,
            # and only values of the sets holding the right key's
            kept = right.columns[b].ndv.value
            if stats.level != BASIC and columns[a].ndv.value > kept:
                capped = Estimate(kept, ESTIMATED, "semi join key")
                columns[a] = changed(columns[a], ndv=capped)
            within = _merged(columns[a].within, right.columns[b].containers())
            columns[a] = changed(columns[a], within=within)
    return columns


JOINED_MCV_LIMIT = 100


def _joined_mcv(
    left_key: ColumnEstimate | None,
    right_key: ColumnEstimate | None,
    left: NodeStats,
    right: NodeStats,
    rows: float,
) -> tuple[tuple[Any, float], ...] | None:
    """The most common values of an inner join's key in the joined rows (docs/estimator.md,
    rules beyond the proposal): a value's rows are its rows on one side times its rows on
    the other (a listed value's own count, else the side's average rows per unlisted
    value), over the join's rows."""
    if left_key is None or right_key is None or rows <= 0:
        return None

    def counts(key: ColumnEstimate, side_rows: float) -> tuple[dict[Any, float], float]:
        mcv = () if key.grouped else key.mcv
        listed = {v: f * side_rows for v, f in mcv}
        rest = side_rows * max(0.0, 1.0 - key.null_fraction - sum(f for _, f in mcv))
        return listed, rest / max(key.ndv.value - len(listed), 1.0)

    left_counts, left_rest = counts(left_key, left.rows.value)
    right_counts, right_rest = counts(right_key, right.rows.value)
    if not left_counts and not right_counts:
        return None
    # a value listed on one side only is on the other with the chance its distinct values
    # give (containment: the fewer values are among the more)
    left_has = min(1.0, left_key.ndv.value / max(right_key.ndv.value, 1.0))
    right_has = min(1.0, right_key.ndv.value / max(left_key.ndv.value, 1.0))
    joined = {
        v: left_counts.get(v, left_rest * left_has) * right_counts.get(v, right_rest * right_has)
        for v in {**left_counts, **right_counts}
    }
    top = sorted(joined.items(), key=lambda item: -item[1])[:JOINED_MCV_LIMIT]
    return tuple((v, min(1.0, c / rows)) for v, c in top if c > 0)


def _thinned_at_random(column: ColumnEstimate, before: float, rows: float) -> ColumnEstimate:
    """An inner or semi join keeping `rows` of a side's `before` rows thins a column of
    that side that is not a join key as a filter on other columns does: the distinct values
    left when the rows kept are drawn at random (Cardenas 1975, docs/estimator.md#columns-
    a-join-thins); a side whose rows all survive (rows >= before) keeps its values."""
    if rows >= before or before <= 0 or column.ndv.value <= 0:
        return column
    kept = distinct_after_sampling(column.ndv.value, before, rows)
    if kept >= column.ndv.value:
        return column
    return changed(
        column,
        # its source kept, as a filter keeps it (a partition key's listing still joins)
        ndv=Estimate(max(kept, 1.0), column.ndv.precision, column.ndv.source),
        theta_share=column.theta_share * kept / column.ndv.value,
    )


def _thinned_with_keys(
    side: NodeStats, keys: list[ColumnRef], rows: float
) -> dict[ColumnRef, ColumnEstimate]:
    """A join keeping `rows` of a side's rows through its key columns `keys`: a column of
    the side that determines a key (its rows with one value share one key value, as a
    ticket's items share its date, store and customer; sample_distinct.determines, on the row
    sample) loses its values in proportion to the rows, not as rows drawn at random would
    (Cardenas): a ticket is joined whole or not at all."""
    before = side.rows.value
    if rows >= before or before <= 0 or not keys:
        return {}
    key_origins = [side.columns[k].origin for k in keys if k in side.columns]
    key_origins = [o for o in key_origins if o is not None]
    if not key_origins:
        return {}
    result = {}
    for ref, column in side.columns.items():
        if column.origin is None or ref in keys:
            continue
        scan, name = column.origin
        if not any(o[0] is scan and determines(scan, name, o[1]) for o in key_origins):
            continue
        ndv = max(1.0, column.ndv.value * rows / before)
        if ndv < column.ndv.value:
            result[ref] = changed(
                column,
                ndv=Estimate(ndv, ESTIMATED, "determines the join key"),
                theta_share=column.theta_share * ndv / column.ndv.value,
            )
    return result


def _read_partitions(
    stats: StatsQuery,
    node: Join,
    sides: tuple[NodeStats, NodeStats],
    listed: dict[tuple[ColumnRef, ColumnRef], tuple[NodeStats, ListedJoin] | None],
    columns: dict[ColumnRef, ColumnEstimate],
) -> dict[ColumnRef, ColumnEstimate]:
    """A side joined through its partition listing reads only the partitions the other
    side's keys meet: its columns at most those partitions' distinct values
    (operators.join_partitions)."""
    join_keys = {ref for pair in node.keys for ref in pair}
    for (a, b), found in listed.items():
        if found is None:
            continue
        other, joined = found
        if other is sides[0]:
            side, listed_stats, key, other_key = node.right, sides[1], b, a
        else:
            side, listed_stats, key, other_key = node.left, sides[0], a, b
        column = listed_stats.columns.get(key)
        if column is None:
            continue
        values = matched_partition_keys(column, other, other_key[1], joined)
        if values is not None:
            columns = narrowed_to_partitions(stats, side, key, values, columns, join_keys)
    return columns


def _matched_by_listing(
    columns: dict[ColumnRef, ColumnEstimate], other: NodeStats, found: ListedJoin
) -> dict[ColumnRef, ColumnEstimate]:
    """After a join through a partition listing: the other side's columns keep the distinct
    values of its sampled rows that met a listed key (a calendar's years narrowed to those
    the fact table's partitions cover), counted exactly where the sample holds every row,
    else scaled by the share of the sample's distinct values they keep."""
    assert other.sample is not None
    scan = other.sample
    narrowed = ScanSample(scan.alias, scan.load, found.matched, scan.every_partition, scan.table)
    loaded = scan.loaded()
    complete = loaded is not None and holds_every_row(loaded)
    result = dict(columns)
    for ref, column in columns.items():
        if column.origin is None or column.origin[0] is not scan:
            continue
        counted = distinct_left(scan, found.matched, column.origin[1])
        if counted is None:
            continue
        before, after = counted
        ndv = float(after) if complete else column.ndv.value * after / max(before, 1)
        if ndv < column.ndv.value:
            column = changed(column, ndv=Estimate(max(ndv, 1.0), ESTIMATED, "listing x sample"))
        result[ref] = changed(column, origin=(narrowed, column.origin[1]))
    return result


def _outer_nulls(
    node: Join,
    left: NodeStats,
    right: NodeStats,
    columns: dict[ColumnRef, ColumnEstimate],
    inner: float,
    rows: float,
) -> dict[ColumnRef, ColumnEstimate]:
    """An outer join's null-supplying side is NULL in the rows the inner join did not
    produce: (rows - inner) / rows of them (a LEFT JOIN ... WHERE right.key IS NULL keeps
    the unmatched rows, not the right table's own NULLs)."""
    if rows <= 0:
        return columns
    unmatched = clamp_fraction((rows - inner) / rows)
    padded = []
    if node.kind in ("left", "full"):
        padded.append(right)
    if node.kind in ("right", "full"):
        padded.append(left)
    result = dict(columns)
    for side in padded:
        for ref in side.columns:
            column = result.get(ref)
            if column is not None:
                nulls = unmatched + (1.0 - unmatched) * column.null_fraction
                result[ref] = changed(column, null_fraction=nulls)
    return result


def _merged(first: tuple[KeySet, ...], second: tuple[KeySet, ...]) -> tuple[KeySet, ...]:
    return first + tuple(k for k in second if k not in first)
