"""`--emit spark`: the query as Spark SQL with the chosen join order and join hints.

Each SELECT whose FROM list is one group of inner joins gets its FROM clause rewritten in
the chosen order (bushy trees as parenthesised joins), with every join condition of the
group (from ON or WHERE) in the ON of the lowest join that covers it; other conjuncts stay
in WHERE. Spark's optimizer keeps a connected written order (ReorderJoin only moves a
relation that has no condition with the ones before it), and hinted joins are not
flattened. Hints: BROADCAST(side) for a map or bucket map join whose hash-table side is one
relation of the SELECT, MERGE for an SMB join, and for common joins the `common_hint`
setting (none by default: Spark and its adaptive execution decide). A skew join is left to
Spark's adaptive skew-join handling (spark.sql.adaptive.skewJoin.enabled); the rewrite of
the seed is what `explain` costs.

A correlated scalar subquery of a WHERE that the plan joins as a map join is written out as
that join, `JOIN (SELECT keys, value ... GROUP BY keys) AS _sqN ON outer = _sqN.key` with
the comparison reading `_sqN.value` (otherwise Spark decorrelates it into a left outer join
that no hint can reach), when the two are equivalent: the value is NULL over no rows (MIN,
MAX, SUM, AVG and arithmetic on them; not COUNT), and the WHERE conjunct is a comparison
that is NULL when the value is (so a row without a group fails it either way).
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlglot
from sqlglot import exp

from optimizer.physical.context import base_scan
from optimizer.physical.join_order import OrderedGroup
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import Filter, Join, Node, conjuncts
from optimizer.sql_to_plan import ScalarOrigin

NULL_ON_NO_ROWS = (exp.Min, exp.Max, exp.Sum, exp.Avg)
NULL_PROPAGATING = (exp.Paren, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Neg, exp.Cast)
COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def emit_spark(
    statement: exp.Expr,
    groups: list[OrderedGroup],
    root: PhysicalNode,
    join_origins: dict[int, exp.Select],
    common_hint: str = "none",
    scalar_joins: dict[int, ScalarOrigin] | None = None,
    original: str | None = None,
) -> str:
    """The rewritten query; `original` (the SQL as written) when nothing is to change."""
    copy = statement.copy()
    counterpart = {id(a): b for a, b in zip(statement.walk(), copy.walk(), strict=True)}
    selects = {k: v for k, v in counterpart.items() if isinstance(v, exp.Select)}
    changed = False
    scalar = list(_scalar_rewrites(root, scalar_joins or {}, statement))
    bodies: dict[int, exp.Select] = {}
    for origin, _ in scalar:  # before reordering: the conjunct then reads _sqN, and stays
        subquery = counterpart[id(origin.subquery)]
        bodies[id(origin)] = subquery.this  # its own joins are reordered and hinted below
        subquery.replace(exp.column(origin.value, table=origin.alias))
    for group in groups:
        if group.select is not None and id(group.select) in selects:
            changed |= _reorder(selects[id(group.select)], group)
    hints = list(_hints(root, join_origins, common_hint))
    hints += [(origin.select, "BROADCAST", hashed) for origin, hashed in scalar]
    for select, hint, alias in hints:
        if id(select) in selects:
            changed |= _add_hint(selects[id(select)], hint, alias)
    for origin, _ in reversed(scalar):  # a nested subquery's join first: its body holds it
        derived = exp.Subquery(
            this=origin.derived(bodies[id(origin)]),
            alias=exp.TableAlias(this=exp.to_identifier(origin.alias)),
        )
        selects[id(origin.select)].append("joins", exp.Join(this=derived, on=origin.on.copy()))
        changed = True
    if not changed and original is not None:
        return original
    return copy.sql(dialect="spark")


# ---- decorrelated scalar subqueries ------------------------------------------------------
def _scalar_rewrites(
    root: PhysicalNode, scalar_joins: dict[int, ScalarOrigin], statement: exp.Expr
) -> Iterator[tuple[ScalarOrigin, str]]:
    """(origin, the alias to broadcast) of each scalar-subquery join to write out: a map
    join whose hashed side is the subquery or one relation of the SELECT, the rewrite
    equivalent (module docstring)."""
    taken = {t.name.lower() for t in statement.find_all(exp.Table)}
    taken |= {a.name.lower() for a in statement.find_all(exp.TableAlias)}
    for node in root.walk():
        origin = scalar_joins.get(id(node.logical)) if node.op == "join" else None
        if origin is None or node.algorithm != "map" or node.streamed is None:
            continue
        if origin.alias in taken or not _equivalent(origin) or _items(origin.select) is None:
            continue
        if node.streamed == 0:
            yield origin, origin.alias
            continue
        scan = base_scan(node.children[0].logical)  # the outer side is hashed: one table?
        if scan is not None and _is_relation_of(origin.select, scan.alias):
            yield origin, scan.alias


def _equivalent(origin: ScalarOrigin) -> bool:
    """The join equals the subquery: its value is NULL over no rows, and the WHERE conjunct
    holding it is a comparison, NULL when the value is."""
    for part in origin.value_expression.walk():
        if isinstance(part, exp.AggFunc) and not isinstance(part, NULL_ON_NO_ROWS):
            return False
        allowed = isinstance(part, (exp.AggFunc, exp.Literal, *NULL_PROPAGATING))
        if not allowed and part.find_ancestor(exp.AggFunc) is None:
            return False  # a column, function or CASE outside the aggregates
    node: exp.Expr | None = origin.subquery.parent
    while isinstance(node, NULL_PROPAGATING):
        node = node.parent
    if not isinstance(node, COMPARISONS):
        return False
    where = origin.select.args.get("where")
    return where is not None and any(node is c for c in conjuncts(where.this))


# ---- join order ------------------------------------------------------------------------
def _items(select: exp.Select) -> list[exp.Expr] | None:
    """The SELECT's FROM items, or None when its joins are not all plain inner joins."""
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    items = [from_.this]
    for join in select.args.get("joins") or ():
        side, kind = (join.side or "").upper(), (join.kind or "").upper()
        if side or kind not in ("", "INNER", "CROSS") or join.args.get("using"):
            return None
        items.append(join.this)
    return items


def _alias(item: exp.Expr) -> str:
    return item.alias_or_name.lower()


def _leaf_alias(node: Node) -> str | None:
    aliases = {a for a, _ in node.output()}
    return aliases.pop() if len(aliases) == 1 else None


def _reorder(select: exp.Select, group: OrderedGroup) -> bool:
    """Rewrite the SELECT's FROM list in the group's order; False when it cannot."""
    items = _items(select)
    if items is None or len(items) < 2:
        return False
    by_alias = {_alias(i): i for i in items}
    leaf_aliases = [_leaf_alias(leaf) for leaf in group.leaves]
    if sorted(a or "" for a in leaf_aliases) != sorted(by_alias):
        return False  # the group is not exactly this FROM list: keep the written order
    alias_of = {id(leaf): a or "" for leaf, a in zip(group.leaves, leaf_aliases, strict=True)}
    conditions = conjuncts(select.args.get("where") and select.args["where"].this)
    for join in select.args.get("joins") or ():
        conditions += conjuncts(join.args.get("on"))
    movable = [c for c in conditions if _movable(c, set(by_alias))]
    staying = [c for c in conditions if not any(c is m for m in movable)]
    tree = group.root.child if isinstance(group.root, Filter) else group.root
    text, placed = _from_text(tree, alias_of, by_alias, movable)
    leftover = [c for c in movable if not any(c is p for p in placed)]
    rebuilt = sqlglot.parse_one(f"SELECT 1 FROM {text}", read="spark")
    select.set("from_", rebuilt.args["from_"])
    select.set("joins", rebuilt.args.get("joins"))
    where = staying + leftover
    select.set("where", exp.Where(this=exp.and_(*where)) if where else None)
    return True


def _aliases_of(expression: exp.Expr) -> set[str]:
    return {c.table.lower() for c in expression.find_all(exp.Column) if c.table}


def _movable(condition: exp.Expr, aliases: set[str]) -> bool:
    if condition.find(exp.Subquery, exp.Exists, exp.Select):
        return False
    used = _aliases_of(condition)
    return len(used) >= 2 and used <= aliases


def _from_text(
    node: Node,
    alias_of: dict[int, str],
    by_alias: dict[str, exp.Expr],
    movable: list[exp.Expr],
) -> tuple[str, list[exp.Expr]]:
    placed: list[exp.Expr] = []

    def covered(n: Node) -> set[str]:
        if id(n) in alias_of:
            return {alias_of[id(n)]}
        return set().union(*(covered(c) for c in n.children))

    def render(n: Node, nested: bool) -> str:
        if id(n) in alias_of:
            return by_alias[alias_of[id(n)]].sql(dialect="spark")
        assert isinstance(n, Join)
        left, right = render(n.left, False), render(n.right, True)
        left_set, right_set = covered(n.left), covered(n.right)
        here = [
            c
            for c in movable
            if not any(c is p for p in placed)
            and _aliases_of(c) <= left_set | right_set
            and not _aliases_of(c) <= left_set
            and not _aliases_of(c) <= right_set
        ]
        placed.extend(here)
        if here:
            on = " AND ".join(f"({c.sql(dialect='spark')})" for c in here)
            text = f"{left} JOIN {right} ON {on}"
        else:
            text = f"{left} CROSS JOIN {right}"
        return f"({text})" if nested else text

    return render(node, False), placed


# ---- hints -----------------------------------------------------------------------------
def _hints(
    root: PhysicalNode, join_origins: dict[int, exp.Select], common_hint: str
) -> Iterator[tuple[exp.Select, str, str]]:
    for node in root.walk():
        if node.op != "join" or id(node.logical) not in join_origins:
            continue
        select = join_origins[id(node.logical)]
        aliases = [_leaf_alias(c.logical) for c in node.children]
        if node.algorithm in ("map", "bucket_map") and node.streamed is not None:
            hashed = aliases[1 - node.streamed]
            if hashed and _is_relation_of(select, hashed):
                yield select, "BROADCAST", hashed
        elif node.algorithm == "smb" or (node.algorithm == "common" and common_hint != "none"):
            name = "MERGE" if node.algorithm == "smb" or common_hint == "merge" else "SHUFFLE_HASH"
            side = aliases[1] or aliases[0]
            if side and _is_relation_of(select, side):
                yield select, name, side


def _is_relation_of(select: exp.Select, alias: str) -> bool:
    from_ = select.args.get("from_")
    items = ([from_.this] if from_ is not None else []) + [
        j.this for j in select.args.get("joins") or ()
    ]
    return any(_alias(i) == alias for i in items)


def _add_hint(select: exp.Select, name: str, alias: str) -> bool:
    hint = select.args.get("hint")
    existing = list(hint.expressions) if hint is not None else []
    for item in existing:
        if (
            isinstance(item, exp.JoinHint)
            and item.name.upper() == name
            and any(e.name.lower() == alias for e in item.expressions)
        ):
            return False
    existing.append(exp.JoinHint(this=name, expressions=[exp.to_table(alias)]))
    select.set("hint", exp.Hint(expressions=existing))
    return True
