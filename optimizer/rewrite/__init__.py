"""Rewrites of a SELECT's WHERE as optimizer.sql_to_plan maps it, in this order:

1. RULES, on each conjunct without a subquery (a copy of the statement's, which a rule may
   change): each maps a conjunct to the conjuncts that replace it. A caller may pass its
   own.
2. push_down, last: it places the conjuncts the rules make on the joins of the SELECT's
   FROM list, as written (optimizer.rewrite.push_down).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlglot import exp

from optimizer.plan import Node
from optimizer.rewrite.factor_or import factor_or
from optimizer.rewrite.fold_constants import fold_constants
from optimizer.rewrite.push_down import push_down

ConjunctRule = Callable[[exp.Expr], list[exp.Expr]]

RULES: tuple[ConjunctRule, ...] = (
    # first: partition filters and estimates see literals, and OR factoring compares the
    # branches' folded text
    fold_constants,
    # last: a join condition repeated in every branch of an OR leaves it, so the push-down
    # makes it a join key
    factor_or,
)


def rewrite_where(
    written: Node,
    names: Sequence[str],
    where: Sequence[exp.Expr],
    rules: Sequence[ConjunctRule] = RULES,
) -> Node:
    """`written`, the FROM list's relations (named `names`) joined as the query writes
    them, with the WHERE's conjuncts `where` rewritten by `rules` and pushed down."""
    return push_down(written, names, [part for c in where for part in rewrite_conjunct(c, rules)])


def rewrite_conjunct(conjunct: exp.Expr, rules: Sequence[ConjunctRule] = RULES) -> list[exp.Expr]:
    """The conjuncts that replace `conjunct` (changed in place) after every rule."""
    result = [conjunct]
    for rule in rules:
        result = [part for c in result for part in rule(c)]
    return result
