"""A plan node's shape: its subtree with the relation aliases it names replaced by their
order of first appearance (docs/planner.md#ctes-planned-at-each-reference).

The mapping plans a CTE's body again at each reference (optimizer.sql_to_plan): the plans
differ only by aliases (the reference's own, and the fresh `_uN`, `_sqN`, `_cN` of each
planning). Two nodes of one shape are one estimate under a renaming of aliases, so the
estimator derives it once per shape (StatsQuery) and renames the figures for the others.

Equal shapes mean equal subtrees up to a one-to-one renaming of aliases: every alias the
subtree names (a scan's alias, an output's or a join key's (alias, name), a column's
qualifier in an expression) is numbered in the order first met (the node's own fields,
then its children's in order), and every other part is kept as it is. Where the join came
from in the statement (`Join.select`, `scalar`, `semi`) is left out: no estimate reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

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
    Window,
)

# the fields of a node its shape leaves out (none of them changes an estimate; a Scan's
# transform keys are its table's, and what they project is in its partition filter)
UNSHAPED = frozenset({"select", "scalar", "semi", "transform_keys"})
# per node type, the fields its shape reads (`_own`) besides its children; a field added to
# a node must be added here or to UNSHAPED (tests/optimizer/estimate/test_cte_reuse.py)
SHAPED: dict[type[Node], frozenset[str]] = {
    Scan: frozenset({"alias", "table", "columns", "partition_keys", "partition_filter"}),
    Filter: frozenset({"condition"}),
    Window: frozenset({"outputs", "partition_by"}),
    Project: frozenset({"outputs"}),
    Join: frozenset({"kind", "keys", "residual"}),
    Aggregate: frozenset({"group_by", "outputs", "grouping_sets"}),
    Union: frozenset({"distinct", "names"}),
    Sort: frozenset({"keys"}),
    Limit: frozenset({"count"}),
}


@dataclass(frozen=True)
class Shape:
    """`key` is equal for two nodes exactly when their subtrees are equal up to renaming
    `aliases` (the node's aliases, numbered in order) one to one."""

    key: int
    aliases: tuple[str, ...]


class _Names:
    """The aliases of one node, numbered in the order first met."""

    def __init__(self) -> None:
        self.number: dict[str, int] = {}

    def of(self, alias: str) -> int:
        alias = alias.lower()
        found = self.number.get(alias)
        if found is None:
            found = self.number[alias] = len(self.number)
        return found

    def ref(self, ref: ColumnRef) -> tuple[int, str]:
        return self.of(ref[0]), ref[1]


class Shapes:
    """Each node's shape, derived once per node (keyed by the node, as StatsQuery keeps its
    figures: nodes hash by identity); equal keys are interned to one number, so a node's key
    is its own fields and its children's numbers."""

    def __init__(self) -> None:
        self._keys: dict[tuple[Any, ...], int] = {}
        self._of: dict[Node, Shape] = {}

    def of(self, node: Node) -> Shape:
        cached = self._of.get(node)
        if cached is not None:
            return cached
        names = _Names()
        own = _own(node, names)
        children = []
        for child in node.children:
            shape = self.of(child)
            children.append((shape.key, tuple(names.of(a) for a in shape.aliases)))
        key = (type(node).__name__, own, tuple(children))
        number = self._keys.setdefault(key, len(self._keys))
        shape = Shape(number, tuple(names.number))
        self._of[node] = shape
        return shape


def _own(node: Node, names: _Names) -> tuple[Any, ...]:
    """The node's own fields (not its children), aliases numbered."""
    kind = type(node)
    if kind is Scan:
        assert isinstance(node, Scan)
        return (
            names.of(node.alias),
            node.table,
            node.columns,
            node.partition_keys,
            _expressions(node.partition_filter, names),
        )
    if kind is Filter:
        assert isinstance(node, Filter)
        return (_expression(node.condition, names),)
    if kind is Window:
        assert isinstance(node, Window)
        return (_outputs(node.outputs, names), _expressions(node.partition_by, names))
    if kind is Project:
        assert isinstance(node, Project)
        return (_outputs(node.outputs, names),)
    if kind is Join:
        assert isinstance(node, Join)
        keys = tuple((names.ref(a), names.ref(b)) for a, b in node.keys)
        residual = None if node.residual is None else _expression(node.residual, names)
        return (node.kind, keys, residual)
    if kind is Aggregate:
        assert isinstance(node, Aggregate)
        return (
            _expressions(node.group_by, names),
            _outputs(node.outputs, names),
            tuple(_expressions(s, names) for s in node.grouping_sets),
        )
    if kind is Union:
        assert isinstance(node, Union)
        return (node.distinct, tuple(names.ref(r) for r in node.names))
    if kind is Sort:
        assert isinstance(node, Sort)
        return (_expressions(node.keys, names),)
    if kind is Limit:
        assert isinstance(node, Limit)
        return (node.count,)
    raise TypeError(kind.__name__)


def _outputs(
    outputs: tuple[tuple[ColumnRef, exp.Expr], ...], names: _Names
) -> tuple[tuple[tuple[int, str], Any], ...]:
    return tuple((names.ref(ref), _expression(e, names)) for ref, e in outputs)


def _expressions(expressions: tuple[exp.Expr, ...], names: _Names) -> tuple[Any, ...]:
    return tuple(_expression(e, names) for e in expressions)


def _expression(node: exp.Expr, names: _Names) -> tuple[Any, ...]:
    """The expression's tree: each node's type and arguments, a qualified column's
    qualifier numbered as an alias."""
    parts: list[Any] = [node.key]
    for name, value in node.args.items():
        if isinstance(node, exp.Column) and name == "table" and isinstance(value, exp.Identifier):
            parts.append((name, "alias", names.of(value.name)))
        elif isinstance(value, exp.Expr):
            parts.append((name, _expression(value, names)))
        elif isinstance(value, list):
            items = (_expression(v, names) if isinstance(v, exp.Expr) else v for v in value)
            parts.append((name, tuple(items)))
        elif value is not None:
            parts.append((name, value))
    return tuple(parts)
