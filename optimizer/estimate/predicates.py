"""Selectivity of a filter predicate over a node's columns, at one of three levels.

basic      the Hive CBO proposal's rules only (docs/design.md#filter-selectivity): = 1/V,
           column = column 1/max(V1, V2), < > 1/3, <> (V-1)/V, OR, AND as a product, and
           the named defaults below for what the proposal does not cover.
histogram  most-common values, then the KLL distribution (equi-depth in the limit) for
           =, <>, ranges, BETWEEN, IN (values outside [min, max] match nothing), IS NULL,
           LIKE 'prefix%' and string ranges through an order-preserving encoding; ranges on
           one column condition each other (x >= a AND x < b is one interval).
sketch     as histogram (the joins differ, see operators/join_rows).

Each call returns the selectivity as an Estimate (with its source) and the columns as they
are after the filter (restricted ranges, NDV 1 after equality).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final, Literal, get_args

from sqlglot import exp

from metastore.column_type import ColumnType
from optimizer.estimate.column import (
    ColumnEstimate,
    changed,
    encode,
    encode_string,
    equality_fraction,
)
from optimizer.estimate.selectivity import (
    SEED_INEQUALITY,
    function_in_list_fraction,
    seed_column_equality,
    seed_equality,
    seed_not_equal,
)
from optimizer.estimate.values import DEFAULT, ESTIMATED, Estimate, clamp_fraction, weakest
from optimizer.plan import ColumnRef, column_of

# what the estimates use (docs/estimator.md#levels); `sketch-independent` is `sketch` with
# the fan-outs of joins on one key multiplied as if independent (the rules before the key
# degrees of optimizer.estimate.key_degrees)
Level = Literal["basic", "histogram", "sketch", "sketch-independent"]
LEVELS: tuple[Level, ...] = get_args(Level)
BASIC: Final = "basic"
HISTOGRAM: Final = "histogram"
SKETCH: Final = "sketch"
SKETCH_INDEPENDENT: Final = "sketch-independent"

DEFAULT_SELECTIVITY = 1.0 / 3.0  # a predicate nothing is known about (the proposal's 1/3)
DEFAULT_IS_NULL = 0.01  # IS NULL on a column without statistics
DEFAULT_LIKE = 0.1  # LIKE with a pattern that is not a plain prefix
KLL_RANK_ERROR = 0.0165  # KLL k=200: normalised rank error (two-sided, 99% confidence)

Columns = Mapping[ColumnRef, ColumnEstimate]
# functions of one string column whose values an IN list may name
# the sources of those estimates: a function's values the statistics do not hold (a row
# sample counting the function itself is better, operators.filter / sample_filter)
FUNCTION_OF_COLUMN = "function of a column:"
VALUE_FUNCTIONS = (exp.Substring, exp.Left, exp.Upper, exp.Lower, exp.Trim)


class NotEstimable(Exception):
    """A literal or expression the estimator cannot evaluate."""


def literal_value(expression: exp.Expr, type_: str) -> Any:
    """A literal (possibly CAST, negated, DATE '...') as a value of a column of `type_`;
    NotEstimable when it is not one."""
    return _literal(expression, ColumnEstimate(type_, Estimate(1.0, DEFAULT, "literal")))


def selectivity(
    predicate: exp.Expr,
    columns: Columns,
    level: Level,
    known: Mapping[int, Estimate] | None = None,
) -> tuple[Estimate, dict[ColumnRef, ColumnEstimate]]:
    """Selectivity of `predicate` and the columns after it; `known`: selectivities of
    sub-expressions estimated elsewhere (IN subqueries), by id() of the expression."""
    state = dict(columns)
    estimate = _selectivity(predicate, state, level, known or {})
    return estimate, state


def _selectivity(
    predicate: exp.Expr,
    state: dict[ColumnRef, ColumnEstimate],
    level: Level,
    known: Mapping[int, Estimate],
) -> Estimate:
    if id(predicate) in known:
        return known[id(predicate)]
    if isinstance(predicate, exp.Paren):
        return _selectivity(predicate.this, state, level, known)
    if isinstance(predicate, exp.And):
        before = dict(state)
        left = _selectivity(predicate.left, state, level, known)
        # basic: a product of independent selectivities; above basic, the right side is
        # conditioned on the left (ranges of one column narrow each other)
        right = _selectivity(predicate.right, before if level == BASIC else state, level, known)
        value = left.value * right.value
        if level != BASIC:  # conditioning never makes A AND B exceed B alone
            value = min(value, _selectivity(predicate.right, dict(before), level, known).value)
        return Estimate(
            value,
            weakest(left.precision, right.precision),
            _join_sources("and", left, right),
        )
    if isinstance(predicate, exp.Or):
        left = _selectivity(predicate.left, dict(state), level, known)
        right = _selectivity(predicate.right, dict(state), level, known)
        # n(1 - (1 - m1/n)(1 - m2/n)) divided by n (docs/design.md#filter-selectivity)
        value = 1.0 - (1.0 - left.value) * (1.0 - right.value)
        return Estimate(
            clamp_fraction(value),
            weakest(left.precision, right.precision),
            _join_sources("or", left, right),
        )
    if isinstance(predicate, exp.Not):
        inner = _selectivity(predicate.this, dict(state), level, known)
        nulls = _null_fraction_of(predicate.this, state) if level != BASIC else 0.0
        return Estimate(
            clamp_fraction(1.0 - inner.value - nulls), inner.precision, f"not({inner.source})"
        )
    try:
        return _leaf(predicate, state, level)
    except NotEstimable:
        return Estimate(DEFAULT_SELECTIVITY, DEFAULT, "default:1/3")


def _join_sources(op: str, left: Estimate, right: Estimate) -> str:
    return left.source if left.source == right.source else f"{op}({left.source},{right.source})"


def _leaf(predicate: exp.Expr, state: dict[ColumnRef, ColumnEstimate], level: Level) -> Estimate:
    if isinstance(predicate, exp.Boolean):
        return Estimate(1.0 if predicate.this else 0.0, ESTIMATED, "constant")
    if isinstance(predicate, exp.Is):
        ref = _column(predicate.this, state)
        negated = False
        target = predicate.expression
        if isinstance(target, exp.Not):
            negated, target = True, target.this
        if not isinstance(target, exp.Null):
            raise NotEstimable
        column = state[ref]
        if level == BASIC:
            value = DEFAULT_IS_NULL
            estimate = Estimate(value, DEFAULT, "default:is_null")
        else:
            estimate = Estimate(column.null_fraction, ESTIMATED, "null_count")
        if negated:
            return Estimate(1.0 - estimate.value, estimate.precision, estimate.source)
        state[ref] = changed(
            column, null_fraction=1.0, ndv=Estimate(0, ESTIMATED, "is_null"), mcv=()
        )
        return estimate
    if isinstance(predicate, exp.In):
        if predicate.args.get("query") is not None:
            raise NotEstimable
        if isinstance(predicate.this, VALUE_FUNCTIONS) and level != BASIC:
            return _function_in_list(predicate, state)
        return _in_list(predicate, state, level)
    if isinstance(predicate, exp.Between):
        ref = _column(predicate.this, state)
        low = _literal(predicate.args["low"], state[ref])
        high = _literal(predicate.args["high"], state[ref])
        return _range(ref, state, level, low, True, high, True, "between")
    if isinstance(predicate, exp.Like):
        return _like(predicate, state, level)
    if isinstance(predicate, exp.EQ | exp.NEQ | exp.LT | exp.LTE | exp.GT | exp.GTE):
        return _comparison(predicate, state, level)
    raise NotEstimable


def _comparison(
    predicate: exp.Binary, state: dict[ColumnRef, ColumnEstimate], level: Level
) -> Estimate:
    left, right = _without_failing_default(predicate.left, predicate), predicate.right
    left_ref, right_ref = _maybe_column(left, state), _maybe_column(right, state)
    op: type[exp.Binary] = type(predicate)
    if left_ref and right_ref:  # column op column
        a, b = state[left_ref], state[right_ref]
        if op is exp.EQ:
            value = seed_column_equality(a.ndv.value, b.ndv.value)
            return Estimate(value, weakest(a.ndv.precision, b.ndv.precision), "seed:1/max(V1,V2)")
        if op is exp.NEQ:
            return Estimate(
                1.0 - seed_column_equality(a.ndv.value, b.ndv.value), ESTIMATED, "seed:1-1/max(V)"
            )
        return Estimate(SEED_INEQUALITY, DEFAULT, "seed:1/3")
    shifted = _shifted_columns(left, right, state) if op is exp.EQ else None
    if shifted is not None:  # a = b + c: b + c has b's distinct values
        a, b = state[shifted[0]], state[shifted[1]]
        value = seed_column_equality(a.ndv.value, b.ndv.value)
        return Estimate(value, weakest(a.ndv.precision, b.ndv.precision), "seed:1/max(V1,V2)")
    if right_ref and not left_ref:  # literal op column: flip
        flipped: dict[type[exp.Binary], type[exp.Binary]] = {
            exp.LT: exp.GT,
            exp.LTE: exp.GTE,
            exp.GT: exp.LT,
            exp.GTE: exp.LTE,
        }
        op = flipped.get(op, op)
        left, right, left_ref = right, left, right_ref
    if left_ref is None:
        raise NotEstimable
    column = state[left_ref]
    value = _literal(right, column)
    if op is exp.EQ:
        return _equality(left_ref, state, level, value)
    if op is exp.NEQ:
        eq = _equality(left_ref, dict(state), level, value)
        if level == BASIC:
            return Estimate(seed_not_equal(column.ndv.value), column.ndv.precision, "seed:(V-1)/V")
        return Estimate(
            clamp_fraction(1.0 - column.null_fraction - eq.value), eq.precision, eq.source
        )
    if op is exp.LT:
        return _range(left_ref, state, level, None, False, value, False, "range")
    if op is exp.LTE:
        return _range(left_ref, state, level, None, False, value, True, "range")
    if op is exp.GT:
        return _range(left_ref, state, level, value, False, None, False, "range")
    return _range(left_ref, state, level, value, True, None, False, "range")


def _without_failing_default(left: exp.Expr, predicate: exp.Binary) -> exp.Expr:
    """`COALESCE(x, d) op c` is `x op c` when `d op c` is false (a NULL x fails either
    way): `COALESCE(ws_qty, 0) > 0` after an outer join keeps the matched rows."""
    if not isinstance(left, exp.Coalesce) or len(left.expressions) != 1:
        return left
    default, bound = left.expressions[0], predicate.right
    if not all(isinstance(e, exp.Literal) and not e.is_string for e in (default, bound)):
        return left
    d, c = float(default.this), float(bound.this)
    holds = {
        exp.EQ: d == c,
        exp.NEQ: d != c,
        exp.LT: d < c,
        exp.LTE: d <= c,
        exp.GT: d > c,
        exp.GTE: d >= c,
    }.get(type(predicate), True)
    return left if holds else left.this


def _equality(
    ref: ColumnRef, state: dict[ColumnRef, ColumnEstimate], level: Level, value: Any
) -> Estimate:
    column = state[ref]
    if level == BASIC:
        estimate = Estimate(seed_equality(column.ndv.value), column.ndv.precision, "seed:1/V")
    else:
        estimate = equality_fraction(column, value)
    state[ref] = changed(
        column,
        ndv=Estimate(min(1.0, column.ndv.value), column.ndv.precision, "equality"),
        low=value,
        high=value,
        null_fraction=0.0,
        mcv=tuple((v, 1.0) for v, _ in column.mcv if v == value),
        restrict=(encode(value), encode(value)),
        values=(value,),
    )
    return estimate


def _in_list(predicate: exp.In, state: dict[ColumnRef, ColumnEstimate], level: Level) -> Estimate:
    ref = _column(predicate.this, state)
    column = state[ref]
    values = list(dict.fromkeys(_literal(e, column) for e in predicate.expressions))
    if level == BASIC:  # an IN list is an OR of equalities (docs/design.md#filter-selectivity)
        total = 0.0
        for _ in values:
            one = seed_equality(column.ndv.value)
            total = 1.0 - (1.0 - total) * (1.0 - one)
        estimate = Estimate(total, column.ndv.precision, "seed:or(1/V)")
    else:
        fractions = [equality_fraction(column, v) for v in values]
        total = sum(f.value for f in fractions)
        listed = {v for v, _ in column.mcv}
        unlisted = [f.value for v, f in zip(values, fractions, strict=True) if v not in listed]
        present = expected_present(column, len(unlisted))
        if present < len(unlisted):  # a sparse integer domain: not every listed key exists
            total -= sum(unlisted) * (1.0 - present / len(unlisted))
        total = clamp_fraction(total)
        sources = sorted({f.source for f in fractions})
        estimate = Estimate(
            total, weakest(*(f.precision for f in fractions)), "+".join(sources) or "in"
        )
    codes = [c for c in (encode(v) for v in values) if c is not None]
    share = estimate.value / (1.0 - column.null_fraction) if column.null_fraction < 1 else 0.0
    state[ref] = changed(
        column,
        ndv=Estimate(min(float(len(values)), column.ndv.value), ESTIMATED, "in_list"),
        null_fraction=0.0,
        # heavy hitters' shares of the rows that are left
        mcv=tuple((v, min(1.0, f / share)) for v, f in column.mcv if v in values and share > 0),
        values=tuple(values),
    )
    if codes and level != BASIC:
        state[ref] = state[ref].restricted(min(codes), max(codes))
    return estimate


def _function_in_list(predicate: exp.In, state: dict[ColumnRef, ColumnEstimate]) -> Estimate:
    """`f(x) IN (v1, ..., vk)` for a string function of one column x: for a prefix
    (`substr(x, 1, n)`, `left(x, n)`) the listed values' prefix ranges of x's distribution,
    summed (they are disjoint); for a case or trim each listed value taken as one of x's
    values, k (1 - nulls) / V(x) (docs/estimator.md, rules beyond the proposal)."""
    function = predicate.this
    refs = {r for r in (column_of(c) for c in function.find_all(exp.Column)) if r in state}
    if len(refs) != 1 or not all(_is_literal(e) for e in predicate.expressions):
        raise NotEstimable
    column = state[refs.pop()]
    values = sorted({e.name for e in predicate.expressions})
    if isinstance(function, exp.Substring | exp.Left):
        start = function.args.get("start")
        if isinstance(function, exp.Substring) and (start is None or start.name != "1"):
            raise NotEstimable
        parts = [prefix_fraction(column, v) for v in values if v]
        if not parts or any(p is None for p in parts):
            raise NotEstimable
        known = [p for p in parts if p is not None]
        return Estimate(
            clamp_fraction(sum(p.value for p in known)),
            weakest(*(p.precision for p in known)),
            f"{FUNCTION_OF_COLUMN}prefix ranges",
        )
    return Estimate(
        function_in_list_fraction(len(values), column.ndv.value, column.null_fraction),
        DEFAULT,
        f"default:{FUNCTION_OF_COLUMN}in-list 1/V",
    )


def _is_literal(expression: exp.Expr) -> bool:
    inner = expression.this if isinstance(expression, exp.Cast | exp.Paren) else expression
    return isinstance(inner, exp.Literal)


def expected_present(column: ColumnEstimate, unlisted: int) -> float:
    """Of `unlisted` IN-list values outside the most-common values, how many the column is
    expected to hold: on an integer column, its distinct values cover NDV / (max - min + 1)
    of the keys in [min, max] (TPC-H orders leave every third customer out, the Zipf data
    four in five), so k arbitrary keys find about k times that, never fewer than one."""
    if unlisted <= 1 or not ColumnType.of(column.type).integral or column.values is not None:
        return float(unlisted)
    low, high = column.low, column.high
    if not isinstance(low, int) or not isinstance(high, int) or high < low:
        return float(unlisted)
    density = min(1.0, column.ndv.value / (high - low + 1))
    return max(1.0, unlisted * density)


def _range(
    ref: ColumnRef,
    state: dict[ColumnRef, ColumnEstimate],
    level: Level,
    low: Any,
    low_inclusive: bool,
    high: Any,
    high_inclusive: bool,
    kind: str,
) -> Estimate:
    column = state[ref]
    if level == BASIC:
        count = 2 if (low is not None and high is not None) else 1
        value = SEED_INEQUALITY**count  # BETWEEN is two inequalities
        return Estimate(value, DEFAULT, "seed:1/3")
    lo, hi = encode(low), encode(high)
    if (low is not None and lo is None) or (high is not None and hi is None):
        raise NotEstimable
    non_null = 1.0 - column.null_fraction
    below_high = 1.0 if hi is None else _cdf(column, hi, high_inclusive)
    below_low = 0.0 if lo is None else _cdf(column, lo, not low_inclusive)
    if below_high is None or below_low is None:  # (of the non-NULL rows: NULL fails)
        bounded = _within_one_bound(column, lo, low_inclusive, hi, high_inclusive)
        if bounded is not None:
            return Estimate(bounded * non_null, ESTIMATED, "bound")
        return Estimate(SEED_INEQUALITY * non_null, DEFAULT, "default:1/3")
    within = clamp_fraction(below_high - below_low)
    if column.kll is not None and column.points is None and within < 2 * KLL_RANK_ERROR:
        within = narrow_range(column, lo, hi, within)
    fraction = within * non_null
    source = "kll" if column.kll is not None else "min/max"
    state[ref] = changed(
        column.restricted(lo, hi),
        ndv=Estimate(
            max(1.0, column.ndv.value * clamp_fraction(below_high - below_low)),
            ESTIMATED,
            f"{source}:range",
        ),
        null_fraction=0.0,
    )
    return Estimate(fraction, ESTIMATED, source)


def _within_one_bound(
    column: ColumnEstimate,
    lo: float | None,
    low_inclusive: bool,
    hi: float | None,
    high_inclusive: bool,
) -> float | None:
    """A one-sided comparison against a column known only to be at least its `low` (or
    at most its `high`), as a sum of non-negative values is: every value passes `x > c`
    below the bound (at the bound, all but one value's share), none passes `x < c` at or
    below it; None when the bounds do not decide."""
    low, high = encode(column.low), encode(column.high)
    one_value = 1.0 / max(column.ndv.value, 1.0)
    if hi is None and lo is not None:  # x > lo
        return _past(lo, low_inclusive, low, high, one_value)
    if lo is None and hi is not None:  # x < hi, as -x > -hi
        least = None if high is None else -high
        most = None if low is None else -low
        return _past(-hi, high_inclusive, least, most, one_value)
    return None


def _past(
    bound: float, inclusive: bool, least: float | None, most: float | None, one_value: float
) -> float | None:
    """The share of values x > bound (>= when inclusive) of a column whose values are at
    least `least` and at most `most` (either unknown), where they decide it."""
    if least is not None:
        if bound < least or (bound == least and inclusive):
            return 1.0
        if bound == least:
            return 1.0 - one_value
    if most is not None and (bound > most or (bound == most and not inclusive)):
        return 0.0
    return None


def narrow_range(
    column: ColumnEstimate, lo: float | None, hi: float | None, from_kll: float
) -> float:
    """A range narrower than KLL's rank error: KLL only bounds it (within +-error), so take
    the range's share of the value domain, kept inside those bounds."""
    above = 0.0 if lo is None else column.linear_cdf(lo)
    below = 1.0 if hi is None else column.linear_cdf(hi)
    if above is None or below is None:
        return from_kll
    step = 1.0 if ColumnType.of(column.type).integral or column.type == "date" else 0.0
    span = (encode(column.high) or 0.0) - (encode(column.low) or 0.0) + step
    linear = clamp_fraction(below - above + (step / span if span > 0 and lo == hi else 0.0))
    return min(max(linear, from_kll - KLL_RANK_ERROR, 0.0), from_kll + KLL_RANK_ERROR)


def _cdf(column: ColumnEstimate, code: float, inclusive: bool) -> float | None:
    """P(x < code) (inclusive: <=) among non-null values: KLL where there is one, else
    a uniform spread between min and max (strings: by their encoded prefix)."""
    value = column.cdf(code, inclusive)
    if value is not None:
        return value
    return column.linear_cdf(code)


def _like(predicate: exp.Like, state: dict[ColumnRef, ColumnEstimate], level: Level) -> Estimate:
    ref = _column(predicate.this, state)
    pattern = predicate.expression
    if not isinstance(pattern, exp.Literal) or not pattern.is_string:
        raise NotEstimable
    text = pattern.this
    prefix = text.split("%", 1)[0].split("_", 1)[0]
    exact_prefix = text == prefix + "%" and "\\" not in prefix
    if level == BASIC or not exact_prefix or not prefix:
        return Estimate(DEFAULT_LIKE, DEFAULT, "default:like")
    column = state[ref]
    estimate = prefix_fraction(column, prefix)
    if estimate is None:
        return Estimate(DEFAULT_LIKE, DEFAULT, "default:like")
    state[ref] = column.restricted(*_prefix_codes(prefix))
    return estimate


def _prefix_codes(prefix: str) -> tuple[float, float]:
    """The encoded range [lo, hi) of the strings that start with `prefix`."""
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return encode_string(prefix), encode_string(upper)


def prefix_fraction(column: ColumnEstimate, prefix: str) -> Estimate | None:
    """The share of the rows whose value starts with `prefix` (a non-empty string): its
    most-common values, and the distribution's mass between the prefix and its successor;
    None when the column has no distribution."""
    matched = [f for v, f in column.mcv if isinstance(v, str) and v.startswith(prefix)]
    lo, hi = _prefix_codes(prefix)
    below_hi, below_lo = _cdf(column, hi, False), _cdf(column, lo, False)
    if below_hi is None or below_lo is None:
        return None
    spread = clamp_fraction(below_hi - below_lo)
    rest = max(0.0, 1.0 - column.null_fraction - column.mcv_total())
    value = sum(matched) + spread * rest
    if column.kll is None and column.points is None:
        # the prefix's share of [min, max] with every byte equally likely: a guess (a
        # six-letter prefix gets 256^-6 of the range), which a row sample may overrule
        return Estimate(clamp_fraction(value), DEFAULT, "default:prefix between min/max")
    return Estimate(clamp_fraction(value), ESTIMATED, "mcv+prefix range")


def _null_fraction_of(predicate: exp.Expr, state: dict[ColumnRef, ColumnEstimate]) -> float:
    """NOT p is false where p's column is NULL (three-valued logic)."""
    refs = [r for r in (column_of(c) for c in predicate.find_all(exp.Column)) if r in state]
    if len(refs) != 1 or isinstance(predicate, exp.Is):
        return 0.0
    return state[refs[0]].null_fraction


def _column(expression: exp.Expr, state: dict[ColumnRef, ColumnEstimate]) -> ColumnRef:
    ref = _maybe_column(expression, state)
    if ref is None:
        raise NotEstimable
    return ref


def _shifted_columns(
    left: exp.Expr, right: exp.Expr, state: dict[ColumnRef, ColumnEstimate]
) -> tuple[ColumnRef, ColumnRef] | None:
    """The two columns of `a = b + c` or `a = b - c` (either side; c a numeric literal),
    as TPC-DS compares a week with the same week a year later; else None."""
    for column_side, shifted_side in ((left, right), (right, left)):
        a = _maybe_column(column_side, state)
        inner = shifted_side.this if isinstance(shifted_side, exp.Paren) else shifted_side
        if a is None or not isinstance(inner, exp.Add | exp.Sub):
            continue
        for operand, offset in ((inner.left, inner.right), (inner.right, inner.left)):
            b = _maybe_column(operand, state)
            if isinstance(inner, exp.Sub) and operand is inner.right:
                continue  # c - b runs the other way
            if b is not None and isinstance(offset, exp.Literal) and not offset.is_string:
                known = DEFAULT not in (state[a].ndv.precision, state[b].ndv.precision)
                return (a, b) if known else None  # (a rank's values: not known)
    return None


def _maybe_column(expression: exp.Expr, state: dict[ColumnRef, ColumnEstimate]) -> ColumnRef | None:
    if isinstance(expression, exp.Cast):  # CAST(col AS same-family type) keeps the order
        return _maybe_column(expression.this, state)
    ref = column_of(expression)
    return ref if ref is not None and ref in state else None


def _literal(expression: exp.Expr, column: ColumnEstimate) -> Any:
    """A literal (possibly CAST, negated, DATE '...') as a value of the column's type."""
    if isinstance(expression, exp.Paren):
        return _literal(expression.this, column)
    if isinstance(expression, exp.Cast | exp.TsOrDsToDate):
        return _literal(expression.this, column)
    if isinstance(expression, exp.Neg):
        value = _literal(expression.this, column)
        if isinstance(value, int | float | Decimal):
            return -value
        raise NotEstimable
    if isinstance(expression, exp.Boolean):
        return bool(expression.this)
    if not isinstance(expression, exp.Literal):
        raise NotEstimable
    return _typed(expression.this, expression.is_string, column.type)


def _typed(text: str, is_string: bool, type_: str) -> Any:
    try:
        if ColumnType.of(type_).integral:
            return int(Decimal(text)) if Decimal(text) == int(Decimal(text)) else float(text)
        if type_ in ("float", "double"):
            return float(text)
        if type_.startswith("decimal"):
            return Decimal(text)
        if type_ == "date":
            return dt.date.fromisoformat(text.strip()[:10])
        if type_.startswith("timestamp"):
            return dt.datetime.fromisoformat(text.strip())
        if type_ == "boolean":
            return text.lower() == "true"
    except (ValueError, InvalidOperation):
        raise NotEstimable from None
    return text
