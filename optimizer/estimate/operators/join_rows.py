"""The rows of a join's matches: an inner join's through its key pairs (docs/design.md#
join-cardinality: at level `basic` the Hive CBO proposal's 1/max(V1, V2) per key, at
`histogram` PostgreSQL's matching of most-common values, at `sketch` the keys' Theta overlap
and heavy hitters, a partition key through its listing), several keys multiplied with a
floor of one row per row unless a key is unique or both sides are grouped by their keys, a
composite key the row sample proves; and the share of a semi join's left rows that match.
Rules beyond the proposal: docs/estimator.md (`inner_join_rows`, `_grouped_by`,
`composite_key_completion`, `listed_key_join`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.listed_join import ListedJoin, listed_key_join
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.join_key_overlap import theta_overlap
from optimizer.estimate.predicates import BASIC, SKETCH
from optimizer.estimate.sample_distinct import key_in_sample
from optimizer.estimate.sample_join import SampledJoin, sampled_join
from optimizer.estimate.selectivity import (
    NEARLY_UNIQUE,
    composite_floor_refuted,
    composite_key_completion,
    eqjoin_mcv,
    seed_inner_join_rows,
    seed_join_selectivity,
    sketch_join_rows,
)
from optimizer.estimate.sources import LISTING
from optimizer.estimate.values import clamp_fraction
from optimizer.plan import (
    Aggregate,
    ColumnRef,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Sort,
    Window,
    column_of,
)

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def inner_join_rows(
    stats: StatsQuery,
    node: Join,
    left: NodeStats,
    right: NodeStats,
    listed: Mapping[tuple[ColumnRef, ColumnRef], tuple[NodeStats, ListedJoin] | None] | None = None,
) -> tuple[float, str]:
    """Rows of the inner join of the sides (after the transfer of ranges between their
    keys); `listed`: per key pair, its join through a partition listing (listed_join)."""
    l_rows, r_rows = left.rows.value, right.rows.value
    if not node.keys:
        return l_rows * r_rows, "cross product"
    pairs = [(left.columns.get(a), right.columns.get(b)) for a, b in node.keys]
    known = [(a, b) for a, b in pairs if a is not None and b is not None]
    if stats.level == BASIC or not known:
        sel = seed_join_selectivity([(a.ndv.value, b.ndv.value) for a, b in known])
        return seed_inner_join_rows([l_rows, r_rows], sel), "seed:1/max(V1,V2)"
    per_key = [
        (*_pair_selectivity(stats, left, right, a, b, (listed or {}).get((a, b))), a, b)
        for a, b in node.keys
        if a in left.columns and b in right.columns
    ]
    per_key.sort(key=lambda item: item[0])
    # keys beyond the first: independent, but a composite key is never more selective
    # than 1/min(rows) of either side (it cannot match less than one row per row)
    sel, source, _, _ = per_key[0]
    for extra, *_ in per_key[1:]:
        sel *= extra
    floor = 1.0 / max(l_rows, r_rows, 1.0)
    # (unless one key alone is unique on a side: then each row meets at most one row by
    # it, and the other keys only filter those matches: at random, or as a composite key
    # of a side's table completes the first key, when one does)
    unique = any(_unique_on(left, a) or _unique_on(right, b) for _, _, a, b in per_key)
    # (nor when each side is grouped by its join keys: then the two sides' groups meet
    # as independent combinations, each at most once)
    grouped = _grouped_by(node.left, {a for a, _ in node.keys}) and _grouped_by(
        node.right, {b for _, b in node.keys}
    )
    if len(per_key) > 1 and not grouped:
        ordered = [(a, b) for _, _, a, b in per_key]
        if not unique:
            sampled = _sampled_composite(stats, ordered, left, right)
            if sampled is not None and composite_floor_refuted(
                sampled.pairs, sampled.covering_pairs
            ):
                # the samples show the rows meeting at random, not one per row: their own
                # figure, never below the keys' independent product
                if sampled.selectivity > sel:
                    sel, source = sampled.selectivity, f"{source}+sampled pairs"
                return seed_inner_join_rows([l_rows, r_rows], sel), source
            sel = max(sel, floor)
        completing = (
            _composite_completion(ordered, {**left.columns, **right.columns})
            if stats.level == SKETCH
            else None
        )
        if completing is not None and per_key[0][0] * completing > sel:
            sel, source = per_key[0][0] * completing, f"{source}+composite key"
    return seed_inner_join_rows([l_rows, r_rows], sel), source


def _sampled_composite(
    stats: StatsQuery, keys: list[tuple[ColumnRef, ColumnRef]], left: NodeStats, right: NodeStats
) -> SampledJoin | None:
    """sample_join.sampled_join of the scans the two sides' key columns come from (each
    side's keys all from one sampled scan; level sketch only), once per request."""
    if stats.level != SKETCH:
        return None
    scans, names = [], []
    for side, refs in ((left, [a for a, _ in keys]), (right, [b for _, b in keys])):
        origins = [side.columns[ref].origin for ref in refs]
        if any(o is None for o in origins) or len({o[0] for o in origins}) != 1:
            return None
        scans.append(origins[0][0])
        names.append(tuple(o[1] for o in origins))
    cache_key = (scans[0], names[0], scans[1], names[1])
    if cache_key not in stats.sample_joins:
        stats.sample_joins[cache_key] = sampled_join(scans[0], names[0], scans[1], names[1])
    return stats.sample_joins[cache_key]


def _pair_selectivity(
    stats: StatsQuery,
    left: NodeStats,
    right: NodeStats,
    a: ColumnRef,
    b: ColumnRef,
    found: tuple[NodeStats, ListedJoin] | None,
) -> tuple[float, str]:
    """The selectivity of the join key pair a = b: its join through a partition listing
    where there is one (`found`: listed_join), else the columns' sketches and
    statistics."""
    l_rows, r_rows = left.rows.value, right.rows.value
    product = l_rows * r_rows
    if found is not None and product > 0:
        return found[1].rows / product, "partition listing x sample"
    return _key_selectivity(stats, left.columns[a], right.columns[b], l_rows, r_rows)


def listed_join(
    stats: StatsQuery, sides: tuple[NodeStats, NodeStats], a: ColumnRef, b: ColumnRef
) -> tuple[NodeStats, ListedJoin] | None:
    """The join of a = b through a partition key's listing and the other side's filtered
    row sample (listed_join.listed_key_join), with that other side; None where they cannot
    say it (level sketch only)."""
    if stats.level != SKETCH:
        return None
    first, second = sides
    for listed, own, other, key in ((first, a, second, b), (second, b, first, a)):
        column = listed.columns.get(own)
        if column is None or column.ndv.source != LISTING or other.sample is None:
            continue
        if other.sample.alias != key[0]:
            continue
        found = listed_key_join(
            column.mcv, listed.rows.value, other.sample, key[1], other.rows.value
        )
        if found is not None:
            return other, found
    return None


def _key_selectivity(
    stats: StatsQuery, a: ColumnEstimate, b: ColumnEstimate, l_rows: float, r_rows: float
) -> tuple[float, str]:
    if stats.level == SKETCH and a.theta is not None and b.theta is not None:
        shared = theta_overlap(a, b, stats.intersections)
        heavy_a = {v: f * l_rows for v, f in a.mcv}
        heavy_b = {v: f * r_rows for v, f in b.mcv}
        # a heavy key on one side: the other side's sample says if its filter kept it
        heavy_b, heavy_a = (
            _sampled_heavy(heavy_a, b, heavy_b),
            _sampled_heavy(heavy_b, a, heavy_a),
        )
        rows = sketch_join_rows(
            l_rows,
            r_rows,
            a.ndv.value,
            b.ndv.value,
            shared,
            heavy_a,
            heavy_b,
            a.null_fraction,
            b.null_fraction,
        )
        product = l_rows * r_rows
        return (rows / product if product else 0.0), "theta+heavy hitters"
    sel = eqjoin_mcv(a.mcv, b.mcv, a.null_fraction, b.null_fraction, a.ndv.value, b.ndv.value)
    return sel, ("mcv join" if a.mcv and b.mcv else "ndv join")


def semi_fraction(stats: StatsQuery, node: Join, left: NodeStats, right: NodeStats) -> float:
    """Share of the left rows whose keys occur on the right."""
    if not node.keys:
        return 1.0 if right.rows.value > 0 else 0.0
    a, b = left.columns.get(node.keys[0][0]), right.columns.get(node.keys[0][1])
    if a is None or b is None:
        return 0.5
    if stats.level == SKETCH and a.theta is not None and b.theta is not None:
        return clamp_fraction(theta_overlap(a, b, stats.intersections) / max(a.ndv.value, 1.0))
    return clamp_fraction(min(a.ndv.value, b.ndv.value) / max(a.ndv.value, 1.0)) * (
        1.0 - a.null_fraction
    )


def _grouped_by(node: Node, refs: set[ColumnRef]) -> bool:
    """The node's rows are groups of an aggregate whose grouping columns are among `refs`
    (so no two of its rows agree on them)."""
    while True:
        if isinstance(node, Project) and not isinstance(node, Window):
            refs = {column_of(e) or ref for ref, e in node.outputs if ref in refs}
        elif isinstance(node, Join) and node.kind in ("inner", "left"):
            # each left row meets at most one right row when the right side is unique on
            # the join keys
            if not _grouped_by(node.right, {b for _, b in node.keys}):
                return False
        elif not isinstance(node, Filter | Sort | Limit) and not (
            isinstance(node, Join) and node.kind in ("semi", "anti")  # some left rows
        ):
            break
        node = node.children[0]
    if not isinstance(node, Aggregate) or not node.group_by or node.grouping_sets:
        return False
    grouped = {ref for ref, e in node.outputs if any(e.sql() == g.sql() for g in node.group_by)}
    return len(grouped) >= len(node.group_by) and grouped <= refs


def _unique_on(side: NodeStats, ref: ColumnRef) -> bool:
    """The column's values are (nearly) all distinct among the side's rows."""
    column = side.columns.get(ref)
    rows = side.rows.value
    return column is not None and rows > 0 and column.ndv.value >= NEARLY_UNIQUE * rows


def _composite_completion(
    keys: list[tuple[ColumnRef, ColumnRef]], columns: dict[ColumnRef, ColumnEstimate]
) -> float | None:
    """composite_key_completion over the sides whose key columns all come from one table
    read by one scan, with their source rows and Theta distinct counts."""
    sides, is_key = [], []
    for position in (0, 1):
        refs = [pair[position] for pair in keys]
        found = [columns.get(ref) for ref in refs]
        if len({ref[0] for ref in refs}) != 1 or any(c is None or c.theta is None for c in found):
            continue
        known = [c for c in found if c is not None]
        rows = known[0].source_rows
        if rows > 0:
            sides.append((rows, [float(c.theta.get_estimate()) for c in known]))
            origins = {c.origin[0] for c in known if c.origin is not None}
            sampled = known[0].origin if len(origins) == 1 and known[0].origin else None
            names = tuple(c.origin[1] for c in known) if sampled is not None else ()
            is_key.append(key_in_sample(sampled[0], names) if sampled is not None else None)
    return composite_key_completion(sides, is_key)


def _sampled_heavy(
    heavy: dict[Any, float], other: ColumnEstimate, other_heavy: dict[Any, float]
) -> dict[Any, float]:
    """The other side's rows for this side's heavy keys, where its row sample shows how its
    filter treated them (over its own heavy hitters' shares too: those assume the filter
    independent of the key, the sample shows it)."""
    if other.sampled is None:
        return other_heavy
    result = dict(other_heavy)
    for value in heavy:
        kept = other.sampled.kept_rows(value)
        if kept is not None:
            result[value] = kept
    return result
