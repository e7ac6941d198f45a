"""Transitive predicates across an inner or semi join's keys (levels `histogram` and
`sketch`): a = b and b restricted to [lo, hi] (or to a list of values) imply the same of a,
so each side's rows and key are narrowed to what can match before the join's rows are
estimated (docs/design.md#join-cardinality)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from metastore.statistics.samples import Sample
from optimizer.estimate.column import ColumnEstimate, changed, encode, equality_fraction
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.predicates import KLL_RANK_ERROR, narrow_range
from optimizer.estimate.sample_distinct import distinct_in
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.values import ESTIMATED, Estimate, clamp_fraction
from optimizer.plan import ColumnRef, Join

MIN_SAMPLED_ROWS = 30  # kept sampled rows a filtered column's share in a range is read from


def transfer_ranges(node: Join, left: NodeStats, right: NodeStats) -> tuple[NodeStats, NodeStats]:
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
        assert low_a is not None
        assert low_b is not None
        assert high_a is not None
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
    narrowed = changed(
        target,
        ndv=Estimate(max(ndv, 0.0), ESTIMATED, "transitive values"),
        mcv=tuple((v, f / fraction) for v, f in fractions.items() if f > 0 and fraction > 0),
        null_fraction=0.0,
        values=tuple(present),
        restrict=(min(codes), max(codes)) if codes else target.restrict,
        theta_share=target.theta_share * (ndv / target.ndv.value if target.ndv.value else 1.0),
    )
    return _side_with(side, ref, narrowed, rows, "transitive values")


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
    # distinct values inside the range: the range's share of the column's value domain
    domain = 1.0
    if own_low is not None and own_high is not None and own_high > own_low:
        domain = clamp_fraction((min(high, own_high) - max(low, own_low)) / (own_high - own_low))
    if not inside:
        sampled = _filtered_sample_share(target, low, high)
        if sampled is not None:  # a filter on another column moved the values
            fraction, domain = sampled
    rows = side.rows.value * fraction
    ndv = max(1.0, min(target.ndv.value * domain, rows)) if rows > 0 else 0.0
    share = ndv / target.ndv.value if target.ndv.value else 1.0
    kept = tuple(
        (v, f / fraction)
        for v, f in target.mcv
        if fraction > 0 and (code := encode(v)) is not None and low <= code <= high
    )
    narrowed = changed(
        target,
        restrict=(low, high),
        ndv=Estimate(ndv, ESTIMATED, "transitive range"),
        mcv=kept,
        null_fraction=0.0,
        theta_share=target.theta_share * share,
    )
    return _side_with(side, ref, narrowed, rows, "transitive range")


def _filtered_sample_share(
    target: ColumnEstimate, low: float, high: float
) -> tuple[float, float] | None:
    """Where a filter on its scan's other columns kept the column's values (a calendar's
    keys of two years), the column's source distribution no longer says which of them
    fall in [low, high]: the filtered row sample does. The share of the kept sampled rows
    (by weight) and of their distinct values inside the range; None without a filtered
    sample of the column's numbers, or with fewer than MIN_SAMPLED_ROWS kept."""
    if target.origin is None:
        return None
    scan, name = target.origin
    if scan.passed is None:
        return None
    key = ("range share", name, low, high)  # each join order weighed asks again
    if key not in scan.memo:
        scan.memo[key] = _kept_range_share(scan, name, low, high)
    return scan.memo[key]  # type: ignore[no-any-return]


def _kept_range_share(
    scan: ScanSample, name: str, low: float, high: float
) -> tuple[float, float] | None:
    """`_sampled_range_share`, kept with the sample under the kept rows' fingerprint (a
    digest of the mask's bits): a plan asked again (a dashboard's) reads it, not counts the
    sample again."""
    loaded = scan.rows()
    if loaded is None or not loaded[0].numeric(name):
        return None
    sample, passed = loaded
    kept = hashlib.blake2b(np.packbits(passed).tobytes(), digest_size=16).digest()
    return sample.derived(
        ("range share", name, low, high, passed.size, kept),
        lambda: _sampled_range_share(sample, passed, name, low, high),
    )


def _sampled_range_share(
    sample: Sample, passed: np.ndarray, name: str, low: float, high: float
) -> tuple[float, float] | None:
    if int(passed.sum()) < MIN_SAMPLED_ROWS:
        return None
    values = sample.columns[name]
    inside = passed & (values >= low) & (values <= high)
    weights = sample.weights
    total = float(weights[passed].sum())
    before = distinct_in(sample, passed, name)
    if total <= 0 or not before:
        return None
    return float(weights[inside].sum()) / total, (distinct_in(sample, inside, name) or 0) / before


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
            column = changed(column, ndv=Estimate(max(rows, 1.0), ESTIMATED, "capped:rows"))
        columns[key] = column
    return NodeStats(Estimate(rows, ESTIMATED, source), side.row_size, columns, side.sample)


def _bounds(column: ColumnEstimate) -> tuple[float | None, float | None]:
    low, high = encode(column.low), encode(column.high)
    lo, hi = column.restrict
    if lo is not None:
        low = lo if low is None else max(low, lo)
    if hi is not None:
        high = hi if high is None else min(high, hi)
    return low, high


def _cdf_or_none(column: ColumnEstimate, code: float, inclusive: bool) -> float | None:
    value = column.cdf(code, inclusive)
    return value if value is not None else column.linear_cdf(code)
