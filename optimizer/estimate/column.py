"""What the estimator knows about one column of a plan node's output.

Distributions are kept as the base table's merged sketches plus a restriction: after
`x >= 10` the column's values are the KLL distribution conditioned on [10, +inf), so a
second conjunct `x < 20` costs P(10 <= x < 20) / P(x >= 10), not an independent guess.
Values are compared through an order-preserving numeric encoding (dates as days, timestamps
as microseconds since the epoch, strings by their first bytes), the one the KLL sketches
were built with.
"""

from __future__ import annotations

import datetime as dt
import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any

from metastore.statistics.samples import as_number
from optimizer.estimate.values import DEFAULT, ESTIMATED, Estimate

EPOCH = dt.datetime(1970, 1, 1)
STRING_PREFIX_BYTES = 8


def encode(value: Any) -> float | None:
    """The order-preserving numeric form of a value (None when it has none)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float | Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return (value.replace(tzinfo=None) - EPOCH) / dt.timedelta(microseconds=1)
    if isinstance(value, dt.date):
        return float((value - EPOCH.date()).days)
    if isinstance(value, str):
        return encode_string(value)
    return None


def is_number(value: Any) -> bool:
    """Whether a bound is a number (not a date, a string or a boolean)."""
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def encode_string(text: str) -> float:
    """Strings in [0, 1): the first bytes as base-256 digits (order-preserving on them)."""
    total, scale = 0.0, 1.0
    for byte in text.encode()[:STRING_PREFIX_BYTES]:
        scale /= 256.0
        total += byte * scale
    return total


@dataclass(frozen=True, eq=False)
class SampledColumn:
    """A scan column in the table's row sample, per value the share of its sampled rows the
    scan's filter kept (for heavy join keys: a hot key the filter drops matches nothing), and
    the column as it was before the filter."""

    # per value (a double or a string), the share of its sampled rows the filter kept; None
    # when no sampled row holds it (optimizer.estimate.kept_values.KeptShares)
    kept_share: Callable[[Any], float | None]
    before: ColumnEstimate
    rows_before: float
    # kept_rows per value (and its type): every join estimate the column meets asks again
    _kept: dict[tuple[type, Any], float | None] = field(
        default_factory=dict, compare=False, repr=False
    )

    def kept_rows(self, value: Any) -> float | None:
        """Rows with `value` after the filter: its rows before, times the share of its
        sampled rows the filter kept; None when the sample has no row with it."""
        key = (type(value), value)
        if key not in self._kept:
            self._kept[key] = self._count_kept(value)
        return self._kept[key]

    def _count_kept(self, value: Any) -> float | None:
        try:
            probe = value if isinstance(value, str) else as_number(value)
        except TypeError:
            return None
        if probe is None:
            return None
        share = self.kept_share(probe)
        if share is None:
            return None
        return equality_fraction(self.before, value).value * self.rows_before * share


@dataclass(frozen=True)
class KeySet:
    """The distinct values of a table's column under the conjuncts filtering its scan, written
    without their table qualifiers (two scans of a table filtered alike name one set), and
    their estimated count. A semi join's left key holds only values of its right key's set."""

    table: str
    column: str
    conditions: frozenset[str]
    ndv: float = field(default=0.0, compare=False)

    def holds(self, other: KeySet) -> bool:
        """Every value of `other` is one of this set's: the same column under at least this
        set's conditions."""
        return (self.table, self.column) == (other.table, other.column) and (
            self.conditions <= other.conditions
        )


@dataclass(frozen=True)
class ColumnEstimate:
    type: str
    ndv: Estimate
    null_fraction: float = 0.0
    low: Any = None
    high: Any = None
    mcv: tuple[tuple[Any, float], ...] = ()  # (value, fraction of the node's rows)
    kll: Any = None  # distribution of the non-null values of the source
    restrict: tuple[float | None, float | None] = (None, None)  # encoded [lo, hi]
    theta: Any = None  # distinct values of the source, for join-key overlap
    theta_share: float = 1.0  # fraction of the source's distinct values still present
    width: float = 8.0  # average bytes per value
    # typical over average frequency of a value outside the MCVs (optimizer.estimate.tail)
    tail: float = 1.0
    # a group key after its GROUP BY: the MCVs count the input's rows, not the groups, so a
    # join does not take them as its rows' (operators.join._joined_mcv)
    grouped: bool = False
    source_rows: float = 0.0  # rows of the table the column was read from (0: unknown)
    # distinct (partition, value) pairs among those rows: the partitions' distinct counts
    # summed (0: unknown; optimizer.estimate.partition_groups)
    partition_distinct: float = 0.0
    # an exact distribution (partition keys): sorted encoded values, cumulative fractions
    points: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    # the only values left after `=` or IN (None: not restricted to a known set)
    values: tuple[Any, ...] | None = None
    # how a filter on the scan treated this column's values, seen in the row sample
    sampled: SampledColumn | None = field(default=None, compare=False, repr=False)
    key_set: KeySet | None = None  # the set of the scan's values (filters on the scan only)
    within: tuple[KeySet, ...] = ()  # sets known to hold every value (semi joins)
    # (ScanSample, column name): the row sample of the scan the values come from, and which
    # sampled rows its filter kept; kept through joins (group counts of correlated columns)
    origin: Any = field(default=None, compare=False, repr=False)
    # a join key's rows per value (optimizer.estimate.key_degrees): a KeyDegrees its join
    # carried, NOT_KNOWN, or None (its scan's, through `origin`)
    degrees: Any = field(default=None, compare=False, repr=False)

    def containers(self) -> tuple[KeySet, ...]:
        """The key sets holding every value of the column: its own, and those semi joins
        restricted it to."""
        own = (self.key_set,) if self.key_set is not None else ()
        return own + self.within

    @property
    def is_string(self) -> bool:
        return self.type == "string" or self.type.startswith(("varchar", "char"))

    def mcv_total(self) -> float:
        return sum(f for _, f in self.mcv)

    def cdf(self, value: float, inclusive: bool) -> float | None:
        """P(x < value) (or <=) among the non-null values, from KLL, within the restriction;
        None without a KLL sketch."""
        if self.points is not None:
            rank: Callable[[float, bool], float] = self._exact_rank
        elif self.kll is None or self.kll.is_empty():
            return None
        else:
            rank = self.kll.get_rank
        lo, hi = self.restrict
        if lo is not None and value < lo:
            return 0.0
        if hi is not None and value > hi:
            return 1.0
        base = rank(value, inclusive)
        floor = rank(lo, False) if lo is not None else 0.0
        ceiling = rank(hi, True) if hi is not None else 1.0
        mass = ceiling - floor
        if mass <= 0:  # the sketch kept nothing inside the restriction: no shape to use
            return None
        return min(1.0, max(0.0, (base - floor) / mass))

    def _exact_rank(self, value: float, inclusive: bool) -> float:
        assert self.points is not None
        codes, cumulative = self.points
        position = (bisect_right if inclusive else bisect_left)(codes, value)
        return cumulative[position - 1] if position else 0.0

    def linear_cdf(self, value: float) -> float | None:
        """P(x < value) assuming values spread evenly between min and max (no sketch)."""
        low, high = encode(self.low), encode(self.high)
        if low is None or high is None:
            return None
        lo, hi = self.restrict
        low = max(low, lo) if lo is not None else low
        high = min(high, hi) if hi is not None else high
        if high <= low:
            return 0.0 if value <= low else 1.0
        return min(1.0, max(0.0, (value - low) / (high - low)))

    def restricted(self, lo: float | None, hi: float | None) -> ColumnEstimate:
        old_lo, old_hi = self.restrict
        new_lo = lo if old_lo is None else (old_lo if lo is None else max(lo, old_lo))
        new_hi = hi if old_hi is None else (old_hi if hi is None else min(hi, old_hi))
        return changed(self, restrict=(new_lo, new_hi))


_COLUMN_FIELDS = frozenset(f.name for f in fields(ColumnEstimate))


def changed(column: ColumnEstimate, **changes: Any) -> ColumnEstimate:
    """`dataclasses.replace(column, **changes)` without a call of `__init__` over the
    column's twenty fields (the estimator makes thousands of changed columns per plan, each
    join's columns again for every join order it weighs); the same fields are checked."""
    unknown = changes.keys() - _COLUMN_FIELDS
    if unknown:
        raise TypeError(f"ColumnEstimate has no field {sorted(unknown)[0]!r}")
    result = object.__new__(ColumnEstimate)
    result.__dict__.update(column.__dict__)
    result.__dict__.update(changes)
    return result


def unknown_column(rows: float, type_: str = "unknown") -> ColumnEstimate:
    """A column nothing is known about: as many distinct values as rows (a named default)."""
    return ColumnEstimate(type_, Estimate(max(1.0, rows), DEFAULT, "default:ndv=rows"))


def distinct_after_sampling(ndv: float, rows_before: float, rows_after: float) -> float:
    """Expected distinct values left when rows_after of rows_before rows survive a filter
    that does not look at the column (Cardenas 1975; each value has rows/ndv copies)."""
    if ndv <= 0 or rows_before <= 0:
        return 0.0
    keep = min(1.0, max(0.0, rows_after / rows_before))
    copies = rows_before / ndv
    return min(ndv, rows_after, ndv * (1.0 - math.pow(1.0 - keep, copies)))


def equality_fraction(column: ColumnEstimate, value: Any) -> Estimate:
    """Fraction of rows equal to `value`: its MCV frequency, zero outside [min, max], else
    the rows outside the MCVs spread over the other distinct values (on a skewed column, a
    typical value of that tail: optimizer.estimate.tail)."""
    for item, frequency in column.mcv:
        if item == value:
            return Estimate(frequency, ESTIMATED, "mcv")
    code, lo, hi = encode(value), encode(column.low), encode(column.high)
    if code is not None and lo is not None and hi is not None and not lo <= code <= hi:
        return Estimate(0.0, ESTIMATED, "outside min/max")
    restricted_lo, restricted_hi = column.restrict
    if code is not None and (
        (restricted_lo is not None and code < restricted_lo)
        or (restricted_hi is not None and code > restricted_hi)
    ):
        return Estimate(0.0, ESTIMATED, "outside range")
    rest = max(0.0, 1.0 - column.null_fraction - column.mcv_total())
    others = max(column.ndv.value - len(column.mcv), 1.0)
    source = "ndv" if not column.mcv else "mcv+ndv"
    if column.tail < 1.0:  # a skewed column: a typical value of its tail, not the average
        return Estimate(rest / others * column.tail, ESTIMATED, f"{source}+zipf tail")
    return Estimate(rest / others, column.ndv.precision, f"{source}:{column.ndv.source}")
