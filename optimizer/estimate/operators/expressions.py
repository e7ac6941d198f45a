"""The column an output expression makes of its input's columns (a projection's, an
aggregate's grouping keys and outputs): a column reference keeps its statistics, a literal
is one value in every row, a function of one column has at most its distinct values
(docs/estimator.md: `_constant_column`)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from optimizer.estimate.column import ColumnEstimate, is_number, unknown_column
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.values import EXACT, Estimate
from optimizer.plan import column_of


def expression_column(expression: exp.Expr, child: NodeStats) -> ColumnEstimate:
    """An output expression over the child's columns: a column as the child has it, a
    literal as one value, a function of one column with at most its distinct values."""
    ref = column_of(expression)
    if ref is not None and ref in child.columns:
        return child.columns[ref]
    constant = _constant_column(expression)
    if constant is not None:
        return constant
    refs = [column_of(c) for c in expression.find_all(exp.Column)]
    inputs = [child.columns[r] for r in refs if r is not None and r in child.columns]
    if len(inputs) == 1:  # a function of one column has at most its distinct values
        only = inputs[0]
        return replace(
            unknown_column(child.rows.value),
            ndv=Estimate(only.ndv.value, only.ndv.precision, "function of one column"),
        )
    return unknown_column(child.rows.value)


def _constant_column(expression: exp.Expr) -> ColumnEstimate | None:
    """A literal (or a CAST of one) projected as a column: one value in every row."""
    inner = expression
    while isinstance(inner, exp.Cast | exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.Null):
        return ColumnEstimate("unknown", Estimate(0.0, EXACT, "NULL"), null_fraction=1.0)
    if not isinstance(inner, exp.Literal):
        return None
    value: Any = inner.this
    if not inner.is_string:
        try:
            number = Decimal(inner.this)
        except InvalidOperation:
            return None
        value = int(number) if number == number.to_integral_value() else number
    return ColumnEstimate(
        "string" if inner.is_string else "decimal",
        Estimate(1.0, EXACT, "constant"),
        low=value,
        high=value,
        mcv=((value, 1.0),),
        values=(value,),
        width=float(len(str(value))),
    )


def value_bounds(expression: exp.Expr, child: NodeStats) -> tuple[float, float] | None:
    """Bounds of a numeric expression's values over the child's rows by interval arithmetic
    on its columns' min and max: + and - of columns and literals, * and / by a positive
    literal; None for anything else."""
    inner = expression
    while isinstance(inner, exp.Paren | exp.Cast):
        inner = inner.this
    ref = column_of(inner)
    if ref is not None:
        column = child.columns.get(ref)
        if column is None or not is_number(column.low) or not is_number(column.high):
            return None
        return float(column.low), float(column.high)
    if isinstance(inner, exp.Literal) and not inner.is_string:
        try:
            number = float(inner.this)
        except ValueError:
            return None
        return number, number
    if not isinstance(inner, exp.Add | exp.Sub | exp.Mul | exp.Div):
        return None
    left, right = value_bounds(inner.left, child), value_bounds(inner.right, child)
    if left is None or right is None:
        return None
    if isinstance(inner, exp.Add):
        return left[0] + right[0], left[1] + right[1]
    if isinstance(inner, exp.Sub):
        return left[0] - right[1], left[1] - right[0]
    if right[0] == right[1] and right[0] > 0:  # by a positive constant
        factor = right[0] if isinstance(inner, exp.Mul) else 1.0 / right[0]
        return left[0] * factor, left[1] * factor
    return None
