"""Filters over correlated columns of one table, counted on its row sample.

Per-column statistics multiply conjuncts as if columns were independent; on TPC-H that
turns `l_returnflag = 'R' AND l_linestatus = 'O'` (no such row) into 740,000 rows. At
level `sketch` a scan's filter that reads two or more columns, or holds a predicate
without statistics behind it (LIKE '%x%'), is evaluated on the table's row sample
(metastore.statistics.samples) of exactly the scan's partitions, in SQL's three-valued logic:

  enough matches (>= SAMPLE_MIN_MATCHES)  the sample's estimate (a ratio estimator over the
                                          partitions' samples)
  fewer                                   the sample bounds the fraction (about two
                                          standard deviations, and at least 3 rows of
                                          sample for none: the "rule of three"); the
                                          per-column estimate stands when inside the
                                          bounds, else the geometric middle of the bounds,
                                          the point whose worst q-error over them is least.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from metastore.statistics.samples import NUMBER, STRING, Sample, as_number, sample_kind
from optimizer.estimate.predicates import (
    FUNCTION_OF_COLUMN,
    KLL_RANK_ERROR,
    NotEstimable,
    literal_value,
)
from optimizer.estimate.scan_sample import string_codes
from optimizer.estimate.values import ESTIMATED, Estimate, clamp_fraction
from optimizer.sql_text import sql_text

SAMPLE_MIN_MATCHES = 30
BOUND_DEVIATIONS = 2.0
RULE_OF_THREE = 3.0


@dataclass(frozen=True)
class SampleCount:
    """A predicate counted on a sample: sampled rows that satisfy it, of how many, and the
    fraction of the partitions' rows they stand for (weighted by partition)."""

    matches: int
    size: int
    fraction: float
    passed: Any = field(default=None, compare=False, repr=False)  # bool per sampled row
    # per column, the distinct values among the kept rows (operators.filter), kept with
    # the count as the count is kept with its sample
    distinct: dict[str, int | None] = field(default_factory=dict, compare=False, repr=False)


def count_on_sample(
    predicate: exp.Expr, sample: Sample, alias: str, types: Mapping[str, str]
) -> SampleCount | None:
    """`predicate` over the columns of relation `alias` (name -> type in `types`) counted on
    `sample`; None when it reads anything the sample cannot evaluate. Kept with the sample
    under the predicate's text: a query asked again (a dashboard's, a planner weighing join
    orders) reads its rows, not evaluates them again."""
    text = sql_text(predicate)
    return sample.derived(
        ("count", alias, text, tuple(sorted(types.items()))),
        lambda: _counted(predicate, sample, alias, types),
    )


def _counted(
    predicate: exp.Expr, sample: Sample, alias: str, types: Mapping[str, str]
) -> SampleCount | None:
    try:
        true, _ = _Evaluator(sample, alias, types).truth(predicate)
    except NotEstimable:
        return None
    total = float(sample.weights.sum())
    if sample.size == 0 or total <= 0:
        return None
    matched = float(sample.weights[true].sum())
    true.setflags(write=False)  # kept with the sample: every later reader shares it
    return SampleCount(int(true.sum()), sample.size, matched / total, true)


def combine_with_sample(independent: Estimate, count: SampleCount, rows: float) -> Estimate:
    """The filter's selectivity from the per-column estimate and the sample's count (see the
    module docstring); `rows` is the input's row count (the fraction of one row is the
    floor)."""
    if count.matches >= SAMPLE_MIN_MATCHES:
        return Estimate(clamp_fraction(count.fraction), ESTIMATED, "sample")
    per_match = count.fraction / count.matches if count.matches else 1.0 / count.size
    spread = BOUND_DEVIATIONS * math.sqrt(count.matches)
    lower = max(0.0, count.matches - spread) * per_match
    upper = (count.matches + spread + RULE_OF_THREE) * per_match
    if lower <= independent.value <= upper:
        return Estimate(independent.value, independent.precision, f"{independent.source}+sample")
    floor = 1.0 / rows if rows > 0 else 0.0
    middle = math.sqrt(max(lower, floor) * upper)
    return Estimate(clamp_fraction(middle), ESTIMATED, "sample bounds")


def holds_every_row(sample: Sample) -> bool:
    """The sample kept every row of its partitions (each sampled row stands for itself)."""
    return sample.derived(
        "holds every row", lambda: bool(sample.size and np.all(sample.weights <= 1.0 + 1e-9))
    )


def worth_sampling(
    predicate: exp.Expr, independent: Estimate, count: SampleCount | None = None
) -> bool:
    """Whether a sample could know better: two or more columns, a predicate the statistics
    had no figure for, one over a function of a column they guessed from the column's, or a
    range the KLL sketch knows less well than the sample: narrower than twice its rank
    error, which the sketch only bounds (predicates.narrow_range: a 1% range of 600,000 rows
    is 6,000 +- 9,900 by the sketch, about +- 5% by a sample of one row in six), or any range
    whose share the sample's rows know to a smaller standard error than the sketch's
    (`sampled_better`)."""
    names = {(c.table, c.name) for c in predicate.find_all(exp.Column)}
    return (
        len(names) >= 2
        or "default" in independent.source
        or FUNCTION_OF_COLUMN in independent.source
        or (independent.source == "kll" and independent.value < 2 * KLL_RANK_ERROR)
        or (independent.source == "kll" and count is not None and sampled_better(count))
    )


def sampled_better(count: SampleCount) -> bool:
    """Whether a share counted on `count.size` sampled rows has a smaller standard error,
    sqrt(p (1 - p) / n), than a KLL sketch's rank error as a standard deviation (its
    two-sided 99% bound over 2.58)."""
    if count.size <= 0:
        return False
    share = clamp_fraction(count.fraction)
    error = math.sqrt(max(share * (1.0 - share), 1.0 / count.size) / count.size)
    return error < KLL_RANK_ERROR / KLL_BOUND_DEVIATIONS


KLL_BOUND_DEVIATIONS = 2.58  # a two-sided 99% bound, in standard deviations


Truth = tuple[np.ndarray, np.ndarray]  # (rows where true, rows where unknown/NULL)


@dataclass
class _Operand:
    loaded: Any  # ndarray per row, or one scalar (a column's: read when first asked for)
    nulls: Any  # ndarray of bool, or one bool
    kind: str  # NUMBER or STRING
    type: str | None  # the column type it came from (None: an expression or literal)
    column: str | None = None  # the sample's column it is (None: anything else)
    load: Callable[[], Any] | None = None  # reads a column's values (see values)

    @property
    def values(self) -> Any:
        """The values; a sample column is read (boxed, for strings) only here, so that
        predicates Arrow evaluates on the stored column (LIKE, IN, comparisons with a
        literal) never box it."""
        if self.load is not None:
            self.loaded, self.load = self.load(), None
        return self.loaded


class _Evaluator:
    def __init__(self, sample: Sample, alias: str, types: Mapping[str, str]) -> None:
        self.sample, self.alias, self.types = sample, alias, types
        self.none = np.zeros(sample.size, dtype=bool)

    # ---- boolean -----------------------------------------------------------------------
    def truth(self, node: exp.Expr) -> Truth:
        if isinstance(node, exp.Paren):
            return self.truth(node.this)
        if isinstance(node, exp.And):
            (lt, lu), (rt, ru) = self.truth(node.left), self.truth(node.right)
            true = lt & rt
            return true, (lt | lu) & (rt | ru) & ~true
        if isinstance(node, exp.Or):
            (lt, lu), (rt, ru) = self.truth(node.left), self.truth(node.right)
            true = lt | rt
            return true, (lu | ru) & ~true
        if isinstance(node, exp.Not):
            true, unknown = self.truth(node.this)
            return ~true & ~unknown, unknown
        if isinstance(node, exp.Boolean):
            return np.full(self.sample.size, bool(node.this)), self.none
        if isinstance(node, exp.Is):
            return self._is(node)
        if isinstance(node, exp.In):
            return self._in(node)
        if isinstance(node, exp.Between):
            operand = self.operand(node.this)
            low = self.operand(node.args["low"], operand)
            high = self.operand(node.args["high"], operand)
            lt, lu = self._compare(operand, low, np.greater_equal)
            ht, hu = self._compare(operand, high, np.less_equal)
            true = lt & ht
            return true, (lt | lu) & (ht | hu) & ~true
        if isinstance(node, exp.Like | exp.ILike):
            return self._like(node)
        comparisons: dict[type[exp.Expr], Callable[[Any, Any], Any]] = {
            exp.EQ: np.equal,
            exp.NEQ: np.not_equal,
            exp.LT: np.less,
            exp.LTE: np.less_equal,
            exp.GT: np.greater,
            exp.GTE: np.greater_equal,
        }
        if isinstance(node, exp.Binary) and type(node) in comparisons:
            left, right = self._pair(node)
            return self._compare(left, right, comparisons[type(node)])
        raise NotEstimable

    def _is(self, node: exp.Is) -> Truth:
        target, negated = node.expression, False
        if isinstance(target, exp.Not):
            target, negated = target.this, True
        if not isinstance(target, exp.Null):
            raise NotEstimable
        nulls = self._as_rows(self.operand(node.this).nulls)
        return (~nulls if negated else nulls), self.none

    def _in(self, node: exp.In) -> Truth:
        if node.args.get("query") is not None:
            raise NotEstimable
        operand = self.operand(node.this)
        items = [self.operand(e, operand) for e in node.expressions]
        if any(not np.isscalar(i.values) and i.values is not None for i in items):
            raise NotEstimable  # only literal lists
        wanted = [i.values for i in items if i.values is not None]
        nulls = self._as_rows(operand.nulls)
        if operand.kind == NUMBER:
            true = np.isin(self._as_rows(operand.values), wanted) & ~nulls
        elif operand.column is not None and all(isinstance(w, str) for w in wanted):
            found = pc.is_in(self.sample.arrow(operand.column), value_set=pa.array(wanted))
            true = np.asarray(found.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        else:
            values = self._as_rows(operand.values)
            members = set(wanted)
            true = np.fromiter((v in members for v in values), dtype=bool, count=len(values))
        has_null_item = len(wanted) < len(items)
        return true, (nulls | (has_null_item & ~true))

    def _like(self, node: exp.Like | exp.ILike) -> Truth:
        operand = self.operand(node.this)
        pattern = node.expression
        if operand.kind != NUMBER and isinstance(pattern, exp.Literal) and pattern.is_string:
            ignore_case = isinstance(node, exp.ILike)
            nulls = self._as_rows(operand.nulls)
            if operand.column is not None and operand.kind == STRING:
                # kept with the (cached, unchanging) sample: a query planned again, or a
                # plan's several estimates of one scan, match the pattern once
                key = ("like", operand.column, pattern.this, ignore_case)
                matched = self.sample.derived(
                    key,
                    partial(_match_like, self.sample, operand.column, pattern.this, ignore_case),
                )
                return matched, nulls
            regex = _like_regex(pattern.this, ignore_case)
            values = self._as_rows(operand.values)
            true = np.fromiter(
                (
                    not null and regex.fullmatch(str(v)) is not None
                    for v, null in zip(values, nulls, strict=True)
                ),
                dtype=bool,
                count=self.sample.size,
            )
            return true, nulls
        raise NotEstimable

    def _compare(self, left: _Operand, right: _Operand, op: Callable[[Any, Any], Any]) -> Truth:
        if left.kind != right.kind:
            raise NotEstimable
        nulls = self._as_rows(left.nulls) | self._as_rows(right.nulls)
        if left.kind == NUMBER:
            with np.errstate(invalid="ignore"):
                true = op(left.values, right.values)
            return self._as_rows(true) & ~nulls, nulls
        if left.kind == STRING and left.column is not None and isinstance(right.values, str):
            # a string column against a literal: Arrow's comparison in native code (UTF-8
            # byte order is code point order, as Python compares strings)
            if self.sample.numeric(left.column) is False:
                # compared once per distinct value (the column's dictionary, kept with the
                # sample), then read per row by its code: -1 (NULL) takes the last, False
                dictionary, codes = string_codes(self.sample, left.column)
                per_value = _ARROW_COMPARISONS[op](dictionary, right.values).fill_null(False)
                lookup = np.append(per_value.to_numpy(zero_copy_only=False).astype(bool), False)
                return lookup[codes] & ~nulls, nulls
            compared = _ARROW_COMPARISONS[op](self.sample.arrow(left.column), right.values)
            found = np.asarray(compared.fill_null(False).to_numpy(zero_copy_only=False))
            return found.astype(bool) & ~nulls, nulls
        lv, rv = self._as_rows(left.values), self._as_rows(right.values)
        true = np.zeros(self.sample.size, dtype=bool)
        keep = ~nulls
        if keep.any():
            true[keep] = op(lv[keep], rv[keep]).astype(bool)
        return true, nulls

    def _pair(self, node: exp.Binary) -> tuple[_Operand, _Operand]:
        """Both sides of a binary node, a literal read as the other side's type."""
        if node.left.find(exp.Column) is None and node.right.find(exp.Column) is not None:
            right = self.operand(node.right)
            return self.operand(node.left, right), right
        left = self.operand(node.left)
        return left, self.operand(node.right, left)

    def _as_rows(self, value: Any) -> np.ndarray:
        if isinstance(value, np.ndarray):
            return value
        return np.full(self.sample.size, value, dtype=object if isinstance(value, str) else None)

    # ---- values ------------------------------------------------------------------------
    def operand(self, node: exp.Expr, context: _Operand | None = None) -> _Operand:
        """A column, arithmetic of columns, or a literal read as `context`'s type."""
        if isinstance(node, exp.Paren):
            return self.operand(node.this, context)
        if isinstance(node, exp.Column):
            return self._column(node)
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.Column):
            return self._column(node.this)
        if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div):
            return self._arithmetic(node)
        if isinstance(node, exp.Substring) and isinstance(node.this, exp.Column):
            return self._substring(node)
        if isinstance(node, exp.Null):
            return _Operand(None, True, context.kind if context else NUMBER, None)
        return self._literal(node, context)

    def _column(self, node: exp.Column) -> _Operand:
        if node.table != self.alias or node.name not in self.sample.columns:
            raise NotEstimable
        name, columns = node.name, self.sample.columns
        type_ = self.types.get(name, "string")
        kind = sample_kind(type_) or "other"
        nulls = self.sample.nulls(name)
        return _Operand(
            None, nulls, NUMBER if kind == NUMBER else kind, type_, name, lambda: columns[name]
        )

    def _substring(self, node: exp.Substring) -> _Operand:
        """`substr(column, start[, length])` of a string column, with literal positions
        (SQL's: from 1; a length runs to the end when left out)."""
        column = self._column(node.this)
        start, length = node.args.get("start"), node.args.get("length")
        if column.kind != STRING or column.column is None:
            raise NotEstimable
        if not all(isinstance(a, exp.Literal) and a.name.isdigit() for a in (start, length) if a):
            raise NotEstimable
        first = max(int(start.name) - 1, 0) if start is not None else 0
        stop = first + int(length.name) if length is not None else None
        sliced = pc.utf8_slice_codeunits(self.sample.arrow(column.column), first, stop)
        values = np.asarray(sliced.to_numpy(zero_copy_only=False), dtype=object)
        return _Operand(values, column.nulls, STRING, None)

    def _arithmetic(self, node: exp.Binary) -> _Operand:
        left, right = self._pair(node)
        if left.kind != NUMBER or right.kind != NUMBER:
            raise NotEstimable
        op: dict[type[exp.Expr], Callable[[Any, Any], Any]] = {
            exp.Add: np.add,
            exp.Sub: np.subtract,
            exp.Mul: np.multiply,
            exp.Div: np.divide,
        }
        with np.errstate(divide="ignore", invalid="ignore"):
            values = op[type(node)](left.values, right.values)
        nulls = self._as_rows(left.nulls) | self._as_rows(right.nulls) | np.isnan(values)
        return _Operand(values, nulls, NUMBER, None)

    def _literal(self, node: exp.Expr, context: _Operand | None) -> _Operand:
        type_ = context.type if context is not None and context.type else None
        if type_ is None:
            type_ = "string" if isinstance(node, exp.Literal) and node.is_string else "double"
            if context is not None and context.kind == NUMBER:
                type_ = "double"
        value = literal_value(node, type_)
        if sample_kind(type_) == NUMBER:
            try:
                return _Operand(as_number(value), False, NUMBER, None)
            except TypeError:
                raise NotEstimable from None
        return _Operand(str(value), False, sample_kind(type_) or "other", None)


_ARROW_COMPARISONS: dict[Callable[[Any, Any], Any], Callable[[Any, Any], Any]] = {
    np.equal: pc.equal,
    np.not_equal: pc.not_equal,
    np.less: pc.less,
    np.less_equal: pc.less_equal,
    np.greater: pc.greater,
    np.greater_equal: pc.greater_equal,
}


def _like_regex(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """SQL LIKE (`%`, `_`, backslash escapes) as a regular expression."""
    parts, escaped = [], False
    for char in pattern:
        if escaped:
            parts.append(re.escape(char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.compile("".join(parts), re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def _match_like(sample: Sample, column: str, pattern: str, ignore_case: bool) -> np.ndarray:
    """Which sampled rows' string `column` matches the LIKE `pattern` (NULL: no), by Arrow."""
    matched = pc.match_like(sample.arrow(column), pattern, ignore_case=ignore_case)
    rows = np.array(matched.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
    rows.flags.writeable = False  # shared by every estimate of the sample
    return rows
