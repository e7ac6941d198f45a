"""LEFT outer joins whose added NULLs the WHERE rejects, planned as inner joins (Spark's
EliminateOuterJoin; docs/design.md#planning-pipeline).

A LEFT join adds, for each left row without a match, one row whose right-side columns are
NULL. A conjunct of the WHERE that is never true when one of those columns is NULL (a
comparison, BETWEEN, IN list or LIKE reading the column itself, or `x IS NOT NULL`) removes
every such row again, so the join returns what an inner join returns; as an inner join it
joins the FROM list's group of inner joins, whose order the planner chooses (TPC-DS q93:
store_returns joins the filtered reason before store_sales).

>>> from sqlglot import parse_one
>>> q = parse_one("SELECT * FROM s AS s LEFT JOIN r AS r ON s.k = r.k, x AS x "
...     "WHERE r.c = x.c AND x.d = 1")
>>> outer_to_inner(q)
1
>>> q.sql()
'SELECT * FROM s AS s JOIN r AS r ON s.k = r.k, x AS x WHERE r.c = x.c AND x.d = 1'
"""

from __future__ import annotations

from sqlglot import exp

from optimizer.plan import conjuncts

NULL_REJECTING = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like)


def outer_to_inner(statement: exp.Expr) -> int:
    """Turn, in place, each LEFT outer join of a SELECT whose WHERE rejects its NULLs into
    an inner join; the number turned."""
    turned = 0
    for select in statement.find_all(exp.Select):
        where = select.args.get("where")
        if where is None:
            continue
        found = conjuncts(where.this)
        for join in select.args.get("joins") or ():
            if (join.side or "").upper() != "LEFT" or (join.kind or "").upper() not in (
                "",
                "OUTER",
            ):
                continue
            alias = join.this.alias_or_name.lower()
            if alias and any(_rejects_nulls(c, alias) for c in found):
                join.set("side", None)
                join.set("kind", None)
                turned += 1
    return turned


def _rejects_nulls(condition: exp.Expr, alias: str) -> bool:
    """`condition` is not true when a column of `alias` it reads directly is NULL."""
    if isinstance(condition, exp.Not) and isinstance(condition.this, exp.Is):
        return _of(condition.this.this, alias) and isinstance(condition.this.expression, exp.Null)
    if isinstance(condition, NULL_REJECTING):
        return _of(condition.this, alias) or _of(condition.expression, alias)
    if isinstance(condition, exp.Between):
        return _of(condition.this, alias)
    if isinstance(condition, exp.In) and not condition.args.get("query"):
        return _of(condition.this, alias)
    return False


def _of(operand: exp.Expr, alias: str) -> bool:
    return isinstance(operand, exp.Column) and operand.table.lower() == alias
