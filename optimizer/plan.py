"""The logical plan: immutable nodes over qualified columns (relation alias, column name).

Expressions stay sqlglot expressions whose columns are qualified with the relation alias
that produces them (`exp.Column(table=alias, this=name)`), so every rule and estimator can
name the column a predicate reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, get_args

from sqlglot import exp

from metastore.catalog.transform_keys import TransformKey

if TYPE_CHECKING:
    from optimizer.origins import ScalarOrigin, SemiOrigin

ColumnRef = tuple[str, str]  # (relation alias, column name)

JoinKind = Literal["inner", "left", "right", "full", "semi", "anti", "cross"]
JOIN_KINDS: tuple[JoinKind, ...] = get_args(JoinKind)


@dataclass(frozen=True, eq=False)
class Node:
    """A plan node; identity is the object (plans are trees, nodes are not shared)."""

    @property
    def children(self) -> tuple[Node, ...]:
        return ()

    @property
    def op(self) -> str:
        return type(self).__name__.lower()

    def output(self) -> tuple[ColumnRef, ...]:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class Scan(Node):
    """A table read under `alias`; `partition_filter` holds the conjuncts on partition keys
    (they choose the partitions whose statistics describe the scan)."""

    table: str
    alias: str
    columns: tuple[str, ...]
    partition_keys: tuple[str, ...] = ()
    partition_filter: tuple[exp.Expr, ...] = ()
    # keys that are transforms of columns (an Iceberg table's): filters on the columns are
    # projected onto them (optimizer.rewrite.transform_keys)
    transform_keys: tuple[TransformKey, ...] = ()

    def output(self) -> tuple[ColumnRef, ...]:
        return tuple((self.alias, c) for c in self.columns + self.partition_keys)


@dataclass(frozen=True, eq=False)
class Filter(Node):
    child: Node
    condition: exp.Expr

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def output(self) -> tuple[ColumnRef, ...]:
        return self.child.output()


@dataclass(frozen=True, eq=False)
class Project(Node):
    """Outputs named (alias, name), each an expression over the child's columns."""

    child: Node
    outputs: tuple[tuple[ColumnRef, exp.Expr], ...]

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def output(self) -> tuple[ColumnRef, ...]:
        return tuple(ref for ref, _ in self.outputs)


@dataclass(frozen=True, eq=False)
class Window(Project):
    """A projection whose outputs hold window functions (`rank() OVER (...)`, `SUM(x) OVER
    (PARTITION BY ...)`): every input row is kept. `partition_by` is the first window's
    PARTITION BY, the keys its rows are shuffled by (none: one partition)."""

    partition_by: tuple[exp.Expr, ...] = ()


@dataclass(frozen=True, eq=False)
class Join(Node):
    """`kind` is one of JOIN_KINDS; `keys` are the equi-join pairs (left column, right
    column) of the condition, `residual` the rest of it.

    Where the join comes from in the qualified statement (optimizer.origins), for the passes
    that write the query back as SQL; a join rebuilt with `dataclasses.replace` keeps it:
    `select`, the SELECT whose FROM/JOIN list it joins; `scalar`, the correlated scalar
    subquery of a WHERE whose plan is one of its sides (the join that decorrelated it, or
    the reordered join that takes it in); `semi`, the EXISTS or IN subquery a semi or anti
    join planned, when that subquery's FROM list may take a semi join."""

    left: Node
    right: Node
    kind: JoinKind
    keys: tuple[tuple[ColumnRef, ColumnRef], ...] = ()
    residual: exp.Expr | None = None
    select: exp.Select | None = field(default=None, repr=False)
    scalar: ScalarOrigin | None = field(default=None, repr=False)
    semi: SemiOrigin | None = field(default=None, repr=False)

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.left, self.right)

    def output(self) -> tuple[ColumnRef, ...]:
        if self.kind in ("semi", "anti"):
            return self.left.output()
        return self.left.output() + self.right.output()


@dataclass(frozen=True, eq=False)
class Aggregate(Node):
    """GROUP BY `group_by`; with `grouping_sets` (ROLLUP, CUBE, GROUPING SETS) one grouping
    per set, each a subset of `group_by`, their groups' rows together."""

    child: Node
    group_by: tuple[exp.Expr, ...]
    outputs: tuple[tuple[ColumnRef, exp.Expr], ...]
    grouping_sets: tuple[tuple[exp.Expr, ...], ...] = ()

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def output(self) -> tuple[ColumnRef, ...]:
        return tuple(ref for ref, _ in self.outputs)


@dataclass(frozen=True, eq=False)
class Union(Node):
    """UNION ALL (distinct=False) or UNION; outputs are the first child's columns renamed."""

    inputs: tuple[Node, ...]
    distinct: bool
    names: tuple[ColumnRef, ...]

    @property
    def children(self) -> tuple[Node, ...]:
        return self.inputs

    def output(self) -> tuple[ColumnRef, ...]:
        return self.names


@dataclass(frozen=True, eq=False)
class Sort(Node):
    child: Node
    keys: tuple[exp.Expr, ...]

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def output(self) -> tuple[ColumnRef, ...]:
        return self.child.output()


@dataclass(frozen=True, eq=False)
class Limit(Node):
    child: Node
    count: int

    @property
    def children(self) -> tuple[Node, ...]:
        return (self.child,)

    def output(self) -> tuple[ColumnRef, ...]:
        return self.child.output()


def with_children(node: Node, children: list[Node]) -> Node:
    """The node over new children (the same node when they did not change), every other
    field kept: a join keeps where it comes from."""
    if all(a is b for a, b in zip(children, node.children, strict=True)):
        return node
    if isinstance(node, Filter | Project | Aggregate | Sort | Limit):
        return replace(node, child=children[0])
    if isinstance(node, Join):
        return replace(node, left=children[0], right=children[1])
    if isinstance(node, Union):
        return replace(node, inputs=tuple(children))
    raise TypeError(type(node).__name__)


def walk(node: Node) -> list[Node]:
    """The nodes of a plan, children before parents."""
    result: list[Node] = []
    for child in node.children:
        result += walk(child)
    result.append(node)
    return result


def column_of(expression: exp.Expr) -> ColumnRef | None:
    """The (alias, name) of a bare qualified column, else None."""
    if isinstance(expression, exp.Paren):
        return column_of(expression.this)
    if isinstance(expression, exp.Column) and expression.table:
        return (expression.table.lower(), expression.name.lower())
    return None


def columns_in(expression: exp.Expr) -> set[ColumnRef]:
    """The (alias, name) of every qualified column in `expression`: what
    `expression.find_all(exp.Column)` finds, by a plain walk of the nodes' arguments (1.7
    times faster in pure-Python sqlglot; planning asks this of its predicates many times)."""
    found: set[ColumnRef] = set()
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Column):
            table = node.table
            if table:
                found.add((table.lower(), node.name.lower()))
        for value in node.args.values():
            if isinstance(value, exp.Expr):
                stack.append(value)
            elif isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, exp.Expr))
    return found


def conjuncts(expression: exp.Expr | None) -> list[exp.Expr]:
    if expression is None:
        return []
    if isinstance(expression, exp.Paren):
        return conjuncts(expression.this)
    if isinstance(expression, exp.And):
        return conjuncts(expression.left) + conjuncts(expression.right)
    return [expression]


def equi_keys(
    condition: list[exp.Expr], left: set[str], right: set[str]
) -> tuple[tuple[tuple[ColumnRef, ColumnRef], ...], list[exp.Expr]]:
    """A join condition's conjuncts split into the equi-join keys between relations of
    `left` and of `right` (left column, right column), and the rest, in order."""
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


def conjunction(parts: list[exp.Expr]) -> exp.Expr | None:
    if not parts:
        return None
    result = parts[0]
    for part in parts[1:]:
        result = exp.and_(result, part, copy=False)
    return result
