"""SQL (Spark or Hive dialect) to a logical plan, qualified against the metastore's schemas.

    SELECT ... FROM a JOIN b ON ... WHERE ... GROUP BY ... HAVING ... ORDER BY ... LIMIT n
    -> Limit(Sort(Filter(Aggregate(Filter(Join(Filter(Scan a), Scan b))))))

sqlglot parses and qualifies (every column gets its relation's alias, unknown tables and
columns are errors). WHERE conjuncts on one relation are pushed onto it (those on partition
keys into its Scan, where they choose the partitions whose statistics describe it, but
never onto the null-supplying side of an outer join); equalities between two relations
become join keys; `x IN (subquery)` / `EXISTS` become semi joins, `NOT IN` / `NOT EXISTS`
anti joins (correlated conjuncts other than equalities become the join's residual). Joins
keep the written order (reordering is the cost model's job).

Scalar subqueries in WHERE and HAVING are decorrelated as Spark does: an uncorrelated one is
planned on its own and joined as a one-row side, Join(plan, sub, "inner", (), residual=the
comparison with its output column); a correlated one (an aggregate whose correlated
conjuncts are equalities) becomes Aggregate(its plan, grouped by the inner correlated
columns) joined with the correlation equalities as keys and the comparison as residual.

A SELECT's FROM list is mapped to its relations joined as written, each join on its ON
condition; the WHERE's conjuncts without subqueries are then rewritten and placed by
optimizer.rewrite (constants folded; conjuncts common to an OR's branches factored out, so
`(a = b AND x) OR (a = b AND y)` joins on a = b; pushed down). Decorrelation stays part of
the mapping: a subquery's SELECT is planned where it is met, its fresh aliases (`_sqN`,
which plans and the emitted SQL show) taken in mapping order.

`build_qualified_plan` also returns the qualified statement, whose nodes the joins name
(optimizer.plan.Join, optimizer.origins): every Join built from a SELECT's FROM/JOIN list
carries that SELECT (so a later pass can rewrite its FROM clause); every Join that
decorrelated a scalar subquery of a WHERE, the subquery as a derived table (so the pass can
write that join out); every semi or anti Join of an EXISTS or IN subquery that may take a
semi join, that subquery.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.expressions.core import POSITION_META_KEYS

from metastore.catalog.tables import TableInfo
from metastore.catalog.transform_keys import transform_keys
from metastore.errors import StatlasError, UnknownColumn
from optimizer.origins import ScalarOrigin, SemiOrigin
from optimizer.plan import (
    JOIN_KINDS,
    Aggregate,
    ColumnRef,
    Filter,
    Join,
    JoinKind,
    Limit,
    Node,
    Project,
    Scan,
    Sort,
    Union,
    Window,
    column_of,
    conjunction,
    conjuncts,
    equi_keys,
)
from optimizer.rewrite import rewrite_where
from optimizer.rewrite.factor_correlation import factor_correlations
from optimizer.rewrite.fold_constants import folded
from optimizer.rewrite.merge_aggregates import Merged, merge_aggregates
from optimizer.sql_copy import TreeCopy
from optimizer.sql_scope import DEFAULT_DB, free_aliases, scope_aliases, table_name
from optimizer.subqueries import ScalarSubquery, scalar_subqueries, subquery_predicate

DIALECTS = ("spark", "hive")
QUERY_ALIAS = "_q"


class InvalidQuery(StatlasError):
    """SQL that does not parse, or uses a construct the optimizer does not plan."""


@dataclass
class QualifiedPlan:
    """A plan with the qualified sqlglot statement it was built from; its joins name the
    nodes of `statement` they come from (optimizer.plan.Join: `select`, `scalar`, `semi`)."""

    plan: Node
    statement: exp.Expr
    merged: Merged = field(default_factory=Merged)  # optimizer.rewrite.merge_aggregates


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
    """Names of the catalog tables a query reads (CTE names excluded, and the relations join
    hints such as BROADCAST(x) name), in order."""
    return _tables_and_ctes(statement)[0]


def _tables_and_ctes(statement: exp.Expr) -> tuple[list[str], set[str], list[exp.Table]]:
    """The catalog tables a query reads (as `referenced_tables`), its CTE names, and every
    table reference: one walk of the statement."""
    ctes: set[str] = set()
    tables: list[exp.Table] = []
    for node in statement.find_all(exp.CTE, exp.Table):
        if isinstance(node, exp.Table):
            tables.append(node)
        else:
            ctes.add(node.alias_or_name.lower())
    names: list[str] = []
    for table in tables:
        if table.find_ancestor(exp.Hint) is not None:
            continue
        name = table_name(table)
        if name not in ctes and name not in names:
            names.append(name)
    return names, ctes, tables


def build_plan(
    sql: str,
    lookup_table: Callable[[str], TableInfo],
    dialect: str = "spark",
    prepare: Callable[[list[str]], None] | None = None,
) -> Node:
    """The logical plan of `sql`; `lookup_table` resolves names (raising UnknownTable)."""
    return build_qualified_plan(sql, lookup_table, dialect, prepare).plan


def build_qualified_plan(
    sql: str,
    lookup_table: Callable[[str], TableInfo],
    dialect: str = "spark",
    prepare: Callable[[list[str]], None] | None = None,
    merge: bool = False,
) -> QualifiedPlan:
    """The logical plan of `sql`, the qualified statement it was built from, and the SELECT
    of that statement each of its FROM/JOIN-list joins comes from; `prepare` is told the
    names of the tables the statement reads before they are looked up one by one; `merge`:
    one-row aggregates over the same relations read once (optimizer.rewrite.merge_aggregates)."""
    statement = parse(sql, dialect)
    names, ctes, references = _tables_and_ctes(statement)
    if prepare is not None:
        prepare(names)
    tables = {name: lookup_table(name) for name in names}
    schema: dict[str, Any] = {}
    nested = any("." in name for name in tables)
    if nested:  # sqlglot wants one nesting level: bare names go under a placeholder db
        for table in references:
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
        from sqlglot.optimizer.qualify import qualify  # ~40 ms to import: parse() needs none

        qualified = qualify(
            statement, schema=schema, dialect=dialect, quote_identifiers=False, identify=False
        )
    except OptimizeError as error:
        message = str(error).splitlines()[0]
        if "column" in message.lower():
            raise UnknownColumn(f"unknown column: {message}") from None
        raise InvalidQuery(f"cannot resolve the query: {message}") from None
    _forget_positions(qualified)
    factor_correlations(qualified)
    merged = merge_aggregates(qualified) if merge else Merged()
    return QualifiedPlan(_query(qualified, _Context(tables), QUERY_ALIAS), qualified, merged)


def _forget_positions(statement: exp.Expr) -> None:
    """Drop the parser's source positions (line, column, offsets) from the statement's nodes
    once qualifying, whose errors cite them, is done: nothing later reads them, and every
    copy of an expression (sqlglot copies one to print it) would deep-copy them."""
    for node in statement.walk():
        meta = node._meta
        if meta is not None:
            for key in POSITION_META_KEYS:
                meta.pop(key, None)
            if not meta:
                node._meta = None


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
    if isinstance(node, exp.Intersect | exp.Except):
        return _intersect_or_except(node, context, alias)
    if isinstance(node, exp.Subquery):
        return _query(node.this, context, alias)
    raise InvalidQuery(f"unsupported query construct: {node.key.upper()}")


def _intersect_or_except(node: exp.Intersect | exp.Except, context: _Context, alias: str) -> Node:
    """INTERSECT and EXCEPT as Spark plans them (ReplaceIntersectWithSemiJoin,
    ReplaceExceptWithAntiJoin): the left side's rows (distinct ones unless ALL) semi or anti
    joined with the right side on every column. For ALL, Spark counts each row's copies on
    both sides; the join keeps every copy of a matched row, an upper bound of that."""
    left = _query(node.left, context, context.fresh("_u"))
    right = _query(node.right, context, context.fresh("_u"))
    if len(left.output()) != len(right.output()):
        raise InvalidQuery(f"{node.key.upper()} needs the same number of columns on both sides")
    outputs = tuple(((alias, name), exp.column(name, table=table)) for table, name in left.output())
    names = tuple(ref for ref, _ in outputs)
    base: Node
    if node.args.get("distinct"):
        base = Aggregate(left, tuple(e.copy() for _, e in outputs), outputs)
    else:
        base = Project(left, outputs)
    kind: JoinKind = "semi" if isinstance(node, exp.Intersect) else "anti"
    return Join(base, right, kind, tuple(zip(names, right.output(), strict=True)))


def _select(select: exp.Select, context: _Context, alias: str) -> Node:
    return _finish(select, _select_body(select, context), alias, context)


def _select_body(
    select: exp.Select, context: _Context, where: list[exp.Expr] | None = None
) -> Node:
    """FROM, joins and WHERE of a SELECT (its relations' own columns, no projection);
    `where`: conjuncts of the SELECT's WHERE to use instead of all of them. Predicates with
    subqueries plan the subqueries' own SELECTs of the statement; the plan's expressions
    are copies."""
    from_ = select.args.get("from_")
    if from_ is None:
        raise InvalidQuery("a SELECT without FROM cannot be estimated")
    relations: list[tuple[str, Node]] = [_relation(from_.this, context)]
    joins: list[tuple[str, exp.Join]] = []
    nested_conditions: list[exp.Expr] = []
    for join in _flattened_joins(select.args.get("joins") or (), nested_conditions):
        name, node = _relation(join.this, context)
        relations.append((name, node))
        joins.append((name, join))
    if where is None:
        where = conjuncts(select.args.get("where") and select.args["where"].this)
    where = list(where) + nested_conditions
    subqueries: list[tuple[exp.Expr, list[ScalarSubquery] | None]] = []
    plain: list[exp.Expr] = []
    for c in where:
        if subquery_predicate(c) is not None:
            subqueries.append((c, None))
            continue
        scalars = scalar_subqueries(c, scope_aliases(select))
        if scalars:
            subqueries.append((c, scalars))
        else:
            plain.append(c.copy())
    written = _written_joins(relations, joins, select)
    plan = rewrite_where(written, [name for name, _ in relations], plain)
    for predicate, scalars in subqueries:
        if scalars is None:
            plan = _semi_join(plan, predicate, select, context)
        else:
            plan = _scalar_join(plan, predicate, scalars, context, where_of=select)
    return plan


def _flattened_joins(joins: Iterable[exp.Join], conditions: list[exp.Expr]) -> list[exp.Join]:
    """The joins with parenthesised inner joins, `a JOIN (b JOIN c ON x) ON y`, flattened to
    `a, b, c` whose conditions x and y join the WHERE conjuncts (inner joins associate)."""
    flat: list[exp.Join] = []
    for join in joins:
        inner = join.this
        nested = inner.this if isinstance(inner, exp.Subquery) else None
        if not (isinstance(nested, exp.Table) and nested.args.get("joins")):
            flat.append(join)
            continue
        parts = [join, *nested.args["joins"]]
        if any(_join_kind(p) not in ("inner", "cross") or p.args.get("using") for p in parts):
            raise InvalidQuery(
                "a parenthesised join is planned only with inner joins in and around it"
            )
        head = nested.copy()
        head.set("joins", None)
        conditions.extend(c.copy() for p in parts for c in conjuncts(p.args.get("on")))
        flat.append(exp.Join(this=head))
        for part in nested.args["joins"]:
            flat.extend(_flattened_joins([exp.Join(this=part.this)], conditions))
    return flat


def _relation(source: exp.Expr, context: _Context) -> tuple[str, Node]:
    if isinstance(source, exp.Table):
        name = table_name(source)
        alias = (source.alias_or_name or name).lower()
        if name in context.ctes:
            return alias, _query(context.ctes[name], context, alias)
        info = context.tables[name]
        return alias, Scan(
            info.name,
            alias,
            tuple(c.name for c in info.columns),
            tuple(k.name for k in info.partition_keys),
            transform_keys=transform_keys(info.properties),
        )
    if isinstance(source, exp.Subquery):
        alias = (source.alias_or_name or context.fresh("_s")).lower()
        return alias, _query(source.this, context, alias)
    raise InvalidQuery(f"unsupported FROM item: {source.key.upper()}")


def _join_kind(join: exp.Join) -> JoinKind:
    side, kind = (join.side or "").lower(), (join.kind or "").lower()
    if side in ("left", "right", "full"):
        if kind in ("semi", "anti"):
            return _known_kind(kind)
        return _known_kind(side)
    if kind in ("semi", "anti", "cross"):
        return _known_kind(kind)
    return "inner" if join.args.get("on") is not None or join.args.get("using") else "cross"


def _known_kind(text: str) -> JoinKind:
    """A join kind as sqlglot spells it, narrowed to the plan's JoinKind."""
    if text in JOIN_KINDS:
        return text
    raise InvalidQuery(f"unsupported join kind: {text.upper()}")


def _written_joins(
    relations: list[tuple[str, Node]], joins: list[tuple[str, exp.Join]], select: exp.Select
) -> Node:
    """The FROM list's relations joined left-deep in the written order, each join on its ON
    condition and naming `select`, the SELECT whose FROM/JOIN list it joins."""
    plan, covered = relations[0][1], {relations[0][0]}
    for (name, node), (_, join) in zip(relations[1:], joins, strict=True):
        keys, residual = equi_keys(conjuncts(join.args.get("on")), covered, {name})
        plan = Join(plan, node, _join_kind(join), keys, conjunction(residual), select=select)
        covered = covered | {name}
    return plan


def _semi_join(plan: Node, predicate: exp.Expr, select: exp.Select, context: _Context) -> Node:
    found = subquery_predicate(predicate)
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
        semi = SemiOrigin.of(kind, inner, query, select)
        return Join(plan, sub, kind, ((outer, sub.output()[0]),), semi=semi)
    query = inner.this
    if isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select):
        raise InvalidQuery("EXISTS needs a SELECT")
    outer_aliases = {a for a, _ in plan.output()}
    scope = scope_aliases(query)
    where = conjuncts(query.args.get("where") and query.args["where"].this)
    correlated = [c for c in where if free_aliases(c, scope)]
    sub = _select_body(query, context, [c for c in where if not _among(c, correlated)])
    inner_aliases = {a for a, _ in sub.output()}
    keys, residual = equi_keys([c.copy() for c in correlated], outer_aliases, inner_aliases)
    semi = SemiOrigin.of(kind, inner, query, select)
    return Join(plan, sub, kind, keys, conjunction(residual), semi=semi)


def _scalar_join(
    plan: Node,
    predicate: exp.Expr,
    scalars: list[ScalarSubquery],
    context: _Context,
    rewrite: Callable[[exp.Expr], exp.Expr] | None = None,
    where_of: exp.Select | None = None,
) -> Node:
    """`plan` joined with each decorrelated scalar subquery of `predicate`, the last join's
    residual (a copy of) the predicate over the subqueries' output columns; `where_of`: the
    SELECT whose WHERE holds `predicate` (its correlated subqueries' origins are kept)."""
    sides: list[tuple[Node, tuple[tuple[ColumnRef, ColumnRef], ...]]] = []
    origins: list[ScalarOrigin | None] = []
    outer = set(plan.output())
    copy = TreeCopy(predicate)
    for scalar in scalars:
        alias = context.fresh("_sq")
        if not scalar.pairs:
            sub = _query(scalar.select, context, alias)
            if len(sub.output()) != 1:
                raise InvalidQuery("a scalar subquery must have one output column")
            value = sub.output()[0]
            keys: tuple[tuple[ColumnRef, ColumnRef], ...] = ()
            origins.append(None)
        else:
            sub, value, keys = _decorrelated(scalar, context, alias)
            missing = [a for a, _ in keys if a not in outer]
            if missing:
                raise InvalidQuery(
                    "a correlated subquery may only refer to the columns of its enclosing "
                    f"query's FROM list, not {', '.join(f'{t}.{c}' for t, c in missing)}"
                )
            origins.append(
                None if where_of is None else _scalar_origin(scalar, where_of, alias, keys, value)
            )
        copy[scalar.subquery].replace(exp.column(value[1], table=value[0]))
        sides.append((sub, keys))
    # folded, not factored: the comparison with the subqueries' values is the join's residual
    residual = folded(copy.root if rewrite is None else rewrite(copy.root))
    for position, ((sub, keys), origin) in enumerate(zip(sides, origins, strict=True)):
        last = position == len(sides) - 1
        plan = Join(plan, sub, "inner", keys, residual if last else None, scalar=origin)
    return plan


def _scalar_origin(
    scalar: ScalarSubquery,
    where_of: exp.Select,
    alias: str,
    keys: tuple[tuple[ColumnRef, ColumnRef], ...],
    value: ColumnRef,
) -> ScalarOrigin:
    """The decorrelated subquery's derived table: the inner correlated columns named as
    the join's keys, the value, the correlation equalities as ON."""
    named: dict[str, exp.Expr] = {}
    on = []
    for (outer_column, inner_column), (_, (_, name)) in zip(scalar.pairs, keys, strict=True):
        named.setdefault(name, inner_column.copy())
        on.append(exp.EQ(this=outer_column.copy(), expression=exp.column(name, table=alias)))
    return ScalarOrigin(
        where_of,
        scalar.subquery,
        alias,
        tuple(named.items()),
        value[1],
        _unalias(scalar.select.expressions[0]).copy(),
        frozenset(c.sql() for c in scalar.correlated),
        exp.and_(*on),
    )


def _decorrelated(
    scalar: ScalarSubquery, context: _Context, alias: str
) -> tuple[Node, ColumnRef, tuple[tuple[ColumnRef, ColumnRef], ...]]:
    """Aggregate(the subquery's plan without its correlated conjuncts, grouped by its
    correlated columns): the node, its value column, and the join keys."""
    select = scalar.select
    where = conjuncts(select.args.get("where") and select.args["where"].this)
    body = _select_body(select, context, [c for c in where if not _among(c, scalar.correlated)])
    names: list[str] = []
    groups: list[exp.Expr] = []
    outputs: list[tuple[ColumnRef, exp.Expr]] = []
    keys: list[tuple[ColumnRef, ColumnRef]] = []
    for outer_column, inner_column in scalar.pairs:
        inner_ref = column_of(inner_column)
        outer_ref = column_of(outer_column)
        assert inner_ref is not None and outer_ref is not None
        position = next((i for i, g in enumerate(groups) if column_of(g) == inner_ref), None)
        if position is None:
            name = inner_ref[1]
            while name in names:
                name = context.fresh(inner_ref[1] + "_")
            names.append(name)
            groups.append(inner_column.copy())
            outputs.append(((alias, name), inner_column.copy()))
            position = len(groups) - 1
        keys.append((outer_ref, (alias, names[position])))
    projection = select.expressions[0]
    value_name = (projection.alias_or_name or "_value").lower()
    while value_name in names:
        value_name = context.fresh("_value")
    outputs.append(((alias, value_name), _unalias(projection).copy()))
    node = Aggregate(body, tuple(groups), tuple(outputs))
    return node, (alias, value_name), tuple(keys)


def _among(expression: exp.Expr, items: list[exp.Expr]) -> bool:
    return any(expression is item for item in items)


def _finish(select: exp.Select, plan: Node, alias: str, context: _Context) -> Node:
    projections = select.expressions
    group = select.args.get("group")
    aggregated = group is not None or any(_has_aggregate(p) for p in projections)
    outputs = tuple(
        ((alias, (p.alias_or_name or context.fresh("_c")).lower()), _unalias(p))
        for p in projections
    )
    windows = [w for p in projections for w in p.find_all(exp.Window)]
    if aggregated:
        sets = grouping_sets(group) if group is not None else None
        if sets is None:
            keys = tuple(group.expressions) if group is not None else ()
            plan = Aggregate(plan, keys, outputs)
        else:
            keys = tuple({k.sql(): k for keys in sets for k in keys}.values())
            plan = Aggregate(plan, keys, outputs, sets)
        having = select.args.get("having")
        if having is not None:
            plan = _having(plan, having.this, outputs, context)
        if windows:  # computed over the groups: the aggregate's outputs pass through
            plan = Window(plan, _passed(outputs), _window_partition(windows[0]))
    elif windows:
        plan = Window(plan, outputs, _window_partition(windows[0]))
        if select.args.get("distinct"):
            passed = _passed(outputs)
            plan = Aggregate(plan, tuple(e for _, e in passed), passed)
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


def _has_aggregate(projection: exp.Expr) -> bool:
    """An aggregate function that is not itself a window function (`SUM(x) OVER (...)` is
    not; `SUM(SUM(x)) OVER (...)` and `RANK() OVER (ORDER BY SUM(x))` hold one)."""
    return any(
        not (isinstance(f.parent, exp.Window) and f.parent.this is f)
        for f in projection.find_all(exp.AggFunc)
    )


def _passed(
    outputs: tuple[tuple[ColumnRef, exp.Expr], ...],
) -> tuple[tuple[ColumnRef, exp.Expr], ...]:
    """Outputs that read the same-named columns of the node below."""
    return tuple((ref, exp.column(ref[1], table=ref[0])) for ref, _ in outputs)


def _window_partition(window: exp.Window) -> tuple[exp.Expr, ...]:
    return tuple(e.copy() for e in window.args.get("partition_by") or ())


def grouping_sets(group: exp.Group) -> tuple[tuple[exp.Expr, ...], ...] | None:
    """The grouping sets of GROUP BY ROLLUP / CUBE / GROUPING SETS (and `WITH ROLLUP`,
    `WITH CUBE`), in Spark's order; None for a plain GROUP BY. Items combine as a cross
    product: `a, ROLLUP(b, c)` is (a, b, c), (a, b), (a)."""
    items = list(group.expressions)
    if group.args.get("rollup"):
        items = [exp.Rollup(expressions=items)]
    elif group.args.get("cube"):
        items = [exp.Cube(expressions=items)]
    if not any(isinstance(i, exp.Rollup | exp.Cube | exp.GroupingSets) for i in items):
        return None
    sets: list[tuple[exp.Expr, ...]] = [()]
    for item in items:
        if isinstance(item, exp.Rollup):
            parts = list(item.expressions)
            choices = [tuple(parts[:n]) for n in range(len(parts), -1, -1)]
        elif isinstance(item, exp.Cube):
            parts = list(item.expressions)
            choices = [
                tuple(p for bit, p in enumerate(parts) if mask >> bit & 1)
                for mask in range((1 << len(parts)) - 1, -1, -1)
            ]
        elif isinstance(item, exp.GroupingSets):
            choices = [_set_items(s) for s in item.expressions]
        else:
            choices = [(item,)]
        sets = [done + choice for done in sets for choice in choices]
    return tuple(sets)


def _set_items(item: exp.Expr) -> tuple[exp.Expr, ...]:
    if isinstance(item, exp.Tuple):
        return tuple(item.expressions)
    if isinstance(item, exp.Paren):
        return _set_items(item.this)
    return (item,)


def _having(
    plan: Node,
    condition: exp.Expr,
    outputs: tuple[tuple[ColumnRef, exp.Expr], ...],
    context: _Context,
) -> Node:
    """HAVING over an Aggregate: a Filter, except that conjuncts with scalar subqueries
    join them (their residual reads the aggregate's output columns where it can)."""
    available = {a for a, _ in plan.output()}
    found = [(c, scalar_subqueries(c, available)) for c in conjuncts(condition)]
    by_text = {e.sql(): ref for ref, e in outputs if e.find(exp.AggFunc) is not None}

    def to_outputs(predicate: exp.Expr) -> exp.Expr:
        def swap(node: exp.Expr) -> exp.Expr:
            ref = by_text.get(node.sql()) if isinstance(node, exp.AggFunc) else None
            return node if ref is None else exp.column(ref[1], table=ref[0])

        return predicate.transform(swap, copy=False)

    if not any(scalars for _, scalars in found):
        return Filter(plan, to_outputs(condition.copy()))
    rest = conjunction([c.copy() for c, scalars in found if not scalars])
    if rest is not None:
        plan = Filter(plan, to_outputs(rest))

    for predicate, scalars in found:
        if scalars:
            plan = _scalar_join(plan, predicate, scalars, context, to_outputs)
    return plan


def _unalias(expression: exp.Expr) -> exp.Expr:
    return expression.this if isinstance(expression, exp.Alias) else expression
