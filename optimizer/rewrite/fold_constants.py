"""Constant arithmetic folded as Spark's optimizer does (ConstantFolding): DATE 'd' +-
INTERVAL 'n' DAY / WEEK / MONTH / YEAR becomes a DATE literal, + - * of two numbers a
number, so that partition filters and estimates see literals. Subqueries are left alone
(they are folded when planned).

>>> from sqlglot import parse_one
>>> [c.sql() for c in fold_constants(parse_one("d < DATE '1998-12-01' - INTERVAL '90' DAY"))]
["d < CAST('1998-09-02' AS DATE)"]
>>> folded(parse_one("x BETWEEN 0.06 - 0.01 AND 0.06 + 0.01")).sql()
'x BETWEEN 0.05 AND 0.07'
"""

from __future__ import annotations

import calendar
import datetime as dt
from decimal import Decimal, InvalidOperation

from sqlglot import exp


def fold_constants(conjunct: exp.Expr) -> list[exp.Expr]:
    """The rule (optimizer.rewrite.RULES): the conjunct folded, changed in place."""
    return [folded(conjunct)]


def folded(expression: exp.Expr) -> exp.Expr:
    """`expression` with its constant arithmetic folded; modifies and returns it."""

    def walk(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Query | exp.Subquery):
            return node
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expr):
                new = walk(value)
                if new is not value:
                    node.set(key, new)
            elif isinstance(value, list):
                values = [walk(v) if isinstance(v, exp.Expr) else v for v in value]
                if any(a is not b for a, b in zip(values, value, strict=True)):
                    node.set(key, values)
        return _fold(node)

    if expression.find(exp.Add, exp.Sub, exp.Mul) is None:
        return expression  # nothing to fold (most conjuncts: no walk, no node set again)
    return walk(expression)


def _fold(node: exp.Expr) -> exp.Expr:
    if not isinstance(node, exp.Add | exp.Sub | exp.Mul):
        return node
    left, right = node.left, node.right
    day = _date_literal(left)
    if day is not None and isinstance(node, exp.Add | exp.Sub):
        shifted = _shift(day, right, -1 if isinstance(node, exp.Sub) else 1)
        if shifted is not None:
            return exp.cast(exp.Literal.string(shifted.isoformat()), exp.DataType.Type.DATE)
        return node
    a, b = _number(left), _number(right)
    if a is None or b is None:
        return node
    value = a + b if isinstance(node, exp.Add) else a - b if isinstance(node, exp.Sub) else a * b
    return exp.Literal.number(str(value))


def _date_literal(expression: exp.Expr) -> dt.date | None:
    if (
        isinstance(expression, exp.Cast)
        and expression.to.this == exp.DataType.Type.DATE
        and isinstance(expression.this, exp.Literal)
        and expression.this.is_string
    ):
        try:
            return dt.date.fromisoformat(expression.this.this.strip())
        except ValueError:
            return None
    return None


def _shift(day: dt.date, interval: exp.Expr, sign: int) -> dt.date | None:
    if not isinstance(interval, exp.Interval) or not isinstance(interval.this, exp.Literal):
        return None
    unit = interval.args.get("unit")
    text = interval.this.this.strip()
    if unit is None or not text.lstrip("-").isdigit():
        return None
    count, name = sign * int(text), unit.name.upper().rstrip("S")
    if name in ("DAY", "WEEK"):
        return day + dt.timedelta(days=count * (7 if name == "WEEK" else 1))
    if name not in ("MONTH", "YEAR"):
        return None
    months = day.year * 12 + day.month - 1 + count * (12 if name == "YEAR" else 1)
    year, month = divmod(months, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last))  # Spark: clamped to the month's end


def _number(expression: exp.Expr) -> Decimal | None:
    if isinstance(expression, exp.Paren):
        return _number(expression.this)
    if isinstance(expression, exp.Literal) and not expression.is_string:
        try:
            return Decimal(expression.this)
        except InvalidOperation:
            return None
    return None
