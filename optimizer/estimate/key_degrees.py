"""A join key's degrees: per value, the rows of a plan node that hold it (docs/estimator.md#
key-degrees). A join's rows are the sum over the key's values of the product of the two
sides' degrees, and the joined rows' degrees are those products: carried up a plan, they let
a second join on the same key meet the keys heavy in both earlier tables (a star through a
shared owner, a chain along one key), where the average rows per key multiply as if the
tables' fan-outs were independent.

A scan's degrees are read off the table's row sample: the rows the scan's filter kept, each
weighted by the rows it stands for. Products of independent samples so weighted estimate
the join without bias (Haas, Naughton, Seshadri and Swami 1996, the cross-product
estimator): a value one sample missed counts zero there, as often as it counts its weight
where drawn. After a join on one key, the other columns of the scan that key was read from
weigh each sampled row by the other side's rows holding its key (`Reweighted`): a post's
owner counts once per vote of the post after votes JOIN posts; the other side's degrees are
first drawn towards their average as far as sampling explains their spread (`shrinkage`: a
sparsely sampled even key is noise, not degrees). Two scans of one table share its sampled
rows and are not independent samples: each half of the rows (split by their content) meets
the other half (a self-join, `joined`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any, Final

import numpy as np

from metastore.statistics.samples import Sample, from_number
from optimizer.estimate.scan_sample import ScanSample, string_codes, value_codes

DEGREE_MCV_LIMIT: Final = 100  # the most common values a join key is given from its degrees
HALF_COLUMNS: Final = 6  # numeric columns a sampled row's half is hashed from


@dataclass(frozen=True, eq=False)
class KeyDegrees:
    """Per value of a join key that the samples show (`values`, sorted: doubles, or
    strings), the rows holding it; `support`, the sampled row combinations each figure
    rests on; `exact` when every sample behind it held every row of its scan; `tables`, the
    tables whose samples it comes from; `halves`, the same degrees from each half of the
    sampled rows of `half_table` (each row weighing twice), for a later join with that table
    again."""

    values: np.ndarray
    rows: np.ndarray
    support: np.ndarray
    exact: bool
    tables: frozenset[str]
    halves: tuple[np.ndarray, np.ndarray] | None = None
    half_table: str = ""

    @property
    def total(self) -> float:
        return float(self.rows.sum())

    @cached_property
    def fingerprint(self) -> int:
        """A hash of the degrees' content (equal degrees of two requests, equal hashes)."""
        halves = b"" if self.halves is None else self.halves[0].tobytes() + self.halves[1].tobytes()
        content = (self.values.tobytes(), self.rows.tobytes(), halves)
        return hash((content, self.exact, self.tables, self.half_table))

    def scaled(self, total: float) -> KeyDegrees:
        """The same shape over `total` rows."""
        own = self.total
        if own <= 0 or total == own:
            return self
        factor = total / own
        halves = None if self.halves is None else (self.halves[0] * factor, self.halves[1] * factor)
        return replace(self, rows=self.rows * factor, halves=halves)

    def shrinkage(self, ndv: float) -> tuple[float, float]:
        """How far each value's figure is to be trusted over the average, (lambda, m): the
        share of the degrees' variance across the key's `ndv` values not explained by
        sampling (a sampled row weighing w adds about m (w - 1) to a value's variance, m the
        average rows per value), and that average (James and Stein 1961; Efron and Morris
        1973). 1 for exact degrees, near 0 for a key as even as its sample is sparse."""
        values = max(ndv, float(len(self.values)), 1.0)
        mean = self.total / values
        if self.exact or mean <= 0:
            return 1.0, mean
        spread = float(np.square(self.rows).sum()) / values - mean * mean
        weight = self.total / max(float(self.support.sum()), 1.0)
        noise = mean * max(weight - 1.0, 0.0)
        if spread <= 0:
            return 0.0, mean
        return max(0.0, spread - noise) / spread, mean

    def most_common(self, rows: float, type_: str) -> tuple[tuple[Any, float], ...]:
        """The values with the most rows, as fractions of `rows`: the MCVs of a column of
        type `type_`."""
        if rows <= 0 or not len(self.rows):
            return ()
        count = min(DEGREE_MCV_LIMIT, len(self.rows))
        top = np.argpartition(-self.rows, count - 1)[:count]
        top = top[np.argsort(-self.rows[top], kind="stable")]
        return tuple(
            (_value(self.values[i], type_), min(1.0, float(self.rows[i]) / rows))
            for i in top
            if self.rows[i] > 0
        )


@dataclass(frozen=True)
class NotKnown:
    """A key column whose degrees nothing shows (after a GROUP BY, a UNION, or a join the
    degrees could not estimate): not its scan's shape either."""


NOT_KNOWN: Final = NotKnown()


@dataclass(frozen=True)
class JoinedDegrees:
    """An inner join's rows from its key's degrees, and the joined rows' degrees; `weak`
    when no sampled row met one of the other side (and the samples are not whole): its rows
    then are not to be trusted over the sketches'."""

    rows: float
    degrees: KeyDegrees
    weak: bool = False


def scan_degrees(scan: ScanSample, name: str) -> KeyDegrees | None:
    """The degrees of column `name` among the sampled rows the scan's filter kept, each
    weighted by the rows it stands for; None when the sample lacks the column or is not
    sampled as numbers or strings. Kept with the scan (each join order asks again) and with
    the sample under the kept rows' fingerprint (each request with the same filter)."""
    key = ("key degrees", name)
    if key not in scan.memo:
        loaded = scan.rows()
        table = scan.table or scan.alias
        scan.memo[key] = (
            None
            if loaded is None
            else loaded[0].derived(
                ("key degrees", name, table, kept_rows_key(scan)),
                partial(_counted, loaded[0], loaded[1], name, table),
            )
        )
    found: KeyDegrees | None = scan.memo[key]
    return found


def kept_rows_key(scan: ScanSample) -> Hashable:
    """Which of its sample's rows the scan kept, as a key (None: all of them)."""
    if scan.passed is None:
        return None
    if "kept rows key" not in scan.memo:
        passed = np.asarray(scan.passed, dtype=bool)
        scan.memo["kept rows key"] = (
            len(passed),
            int(passed.sum()),
            hash(np.packbits(passed).tobytes()),
        )
    return scan.memo["kept rows key"]  # type: ignore[no-any-return]


def _counted(sample: Sample, passed: np.ndarray, name: str, table: str) -> KeyDegrees | None:
    coded = _codes(sample, name)
    if coded is None:
        return None
    values, codes = coded
    chosen = passed & (codes >= 0)
    kept, weights = codes[chosen], sample.weights[chosen]
    support = np.bincount(kept, minlength=len(values)).astype(np.float64)
    present = support > 0
    # a numeric column's values are sorted already; a string column's dictionary is not
    order = (
        np.arange(int(present.sum()))
        if values.dtype.kind == "f"
        else np.argsort(values[present], kind="stable")
    )

    def counted(rows_weights: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.bincount(rows, weights=rows_weights, minlength=len(values))[present][order]

    exact = bool(np.all(weights == 1.0))
    halves = None
    if not exact:  # a whole sample needs no halves: its rows are the table's, each once
        second = row_halves(sample)[chosen]
        halves = (
            counted(2.0 * weights[~second], kept[~second]),
            counted(2.0 * weights[second], kept[second]),
        )
    return KeyDegrees(
        values[present][order],
        counted(weights, kept),
        support[present][order],
        exact,
        frozenset({table}),
        halves,
        "" if exact else table,
    )


def row_halves(sample: Sample) -> np.ndarray:
    """Per sampled row, whether it is in the second half of the sample: split by a hash of
    its numeric values, so a row pooled into two samples of one table (two scans' partition
    selections) falls in the same half of both (kept with the sample)."""
    return sample.derived(("row halves",), lambda: _halves(sample))


def _halves(sample: Sample) -> np.ndarray:
    names = [n for n in sorted(sample.columns) if sample.numeric(n)][:HALF_COLUMNS]
    if not names:
        return np.asarray(np.arange(sample.size) % 2 == 1, dtype=bool)
    mixed = np.zeros(sample.size, dtype=np.uint64)
    for name in names:
        values = np.nan_to_num(np.asarray(sample.columns[name], dtype=np.float64), nan=-1.0)
        mixed = _mix(mixed ^ values.view(np.uint64))
    return np.asarray(_mix(mixed) >> np.uint64(63), dtype=bool)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea and Flood 2014), wrapping in uint64."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return np.asarray(x ^ (x >> np.uint64(31)), dtype=np.uint64)


def joined(left: KeyDegrees, right: KeyDegrees) -> JoinedDegrees | None:
    """The join of two sides on one key: per value both show, the product of its rows on
    each side.

    Sides that read one table share its sampled rows, and a row's weight squared overcounts
    its pair with itself: whole samples multiply as they are; sampled ones join each half of
    the rows on one side with the other half on the other (disjoint rows, so independent),
    averaged, plus the rows paired with themselves (at most the fewer of a value's rows on
    the two sides). None when the values are of different kinds, or the sides share tables
    they cannot split so (more than one, or a side without that table's halves)."""
    if left.values.dtype.kind != right.values.dtype.kind:
        return None
    values, at_left, at_right = _shared(left.values, right.values)
    left_rows, right_rows = left.rows[at_left], right.rows[at_right]
    shared = left.tables & right.tables
    exact = left.exact and right.exact
    halves: tuple[np.ndarray, np.ndarray] | None = None
    half_table = ""
    if shared and not exact:
        if len(shared) != 1 or not (left.half_table == right.half_table in shared):
            return None
        if left.halves is None or right.halves is None:
            return None
        first = left.halves[0][at_left] * right.halves[1][at_right]
        second = left.halves[1][at_left] * right.halves[0][at_right]
        rows = (first + second) / 2.0 + np.minimum(left_rows, right_rows)
    else:
        rows = left_rows * right_rows
        # the halves of a table one side read, carried for a later join with it again
        if left.halves is not None:
            halves = (left.halves[0][at_left] * right_rows, left.halves[1][at_left] * right_rows)
            half_table = left.half_table
        elif right.halves is not None:
            halves = (right.halves[0][at_right] * left_rows, right.halves[1][at_right] * left_rows)
            half_table = right.half_table
    support = left.support[at_left] * right.support[at_right]
    degrees = KeyDegrees(
        values, rows, support, exact, left.tables | right.tables, halves, half_table
    )
    weak = not exact and not len(values)
    return JoinedDegrees(degrees.total, degrees, weak)


def degrees_of(column: Any, rows: float) -> KeyDegrees | None:
    """A node's column's degrees over its `rows` (its non-null rows): those a join on it
    carried, or its scan's weighed by the joins on the scan's other columns (`Reweighted`),
    else its scan's (optimizer.estimate.column.ColumnEstimate.origin); None where nothing
    shows them."""
    if column is None:
        return None
    carried = column.degrees
    if isinstance(carried, NotKnown):
        return None
    found: KeyDegrees | None = carried
    if isinstance(carried, Reweighted):
        found = carried.resolved()
    elif found is None and column.origin is not None:
        found = scan_degrees(*column.origin)
    if found is None:
        return None
    return found.scaled(rows * max(0.0, 1.0 - column.null_fraction))


@dataclass(frozen=True, eq=False)
class Reweighted:
    """The degrees of a scan's column after joins on other columns of the same scan: each
    sampled row the scan kept weighs its weight times the other sides' rows holding its key
    (`factors`: per join, the scan's key column and the other side's degrees), so a post's
    owner counts once per vote of the post after votes JOIN posts."""

    scan: ScanSample
    name: str
    # per join: the scan's key column, the other side's degrees, and its key's distinct values
    factors: tuple[tuple[str, KeyDegrees, float], ...]

    def then(self, key: str, other: KeyDegrees, ndv: float) -> Reweighted:
        return Reweighted(self.scan, self.name, (*self.factors, (key, other, ndv)))

    def resolved(self) -> KeyDegrees | None:
        """The degrees, kept with the scan per factors (each join order asks again) and with
        the sample per kept rows and factors' content (each request of the same query)."""
        memo = self.scan.memo
        key = ("reweighted", self.name, tuple(id(other) for _, other, _ in self.factors))
        if key not in memo:
            loaded = self.scan.rows()
            found = None
            if loaded is not None:
                content = tuple(
                    (name, other.fingerprint, round(ndv, 3)) for name, other, ndv in self.factors
                )
                lasting = ("reweighted", self.name, self.scan.table, kept_rows_key(self.scan))
                found = loaded[0].derived((*lasting, content), self._computed)
            memo[key] = (found, self.factors)  # the factors kept: ids stay theirs
        result: KeyDegrees | None = memo[key][0]
        return result

    def _computed(self) -> KeyDegrees | None:
        base = scan_degrees(self.scan, self.name)
        loaded = self.scan.rows()
        if base is None or loaded is None:
            return None
        sample, passed = loaded
        weights = np.where(passed, sample.weights, 0.0)
        support = passed.astype(np.float64)
        exact, tables = base.exact, set(base.tables)
        for name, other, ndv in self.factors:
            coded = _codes(sample, name)
            if coded is None or coded[0].dtype.kind != other.values.dtype.kind:
                return None
            values, codes = coded
            if self.scan.table in other.tables and not (exact and other.exact):
                # the other side read this table too: this scan's second half of the rows
                # meets the other's first (disjoint rows), as in a self-join
                if other.halves is None or other.half_table != self.scan.table:
                    return None
                second = row_halves(sample)
                weights = np.where(second, 2.0 * weights, 0.0)
                other = replace(other, rows=other.halves[0], halves=None)
            rows_per_code, support_per_code = _looked_up(values, other, *other.shrinkage(ndv))
            weights = weights * np.append(rows_per_code, 0.0)[codes]
            support = support * np.append(support_per_code, 0.0)[codes]
            exact, tables = exact and other.exact, tables | other.tables
        coded = _codes(sample, self.name)
        if coded is None:
            return None
        values, codes = coded
        chosen = (codes >= 0) & (weights > 0)
        rows = np.bincount(codes[chosen], weights=weights[chosen], minlength=len(values))
        counted = np.bincount(codes[chosen], weights=support[chosen], minlength=len(values))
        present = rows > 0
        order = np.argsort(values[present], kind="stable")
        return KeyDegrees(
            values[present][order],
            rows[present][order],
            counted[present][order],
            exact,
            frozenset(tables),
        )


def _codes(sample: Sample, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A sampled column's distinct values (doubles, or strings as numpy text) and per
    sampled row the index of its value among them (-1: NULL); None when the sample has no
    such column or does not sample it as numbers or strings."""
    numeric = sample.numeric(name)
    if numeric is None:
        return None
    if numeric:
        distinct, codes = sample.derived(
            ("value codes", name), lambda: value_codes(sample.columns[name])
        )
        return np.asarray(distinct, dtype=np.float64), codes
    dictionary, codes = string_codes(sample, name)
    text = sample.derived(
        ("dictionary text", name), lambda: np.asarray(dictionary.to_pylist(), dtype=str)
    )
    return text, codes


def _shared(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values two arrays of distinct values share (`right` sorted), and their positions
    in each."""
    at = np.searchsorted(right, left)
    inside = at < len(right)
    match = np.zeros(len(left), dtype=bool)
    match[inside] = right[at[inside]] == left[inside]
    at_left = np.flatnonzero(match)
    return left[at_left], at_left, at[at_left]


def _looked_up(
    values: np.ndarray, degrees: KeyDegrees, trust: float, mean: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per value of `values`, its rows in `degrees` (none: zero) drawn towards their `mean`
    by `1 - trust` (KeyDegrees.shrinkage), and its support."""
    _, at_values, at_degrees = _shared(values, degrees.values)
    rows, support = np.full(len(values), (1.0 - trust) * mean), np.zeros(len(values))
    rows[at_values] += trust * degrees.rows[at_degrees]
    support[at_values] = degrees.support[at_degrees]
    return rows, support


def _value(value: Any, type_: str) -> Any:
    """A value of the degrees as a column of type `type_` holds it (a sampled number back as
    its date, integer or decimal)."""
    if isinstance(value, np.str_):
        return str(value)
    return from_number(float(value), type_)
