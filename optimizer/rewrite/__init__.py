"""Rewrites of a SELECT's WHERE conjuncts, before optimizer.sql_to_plan places them on the
SELECT's join tree (pushed onto one relation, made join keys, or kept above the joins).

Each rule maps a conjunct (a copy of the statement's, which it may change) to the conjuncts
that replace it; RULES lists them in the order they run. A caller may pass its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from optimizer.rewrite.factor_or import factor_or
from optimizer.rewrite.fold_constants import fold_constants

ConjunctRule = Callable[[exp.Expr], list[exp.Expr]]

RULES: tuple[ConjunctRule, ...] = (
    # first: partition filters and estimates see literals, and OR factoring compares the
    # branches' folded text
    fold_constants,
    # last: a join condition repeated in every branch of an OR leaves it, and placing the
    # conjuncts makes it a join key
    factor_or,
)


def rewrite_conjunct(conjunct: exp.Expr, rules: Sequence[ConjunctRule] = RULES) -> list[exp.Expr]:
    """The conjuncts that replace `conjunct` (changed in place) after every rule."""
    result = [conjunct]
    for rule in rules:
        result = [part for c in result for part in rule(c)]
    return result
