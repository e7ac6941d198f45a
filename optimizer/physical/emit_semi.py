"""`--emit spark`: an EXISTS or NOT EXISTS the plan answers with a map join hashing the
subquery, written out as that join: `LEFT SEMI JOIN` / `LEFT ANTI JOIN (SELECT <the inner
columns of the correlation> FROM ... WHERE <the uncorrelated conditions>) AS _sjN ON <the
correlation>` at the end of the FROM list, with BROADCAST(_sjN).

Spark rewrites the predicate into the same join (RewritePredicateSubquery: the correlated
conditions become the join's condition), after hints are resolved, so no hint reaches it as
written: its adaptive execution shuffles both sides, then may turn the join into a
broadcast of the already shuffled subquery (TPC-DS q69's three subqueries). A NOT EXISTS is
an anti join whatever the NULLs: a row whose key is NULL matches nothing and is kept by both.
Left as written: IN and NOT IN (NOT IN's NULL semantics), a predicate that is not a conjunct
of its SELECT's WHERE, an uncorrelated EXISTS, a subquery of other than plain inner joins
(optimizer.origins.SemiOrigin), and a common join (Spark decides).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from optimizer.origins import SemiOrigin
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import Join, Node, conjuncts
from optimizer.sql_copy import TreeCopy
from optimizer.sql_scope import free_aliases, fresh_alias, scope_aliases


@dataclass(frozen=True)
class WrittenSemi:
    """A semi or anti join of the plan to write as a join: its subquery (`origin`) and the
    logical side it hashes (no derived table `_jN` is written for that side)."""

    origin: SemiOrigin
    anti: bool
    hashed: Node


def semi_joins_to_write(root: PhysicalNode) -> list[WrittenSemi]:
    """The EXISTS and NOT EXISTS joins of the plan that are map joins hashing the subquery,
    of a subquery that can be written as a derived table (`_correlation`). A subquery the plan
    joins more than once (in a CTE read twice) is written when every one of its joins is
    such a map join, once."""
    joins: dict[int, list[tuple[PhysicalNode, Join]]] = {}
    for node in root.walk():
        join = node.logical
        if isinstance(join, Join) and join.kind in ("semi", "anti") and join.semi is not None:
            joins.setdefault(id(join.semi.select), []).append((node, join))
    found: list[WrittenSemi] = []
    for planned in joins.values():
        origin = planned[0][1].semi
        assert origin is not None
        if origin.projected is not None or _exists_predicate(origin) is None:
            continue  # IN: left as written
        if _correlation(origin.select) is None:
            continue
        if all(n.algorithm in ("map", "bucket_map") and n.streamed == 0 for n, _ in planned):
            for node, join in planned:
                found.append(WrittenSemi(origin, join.kind == "anti", node.children[1].logical))
    return found


def write_semi_joins(
    copy: TreeCopy, written: list[WrittenSemi], taken: set[str]
) -> list[tuple[exp.Select, str]]:
    """Each subquery of `written` written as a join in the copy, once: (the SELECT whose FROM
    list now ends with it, its alias), for the BROADCAST hint."""
    done: dict[int, tuple[exp.Select, str]] = {}
    for semi in written:
        if id(semi.origin.select) not in done:
            alias = fresh_alias("_sj", taken)
            done[id(semi.origin.select)] = (_write(copy, semi, alias), alias)
    return list(done.values())


def _exists_predicate(origin: SemiOrigin) -> exp.Expr | None:
    """The EXISTS (or NOT EXISTS) conjunct of the outer SELECT's WHERE holding the subquery,
    or None when the subquery is not such a conjunct's."""
    exists = origin.select.parent
    if isinstance(exists, exp.Subquery):
        exists = exists.parent
    if not isinstance(exists, exp.Exists):
        return None
    predicate = exists.parent if isinstance(exists.parent, exp.Not) else exists
    where = origin.outer.args.get("where")
    if where is None or not any(c is predicate for c in conjuncts(where.this)):
        return None
    return predicate


def _correlation(query: exp.Select) -> list[exp.Expr] | None:
    """The conjuncts of the subquery's WHERE that read the outer query, when the subquery
    can be a derived table once they are its join's condition: None when there are none,
    when one holds a subquery (Spark takes none in an ON), or when the subquery reads an
    outer relation anywhere else (its SELECT list, an ON, a nested subquery)."""
    where = conjuncts(query.args["where"].this) if query.args.get("where") else []
    own = scope_aliases(query)
    correlated = [c for c in where if free_aliases(c, own)]
    if not correlated or any(c.find(exp.Select) for c in correlated):
        return None
    rest = query.copy()
    kept = [c for c in where if not any(c is k for k in correlated)]
    rest.set("where", exp.Where(this=exp.and_(*kept)) if kept else None)
    rest.set("expressions", [exp.Star()])  # EXISTS ignores what the SELECT lists
    return None if free_aliases(rest, set()) else correlated


def _write(copy: TreeCopy, semi: WrittenSemi, alias: str) -> exp.Select:
    """The predicate's join appended to its SELECT's FROM list (returned), its conjunct
    dropped from the WHERE."""
    original = _exists_predicate(semi.origin)
    assert original is not None
    query, outer, predicate = copy[semi.origin.select], copy[semi.origin.outer], copy[original]
    correlated = _correlation(query)
    assert correlated is not None  # as in the statement (semi_joins_to_write)
    own = scope_aliases(query)
    keys: dict[tuple[str, str], str] = {}
    on = [_read_from(c.copy(), own, alias, keys) for c in correlated]
    query.set(
        "expressions",
        [exp.alias_(exp.column(c, table=t), k) for (t, c), k in keys.items()],
    )
    where = conjuncts(query.args["where"].this)
    kept = [c for c in where if not any(c is k for k in correlated)]
    query.set("where", exp.Where(this=exp.and_(*kept, copy=False)) if kept else None)
    outer_where = [c for c in conjuncts(outer.args["where"].this) if c is not predicate]
    outer.set("where", exp.Where(this=exp.and_(*outer_where, copy=False)) if outer_where else None)
    derived = exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier(alias)))
    outer.append(
        "joins",
        exp.Join(this=derived, side="LEFT", kind="ANTI" if semi.anti else "SEMI", on=exp.and_(*on)),
    )
    return outer


def _read_from(
    condition: exp.Expr, own: set[str], alias: str, keys: dict[tuple[str, str], str]
) -> exp.Expr:
    """The correlated condition with each column of the subquery's own relations read from
    the derived table `alias` (as `_kN`, a name given once per column)."""
    for column in list(condition.find_all(exp.Column)):
        table = column.table.lower()
        if table in own:
            key = keys.setdefault((column.table, column.name), f"_k{len(keys) + 1}")
            column.replace(exp.column(key, table=alias))
    return condition
