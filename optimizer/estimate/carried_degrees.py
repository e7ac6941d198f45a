"""Degrees carried past a join to the columns it did not join on (docs/estimator.md#
key-degrees): the other columns of a joined scan weighed by the other side's rows holding
each sampled row's key (`Reweighted`), a key of an earlier join rescaled by a later join on
another column of its scan (`Rescaled`), and a node's column's degrees read from whichever it
carries (`degrees_of`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Final

import numpy as np

from optimizer.estimate.key_degrees import (
    Halves,
    KeyDegrees,
    NotKnown,
    kept_rows_key,
    row_halves,
    sample_codes,
    scan_degrees,
    shared_values,
)
from optimizer.estimate.scan_sample import ScanSample

KEY_SHARE: Final = 0.9  # a column with distinct values for this share of its rows is a key


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
    if isinstance(carried, Reweighted | Rescaled):
        found = carried.resolved()
    elif found is None and column.origin is not None:
        found = scan_degrees(*column.origin)
        if found is not None and not found.exact:
            # a key of its table: about as many distinct values as rows
            unique = column.ndv.value >= KEY_SHARE * rows * (1.0 - column.null_fraction)
            found = replace(found, keyed=unique)
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
        the sample per kept rows and factors' content (each request of the same query); what
        the sample keeps holds no function, so no request's objects outlive it there."""
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
        if result is not None and result.half_tables:  # attached here: the memo holds no cycle
            return replace(result, halves_of=self._halves)
        return result

    def _computed(self) -> KeyDegrees | None:
        weighed = self._weighed(track_halves=False)
        counting = None if weighed is None else self._counting(weighed[0])
        if weighed is None or counting is None:
            return None
        weights, support, _, exact, tables, half_tables, variance = weighed
        values, counted = counting
        return KeyDegrees(
            values,
            counted(weights),
            counted(support),
            exact,
            frozenset(tables),
            frozenset(half_tables),
            variance=counted(variance),
        )

    def _halves(self) -> Halves:
        """KeyDegrees.halves of the degrees: the weighing again, with each table's halves."""
        weighed = self._weighed(track_halves=True)
        counting = None if weighed is None else self._counting(weighed[0])
        if weighed is None or counting is None:
            return {}
        _, counted = counting
        return {key: (counted(a), counted(b)) for key, (a, b) in weighed[2].items()}

    def _counting(
        self, weights: np.ndarray
    ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]] | None:
        """The values of the column the weighed sampled rows show (sorted), and a sum of
        per-row figures by value in that order."""
        loaded = self.scan.rows()
        coded = None if loaded is None else sample_codes(loaded[0], self.name)
        if coded is None:
            return None
        values, codes = coded
        chosen = (codes >= 0) & (weights > 0)
        present = np.bincount(codes[chosen], minlength=len(values)) > 0
        order = np.argsort(values[present], kind="stable")

        def counted(row_weights: np.ndarray) -> np.ndarray:
            found = np.bincount(codes[chosen], weights=row_weights[chosen], minlength=len(values))
            return found[present][order]

        return values[present][order], counted

    def _weighed(self, track_halves: bool) -> _Weighed | None:
        """Per sampled row, its weight times the other sides' rows holding its keys, and the
        figures' support; with `track_halves`, per sampled table, the same from each half of
        that table's sampled rows (this scan's own, and those the other sides' halves give,
        for a later join with one again)."""
        base = scan_degrees(self.scan, self.name)
        loaded = self.scan.rows()
        if base is None or loaded is None:
            return None
        sample, passed = loaded
        table = self.scan.table
        weights = np.where(passed, sample.weights, 0.0)
        drawn = weights.copy()  # each row's own weight: it was drawn with 1 / that
        support = passed.astype(np.float64)
        exact, tables = base.exact, set(base.tables)
        half_tables = set() if exact else {table}
        halves: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if track_halves and not exact:
            second = row_halves(sample)
            halves[table] = (
                np.where(second, 0.0, 2.0 * weights),
                np.where(second, 2.0 * weights, 0.0),
            )
        for name, other, ndv in self.factors:
            coded = sample_codes(sample, name)
            if coded is None or coded[0].dtype.kind != other.values.dtype.kind:
                return None
            values, codes = coded
            trust, mean = other.shrinkage(ndv)
            if table in other.tables and not (exact and other.exact):
                # the other side read this table too: this scan's second half of the rows
                # meets the other's first (disjoint rows), as in a self-join
                if table not in other.half_tables:
                    return None
                weights = np.where(row_halves(sample), 2.0 * weights, 0.0)
                drawn = np.where(row_halves(sample), 2.0 * drawn, 0.0)
                other = replace(
                    other, rows=other.halves[table][0], half_tables=frozenset(), halves_of=None
                )
                half_tables.discard(table)
                halves.pop(table, None)
            factor, factor_support = _per_row(values, codes, other, trust, mean)
            for key, (a, b) in list(halves.items()):
                halves[key] = (a * factor, b * factor)
            for key in other.half_tables - half_tables - {table}:
                half_tables.add(key)
                if track_halves:
                    a, b = other.halves[key]
                    first, _ = _per_row(values, codes, replace(other, rows=a), trust, mean)
                    second_half, _ = _per_row(values, codes, replace(other, rows=b), trust, mean)
                    halves[key] = (weights * first, weights * second_half)
            weights = weights * factor
            support = support * factor_support
            exact, tables = exact and other.exact, tables | other.tables
        # a row drawn with probability 1/w adds (1 - 1/w) times its figure squared
        # (Horvitz and Thompson 1952)
        unsure = np.divide(1.0, drawn, out=np.ones(len(drawn)), where=drawn > 0)
        variance = weights * weights * (1.0 - unsure)
        return weights, support, halves, exact, tables, half_tables, variance


def rescaled(
    carried: KeyDegrees, scan: ScanSample, name: str, factor: tuple[str, KeyDegrees, float]
) -> KeyDegrees | None:
    """Degrees an earlier join on column `name` of `scan` carried, after a join on another
    column of the same scan (`factor`: that column, the other side's degrees, its key's
    distinct values): each value's rows times the rows the join gave each of the scan's
    rows holding it, on average (the column `Reweighted` over its scan's degrees, per value;
    a value the sample does not show takes the scan's average). A post's owner joined to
    posts again keeps the owners' joint degrees, and meets the comments of that owner's
    posts, not of posts in general. None where the scan's degrees are not known."""
    base = scan_degrees(scan, name)
    weighed = Reweighted(scan, name, (factor,)).resolved()
    if base is None or weighed is None or base.total <= 0:
        return None
    if carried.values.dtype.kind != base.values.dtype.kind:
        return None
    per_base = np.zeros(len(base.values))
    _, at_base, at_weighed = shared_values(base.values, weighed.values)
    per_base[at_base] = weighed.rows[at_weighed]
    shown = base.rows > 0
    per_base[shown] /= base.rows[shown]
    ratio = np.full(len(carried.values), weighed.total / base.total)
    _, at_carried, at_base = shared_values(carried.values, base.values)
    ratio[at_carried] = per_base[at_base]

    def halves() -> Halves:
        return {t: (a * ratio, b * ratio) for t, (a, b) in carried.halves.items()}

    return replace(
        carried,
        rows=carried.rows * ratio,
        variance=carried.noise() * ratio * ratio,
        exact=carried.exact and weighed.exact,
        tables=carried.tables | weighed.tables,
        halves_of=halves if carried.half_tables else None,
    )


@dataclass(frozen=True, eq=False)
class Rescaled:
    """Degrees an earlier join carried on a column of `scan`, after a join on another
    column of that scan (`factor`), rescaled when first read (`rescaled`; unchanged where
    the scan's degrees are not known): most are never read again."""

    carried: KeyDegrees | Rescaled
    scan: ScanSample
    name: str
    factor: tuple[str, KeyDegrees, float]

    def resolved(self) -> KeyDegrees | None:
        return self._resolved

    @cached_property
    def _resolved(self) -> KeyDegrees | None:
        carried = self.carried
        base = carried.resolved() if isinstance(carried, Rescaled) else carried
        if base is None:
            return None
        return rescaled(base, self.scan, self.name, self.factor) or base


# a reweighed scan's rows: weights, support, halves per table, exact, tables, half tables
_Weighed = tuple[
    np.ndarray,
    np.ndarray,
    dict[str, tuple[np.ndarray, np.ndarray]],
    bool,
    set[str],
    set[str],
    np.ndarray,  # each row's share of its value's sampling variance
]


def _per_row(
    values: np.ndarray, codes: np.ndarray, degrees: KeyDegrees, trust: float, mean: float
) -> tuple[np.ndarray, np.ndarray]:
    """`_looked_up` per sampled row (`codes`: each row's index among `values`, -1: NULL,
    which meets nothing)."""
    rows, support = _looked_up(values, degrees, trust, mean)
    return np.append(rows, 0.0)[codes], np.append(support, 0.0)[codes]


def _looked_up(
    values: np.ndarray, degrees: KeyDegrees, trust: float, mean: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per value of `values`, its rows in `degrees` (none: zero) drawn towards their `mean`
    by `1 - trust` (KeyDegrees.shrinkage), and its support."""
    _, at_values, at_degrees = shared_values(values, degrees.values)
    rows, support = np.full(len(values), (1.0 - trust) * mean), np.zeros(len(values))
    rows[at_values] += trust * degrees.rows[at_degrees]
    support[at_values] = degrees.support[at_degrees]
    return rows, support
