"""Where a plan join comes from in the qualified statement, for the passes that write the
query back as SQL (optimizer.physical.emit_spark, optimizer.physical.key_transfer). A Join
carries these facts itself (optimizer.plan.Join: `select`, `scalar`, `semi`), so a join
rebuilt over new children keeps them.

Origins compare by identity: two subqueries written alike are still two subqueries.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from sqlglot import exp

from optimizer.plan import JoinKind, conjuncts
from optimizer.sql_scope import from_items, plain_from_items, relation_names

NULL_ON_NO_ROWS = (exp.Min, exp.Max, exp.Sum, exp.Avg)
NULL_PROPAGATING = (exp.Paren, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg, exp.Cast)
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


@dataclass(frozen=True, eq=False)
class ScalarOrigin:
    """A correlated scalar subquery of `select`'s WHERE that a Join decorrelated, as the
    derived table that join reads: `(derived) AS alias ON on`, its value `alias.value`."""

    select: exp.Select
    subquery: exp.Subquery  # the node of the qualified statement
    alias: str
    keys: tuple[tuple[str, exp.Expr], ...]  # (name, inner correlated column)
    value: str
    value_expression: exp.Expr  # the subquery's projection
    correlated: frozenset[str]  # its correlated conjuncts, as SQL
    on: exp.Expr  # outer column = alias.key, for each correlation equality

    @cached_property
    def writable(self) -> bool:
        """Whether SQL can say this join in place of the subquery: it returns the same rows
        (the value is NULL over no rows, and the WHERE conjunct holding it is a comparison,
        NULL when the value is, so a row without a group fails it either way), the SELECT's
        FROM list is plain inner joins, and no table or alias of the statement is named
        like the derived table."""
        return (
            self.alias not in relation_names(self.select.root())
            and plain_from_items(self.select) is not None
            and _null_when_no_rows(self.value_expression)
            and _fails_on_null(self.subquery, self.select)
        )

    def derived(self, body: exp.Select) -> exp.Select:
        """`body` (the subquery's SELECT, or a rewriting of it) made, in place, the derived
        table: without the correlated conjuncts, projecting the keys and the value, grouped
        by the keys."""
        derived = body
        where = derived.args.get("where")
        kept = [c for c in conjuncts(where and where.this) if c.sql() not in self.correlated]
        columns = [column.copy() for _, column in self.keys]
        derived.set(
            "expressions",
            [exp.alias_(c, name) for c, (name, _) in zip(columns, self.keys, strict=True)]
            + [exp.alias_(self.value_expression.copy(), self.value)],
        )
        derived.set("where", exp.Where(this=exp.and_(*kept, copy=False)) if kept else None)
        derived.set("group", exp.Group(expressions=[c.copy() for c in columns]))
        return derived


@dataclass(frozen=True, eq=False)
class SemiOrigin:
    """The SELECT of an `EXISTS`, `NOT EXISTS` or `IN` subquery (`select`, the node of the
    qualified statement) that a semi or anti Join planned, when a semi join may be added to
    its FROM list without changing the predicate (key_transfer): plain inner joins, no
    grouping, aggregate or LIMIT, and for IN a projected column of its own relations
    (`projected`; None for EXISTS). NOT IN is never one: dropping the subquery's NULL keys
    would change its answer."""

    select: exp.Select
    projected: exp.Column | None
    outer: exp.Select  # the SELECT whose WHERE holds the predicate

    @staticmethod
    def of(
        kind: JoinKind, inner: exp.Expr, query: exp.Expr, outer: exp.Select
    ) -> SemiOrigin | None:
        """`kind`: the semi or anti join planned for `inner` (the EXISTS or IN expression,
        without its NOT), `query` its subquery's SELECT."""
        if not isinstance(query, exp.Select) or (kind == "anti" and isinstance(inner, exp.In)):
            return None
        if plain_from_items(query) is None or any(
            query.args.get(k) for k in ("group", "having", "limit", "qualify", "offset")
        ):
            return None
        if any(e.find(exp.AggFunc, exp.Window) for e in query.expressions):
            return None
        if not isinstance(inner, exp.In):
            return SemiOrigin(query, None, outer)
        if len(query.expressions) != 1:
            return None
        column = query.expressions[0].unalias()
        own = {i.alias_or_name.lower() for i in from_items(query)}
        if not isinstance(column, exp.Column) or column.table.lower() not in own:
            return None
        return SemiOrigin(query, column, outer)


def _null_when_no_rows(value: exp.Expr) -> bool:
    """An aggregate expression that is NULL over no rows: MIN, MAX, SUM, AVG and arithmetic
    on them and on literals (not COUNT, not COALESCE, no column outside the aggregates)."""
    for part in value.walk():
        if isinstance(part, exp.AggFunc) and not isinstance(part, NULL_ON_NO_ROWS):
            return False
        allowed = isinstance(part, (exp.AggFunc, exp.Literal, *NULL_PROPAGATING))
        if not allowed and part.find_ancestor(exp.AggFunc) is None:
            return False
    return True


def _fails_on_null(subquery: exp.Subquery, select: exp.Select) -> bool:
    """The subquery sits, through NULL-propagating arithmetic, in a comparison that is a
    conjunct of the SELECT's WHERE."""
    node: exp.Expr | None = subquery.parent
    while isinstance(node, NULL_PROPAGATING):
        node = node.parent
    if not isinstance(node, COMPARISONS):
        return False
    where = select.args.get("where")
    return where is not None and any(node is c for c in conjuncts(where.this))
