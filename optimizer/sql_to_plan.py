"""SQL (Spark or Hive dialect) to a logical plan, qualified against the metastore's schemas.

    SELECT ... FROM a JOIN b ON ... WHERE ... GROUP BY ... HAVING ... ORDER BY ... LIMIT n
    -> Limit(Sort(Filter(Aggregate(Filter(Join(Filter(Scan a), Scan b))))))

sqlglot parses and qualifies (every column gets its relation's alias, unknown tables and
columns are errors). WHERE conjuncts on one relation are pushed onto it (those on partition
keys into its Scan, where they choose the partitions whose statistics describe it, but
never onto the null-supplying side of an outer join); equalities between two relations
become join keys; `x IN (subquery)` / `EXISTS` become semi joins, `NOT IN` / `NOT EXISTS`
anti joins. Joins keep the written order (reordering is the cost model's job).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError

from metastore.catalog import TableInfo
from metastore.errors import StatlasError, UnknownColumn
from optimizer.plan import (
    Aggregate,
    ColumnRef,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Scan,
    Sort,
    Union,
    column_of,
    columns_in,
    conjunction,
    conjuncts,
)

DIALECTS = ("spark", "hive")
QUERY_ALIAS = "_q"
DEFAULT_DB = "statlas_default_db"


class InvalidQuery(StatlasError):
    """SQL that does not parse, or uses a construct the optimizer does not plan."""


@dataclass
class _Context:
    tables: dict[str, TableInfo]
    ctes: dict[str, exp.Expr] = field(default_factory=dict)
    counter: list[int] = field(default_factory=lambda: [0])

    def fresh(self, prefix: str) -> str:
        self.counter[0] += 1
        return f"{prefix}{self.counter[0]}"


def parse(sql: str, dialect: str = "spark") -> exp.Expr:
    if dialect not in DIALECTS:
        raise InvalidQuery(f"unknown dialect {dialect!r} (use spark or hive)")
    if not sql.strip():
        raise InvalidQuery("the SQL is empty")
    try:
        statements = sqlglot.parse(sql, read=dialect)
    except ParseError as error:
        first = str(error).splitlines()[0]
        raise InvalidQuery(f"malformed SQL: {first}") from None
    statements = [s for s in statements if s is not None]
    if len(statements) != 1:
        raise InvalidQuery(f"expected one statement, got {len(statements)}")
    statement = statements[0]
    assert statement is not None
    if not isinstance(statement, exp.Query):
        raise InvalidQuery(f"only queries can be estimated, not {statement.key.upper()}")
    return statement


def referenced_tables(statement: exp.Expr) -> list[str]:
    """Names of the catalog tables a query reads (CTE names excluded), in order."""
    ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    names: list[str] = []
    for table in statement.find_all(exp.Table):
        name = _table_name(table)
        if name not in ctes and name not in names:
            names.append(name)
    return names


def build_plan(sql: str, lookup_table: Callable[[str], TableInfo], dialect: str = "spark") -> Node:
    """The logical plan of `sql`; `lookup_table` resolves names (raising UnknownTable)."""
    statement = parse(sql, dialect)
    tables = {name: lookup_table(name) for name in referenced_tables(statement)}
    schema: dict[str, Any] = {}
    nested = any("." in name for name in tables)
    ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
    if nested:  # sqlglot wants one nesting level: bare names go under a placeholder db
        for table in statement.find_all(exp.Table):
            if not table.args.get("db") and table.name.lower() not in ctes:
                table.set("db", exp.to_identifier(DEFAULT_DB))
    for name, info in tables.items():
        columns = {c.name: c.type for c in info.columns}
        columns.update({k.name: str(k.type) for k in info.partition_keys})
        target = schema
        *parents, leaf = name.split(".")
        if nested and not parents:
            parents = [DEFAULT_DB]
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = columns
    try:
        from sqlglot.optimizer.qualify import qualify

        qualified = qualify(
            statement, schema=schema, dialect=dialect, quote_identifiers=False, identify=False
        )
    except OptimizeError as error:
        message = str(error).splitlines()[0]
        if "column" in message.lower():
            raise UnknownColumn(f"unknown column: {message}") from None
        raise InvalidQuery(f"cannot resolve the query: {message}") from None
    context = _Context(tables)
    return _query(qualified, context, QUERY_ALIAS)


def _table_name(table: exp.Table) -> str:
    parts = [p.name for p in table.parts]
    if parts and parts[0] == DEFAULT_DB:
        parts = parts[1:]
    return ".".join(parts).lower()


def _query(node: exp.Expr, context: _Context, alias: str) -> Node:
    for cte in node.args.get("with_", None) and node.args["with_"].expressions or ():
        context.ctes[cte.alias_or_name.lower()] = cte.this
    if isinstance(node, exp.Select):
        return _select(node, context, alias)
    if isinstance(node, exp.Union):
        left = _query(node.left, context, context.fresh("_u"))
        right = _query(node.right, context, context.fresh("_u"))
        names = tuple((alias, name) for _, name in left.output())
        return Union((left, right), bool(node.args.get("distinct")), names)
    if isinstance(node, exp.Subquery):
        return _query(node.this, context, alias)
    raise InvalidQuery(f"unsupported query construct: {node.key.upper()}")


def _select(select: exp.Select, context: _Context, alias: str) -> Node:
    return _finish(select, _select_body(select, context), alias, context)


def _select_body(select: exp.Select, context: _Context) -> Node:
    """FROM, joins and WHERE of a SELECT (its relations' own columns, no projection)."""
    from_ = select.args.get("from_")
    if from_ is None:
        raise InvalidQuery("a SELECT without FROM cannot be estimated")
    relations: list[tuple[str, Node]] = [_relation(from_.this, context)]
    joins: list[tuple[str, exp.Join]] = []
    for join in select.args.get("joins") or ():
        name, node = _relation(join.this, context)
        relations.append((name, node))
        joins.append((name, join))
    where = [c.copy() for c in conjuncts(select.args.get("where") and select.args["where"].this)]
    semi = [c for c in where if _subquery_predicate(c) is not None]
    where = [c for c in where if c not in semi]
    plan = _join_tree(relations, joins, where)
    for predicate in semi:
        plan = _semi_join(plan, predicate, context)
    return plan


def _relation(source: exp.Expr, context: _Context) -> tuple[str, Node]:
    if isinstance(source, exp.Table):
        name = _table_name(source)
        alias = (source.alias_or_name or name).lower()
        if name in context.ctes:
            return alias, _query(context.ctes[name], context, alias)
        info = context.tables[name]
        return alias, Scan(
            info.name,
            alias,
            tuple(c.name for c in info.columns),
            tuple(k.name for k in info.partition_keys),
        )
    if isinstance(source, exp.Subquery):
        alias = (source.alias_or_name or context.fresh("_s")).lower()
        return alias, _query(source.this, context, alias)
    raise InvalidQuery(f"unsupported FROM item: {source.key.upper()}")


def _join_kind(join: exp.Join) -> str:
    side, kind = (join.side or "").lower(), (join.kind or "").lower()
    if side in ("left", "right", "full"):
        if kind in ("semi", "anti"):
            return kind
        return side
    if kind in ("semi", "anti", "cross"):
        return kind
    return "inner" if join.args.get("on") is not None or join.args.get("using") else "cross"


def _join_tree(
    relations: list[tuple[str, Node]],
    joins: list[tuple[str, exp.Join]],
    where: list[exp.Expr],
) -> Node:
    """Left-deep joins in the written order, WHERE conjuncts pushed where they belong."""
    nullable: set[str] = set()
    seen = {relations[0][0]}
    for name, join in joins:
        kind = _join_kind(join)
        if kind == "left":
            nullable.add(name)
        elif kind == "right":
            nullable |= seen
        elif kind == "full":
            nullable |= seen | {name}
        seen.add(name)
    pending = list(where)
    nodes = dict(relations)
    for name in nodes:
        local = [c for c in pending if _aliases(c) == {name} and name not in nullable]
        pending = [c for c in pending if c not in local]
        nodes[name] = _push_down(nodes[name], local)
    first = relations[0][0]
    plan, covered = nodes[first], {first}
    for name, join in joins:
        kind = _join_kind(join)
        condition = conjuncts(join.args.get("on"))
        if kind in ("inner", "cross"):
            ready = [c for c in pending if _aliases(c) <= covered | {name} and name in _aliases(c)]
            pending = [c for c in pending if c not in ready]
            condition += ready
            if kind == "cross" and condition:
                kind = "inner"
        right = nodes[name]
        if kind in ("left", "semi", "anti"):  # ON conjuncts on the inner side only filter it
            inner = [c for c in condition if _aliases(c) == {name}]
            condition = [c for c in condition if c not in inner]
            right = _push_down(right, inner)
        keys, residual = _equi_keys(condition, covered, {name})
        plan = Join(plan, right, kind, keys, conjunction(residual))
        covered = covered | {name}
    rest = conjunction(pending)
    return plan if rest is None else Filter(plan, rest)


def _push_down(node: Node, predicates: list[exp.Expr]) -> Node:
    if not predicates:
        return node
    if isinstance(node, Scan):
        keys = set(node.partition_keys)
        on_keys = [p for p in predicates if {c for _, c in _columns(p)} <= keys and _columns(p)]
        rest = [p for p in predicates if p not in on_keys]
        node = replace(node, partition_filter=node.partition_filter + tuple(on_keys))
        predicates = rest
    condition = conjunction(predicates)
    return node if condition is None else Filter(node, condition)


def _equi_keys(
    condition: list[exp.Expr], left: set[str], right: set[str]
) -> tuple[tuple[tuple[ColumnRef, ColumnRef], ...], list[exp.Expr]]:
    keys: list[tuple[ColumnRef, ColumnRef]] = []
    residual: list[exp.Expr] = []
    for part in condition:
        if isinstance(part, exp.EQ):
            a, b = column_of(part.left), column_of(part.right)
            if a and b and a[0] in left and b[0] in right:
                keys.append((a, b))
                continue
            if a and b and b[0] in left and a[0] in right:
                keys.append((b, a))
                continue
        residual.append(part)
    return tuple(keys), residual


def _subquery_predicate(predicate: exp.Expr) -> tuple[str, exp.Expr] | None:
    negated = isinstance(predicate, exp.Not)
    inner = predicate.this if negated else predicate
    if isinstance(inner, exp.In) and inner.args.get("query") is not None:
        return ("anti" if negated else "semi"), inner
    if isinstance(inner, exp.Exists):
        return ("anti" if negated else "semi"), inner
    return None


def _semi_join(plan: Node, predicate: exp.Expr, context: _Context) -> Node:
    found = _subquery_predicate(predicate)
    assert found is not None
    kind, inner = found
    alias = context.fresh("_sq")
    if isinstance(inner, exp.In):
        query = inner.args["query"]
        query = query.this if isinstance(query, exp.Subquery) else query
        sub = _query(query, context, alias)
        outer = column_of(inner.this)
        if outer is None or len(sub.output()) != 1:
            raise InvalidQuery("IN (subquery) needs a column on the left and one output column")
        return Join(plan, sub, kind, ((outer, sub.output()[0]),))
    query = inner.this
    if not isinstance(query, exp.Select):
        raise InvalidQuery("EXISTS needs a SELECT")
    outer_aliases = {a for a, _ in plan.output()}
    where = conjuncts(query.args.get("where") and query.args["where"].this)
    correlated = [c for c in where if _aliases(c) & outer_aliases]
    stripped = query.copy()
    remaining = conjunction([c.copy() for c in where if c not in correlated])
    stripped.set("where", None if remaining is None else exp.Where(this=remaining))
    sub = _select_body(stripped, context)
    inner_aliases = {a for a, _ in sub.output()}
    keys, residual = _equi_keys(correlated, outer_aliases, inner_aliases)
    if residual:
        raise InvalidQuery("a correlated EXISTS may only compare columns with =")
    return Join(plan, sub, kind, keys)


def _finish(select: exp.Select, plan: Node, alias: str, context: _Context) -> Node:
    projections = select.expressions
    group = select.args.get("group")
    aggregated = group is not None or any(p.find(exp.AggFunc) for p in projections)
    outputs = tuple(
        ((alias, (p.alias_or_name or context.fresh("_c")).lower()), _unalias(p))
        for p in projections
    )
    if aggregated:
        keys = tuple(group.expressions) if group is not None else ()
        plan = Aggregate(plan, keys, outputs)
        having = select.args.get("having")
        if having is not None:
            plan = Filter(plan, having.this)
    elif select.args.get("distinct"):
        plan = Aggregate(plan, tuple(e for _, e in outputs), outputs)
    else:
        plan = Project(plan, outputs)
    order = select.args.get("order")
    if order is not None:
        plan = Sort(plan, tuple(order.expressions))
    limit = select.args.get("limit")
    if limit is not None:
        count = limit.expression
        if not isinstance(count, exp.Literal) or not count.is_int:
            raise InvalidQuery("LIMIT must be an integer literal")
        plan = Limit(plan, int(count.this))
    return plan


def _unalias(expression: exp.Expr) -> exp.Expr:
    return expression.this if isinstance(expression, exp.Alias) else expression


def _columns(expression: exp.Expr) -> set[ColumnRef]:
    return columns_in(expression)


def _aliases(expression: exp.Expr) -> set[str]:
    return {alias for alias, _ in columns_in(expression)}
