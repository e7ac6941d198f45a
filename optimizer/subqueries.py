"""The subqueries of a WHERE or HAVING conjunct, as optimizer.sql_to_plan plans them: an
`IN` / `EXISTS` predicate (a semi or anti join), or scalar subqueries that can be
decorrelated (an aggregate whose correlated conjuncts are equalities). Analysis only:
nothing here changes the statement."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from optimizer.plan import JoinKind, conjuncts
from optimizer.sql_scope import free_aliases, scope_aliases


def subquery_predicate(predicate: exp.Expr) -> tuple[JoinKind, exp.Expr] | None:
    """("semi" or "anti", the IN or EXISTS expression) of `[NOT] IN (subquery)` and
    `[NOT] EXISTS`, else None."""
    negated = isinstance(predicate, exp.Not)
    inner = predicate.this if negated else predicate
    if isinstance(inner, exp.In) and inner.args.get("query") is not None:
        return ("anti" if negated else "semi"), inner
    if isinstance(inner, exp.Exists):
        return ("anti" if negated else "semi"), inner
    return None


@dataclass
class ScalarSubquery:
    """A scalar subquery of a predicate: its SELECT, and for a correlated one the pairs
    (outer column, inner column) of its correlation equalities and those conjuncts."""

    subquery: exp.Subquery
    select: exp.Select
    pairs: list[tuple[exp.Column, exp.Column]]
    correlated: list[exp.Expr]


def scalar_subqueries(predicate: exp.Expr, available: set[str]) -> list[ScalarSubquery] | None:
    """The scalar subqueries of a conjunct when each can be decorrelated against a plan
    whose relations are `available` (None when the conjunct has none, or one that cannot:
    it then stays an ordinary predicate, as it always did)."""
    found = [
        s
        for s in predicate.find_all(exp.Subquery, exp.Exists, exp.In)
        if _outermost(s, predicate) and (not isinstance(s, exp.In) or s.args.get("query"))
    ]
    if not found or not all(isinstance(s, exp.Subquery) for s in found):
        return None
    scalars = []
    for subquery in found:
        assert isinstance(subquery, exp.Subquery)
        select = subquery.this
        if not isinstance(select, exp.Select) or len(select.expressions) != 1:
            return None
        scope = scope_aliases(select)
        if not free_aliases(select, set()):
            scalars.append(ScalarSubquery(subquery, select, [], []))
            continue
        where = conjuncts(select.args.get("where") and select.args["where"].this)
        correlated = [c for c in where if free_aliases(c, scope)]
        outside = select.copy()
        outside.set("where", None)
        rest_free = free_aliases(outside, set())  # correlation outside WHERE
        aggregated = any(p.find(exp.AggFunc) for p in select.expressions)
        if (
            rest_free
            or not aggregated
            or any(select.args.get(k) is not None for k in ("group", "having", "limit", "order"))
        ):
            return None
        pairs = []
        for c in correlated:
            pair = _correlation_pair(c, scope)
            if pair is None or pair[0].table.lower() not in available:
                return None
            pairs.append(pair)
        scalars.append(ScalarSubquery(subquery, select, pairs, correlated))
    return scalars


def _outermost(node: exp.Expr, root: exp.Expr) -> bool:
    """No other subquery (or IN/EXISTS) between `node` and `root`."""
    parent = node.parent
    while parent is not None and parent is not root:
        if isinstance(parent, exp.Subquery | exp.Exists | exp.In | exp.Query):
            return False
        parent = parent.parent
    return True


def _correlation_pair(conjunct: exp.Expr, scope: set[str]) -> tuple[exp.Column, exp.Column] | None:
    """(outer column, inner column) of a correlation equality, else None."""
    if not isinstance(conjunct, exp.EQ):
        return None
    a, b = conjunct.left, conjunct.right
    if not (isinstance(a, exp.Column) and isinstance(b, exp.Column) and a.table and b.table):
        return None
    a_inner, b_inner = a.table.lower() in scope, b.table.lower() in scope
    if a_inner and not b_inner:
        return b, a
    if b_inner and not a_inner:
        return a, b
    return None
