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

A correlated scalar subquery of a WHERE whose join the plan orders among the FROM list's
(ScalarOrigin.writable: the join returns the same rows as the subquery) is written out as
that join, `JOIN (SELECT keys, value ... GROUP BY keys) AS _sqN ON outer = _sqN.key` with
the comparison reading `_sqN.value`, in the chosen place and with its hint (otherwise Spark
decorrelates it into a left outer join after the FROM list's joins, which no hint reaches).
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlglot
from sqlglot import exp

from optimizer.physical.join_order import OrderedGroup
from optimizer.physical.key_transfer import KeyTransfer
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import Filter, Join, Node, conjuncts
from optimizer.sql_to_plan import ScalarOrigin, plain_from_items


def emit_spark(
    statement: exp.Expr,
    groups: list[OrderedGroup],
    root: PhysicalNode,
    join_origins: dict[int, exp.Select],
    common_hint: str = "none",
    original: str | None = None,
) -> str:
    """The rewritten query; `original` (the SQL as written) when nothing is to change."""
    copy = statement.copy()
    counterpart = {id(a): b for a, b in zip(statement.walk(), copy.walk(), strict=True)}
    selects = {k: v for k, v in counterpart.items() if isinstance(v, exp.Select)}
    changed = False
    derived: dict[int, exp.Select] = {}
    for group in groups:  # first: the FROM lists then hold the derived tables to order
        for origin in group.scalars:
            derived[id(origin)] = _write_scalar_join(origin, counterpart, selects)
            changed = True
    for group in groups:
        if group.select is not None and id(group.select) in selects:
            changed |= _reorder(selects[id(group.select)], group)
    for select, hint, alias in _hints(root, join_origins, common_hint):
        target = selects.get(id(select))  # its FROM list may now hold a derived table
        if target is not None and _is_relation_of(target, alias):
            changed |= _add_hint(target, hint, alias)
    for group in groups:  # last: a semi join would stop the derived table's reordering
        for transfer in group.transfers:
            _write_key_transfer(transfer, derived[id(transfer.origin)])
    if not changed and original is not None:
        return original
    return copy.sql(dialect="spark")


def _write_scalar_join(
    origin: ScalarOrigin, counterpart: dict[int, exp.Expr], selects: dict[int, exp.Select]
) -> exp.Select:
    """The subquery (in the copy) replaced by `_sqN.value`, its SELECT made the derived
    table in place (so its own reordering and hints still find it), joined ON the
    correlation equalities to the end of the enclosing SELECT's FROM list."""
    subquery = counterpart[id(origin.subquery)]
    body = subquery.this
    assert isinstance(body, exp.Select)
    subquery.replace(exp.column(origin.value, table=origin.alias))
    derived = exp.Subquery(
        this=origin.derived(body), alias=exp.TableAlias(this=exp.to_identifier(origin.alias))
    )
    selects[id(origin.select)].append("joins", exp.Join(this=derived, on=origin.on.copy()))
    return body


def _write_key_transfer(transfer: KeyTransfer, derived: exp.Select) -> None:
    """`LEFT SEMI JOIN (SELECT key FROM table AS _ktN WHERE ...) AS _ktN ON inner = key`
    in the derived table, broadcast (optimizer.physical.key_transfer)."""
    alias = transfer.alias
    table = transfer.table.copy()
    table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    key = exp.column(transfer.column, table=alias)
    small = exp.select(key.copy()).from_(table)
    if transfer.conditions:
        small = small.where(exp.and_(*(c.copy() for c in transfer.conditions)))
    join = exp.Join(
        this=exp.Subquery(this=small, alias=exp.TableAlias(this=exp.to_identifier(alias))),
        side="LEFT",
        kind="SEMI",
        on=exp.EQ(this=transfer.inner.copy(), expression=key),
    )
    derived.append("joins", join)
    _add_hint(derived, "BROADCAST", alias)


# ---- join order ------------------------------------------------------------------------
def _alias(item: exp.Expr) -> str:
    return item.alias_or_name.lower()


def _leaf_alias(node: Node) -> str | None:
    aliases = {a for a, _ in node.output()}
    return aliases.pop() if len(aliases) == 1 else None


def _reorder(select: exp.Select, group: OrderedGroup) -> bool:
    """Rewrite the SELECT's FROM list in the group's order; False when it cannot."""
    items = plain_from_items(select)
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
    for item in list(rebuilt.find_all(exp.Table, exp.Subquery)):  # the items themselves:
        original = by_alias.get(_alias(item))  # later passes change derived tables in place
        if original is not None and item.sql(dialect="spark") == original.sql(dialect="spark"):
            item.replace(original)
    select.set("from_", rebuilt.args["from_"])
    select.set("joins", rebuilt.args.get("joins"))
    where = staying + leftover
    select.set("where", exp.Where(this=exp.and_(*where, copy=False)) if where else None)
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
            if hashed:
                yield select, "BROADCAST", hashed
        elif node.algorithm == "smb" or (node.algorithm == "common" and common_hint != "none"):
            name = "MERGE" if node.algorithm == "smb" or common_hint == "merge" else "SHUFFLE_HASH"
            side = aliases[1] or aliases[0]
            if side:
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
