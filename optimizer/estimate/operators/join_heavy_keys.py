"""Heavy join keys carried through an inner join (level `sketch`): where one side's key is
(nearly) unique on its scan, its other join-key candidates take the joined rows'
distribution (the other side's heavy keys), and the heavy side keeps the heavy values whose
rows find a row of the unique side (optimizer.estimate.heavy_keys_surviving and
heavy_keys_carried, on the row samples; docs/design.md#join-cardinality)."""

from __future__ import annotations

from optimizer.estimate.column import ColumnEstimate, changed
from optimizer.estimate.heavy_keys_carried import carried_mcvs
from optimizer.estimate.heavy_keys_surviving import surviving_mcvs
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.selectivity import NEARLY_UNIQUE
from optimizer.plan import ColumnRef, Join


def carry_heavy_keys(
    node: Join,
    left: NodeStats,
    right: NodeStats,
    columns: dict[ColumnRef, ColumnEstimate],
    rows: float,
) -> dict[ColumnRef, ColumnEstimate]:
    """The join-key candidates of a side whose key is (nearly) unique, redistributed by the
    other side's heavy keys (optimizer.estimate.heavy_keys_surviving)."""
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
    the unique side (heavy_keys_surviving.surviving_mcvs)."""
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
        (mine.alias, name): changed(columns[(mine.alias, name)], mcv=mcvs)
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
    (heavy_keys_carried.carried_mcvs)."""
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
        (sample.alias, name): changed(columns[(sample.alias, name)], mcv=mcvs, tail=1.0)
        for name, mcvs in carried.items()
    }
