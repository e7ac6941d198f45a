"""A sqlglot tree printed as SQL without the copy sqlglot makes first, where printing cannot
change it: `expression.sql()` deep-copies the tree because a dialect's generator may rewrite
nodes in place while printing them (Spark's and Hive's rewrite SELECT, FROM and table nodes:
QUALIFY into a subquery, ...). A predicate or scalar tree holds none of those: the planner
prints many (a plan's details, the keys its caches are kept under), and the copy was most of
the time of printing one (q19's join condition).

>>> from sqlglot import parse_one
>>> sql_text(parse_one("a.x > 1 AND a.y IN (1, 2)"), "spark")
'a.x > 1 AND a.y IN (1, 2)'
"""

from __future__ import annotations

from sqlglot import exp

# the nodes a generator may rewrite in place while printing a tree (Spark's, Hive's and the
# default generator's TRANSFORMS that preprocess: Select, From, Table, Pivot, ...)
_REWRITTEN_WHEN_PRINTED = (
    exp.Query,
    exp.Create,
    exp.From,
    exp.Pivot,
    exp.WithinGroup,
    exp.Array,
    exp.Table,
)


def sql_text(expression: exp.Expr, dialect: str | None = None) -> str:
    """`expression` as `expression.sql(dialect)` prints it, and the tree left as it was; a
    tree holding none of the nodes a generator rewrites is printed without a copy."""
    copy = expression.find(*_REWRITTEN_WHEN_PRINTED) is not None
    return expression.sql(dialect, copy=copy)
