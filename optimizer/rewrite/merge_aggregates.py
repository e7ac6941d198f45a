"""Aggregates over the same relations merged into one scan (docs/design.md#merged-aggregates).

TPC-DS writes several counts of one join under different filters as one-row subqueries:
derived tables cross joined in a FROM list (q28, q88, q90) or scalar subqueries of a SELECT
list (q9). Each reads the fact table again; Spark merges scalar subqueries only when their
filters are the same (MergeScalarSubqueries) and never merges derived tables. Here such a
group becomes one derived table reading the relations once, under their common conditions
and the OR of the others, each aggregate keeping its own rows by a CASE:

    count(*)            FILTER P  ->  count(CASE WHEN P THEN 1 END)
    f([DISTINCT] x)     FILTER P  ->  f([DISTINCT] CASE WHEN P THEN x END)

(count, sum, avg, min and max ignore NULLs, so each returns what it returned alone). A
global aggregate returns exactly one row, so the merged table's one row holds what the cross
join of the separate ones held; a scalar subquery is read from it, cross joined to its SELECT.
Whether the merged plan is kept is the planner's cost comparison (optimizer.physical.api).

>>> from sqlglot import parse_one
>>> q = parse_one("SELECT a.n, b.m FROM (SELECT count(*) AS n FROM t WHERE t.x = 1) AS a, "
...     "(SELECT sum(t.y) AS m FROM t WHERE t.x = 2) AS b")
>>> merge_aggregates(q).groups
1
>>> print(q.sql())
SELECT a.n, a.m FROM (SELECT COUNT(CASE WHEN t.x = 1 THEN 1 END) AS n, \
SUM(CASE WHEN t.x = 2 THEN t.y END) AS m FROM t WHERE t.x = 1 OR t.x = 2) AS a
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from sqlglot import exp

from optimizer.plan import conjuncts
from optimizer.sql_scope import (
    free_aliases,
    fresh_alias,
    plain_from_items,
    relation_names,
    scope_aliases,
)

NULL_IGNORING = (exp.Count, exp.Sum, exp.Avg, exp.Min, exp.Max)
UNMERGEABLE_ARGS = ("group", "having", "distinct", "limit", "order", "qualify", "windows")


@dataclass
class Merged:
    groups: int = 0  # groups of aggregates merged
    # the scalar subqueries merged, as written: a plan reads them as expressions of the
    # SELECT list, so the cost of the plan without the merge leaves them out
    scalar_subqueries: list[exp.Select] = field(default_factory=list)


def merge_aggregates(statement: exp.Expr) -> Merged:
    """Merge, in place, each group of two or more one-row aggregates over the same relations
    that one SELECT reads (its FROM list's derived tables, or its SELECT list's scalar
    subqueries)."""
    taken = relation_names(statement)
    merged = Merged()
    for select in list(statement.find_all(exp.Select)):
        merged.groups += _merge_derived_tables(select)
        merged.groups += _merge_scalar_subqueries(select, taken, merged.scalar_subqueries)
    return merged


# ------------------------------------------------------------------------ which ones merge


def _one_row_aggregate(query: exp.Expr, named: bool = True) -> exp.Select | None:
    """`query` when it is a global aggregate over plain inner joins of tables that reads
    nothing outside itself and holds no subquery: aggregates of NULL-ignoring functions only,
    each output named when `named`."""
    if not isinstance(query, exp.Select) or query.args.get("with_"):
        return None
    if any(query.args.get(arg) for arg in UNMERGEABLE_ARGS):
        return None
    items = plain_from_items(query)
    if not items or not all(isinstance(i, exp.Table) for i in items):
        return None
    if any(j.args.get("on") for j in query.args.get("joins") or ()):
        return None
    if any(isinstance(n, exp.Select) for n in query.find_all(exp.Select) if n is not query):
        return None
    if any(query.find_all(exp.Window)) or free_aliases(query, set()):
        return None
    for projection in query.expressions:
        if named and not isinstance(projection, exp.Alias):
            return None
        if not _aggregated(projection.unalias()):
            return None
    return query


def _aggregated(expression: exp.Expr) -> bool:
    """Every column of `expression` inside a NULL-ignoring aggregate of one argument, no
    aggregate inside another, and at least one aggregate."""
    if isinstance(expression, exp.AggFunc):
        if not isinstance(expression, NULL_IGNORING) or expression.expressions:
            return False
        inner = expression.this
        if isinstance(inner, exp.Distinct):
            if len(inner.expressions) != 1:
                return False
            inner = inner.expressions[0]
        return inner is not None and not any(inner.find_all(exp.AggFunc))
    if isinstance(expression, exp.Column):
        return False
    children = list(expression.iter_expressions())
    found = [_aggregated(c) for c in children if _holds_column_or_aggregate(c)]
    return bool(found) and all(found)


def _holds_column_or_aggregate(expression: exp.Expr) -> bool:
    return any(isinstance(n, exp.Column | exp.AggFunc) for n in expression.walk())


def _relations(query: exp.Select) -> str:
    """The FROM list as written (tables and aliases): merged queries read the same one."""
    items = plain_from_items(query) or []
    return ", ".join(sorted(i.sql() for i in items))


def _groups(queries: list[exp.Select]) -> Iterator[list[int]]:
    """Indexes of the queries reading the same relations, two or more."""
    by_relations: dict[str, list[int]] = {}
    for index, query in enumerate(queries):
        by_relations.setdefault(_relations(query), []).append(index)
    yield from (group for group in by_relations.values() if len(group) > 1)


# ------------------------------------------------------------------------------ the merge


def _merged(queries: list[exp.Select]) -> exp.Select:
    """One SELECT computing every query's outputs (names kept) in one read."""
    wheres = [conjuncts(q.args["where"].this) if q.args.get("where") else [] for q in queries]
    common = [c for c in wheres[0] if all(c in other for other in wheres[1:])]
    own = [[c for c in where if c not in common] for where in wheres]
    merged = queries[0].copy()
    merged.set("expressions", [])
    filters: list[exp.Expr | None] = [
        exp.and_(*(c.copy() for c in conditions)) if conditions else None for conditions in own
    ]
    for query, condition in zip(queries, filters, strict=True):
        for projection in query.expressions:
            merged.append("expressions", _filtered(projection.copy(), condition))
    where = [c.copy() for c in common]
    present = [f for f in filters if f is not None]
    if len(present) == len(filters):  # an unfiltered one reads every row of the join
        distinct = dict.fromkeys(present)  # equal filters (by structure) are one branch
        where.append(exp.or_(*(f.copy() for f in distinct)))
    merged.set("where", exp.Where(this=exp.and_(*where)) if where else None)
    return merged


def _filtered(projection: exp.Expr, condition: exp.Expr | None) -> exp.Expr:
    """The projection with each aggregate reading only the rows `condition` keeps."""
    if condition is None:
        return projection
    for aggregate in list(projection.find_all(exp.AggFunc)):
        holder = aggregate.this
        target = holder.expressions[0] if isinstance(holder, exp.Distinct) else holder
        value = exp.Literal.number(1) if isinstance(target, exp.Star) else target.copy()
        case = exp.Case(ifs=[exp.If(this=condition.copy(), true=value)])
        if isinstance(holder, exp.Distinct):
            holder.set("expressions", [case])
        else:
            aggregate.set("this", case)
    return projection


def _unique_names(queries: list[exp.Select]) -> bool:
    names = [p.alias.lower() for q in queries for p in q.expressions]
    return len(names) == len(set(names))


# ---------------------------------------------------------------- derived tables of a FROM


def _merge_derived_tables(select: exp.Select) -> int:
    items = plain_from_items(select)
    if items is None or any(j.args.get("on") for j in select.args.get("joins") or ()):
        return 0
    candidates = [
        (item, query)
        for item in items
        if isinstance(item, exp.Subquery)
        and item.alias
        and (query := _one_row_aggregate(item.this)) is not None
    ]
    queries = [query for _, query in candidates]
    merged = 0
    for group in _groups(queries):
        chosen = [candidates[i] for i in group]
        if not _unique_names([q for _, q in chosen]) or not _in_order(items, chosen):
            continue
        renamed = {item.alias.lower() for item, _ in chosen[1:]}
        if renamed & {a for _, q in chosen for a in scope_aliases(q)}:
            continue  # a table inside is named as a derived table outside: columns are ambiguous
        keep, alias = chosen[0][0], chosen[0][0].alias
        keep.set("this", _merged([q for _, q in chosen]))
        for item, _ in chosen[1:]:
            _drop_from_item(select, item)
        for column in select.find_all(exp.Column):
            if column.table and column.table.lower() in renamed:
                column.set("table", exp.to_identifier(alias))
        merged += 1
    return merged


def _in_order(items: list[exp.Expr], chosen: list[tuple[exp.Subquery, exp.Select]]) -> bool:
    """The group's derived tables next to each other in the FROM list: the SELECT's columns
    (a `*` expanded) keep their order."""
    places = [next(i for i, item in enumerate(items) if item is sub) for sub, _ in chosen]
    return places == list(range(places[0], places[0] + len(places)))


def _drop_from_item(select: exp.Select, item: exp.Expr) -> None:
    """Drop a joined item (never the FROM's own: a group keeps its first table, and the
    others follow it)."""
    joins = [j for j in select.args.get("joins") or () if j.this is not item]
    select.set("joins", joins or None)


# ------------------------------------------------------------ scalar subqueries of a SELECT


def _merge_scalar_subqueries(select: exp.Select, taken: set[str], removed: list[exp.Select]) -> int:
    """Uncorrelated one-output scalar subqueries of a SELECT list that is not aggregated;
    those merged are added to `removed`."""
    if select.args.get("group") or select.args.get("distinct") or select.args.get("from_") is None:
        return 0
    if any(p.find(exp.AggFunc) and not _under_subquery(p) for p in select.expressions):
        return 0
    found: list[tuple[exp.Subquery, exp.Select]] = []
    for projection in select.expressions:
        for sub in projection.find_all(exp.Subquery, bfs=False):  # in written order
            query = _one_row_aggregate(sub.this, named=False)
            if query is not None and len(query.expressions) == 1 and _direct(sub, select):
                found.append((sub, query))
    groups = 0
    for group in _groups([q for _, q in found]):
        alias = fresh_alias("_ma", taken)
        renamed = []
        for position, index in enumerate(group):
            query = found[index][1].copy()
            removed.append(found[index][1])
            name = f"{alias}_{position}"
            query.set("expressions", [exp.alias_(query.expressions[0].unalias(), name)])
            renamed.append(query)
        derived = exp.Subquery(this=_merged(renamed), alias=exp.TableAlias(this=alias))
        for position, index in enumerate(group):
            found[index][0].replace(exp.column(f"{alias}_{position}", table=alias))
        select.append("joins", exp.Join(this=derived, kind="CROSS"))
        groups += 1
    return groups


def _under_subquery(projection: exp.Expr) -> bool:
    return all(a.find_ancestor(exp.Subquery) is not None for a in projection.find_all(exp.AggFunc))


def _direct(sub: exp.Subquery, select: exp.Select) -> bool:
    """`sub` belongs to `select` itself, not to a subquery of it."""
    return sub.find_ancestor(exp.Select) is select
