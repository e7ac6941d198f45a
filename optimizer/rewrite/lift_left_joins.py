"""A LEFT join written before a FROM list's inner joins moved after them
(docs/design.md#planning-pipeline).

`FROM a LEFT JOIN b ON <a and b> , c, d WHERE ...` (TPC-DS q40, q80: sales LEFT JOIN
returns, then the dimensions) is `FROM a, c, d LEFT JOIN b ON <a and b> WHERE ...`: every row
of `a` is kept with its matches in `b` (or NULLs) either way, and the inner joins read `a`'s
columns only, so the FROM clause produces the same rows. Written first, the LEFT join reads
every sales row before the dimensions' filters; moved, the inner joins form a group whose
order the planner chooses, and the LEFT join reads what is left of it. Whether the moved form
is kept is the planner's cost comparison (optimizer.physical.api). It reads qualified
statements, whose `*` is expanded: the FROM list's order no longer orders the columns.

>>> from sqlglot import parse_one
>>> q = parse_one("SELECT * FROM a AS a LEFT JOIN b AS b ON a.k = b.k, c AS c "
...     "WHERE a.j = c.j AND c.x = 1")
>>> lift_left_joins(q)
1
>>> q.sql()
'SELECT * FROM a AS a CROSS JOIN c AS c LEFT JOIN b AS b ON a.k = b.k WHERE a.j = c.j AND c.x = 1'
"""

from __future__ import annotations

from sqlglot import exp

from optimizer.sql_scope import is_plain_join


def lift_left_joins(statement: exp.Expr) -> int:
    """Move, in place, the LEFT join that is the first join of a SELECT's FROM list after
    the plain inner joins that follow it, when its ON reads only the first relation and its
    own, and their ON conditions do not read it; the number moved."""
    lifted = 0
    for select in statement.find_all(exp.Select):
        joins = list(select.args.get("joins") or ())
        from_ = select.args.get("from_")
        if from_ is None or len(joins) < 2 or not _movable(joins[0], from_.this):
            continue
        rest = joins[1:]
        inner = 0
        while inner < len(rest) and is_plain_join(rest[inner]):
            inner += 1
        alias = joins[0].this.alias_or_name.lower()
        if inner == 0 or any(alias in _aliases(j) for j in rest[:inner]):
            continue
        for join in rest[:inner]:  # written as joins: after commas, the LEFT join's ON
            if not join.kind and not join.args.get("on"):  # would not see the first relation
                join.set("kind", "CROSS")
        select.set("joins", [*rest[:inner], joins[0], *rest[inner:]])
        lifted += 1
    return lifted


def _movable(join: exp.Join, first: exp.Expr) -> bool:
    """A LEFT outer join with an ON that reads only `first` and the joined relation."""
    if (join.side or "").upper() != "LEFT" or (join.kind or "").upper() not in ("", "OUTER"):
        return False
    if join.args.get("using") or join.args.get("on") is None:
        return False
    if not isinstance(join.this, exp.Table | exp.Subquery) or not join.this.alias_or_name:
        return False
    read = _aliases(join.args["on"])
    own = {join.this.alias_or_name.lower(), first.alias_or_name.lower()}
    return bool(read) and read <= own and not join.args["on"].find(exp.Select)


def _aliases(expression: exp.Expr) -> set[str]:
    return {c.table.lower() for c in expression.find_all(exp.Column) if c.table}
