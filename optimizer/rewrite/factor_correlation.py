"""A correlation equality common to every branch of an OR in a subquery's WHERE factored out
of the OR, in the statement itself, so that the subquery can be decorrelated (its
correlation a conjunct of its WHERE) and the SQL written back holds the same WHERE: TPC-DS
q41's `(SELECT COUNT(*) FROM item WHERE (i_manufact = i1.i_manufact AND ...) OR
(i_manufact = i1.i_manufact AND ...)) > 0`. `(a AND x) OR (a AND y)` is `a AND (x OR y)`
(Spark's BooleanSimplification makes the same rewrite)."""

from __future__ import annotations

from sqlglot import exp

from optimizer.plan import conjuncts
from optimizer.rewrite.factor_or import factor_or
from optimizer.sql_scope import free_aliases, scope_aliases


def factor_correlations(statement: exp.Expr) -> None:
    """Every subquery's WHERE in `statement` (changed in place) with the correlated
    conjuncts common to the branches of its ORs factored out of them; a WHERE whose ORs
    share no correlated conjunct is left as written."""
    for subquery in list(statement.find_all(exp.Subquery)):
        select = subquery.this
        where = select.args.get("where") if isinstance(select, exp.Select) else None
        if where is None or not where.this.find(exp.Or):
            continue
        scope = scope_aliases(select)
        parts: list[exp.Expr] = []
        changed = False
        for conjunct in conjuncts(where.this):
            factored = factor_or(conjunct) if isinstance(_inner(conjunct), exp.Or) else [conjunct]
            common = [f for f in factored if not isinstance(_inner(f), exp.Or)]
            if factored != [conjunct] and any(free_aliases(f, scope) for f in common):
                parts.extend(factored)
                changed = True
            else:
                parts.append(conjunct)
        if changed:
            where.set("this", exp.and_(*parts, copy=False))


def _inner(expression: exp.Expr) -> exp.Expr:
    return expression.this if isinstance(expression, exp.Paren) else expression
