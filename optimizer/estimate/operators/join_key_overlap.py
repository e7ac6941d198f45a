"""The distinct join keys two sides share (level `sketch`): the Theta intersection of the
keys' source sketches, scaled by the share of each side's distinct values its filters kept,
or counted within a key set a semi join put one side's keys in
(docs/design.md#join-cardinality)."""

from __future__ import annotations

from typing import Any

from datasketches import theta_intersection

from optimizer.estimate.column import ColumnEstimate, KeySet, encode
from optimizer.estimate.values import clamp_fraction


def theta_overlap(
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
    if low is not None and high is not None and lo is not None and hi is not None and high > low:
        in_range = clamp_fraction((min(hi, high) - max(lo, low)) / (high - low))
    if in_range <= 0:
        return 1.0
    return max(min(1.0, column.theta_share / in_range), 1e-9)
