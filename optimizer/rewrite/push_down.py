"""A SELECT's WHERE conjuncts placed on the joins of its FROM list (Spark's
PushPredicateThroughJoin): a conjunct on one relation is pushed onto it (one on partition
keys into its Scan, where it chooses the partitions whose statistics describe the scan),
never onto the null-supplying side of an outer join; one on two or more relations joins
the first inner join that covers them (its column equalities become join keys, after the
ON condition's); the rest stay above the joins. An ON conjunct of a LEFT, SEMI or ANTI join
on its right side alone only filters that side: it is pushed onto it too.

>>> from sqlglot import parse_one
>>> a, b = Scan("t", "a", ("x", "k")), Scan("u", "b", ("y", "k"), ("day",))
>>> where = [parse_one(s) for s in ("a.k = b.k", "b.day = 1", "a.x > b.y")]
>>> placed = push_down(Join(a, b, "cross"), ["a", "b"], where)
>>> placed.kind, placed.keys, placed.residual.sql()
('inner', ((('a', 'k'), ('b', 'k')),), 'a.x > b.y')
>>> [p.sql() for p in placed.right.partition_filter]
['b.day = 1']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlglot import exp

from optimizer.plan import Filter, Join, Node, Scan, columns_in, conjunction, conjuncts, equi_keys
from optimizer.rewrite.transform_keys import projected


def push_down(written: Node, names: Sequence[str], where: Sequence[exp.Expr]) -> Node:
    """`written`: the FROM list's relations, named `names` in order, joined left-deep as
    the query writes them, each join on its ON condition alone (the relation itself when
    there is one); `where`: the WHERE's conjuncts."""
    joins: list[Join] = []
    node = written
    for _ in names[1:]:
        assert isinstance(node, Join)
        joins.append(node)
        node = node.left
    joins.reverse()
    relations = [node] + [j.right for j in joins]
    nullable = _null_supplying(names, joins)
    pending = list(where)
    # each conjunct's relations found once (a walk of its tree), and conjuncts told apart
    # by identity, not by sqlglot's structural equality (a walk of two trees each time)
    found: dict[int, tuple[exp.Expr, set[str]]] = {}

    def aliases(conjunct: exp.Expr) -> set[str]:
        if id(conjunct) not in found:
            found[id(conjunct)] = (conjunct, _aliases(conjunct))
        return found[id(conjunct)][1]

    def without(conjuncts: list[exp.Expr], taken: list[exp.Expr]) -> list[exp.Expr]:
        ids = {id(c) for c in taken}
        return [c for c in conjuncts if id(c) not in ids]

    placed: list[Node] = []
    for name, relation in zip(names, relations, strict=True):
        local = [c for c in pending if aliases(c) == {name} and name not in nullable]
        pending = without(pending, local)
        placed.append(_onto(relation, local))
    plan, covered = placed[0], {names[0]}
    for name, right, join in zip(names[1:], placed[1:], joins, strict=True):
        kind, keys, residual = join.kind, join.keys, conjuncts(join.residual)
        if kind in ("inner", "cross"):
            ready = [c for c in pending if aliases(c) <= covered | {name} and name in aliases(c)]
            pending = without(pending, ready)
            more_keys, more_residual = equi_keys(ready, covered, {name})
            keys, residual = keys + more_keys, residual + more_residual
            if kind == "cross" and ready:
                kind = "inner"
        if kind in ("left", "semi", "anti"):  # ON conjuncts on the inner side only filter it
            inner = [c for c in residual if aliases(c) == {name}]
            residual = without(residual, inner)
            right = _onto(right, inner)
        plan = replace(
            join, left=plan, right=right, kind=kind, keys=keys, residual=conjunction(residual)
        )
        covered = covered | {name}
    rest = conjunction(pending)
    return plan if rest is None else Filter(plan, rest)


def _null_supplying(names: Sequence[str], joins: list[Join]) -> set[str]:
    """The relations an outer join may give NULL rows."""
    nullable: set[str] = set()
    seen = {names[0]}
    for name, join in zip(names[1:], joins, strict=True):
        if join.kind == "left":
            nullable.add(name)
        elif join.kind == "right":
            nullable |= seen
        elif join.kind == "full":
            nullable |= seen | {name}
        seen.add(name)
    return nullable


def _onto(node: Node, predicates: list[exp.Expr]) -> Node:
    """`node` filtered by `predicates`: those on a Scan's partition keys in the Scan."""
    if not predicates:
        return node
    if isinstance(node, Scan):
        keys = set(node.partition_keys)
        on_key = [_reads_only(columns_in(p), keys) for p in predicates]
        on_keys = [p for p, k in zip(predicates, on_key, strict=True) if k]
        rest = [p for p, k in zip(predicates, on_key, strict=True) if not k]
        # a filter on a column a key is a transform of narrows the partitions too
        on_keys += [
            projection
            for p in rest
            for key in node.transform_keys
            if (projection := projected(p, node.alias, key)) is not None
        ]
        node = replace(node, partition_filter=node.partition_filter + tuple(on_keys))
        predicates = rest
    condition = conjunction(predicates)
    return node if condition is None else Filter(node, condition)


def _reads_only(columns: set[tuple[str, str]], names: set[str]) -> bool:
    """Some column is read, and every one is among `names` (a scan's partition keys)."""
    return bool(columns) and {name for _, name in columns} <= names


def _aliases(expression: exp.Expr) -> set[str]:
    return {alias for alias, _ in columns_in(expression)}
