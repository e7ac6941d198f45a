"""One entry point for every estimate of a plan (Calcite's RelMetadataQuery): `StatsQuery.of(
node)` gives the node's rows, row size and per-column statistics, derived once per node and
cached, by one handler per operator.

Scans take the statistics of exactly the partitions their partition-key conjuncts select
(the metastore's lookup + sketch roll-up); partition keys themselves are described exactly
by the per-partition row counts. Joins at level `basic` follow the Hive CBO proposal
(docs/design.md#join-cardinality); at `histogram`,
PostgreSQL's MCV matching; at `sketch`, Theta-sketch key overlap plus heavy hitters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from metastore.catalog import TableInfo
from optimizer.estimate.column import (
    ColumnEstimate,
    KeySet,
    encode,
)
from optimizer.estimate.key_lookup import (
    ListedJoin,
    ScanSample,
    carried_mcvs,
    determines,
    distinct_left,
    key_in_sample,
    listed_key_join,
    surviving_mcvs,
)
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators import aggregate, limit_sort, project, scan, union, window
from optimizer.estimate.operators import filter as filter_
from optimizer.estimate.predicates import (
    BASIC,
    KLL_RANK_ERROR,
    LEVELS,
    SKETCH,
    equality_fraction,
    narrow_range,
    selectivity,
)
from optimizer.estimate.sample_filter import (
    holds_every_row,
)
from optimizer.estimate.selectivity import (
    NEARLY_UNIQUE,
    composite_key_completion,
    eqjoin_mcv,
    seed_full_outer_join_rows,
    seed_inner_join_rows,
    seed_join_distinct,
    seed_join_selectivity,
    seed_outer_join_rows,
    sketch_join_rows,
)
from optimizer.estimate.sources import LISTING, StatisticsSource
from optimizer.estimate.values import (
    ESTIMATED,
    Estimate,
    clamp_fraction,
    weakest,
)
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
    Union,
    Window,
    column_of,
)


class StatsQuery:
    def __init__(self, source: StatisticsSource, level: str = SKETCH) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}")
        self.source, self.level = source, level
        self._cache: dict[int, tuple[Node, NodeStats]] = {}
        self.intersections: dict[tuple[Any, Any], float] = {}  # Theta pairs (_theta_overlap)
        self._tables: dict[str, TableInfo] = {}

    def of(self, node: Node) -> NodeStats:
        key = id(node)
        cached = self._cache.get(key)
        if cached is None or cached[0] is not node:
            # the node is kept with its figures: an id is unique only while its object lives
            cached = self._cache[key] = (node, self._derive(node))
        return cached[1]

    def _derive(self, node: Node) -> NodeStats:
        derive = _DERIVE.get(type(node))
        if derive is None:
            raise NotImplementedError(type(node).__name__)
        return derive(self, node)

    def table(self, name: str) -> TableInfo:
        """The table's schema and partition keys, read once per query."""
        if name not in self._tables:
            self._tables[name] = self.source.table(name)
        return self._tables[name]

    # ---- join ---------------------------------------------------------------------------
    def _join(self, node: Join) -> NodeStats:
        left, right = self.of(node.left), self.of(node.right)
        # partition-key joins through the listing, on the sides as their nodes estimate
        # them (the transfer of ranges below keeps neither samples nor listings)
        listed = {(a, b): self._listed_join((left, right), a, b) for a, b in node.keys}
        if self.level != BASIC and node.kind in ("inner", "semi"):
            left, right = _transfer_ranges(node, left, right)
        inner, source = self._inner_join_rows(node, left, right, listed)
        precision = weakest(left.rows.precision, right.rows.precision, ESTIMATED)
        if node.residual is not None:
            combined = {**left.columns, **right.columns}
            residual, _ = selectivity(node.residual, combined, self.level)
            inner *= residual.value
        rows = inner
        if node.kind == "left":
            rows = seed_outer_join_rows(inner, left.rows.value)
        elif node.kind == "right":
            rows = seed_outer_join_rows(inner, right.rows.value)
        elif node.kind == "full":
            rows = seed_full_outer_join_rows(inner, left.rows.value, right.rows.value)
        elif node.kind in ("semi", "anti"):
            matched = self._semi_fraction(node, left, right)
            fraction = matched if node.kind == "semi" else 1.0 - matched
            rows = left.rows.value * fraction
            source = f"{node.kind}:{source}"
        columns = self._join_columns(node, left, right, rows)
        if node.kind in ("left", "right", "full") and self.level != BASIC:
            columns = _outer_nulls(node, left, right, columns, inner, rows)
        if node.kind == "inner":
            for found in listed.values():
                if found is not None:
                    columns = _matched_by_listing(columns, *found)
        if self.level == SKETCH and node.kind == "inner":
            columns = _carry_heavy_keys(node, left, right, columns, rows)
        size = left.row_size + (0.0 if node.kind in ("semi", "anti") else right.row_size)
        return NodeStats(Estimate(max(rows, 0.0), precision, source), size, columns)

    def _inner_join_rows(
        self,
        node: Join,
        left: NodeStats,
        right: NodeStats,
        listed: Mapping[tuple[ColumnRef, ColumnRef], tuple[NodeStats, ListedJoin] | None]
        | None = None,
    ) -> tuple[float, str]:
        """Rows of the inner join of the sides (after the transfer of ranges between their
        keys); `listed`: per key pair, its join through a partition listing (_listed_join)."""
        l_rows, r_rows = left.rows.value, right.rows.value
        if not node.keys:
            return l_rows * r_rows, "cross product"
        pairs = [(left.columns.get(a), right.columns.get(b)) for a, b in node.keys]
        known = [(a, b) for a, b in pairs if a is not None and b is not None]
        if self.level == BASIC or not known:
            sel = seed_join_selectivity([(a.ndv.value, b.ndv.value) for a, b in known])
            return seed_inner_join_rows([l_rows, r_rows], sel), "seed:1/max(V1,V2)"
        per_key = [
            (*self._pair_selectivity(left, right, a, b, (listed or {}).get((a, b))), a, b)
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
        # it, and the other keys only filter those matches)
        unique = any(_unique_on(left, a) or _unique_on(right, b) for _, _, a, b in per_key)
        # (nor when each side is grouped by its join keys: then the two sides' groups meet
        # as independent combinations, each at most once)
        unique = unique or (
            _grouped_by(node.left, {a for a, _ in node.keys})
            and _grouped_by(node.right, {b for _, b in node.keys})
        )
        if len(per_key) > 1 and not unique:
            sel = max(sel, floor)
            ordered = [(a, b) for _, _, a, b in per_key]
            completing = (
                _composite_completion(ordered, {**left.columns, **right.columns})
                if self.level == SKETCH
                else None
            )
            if completing is not None and per_key[0][0] * completing > sel:
                sel, source = per_key[0][0] * completing, f"{source}+composite key"
        return seed_inner_join_rows([l_rows, r_rows], sel), source

    def _pair_selectivity(
        self,
        left: NodeStats,
        right: NodeStats,
        a: ColumnRef,
        b: ColumnRef,
        found: tuple[NodeStats, ListedJoin] | None,
    ) -> tuple[float, str]:
        """The selectivity of the join key pair a = b: its join through a partition listing
        where there is one (`found`: _listed_join), else the columns' sketches and
        statistics."""
        l_rows, r_rows = left.rows.value, right.rows.value
        product = l_rows * r_rows
        if found is not None and product > 0:
            return found[1].rows / product, "partition listing x sample"
        return self._key_selectivity(left.columns[a], right.columns[b], l_rows, r_rows)

    def _listed_join(
        self, sides: tuple[NodeStats, NodeStats], a: ColumnRef, b: ColumnRef
    ) -> tuple[NodeStats, ListedJoin] | None:
        """The join of a = b through a partition key's listing and the other side's filtered
        row sample (key_lookup.listed_key_join), with that other side; None where they cannot
        say it (level sketch only)."""
        if self.level != SKETCH:
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
        self, a: ColumnEstimate, b: ColumnEstimate, l_rows: float, r_rows: float
    ) -> tuple[float, str]:
        if self.level == SKETCH and a.theta is not None and b.theta is not None:
            shared = _theta_overlap(a, b, self.intersections)
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

    def _semi_fraction(self, node: Join, left: NodeStats, right: NodeStats) -> float:
        """Share of the left rows whose keys occur on the right."""
        if not node.keys:
            return 1.0 if right.rows.value > 0 else 0.0
        a, b = left.columns.get(node.keys[0][0]), right.columns.get(node.keys[0][1])
        if a is None or b is None:
            return 0.5
        if self.level == SKETCH and a.theta is not None and b.theta is not None:
            return clamp_fraction(_theta_overlap(a, b, self.intersections) / max(a.ndv.value, 1.0))
        return clamp_fraction(min(a.ndv.value, b.ndv.value) / max(a.ndv.value, 1.0)) * (
            1.0 - a.null_fraction
        )

    def _join_columns(
        self, node: Join, left: NodeStats, right: NodeStats, rows: float
    ) -> dict[ColumnRef, ColumnEstimate]:
        if node.kind in ("semi", "anti"):
            sides = [left]
        else:
            sides = [left, right]
        columns: dict[ColumnRef, ColumnEstimate] = {}
        for position, side in enumerate(sides):
            keys = [pair[position] for pair in node.keys]
            thinned = (
                _thinned_with_keys(side, keys, rows)
                if self.level == SKETCH and node.kind in ("inner", "semi")
                else {}
            )
            for ref, column in side.columns.items():
                column = thinned.get(ref, column)
                if column.sampled is not None:  # the sample shows the scan's rows, not these
                    column = replace(column, sampled=None)
                if self.level != BASIC and column.ndv.value > rows:
                    share = rows / column.ndv.value  # of its distinct values, at most these
                    column = replace(
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
                    if self.level == BASIC
                    else min(left_ndv, right_ndv)  # a key in the output matched both sides
                )
                # each key's values are the other's: both in the sets semi joins put either in
                within = _merged(columns[a].within, columns[b].within)
                for ref in (a, b):
                    columns[ref] = replace(
                        columns[ref], ndv=Estimate(ndv, ESTIMATED, "join key"), within=within
                    )
            elif a in columns and b in right.columns and node.kind == "semi":
                # a semi join keeps only keys the right side has: at most its distinct count,
                # and only values of the sets holding the right key's
                kept = right.columns[b].ndv.value
                if self.level != BASIC and columns[a].ndv.value > kept:
                    capped = Estimate(kept, ESTIMATED, "semi join key")
                    columns[a] = replace(columns[a], ndv=capped)
                within = _merged(columns[a].within, right.columns[b].containers())
                columns[a] = replace(columns[a], within=within)
        return columns


def _thinned_with_keys(
    side: NodeStats, keys: list[ColumnRef], rows: float
) -> dict[ColumnRef, ColumnEstimate]:
    """A join keeping `rows` of a side's rows through its key columns `keys`: a column of
    the side that determines a key (its rows with one value share one key value, as a
    ticket's items share its date, store and customer; key_lookup.determines, on the row
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
            result[ref] = replace(
                column,
                ndv=Estimate(ndv, ESTIMATED, "determines the join key"),
                theta_share=column.theta_share * ndv / column.ndv.value,
            )
    return result


def _matched_by_listing(
    columns: dict[ColumnRef, ColumnEstimate], other: NodeStats, found: ListedJoin
) -> dict[ColumnRef, ColumnEstimate]:
    """After a join through a partition listing: the other side's columns keep the distinct
    values of its sampled rows that met a listed key (a calendar's years narrowed to those
    the fact table's partitions cover), counted exactly where the sample holds every row,
    else scaled by the share of the sample's distinct values they keep."""
    assert other.sample is not None
    scan = other.sample
    narrowed = ScanSample(scan.alias, scan.load, found.matched, scan.every_partition)
    loaded = scan.load()
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
            column = replace(column, ndv=Estimate(max(ndv, 1.0), ESTIMATED, "listing x sample"))
        result[ref] = replace(column, origin=(narrowed, column.origin[1]))
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
                result[ref] = replace(column, null_fraction=nulls)
    return result


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


def _transfer_ranges(node: Join, left: NodeStats, right: NodeStats) -> tuple[NodeStats, NodeStats]:
    """Transitive predicates: a = b and b restricted to [lo, hi] imply a in [lo, hi]. Both
    join keys are narrowed to the intersection of their ranges (each side's rows scaled by
    the fraction of its own distribution inside it), so that a filter on a dimension key
    also filters the fact rows that can match, skew included."""
    for a, b in node.keys:
        column_a, column_b = left.columns.get(a), right.columns.get(b)
        if column_a is None or column_b is None:
            continue
        if column_b.values is not None and column_a.values is None:
            left = _narrowed_to_values(left, a, column_a, column_b.values)
            continue
        if column_a.values is not None and column_b.values is None:
            right = _narrowed_to_values(right, b, column_b, column_a.values)
            continue
        (low_a, high_a), (low_b, high_b) = _bounds(column_a), _bounds(column_b)
        if None in (low_a, high_a, low_b, high_b):
            continue
        assert low_a is not None and low_b is not None and high_a is not None
        assert high_b is not None
        low, high = max(low_a, low_b), min(high_a, high_b)
        if (low, high) == (low_a, high_a) == (low_b, high_b):
            continue
        left = _narrowed(left, a, column_a, column_b, low, high)
        right = _narrowed(right, b, column_b, column_a, low, high)
    return left, right


def _narrowed_to_values(
    side: NodeStats, ref: ColumnRef, target: ColumnEstimate, values: tuple[Any, ...]
) -> NodeStats:
    """a = b and b IN (v1, ..., vn) imply a IN (v1, ..., vn): the side keeps the rows of
    those values (each its heavy-hitter count, or the average of the others)."""
    fractions = {v: equality_fraction(target, v).value for v in values}
    fraction = clamp_fraction(sum(fractions.values()))
    rows = side.rows.value * fraction
    present = [v for v, f in fractions.items() if f > 0]
    codes = [c for c in (encode(v) for v in present) if c is not None]
    ndv = float(min(len(present), target.ndv.value, max(rows, 0.0)))
    narrowed = replace(
        target,
        ndv=Estimate(max(ndv, 0.0), ESTIMATED, "transitive values"),
        mcv=tuple((v, f / fraction) for v, f in fractions.items() if f > 0 and fraction > 0),
        null_fraction=0.0,
        values=tuple(present),
        restrict=(min(codes), max(codes)) if codes else target.restrict,
        theta_share=target.theta_share * (ndv / target.ndv.value if target.ndv.value else 1.0),
    )
    return _side_with(side, ref, narrowed, rows, "transitive values")


def _side_with(
    side: NodeStats, ref: ColumnRef, narrowed: ColumnEstimate, rows: float, source: str
) -> NodeStats:
    """The side with its join key narrowed to `rows` rows; no other column keeps more
    distinct values than rows."""
    columns = {}
    for key, column in side.columns.items():
        if key == ref:
            column = narrowed
        elif column.ndv.value > max(rows, 1.0):
            column = replace(column, ndv=Estimate(max(rows, 1.0), ESTIMATED, "capped:rows"))
        columns[key] = column
    return NodeStats(Estimate(rows, ESTIMATED, source), side.row_size, columns, side.sample)


def _carry_heavy_keys(
    node: Join,
    left: NodeStats,
    right: NodeStats,
    columns: dict[ColumnRef, ColumnEstimate],
    rows: float,
) -> dict[ColumnRef, ColumnEstimate]:
    """The join-key candidates of a side whose key is (nearly) unique, redistributed by the
    other side's heavy keys (optimizer.estimate.key_lookup)."""
    result = dict(columns)
    for a, b in node.keys:
        for heavy_side, unique_side, heavy_ref, unique_ref in (
            (left, right, a, b),
            (right, left, b, a),
        ):
            result.update(_carried(heavy_side, unique_side, heavy_ref, unique_ref, result))
            result.update(_surviving(heavy_side, unique_side, heavy_ref, unique_ref, result, rows))
    return result


def _unique_scan_key(side: NodeStats, ref: ColumnRef) -> tuple[ScanSample, ColumnEstimate] | None:
    """The side's row sample and its join key `ref`, when the side is one scan (with a
    sample) and the key is (nearly) unique on it."""
    key, sample = side.columns.get(ref), side.sample
    if key is None or sample is None or sample.alias != ref[0]:
        return None
    if key.ndv.value < NEARLY_UNIQUE * side.rows.value:
        return None
    return sample, key


def _surviving(
    heavy_side: NodeStats,
    unique_side: NodeStats,
    heavy_ref: ColumnRef,
    unique_ref: ColumnRef,
    columns: dict[ColumnRef, ColumnEstimate],
    rows: float,
) -> dict[ColumnRef, ColumnEstimate]:
    """The heavy side's join-key candidates keep the heavy values whose rows find a row of
    the unique side (optimizer.estimate.key_lookup.surviving_mcvs)."""
    mine, unique = heavy_side.sample, _unique_scan_key(unique_side, unique_ref)
    if mine is None or unique is None or mine.alias != heavy_ref[0] or rows <= 0:
        return {}
    theirs, _ = unique
    targets = {
        ref[1]: columns[ref].mcv
        for ref, column in heavy_side.columns.items()
        if ref[0] == mine.alias and column.theta is not None and ref in columns and columns[ref].mcv
    }
    if not targets:
        return {}
    scale = heavy_side.rows.value / rows
    survived = surviving_mcvs(mine, heavy_ref[1], theirs, unique_ref[1], targets, scale)
    return {
        (mine.alias, name): replace(columns[(mine.alias, name)], mcv=mcvs)
        for name, mcvs in survived.items()
    }


def _carried(
    heavy_side: NodeStats,
    unique_side: NodeStats,
    heavy_ref: ColumnRef,
    unique_ref: ColumnRef,
    columns: dict[ColumnRef, ColumnEstimate],
) -> dict[ColumnRef, ColumnEstimate]:
    """The unique side's join-key candidates take the joined rows' distribution
    (optimizer.estimate.key_lookup.carried_mcvs)."""
    heavy_key, unique = heavy_side.columns.get(heavy_ref), _unique_scan_key(unique_side, unique_ref)
    if heavy_key is None or unique is None or not heavy_key.mcv:
        return {}
    sample, unique_key = unique
    rows = heavy_side.rows.value
    heavy = {v: f * rows for v, f in heavy_key.mcv}
    rest = rows * max(0.0, 1.0 - heavy_key.null_fraction - heavy_key.mcv_total())
    rest_per_key = rest / max(heavy_key.ndv.value - len(heavy), 1.0)
    targets = {
        ref[1]: column.type
        for ref, column in unique_side.columns.items()
        if ref[0] == sample.alias
        and ref != unique_ref
        and column.theta is not None
        and ref in columns
    }
    if not targets:
        return {}
    carried = carried_mcvs(sample, unique_ref[1], heavy, rest_per_key, targets, unique_key.restrict)
    return {
        (sample.alias, name): replace(columns[(sample.alias, name)], mcv=mcvs, tail=1.0)
        for name, mcvs in carried.items()
    }


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
            origins = {id(c.origin[0]) for c in known if c.origin is not None}
            sampled = known[0].origin if len(origins) == 1 and known[0].origin else None
            names = tuple(c.origin[1] for c in known) if sampled is not None else ()
            is_key.append(key_in_sample(sampled[0], names) if sampled is not None else None)
    return composite_key_completion(sides, is_key)


def _bounds(column: ColumnEstimate) -> tuple[float | None, float | None]:
    low, high = encode(column.low), encode(column.high)
    lo, hi = column.restrict
    if lo is not None:
        low = lo if low is None else max(low, lo)
    if hi is not None:
        high = hi if high is None else min(high, hi)
    return low, high


def _narrowed(
    side: NodeStats,
    ref: ColumnRef,
    target: ColumnEstimate,
    other: ColumnEstimate,
    low: float,
    high: float,
) -> NodeStats:
    own_low, own_high = _bounds(target)
    inside = own_low is not None and own_high is not None and low <= own_low <= own_high <= high
    above = 0.0 if inside else _cdf_or_none(target, low, False)
    below = 1.0 if inside else _cdf_or_none(target, high, True)
    if above is None or below is None:
        return side
    fraction = clamp_fraction(below - above) if high >= low else 0.0
    if not inside and low == high and other.low is not None and target.points is None:
        fraction = equality_fraction(target, other.low).value  # a point: MCV or 1/NDV
    elif not inside and target.kll is not None and fraction < 2 * KLL_RANK_ERROR:
        fraction = narrow_range(target, low, high, fraction)
    rows = side.rows.value * fraction
    # distinct values inside the range: the range's share of the column's value domain
    domain = 1.0
    if own_low is not None and own_high is not None and own_high > own_low:
        domain = clamp_fraction((min(high, own_high) - max(low, own_low)) / (own_high - own_low))
    ndv = max(1.0, min(target.ndv.value * domain, rows)) if rows > 0 else 0.0
    share = ndv / target.ndv.value if target.ndv.value else 1.0
    kept = tuple(
        (v, f / fraction)
        for v, f in target.mcv
        if fraction > 0 and (code := encode(v)) is not None and low <= code <= high
    )
    narrowed = replace(
        target,
        restrict=(low, high),
        ndv=Estimate(ndv, ESTIMATED, "transitive range"),
        mcv=kept,
        null_fraction=0.0,
        theta_share=target.theta_share * share,
    )
    return _side_with(side, ref, narrowed, rows, "transitive range")


def _cdf_or_none(column: ColumnEstimate, code: float, inclusive: bool) -> float | None:
    value = column.cdf(code, inclusive)
    return value if value is not None else column.linear_cdf(code)


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


def _theta_overlap(
    a: ColumnEstimate, b: ColumnEstimate, intersections: dict[tuple[Any, Any], float]
) -> float:
    """Distinct keys present on both sides: the Theta intersection of the sources, scaled by
    the share of each side's distinct values its filters kept: independently, except when
    both were narrowed to the same range (then the smaller share), or a semi join restricted
    one side to a key set holding the other's values (then independently within that set)."""
    if a.values is not None and b.values is not None:  # both known value sets
        return float(min(len(set(a.values) & set(b.values)), a.ndv.value, b.ndv.value))
    common = _common_key_set(a, b)
    if common is not None:
        return _overlap_within(a.ndv.value, b.ndv.value, common.ndv)
    shared = _theta_intersection(a.theta, b.theta, intersections)
    if a.restrict == b.restrict and a.restrict != (None, None):
        # both narrowed to one range
        # the range's keys of the smaller side are contained in the other's as much as the
        # sources' keys were; filters on other columns then keep their shares independently
        containment = shared / max(min(a.theta.get_estimate(), b.theta.get_estimate()), 1.0)
        other_a, other_b = _other_share(a), _other_share(b)
        in_range = min(a.ndv.value / other_a, b.ndv.value / other_b)
        return float(in_range * min(1.0, containment) * other_a * other_b)
    # never more shared keys than either side has distinct values
    return min(shared * a.theta_share * b.theta_share, a.ndv.value, b.ndv.value)


def _theta_intersection(a: Any, b: Any, intersections: dict[tuple[Any, Any], float]) -> float:
    """The estimated distinct values two Theta sketches share, kept per pair in
    `intersections` (a StatsQuery's: a join order search asks for the same pair many times;
    kept no longer than the query's estimates, so the sketches of statistics the cache
    dropped are not kept alive beyond its bound)."""
    from datasketches import theta_intersection

    found = intersections.get((a, b))
    if found is None:
        intersection = theta_intersection()
        intersection.update(a)
        intersection.update(b)
        found = intersections[(a, b)] = float(intersection.get_result().get_estimate())
    return found


def _common_key_set(a: ColumnEstimate, b: ColumnEstimate) -> KeySet | None:
    """The smallest key set holding both columns' values, where a semi join put one of them
    there. Two scans filtered alike are left to the sketches: their keys are one set, but
    TPC-H q21's semi and anti joins between such scans also compare other columns, which a
    fraction of shared keys does not see."""
    shared = [k for k in a.within if any(k.holds(c) for c in b.containers())]
    shared += [k for k in b.within if any(k.holds(c) for c in a.containers())]
    return min(shared, key=lambda k: k.ndv, default=None)


def _merged(first: tuple[KeySet, ...], second: tuple[KeySet, ...]) -> tuple[KeySet, ...]:
    return first + tuple(k for k in second if k not in first)


def _overlap_within(ndv_a: float, ndv_b: float, ndv_set: float) -> float:
    """Distinct values common to two subsets of one set of `ndv_set` values, each spread
    over it independently of the other (never more than either side has)."""
    return min(ndv_a * ndv_b / max(ndv_set, ndv_a, ndv_b, 1.0), ndv_a, ndv_b)


def _other_share(column: ColumnEstimate) -> float:
    """The share of the source's distinct values left by filters other than the column's
    range restriction (its theta share over the range's share of its [min, max])."""
    low, high = encode(column.low), encode(column.high)
    lo, hi = column.restrict
    in_range = 1.0
    if low is not None and high is not None and lo is not None and hi is not None:
        if high > low:
            in_range = clamp_fraction((min(hi, high) - max(lo, low)) / (high - low))
    if in_range <= 0:
        return 1.0
    return max(min(1.0, column.theta_share / in_range), 1e-9)


_DERIVE: dict[type[Node], Callable[[StatsQuery, Any], NodeStats]] = {
    Scan: scan.derive,
    Filter: filter_.derive,
    Project: project.derive,
    Window: window.derive,
    Sort: limit_sort.derive_sort,
    Limit: limit_sort.derive_limit,
    Aggregate: aggregate.derive,
    Union: union.derive,
    Join: StatsQuery._join,
}
