"""`--emit spark`: the query as Spark SQL with the chosen join order and join hints.

Each SELECT whose FROM list is one group of inner joins (or such a group followed by LEFT
joins only, which are kept after it as written) gets its FROM clause rewritten in
the chosen order (bushy trees as parenthesised joins), with every join condition of the
group (from ON or WHERE) in the ON of the lowest join that covers it (a column equality the
ones below imply left out; a join the plan keys by an equality the query only implies, as
`a.x = c.z` of `a.x = b.y AND b.y = c.z`, gets it written); other conjuncts stay in WHERE.
Spark's optimizer keeps a connected written order (ReorderJoin only moves a relation that
has no condition with the ones before it), and hinted joins are not flattened. A map join
whose hash-table side is a join of several relations writes that join as a derived table
`(SELECT <columns the SELECT reads> FROM <the join>) AS _jN` (the SELECT then reads them
from _jN), unless a subquery of the SELECT reads one of its relations.
Hints: BROADCAST(side) for a map or bucket map join whose hash-table side is one relation
or such a derived table, MERGE for an SMB join, and for common joins the `common_hint`
setting (by default MERGE on the common joins whose output partitioning a removed shuffle
relies on, correlation.relied_on; Spark and its adaptive execution decide the others). A
skew join is left to Spark's adaptive skew-join handling (spark.sql.adaptive.skewJoin.enabled);
the rewrite of Hive's CBO proposal is what `explain` costs (docs/design.md#join-algorithms).

A correlated scalar subquery of a WHERE whose join the plan orders among the FROM list's
(ScalarOrigin.writable: the join returns the same rows as the subquery) is written out as
that join, `JOIN (SELECT keys, value ... GROUP BY keys) AS _sqN ON outer = _sqN.key` with
the comparison reading `_sqN.value`, in the chosen place and with its hint (otherwise Spark
decorrelates it into a left outer join after the FROM list's joins, which no hint reaches).
Keys transferred into it (optimizer.physical.key_transfer) are its LEFT SEMI JOIN with the
small relation's filtered keys, `_ktN`, broadcast; so are keys transferred into the SELECT of
an EXISTS, NOT EXISTS or IN subquery.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from optimizer.origins import ScalarOrigin, SemiOrigin
from optimizer.physical.correlation import relied_on
from optimizer.physical.emit_semi import semi_joins_to_write, write_semi_joins
from optimizer.physical.equivalence import (
    ColumnClasses,
    column_equality,
    implied_equalities,
)
from optimizer.physical.join_order import OrderedGroup
from optimizer.physical.key_transfer import KeyTransfer
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import Filter, Join, Node, conjuncts
from optimizer.sql_copy import TreeCopy
from optimizer.sql_scope import (
    free_aliases,
    from_items,
    is_plain_join,
    plain_from_items,
    relation_names,
)


def emit_spark(
    statement: exp.Expr,
    groups: list[OrderedGroup],
    root: PhysicalNode,
    common_hint: str = "correlated",
    original: str | None = None,
    semi_transfers: Sequence[KeyTransfer] = (),
    semi_hints: bool = True,
) -> str:
    """The rewritten query; `original` (the SQL as written) when nothing is to change;
    `semi_transfers`: keys transferred into EXISTS and IN subqueries; `semi_hints`: EXISTS and
    NOT EXISTS hashed by a map join written as broadcast joins (optimizer.physical.emit_semi).
    The joins of the plan name the SELECTs of `statement` they come from; `statement` is left
    as it is."""
    copy = TreeCopy(statement)
    changed = False
    derived: dict[ScalarOrigin, exp.Select] = {}
    for group in groups:  # first: the FROM lists then hold the derived tables to order
        for origin in group.scalars:
            derived[origin] = _write_scalar_join(origin, copy)
            changed = True
    written = semi_joins_to_write(root) if semi_hints else []
    hashed = _hashed_joins(root) - {semi.hashed for semi in written}  # those are _sjN
    joins = _Derived(hashed, relation_names(statement))
    for group in groups:
        changed |= _reorder(copy[group.select], group, joins)
    for select, hint, alias in _hints(root, common_hint, joins.alias_of):
        target = copy[select]  # its FROM list may now hold derived tables
        holder = _holder(target, alias, set(joins.alias_of.values()))
        if holder is not None:
            changed |= _add_hint(holder, hint, alias)
    for group in groups:  # last: a semi join would stop the derived table's reordering
        for transfer in group.transfers:
            assert isinstance(transfer.origin, ScalarOrigin)
            _write_key_transfer(transfer, derived[transfer.origin])
    for transfer in semi_transfers:
        assert isinstance(transfer.origin, SemiOrigin)
        _write_key_transfer(transfer, copy[transfer.origin.select])
        changed = True
    for outer, alias in write_semi_joins(copy, written, joins.taken):
        _add_hint(outer, "BROADCAST", alias)
        changed = True
    if not changed and original is not None:
        return original
    for join in copy.root.find_all(exp.Join):
        _inner_not_cross(join)
    return copy.root.sql(dialect="spark")


def _inner_not_cross(join: exp.Join) -> None:
    """A comma of the FROM list (which sqlglot reads from Spark SQL as CROSS JOIN) written as
    INNER JOIN: Spark keeps a CROSS JOIN's Cross type after it moves the WHERE's equalities
    into the join, and its dynamic partition pruning skips Cross joins (the same rows)."""
    args = join.args
    plain = not args.get("side") and args.get("on") is None and not args.get("using")
    if plain and str(args.get("kind") or "").upper() == "CROSS":
        join.set("kind", "INNER")


def _write_scalar_join(origin: ScalarOrigin, copy: TreeCopy) -> exp.Select:
    """The subquery (in the copy) replaced by `_sqN.value`, its SELECT made the derived
    table in place (so its own reordering and hints still find it), joined ON the
    correlation equalities to the end of the enclosing SELECT's FROM list."""
    subquery = copy[origin.subquery]
    body = subquery.this
    assert isinstance(body, exp.Select)
    subquery.replace(exp.column(origin.value, table=origin.alias))
    derived = exp.Subquery(
        this=origin.derived(body), alias=exp.TableAlias(this=exp.to_identifier(origin.alias))
    )
    copy[origin.select].append("joins", exp.Join(this=derived, on=origin.on.copy()))
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


def _inner_prefix(select: exp.Select) -> tuple[list[exp.Expr], list[exp.Join]] | None:
    """The FROM list's relations up to its first LEFT join, when the joins from there on are
    all LEFT (outer, semi or anti) joins, and those joins: the inner joins before them are
    one group whatever follows (a LEFT join keeps every row of its left side, so conditions
    of the WHERE on that side's relations hold below it as above it)."""
    joins = list(select.args.get("joins") or ())
    first = next((i for i, j in enumerate(joins) if (j.side or "").upper() == "LEFT"), None)
    if first is None:
        return None
    if any((j.side or "").upper() != "LEFT" or j.args.get("using") for j in joins[first:]):
        return None
    if select.args.get("from_") is None or not all(is_plain_join(j) for j in joins[:first]):
        return None
    return from_items(select)[: first + 1], joins[first:]


def _reorder(select: exp.Select, group: OrderedGroup, derived: _Derived) -> bool:
    """Rewrite the SELECT's FROM list in the group's order (a FROM list of inner joins
    followed by LEFT joins: its inner part, the LEFT joins kept after it as written); False
    when it cannot."""
    items = plain_from_items(select)
    trailing: list[exp.Join] = []
    if items is None:
        prefix = _inner_prefix(select)
        if prefix is None:
            return False
        items, trailing = prefix
    if len(items) < 2:
        return False
    by_alias = {_alias(i): i for i in items}
    leaf_aliases = [_leaf_alias(leaf) for leaf in group.leaves]
    if sorted(a or "" for a in leaf_aliases) != sorted(by_alias):
        return False  # the group is not exactly this FROM list: keep the written order
    alias_of = {leaf: a or "" for leaf, a in zip(group.leaves, leaf_aliases, strict=True)}
    conditions = conjuncts(select.args.get("where") and select.args["where"].this)
    for join in select.args.get("joins") or ():
        if not any(join is t for t in trailing):  # a LEFT join's ON stays with it
            conditions += conjuncts(join.args.get("on"))
    movable = [c for c in conditions if _movable(c, set(by_alias))]
    staying = [c for c in conditions if not any(c is m for m in movable)]
    tree = group.root.child if isinstance(group.root, Filter) else group.root
    trailing_on = [c for join in trailing for c in conjuncts(join.args.get("on"))]
    writer = _FromWriter(select, alias_of, by_alias, movable, derived, conditions + trailing_on)
    text = writer.render(tree, False)
    leftover = [c for c in movable if not any(c is p for p in writer.placed)]
    rebuilt = sqlglot.parse_one(f"SELECT 1 FROM {text}", read="spark")
    for item in list(rebuilt.find_all(exp.Table, exp.Subquery)):  # the items themselves:
        original = by_alias.get(_alias(item))  # later passes change derived tables in place
        if original is not None and item.sql(dialect="spark") == original.sql(dialect="spark"):
            item.replace(original)
    select.set("from_", rebuilt.args["from_"])
    select.set("joins", (rebuilt.args.get("joins") or []) + trailing or None)
    where = staying + leftover
    select.set("where", exp.Where(this=exp.and_(*where, copy=False)) if where else None)
    if writer.moved:  # columns of relations now inside a derived table are read from it
        for key in ("expressions", "where", "group", "having", "order", "qualify"):
            for part in _args(select, key):
                _rename_columns(part, writer.moved, select)
        for join in trailing:
            _rename_columns(join.args["on"], writer.moved, select)
    return True


@dataclass
class _Derived:
    """Joins written as derived tables (a map join's hash-table side that is a join of
    several relations: Spark's BROADCAST hint names one relation): the logical joins to
    write so, the aliases given, and the names the statement already uses."""

    hashed: set[Node]
    taken: set[str]
    alias_of: dict[Node, str] = field(default_factory=dict)

    def fresh(self) -> str:
        number = len(self.alias_of) + 1
        while f"_j{number}" in self.taken:
            number += 1
        alias = f"_j{number}"
        self.taken.add(alias)
        return alias


def _args(select: exp.Select, key: str) -> list[exp.Expr]:
    value = select.args.get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _outside(select: exp.Select, conditions: list[exp.Expr]) -> list[exp.Expr]:
    """What of the SELECT reads its relations' columns, besides its FROM items."""
    parts = [
        p
        for key in ("expressions", "group", "having", "order", "qualify")
        for p in _args(select, key)
    ]
    return parts + conditions


def _rename_columns(
    expression: exp.Expr,
    moved: dict[tuple[str, str], tuple[str, str]],
    select: exp.Select | None = None,
) -> None:
    """Columns moved into a derived table read from it; with `select`, only those of that
    SELECT's own scope (a subquery's relations of the same name are others)."""
    for column in list(expression.find_all(exp.Column)):
        if select is not None and column.find_ancestor(exp.Select) is not select:
            continue
        target = moved.get((column.table.lower(), column.name.lower()))
        if target is not None:
            column.set("table", exp.to_identifier(target[0]))
            column.set("this", exp.to_identifier(target[1]))


def _aliases_of(expression: exp.Expr) -> set[str]:
    return {c.table.lower() for c in expression.find_all(exp.Column) if c.table}


def _movable(condition: exp.Expr, aliases: set[str]) -> bool:
    if condition.find(exp.Subquery, exp.Exists, exp.Select):
        return False
    used = _aliases_of(condition)
    return len(used) >= 2 and used <= aliases


class _FromWriter:
    """The FROM clause of a join tree as text: each join with the movable conditions that
    first cover both its sides in its ON (less the column equalities those before imply, and
    with those of its keys that only transitivity implies); a join in `derived.hashed` as a
    derived table `(SELECT <the columns the SELECT reads> FROM ...) AS _jN` (`moved` then
    maps each such column to its name there)."""

    def __init__(
        self,
        select: exp.Select,
        alias_of: dict[Node, str],
        by_alias: dict[str, exp.Expr],
        movable: list[exp.Expr],
        derived: _Derived,
        conditions: list[exp.Expr],
    ) -> None:
        self.select, self.alias_of, self.by_alias = select, alias_of, by_alias
        self.movable, self.derived = movable, derived
        self.written = {alias: place for place, alias in enumerate(by_alias)}  # query's order
        self.outside = _outside(select, conditions)
        self.placed: list[exp.Expr] = []
        self.moved: dict[tuple[str, str], tuple[str, str]] = {}
        self.equal = ColumnClasses()  # columns the equalities written so far make equal

    def covered(self, n: Node) -> set[str]:
        if n in self.alias_of:
            return {self.alias_of[n]}
        return set().union(*(self.covered(c) for c in n.children))

    def render(self, n: Node, nested: bool) -> str:
        if n in self.alias_of:
            return self.by_alias[self.alias_of[n]].sql(dialect="spark")
        assert isinstance(n, Join)
        if n in self.derived.hashed and self._can_derive(n):
            return self._derived_table(n)
        return self._join(n, nested)

    def _join(self, n: Join, nested: bool) -> str:
        """`left JOIN right ON ...` (parenthesised when nested); two relations joined to
        each other in the order the query writes them (an inner join's sides commute, and
        the hints name the build side: a needless swap only makes Spark's plan differ)."""
        first, second = n.left, n.right
        if self._written_later(first, second):
            first, second = second, first
        left, right = self.render(first, False), self.render(second, True)
        left_set, right_set = self.covered(first), self.covered(second)
        here = [
            c
            for c in self.movable
            if not any(c is p for p in self.placed)
            and _aliases_of(c) <= left_set | right_set
            and not _aliases_of(c) <= left_set
            and not _aliases_of(c) <= right_set
        ]
        self.placed.extend(here)
        written = self._needed(here) + self._implied(n)
        if written:
            on = " AND ".join(f"({self._text(c)})" for c in written)
            text = f"{left} JOIN {right} ON {on}"
        else:
            text = f"{left} JOIN {right}"
        return f"({text})" if nested else text

    def _needed(self, conditions: list[exp.Expr]) -> list[exp.Expr]:
        """The conditions to write in an ON: all but the column equalities those written
        before imply (every conjunct of the group holds together, so they hold)."""
        needed = []
        for condition in conditions:
            pair = column_equality(condition)
            if pair is None:
                needed.append(condition)
                for x, y in implied_equalities(condition):
                    self.equal.union(x, y)
            elif self.equal.union(*pair):
                needed.append(condition)
        return needed

    def _implied(self, n: Join) -> list[exp.Expr]:
        """Equalities of the join's keys that the written ones do not imply: those the
        query implies by transitivity (optimizer.physical.equivalence)."""
        return [
            exp.EQ(this=exp.column(x[1], table=x[0]), expression=exp.column(y[1], table=y[0]))
            for x, y in n.keys
            if self.equal.union(x, y)
        ]

    def _written_later(self, first: Node, second: Node) -> bool:
        """Both sides are relations, and the query writes `first` after `second`."""
        if first not in self.alias_of or second not in self.alias_of:
            return False
        return self.written[self.alias_of[first]] > self.written[self.alias_of[second]]

    def _text(self, condition: exp.Expr) -> str:
        if not self.moved:
            return condition.sql(dialect="spark")
        copy = condition.copy()
        _rename_columns(copy, self.moved)
        return copy.sql(dialect="spark")

    def _can_derive(self, n: Node) -> bool:
        """No subquery of the SELECT reads the join's relations (a correlated one would lose
        sight of them), and no column is read through a star."""
        aliases = self.covered(n)
        for part in self.outside:
            if any(not isinstance(star.parent, exp.Count) for star in part.find_all(exp.Star)):
                return False  # `alias.*` (COUNT(*) reads no column)
            for nested in part.find_all(exp.Select):
                if free_aliases(nested, set()) & aliases:
                    return False
        return True

    def _derived_table(self, n: Join) -> str:
        """The join as `(SELECT columns FROM the join) AS _jN`."""
        aliases = self.covered(n)
        inner = self._join(n, False)
        read = sorted(
            {
                (c.table.lower(), c.name.lower())
                for part in self.outside
                for c in part.find_all(exp.Column)
                if c.table.lower() in aliases and c.find_ancestor(exp.Select) is self.select
            }
        )
        names = [name for _, name in read]
        alias = self.derived.fresh()
        self.derived.alias_of[n] = alias
        columns = []
        for table, name in read:
            output = name if names.count(name) == 1 else f"{table}_{name}"
            source = self.moved.get((table, name), (table, name))  # in a derived table inside
            columns.append(f"{source[0]}.{source[1]} AS {output}")
            self.moved[(table, name)] = (alias, output)
        projection = ", ".join(columns) or "1 AS _one"
        return f"(SELECT {projection} FROM {inner}) AS {alias}"


# ---- hints -----------------------------------------------------------------------------
def _hashed_joins(root: PhysicalNode) -> set[Node]:
    """The logical joins a map join holds as its hash table."""
    hashed: set[Node] = set()
    for node in root.walk():
        if node.op == "join" and node.algorithm in ("map", "bucket_map"):
            assert node.streamed is not None
            side = node.children[1 - node.streamed].logical
            if isinstance(side, Join) and _leaf_alias(side) is None:
                hashed.add(side)
    return hashed


def _holder(select: exp.Select, alias: str, derived: set[str]) -> exp.Select | None:
    """The SELECT whose FROM list names `alias`: `select`, or one of the derived tables
    written for joins (`derived`) in it."""
    if _is_relation_of(select, alias):
        return select
    for item in from_items(select):
        if isinstance(item, exp.Subquery) and _alias(item) in derived:
            inner = item.this
            if isinstance(inner, exp.Select):
                found = _holder(inner, alias, derived)
                if found is not None:
                    return found
    return None


def _hints(
    root: PhysicalNode, common_hint: str, derived: dict[Node, str]
) -> Iterator[tuple[exp.Select, str, str]]:
    """(the SELECT of the statement, the hint, the relation it names) of each join of a
    FROM list."""
    correlated = relied_on(root) if common_hint == "correlated" else set()
    for node in root.walk():
        select = node.logical.select if isinstance(node.logical, Join) else None
        if select is None:
            continue
        aliases = [_leaf_alias(c.logical) or derived.get(c.logical) for c in node.children]
        common = node.algorithm == "common"
        if node.algorithm in ("map", "bucket_map") and node.streamed is not None:
            hashed = aliases[1 - node.streamed]
            if hashed:
                yield select, "BROADCAST", hashed
        elif node.algorithm == "smb" or (
            common and (common_hint in ("merge", "shuffle_hash") or node in correlated)
        ):
            # correlated: Spark would broadcast a side its own estimate finds small, then
            # shuffle the join's output again for the operator above (the plan's count holds
            # only with the join shuffled: docs/design.md#spark-sql-emission)
            name = "SHUFFLE_HASH" if common and common_hint == "shuffle_hash" else "MERGE"
            side = aliases[1] or aliases[0]
            if side:
                yield select, name, side


def _is_relation_of(select: exp.Select, alias: str) -> bool:
    return any(_alias(i) == alias for i in from_items(select))


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
