"""A UNION's estimates: UNION ALL the sum of its inputs' rows, each column the largest
distinct count of its inputs (docs/design.md#distinct-values) or the union of their values
where every input lists them, kept as a share of the inputs' source column's values where
they have one (one Theta sketch) for the joins above (a CTE's yearly totals joined to each
other on the customer), and the inputs' numeric bounds; its most-common values each
input's by its share of the rows (docs/estimator.md: `_union_mcvs`); UNION (distinct) at
most the product of its columns' distinct counts."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from optimizer.estimate.column import ColumnEstimate, encode, is_number, unknown_column
from optimizer.estimate.key_degrees import NOT_KNOWN
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.sources import MCV_LIMIT
from optimizer.estimate.values import ESTIMATED, Estimate, weakest
from optimizer.plan import Union

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery


def derive(stats: StatsQuery, node: Union) -> NodeStats:
    parts = [stats.of(child) for child in node.inputs]
    total = sum(p.rows.value for p in parts)
    columns = {}
    for position, ref in enumerate(node.names):
        sides = [
            p.columns.get(child.output()[position])
            for p, child in zip(parts, node.inputs, strict=True)
        ]
        known = [s for s in sides if s is not None]
        ndv = Estimate(max((s.ndv.value for s in known), default=total), ESTIMATED, "seed:max(V)")
        theta, theta_share = _shared_source(known, len(sides), ndv.value)
        base = known[0] if known else unknown_column(total)
        values = None
        if known and len(known) == len(sides) and all(s.values is not None for s in known):
            values = tuple(dict.fromkeys(v for s in known for v in s.values or ()))
            ndv = Estimate(float(max(len(values), 1)), ESTIMATED, "union of values")
        columns[ref] = replace(
            base,
            ndv=ndv,
            mcv=_union_mcvs(sides, [p.rows.value for p in parts], total),
            values=values,
            low=_extreme([s.low if s else None for s in sides], min)
            if values is None
            else base.low,
            high=_extreme([s.high if s else None for s in sides], max)
            if values is None
            else base.high,
            kll=None,
            theta=theta,
            theta_share=theta_share,
            key_set=None,  # the union's values are those of every input
            within=(),
            # every input reads the same column (of its own scan): the first input's
            # sample stands for them in counts of correlated grouping columns
            origin=base.origin if _same_origin_name(known, len(sides)) else None,
            sampled=None,
            degrees=NOT_KNOWN,  # the first input's sample does not weigh the others' rows
        )
        if values is not None:
            codes = [c for c in (encode(v) for v in values) if c is not None]
            if len(codes) == len(values) and codes:
                low = min(values, key=lambda v: encode(v) or 0.0)
                high = max(values, key=lambda v: encode(v) or 0.0)
                columns[ref] = replace(columns[ref], low=low, high=high, restrict=(None, None))
    rows = Estimate(total, weakest(*(p.rows.precision for p in parts)), "union all: sum")
    if node.distinct:
        distinct = min(total, math.prod(max(c.ndv.value, 1.0) for c in columns.values()))
        rows = Estimate(distinct, ESTIMATED, "union: distinct rows")
    row_size = sum(p.row_size for p in parts) / max(len(parts), 1)  # the inputs' average
    return NodeStats(rows, row_size, columns)


def _extreme(bounds: list[Any], pick: Callable[..., Any]) -> float | None:
    """The lowest (highest) of the inputs' numeric bounds, where every input has one."""
    if not bounds or not all(is_number(b) for b in bounds):
        return None
    return float(pick(bounds))


def _shared_source(known: list[ColumnEstimate], inputs: int, ndv: float) -> tuple[Any, float]:
    """Where every input's column holds values of one source column (one Theta sketch, as
    CTE branches grouping one dimension's key): that sketch, and the share of its values
    the union's `ndv` distinct values are; else (None, 1.0)."""
    if len(known) != inputs or not known or known[0].theta is None:
        return None, 1.0
    theta = known[0].theta
    if any(c.theta is not theta for c in known):
        return None, 1.0
    return theta, min(1.0, ndv / max(theta.get_estimate(), 1.0))


def _same_origin_name(known: list[ColumnEstimate], inputs: int) -> bool:
    names = {c.origin[1] if c.origin is not None else None for c in known}
    return len(known) == inputs and len(names) == 1 and None not in names


def _union_mcvs(
    sides: list[ColumnEstimate | None], rows: list[float], total: float
) -> tuple[tuple[Any, float], ...]:
    """A UNION ALL column's most-common values: each input's, weighted by its share of the
    rows (a constant column such as `'store' AS channel` is one value per input)."""
    if total <= 0 or any(s is None for s in sides):
        return ()
    merged: dict[Any, float] = {}
    for side, count in zip(sides, rows, strict=True):
        assert side is not None
        for value, fraction in side.mcv:
            merged[value] = merged.get(value, 0.0) + fraction * count / total
    ordered = sorted(merged.items(), key=lambda item: -item[1])
    return tuple(ordered[:MCV_LIMIT])
