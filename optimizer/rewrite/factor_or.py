"""Conjuncts common to every branch of an OR factored out of it (Spark's
BooleanSimplification), so that a join condition repeated in each branch becomes a join key.

>>> from sqlglot import parse_one
>>> [c.sql() for c in factor_or(parse_one("(a.k = b.k AND a.x = 1) OR (a.k = b.k AND b.y = 2)"))]
['a.k = b.k', 'a.x = 1 OR b.y = 2']
"""

from __future__ import annotations

from sqlglot import exp

from optimizer.plan import conjuncts


def factor_or(predicate: exp.Expr) -> list[exp.Expr]:
    """`(a AND x) OR (a AND y)` as [a, x OR y] (as [a] when a branch is `a` alone: the OR
    then always holds); anything else is returned as it is."""
    inner = predicate.this if isinstance(predicate, exp.Paren) else predicate
    if not isinstance(inner, exp.Or):
        return [predicate]
    branches = [conjuncts(b) for b in _disjuncts(inner)]
    # conjuncts compared by structure (sqlglot's hash and equality: the same tree, not the
    # same text, which costs a copy and a generation of every conjunct to print)
    others = [set(branch) for branch in branches[1:]]
    common_by_tree: dict[exp.Expr, exp.Expr] = {}
    for c in branches[0]:
        if all(c in other for other in others):
            common_by_tree[c] = c  # (the last of equal ones, in the first one's place)
    common = list(common_by_tree.values())
    if not common:
        return [predicate]
    rests = [[c for c in branch if c not in common_by_tree] for branch in branches]
    result = [c.copy() for c in common]
    if all(rests):
        branches_left = [exp.and_(*(c.copy() for c in rest), copy=False) for rest in rests]
        result.append(exp.or_(*branches_left, copy=False))
    return result


def _disjuncts(expression: exp.Expr) -> list[exp.Expr]:
    if isinstance(expression, exp.Paren):
        return _disjuncts(expression.this)
    if isinstance(expression, exp.Or):
        return _disjuncts(expression.left) + _disjuncts(expression.right)
    return [expression]
