"""The column an output expression makes of its input's columns (a projection's, an
aggregate's grouping keys and outputs): a column reference keeps its statistics, a literal
is one value in every row, a function of one column has at most its distinct values
(docs/estimator.md: `_constant_column`)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from optimizer.estimate.column import ColumnEstimate, unknown_column
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
