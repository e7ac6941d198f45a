"""Join order: dynamic programming over connected sub-graphs of each group of inner joins
(no cross products unless the query's join graph is disconnected), greedy operator ordering
beyond `greedy_above` relations. Outer, semi and anti joins keep their place; their inputs
are ordered on their own.

Trees are left-deep by default (each join adds one relation, which Spark's join hints can
name); `bushy=1` also considers joins of two joins.

A group is a maximal tree of inner joins of one SELECT (with the Filters in and above it);
its leaves are the relations of that SELECT's FROM list and the decorrelated scalar
subqueries of its WHERE whose joins SQL can say (ScalarOrigin.writable): such a subquery's
grouped aggregate joins where it is cheapest, not only after the FROM list's joins. Every
conjunct of the group's join conditions and filters is applied at the lowest join that
covers its relations. Costs are the cost model's (docs/design.md#join-order)
(the cheapest eligible algorithm per join); ties keep the first plan found, which follows
the written order, so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial, reduce
from operator import or_

from sqlglot import exp

from optimizer.cost.formulas import Cost, Input, table_scan
from optimizer.origins import ScalarOrigin
from optimizer.physical.algorithms import Side, choose_join
from optimizer.physical.context import DEFAULT_WIDTH, PlanningContext, describe
from optimizer.physical.equivalence import ColumnClasses, column_equality
from optimizer.physical.key_transfer import KeyTransfer, transfer_into_semi_join, transfer_keys
from optimizer.physical.pruning_side import pruning_side
from optimizer.plan import (
    Aggregate,
    ColumnRef,
    Filter,
    Join,
    JoinKind,
    Node,
    column_of,
    columns_in,
    conjunction,
    conjuncts,
    with_children,
)
from optimizer.sql_scope import relation_names


@dataclass(frozen=True)
class OrderedGroup:
    """A reordered group: the SELECT it came from, its new join tree, its leaves (the
    SELECT's relations and grouped subqueries), and the scalar subqueries among them."""

    select: exp.Select
    root: Node
    leaves: tuple[Node, ...]
    scalars: tuple[ScalarOrigin, ...] = ()
    transfers: tuple[KeyTransfer, ...] = ()  # semi joins the scalars' subqueries took


@dataclass
class Ordering:
    """Reorders a plan's groups of inner joins; what SQL needs to say the result is in the
    joins themselves (optimizer.plan.Join: `select`, `scalar`), in `groups`, and in the keys
    transferred into EXISTS and IN subqueries (`semi_transfers`)."""

    context: PlanningContext
    groups: list[OrderedGroup] = field(default_factory=list)
    semi_transfers: list[KeyTransfer] = field(default_factory=list)
    transfer_count: int = field(init=False, default=0)
    taken: set[str] | None = field(init=False, default=None)  # the statement's names

    def reorder(self, node: Node) -> Node:
        if _group_select(node.child if isinstance(node, Filter) else node) is not None:
            return self._group(node)
        rebuilt = with_children(node, [self.reorder(child) for child in node.children])
        semi = rebuilt.semi if isinstance(rebuilt, Join) else None
        if semi is not None and self.context.params.key_transfer:
            assert isinstance(rebuilt, Join)
            rebuilt, taken = transfer_into_semi_join(
                rebuilt, semi, self.context, partial(self._fresh_alias, semi.select)
            )
            self.semi_transfers += taken
        return rebuilt

    # ---- one group ---------------------------------------------------------------------
    def _group(self, root: Node) -> Node:
        select = _group_select(root.child if isinstance(root, Filter) else root)
        assert select is not None
        leaves, predicates, joins = _flatten(root, select)
        reordered = [self.reorder(leaf) for leaf in leaves]
        transfers: list[KeyTransfer] = []
        subqueries: dict[Node, ScalarOrigin] = {}  # leaf -> the scalar subquery it plans
        origins: list[ScalarOrigin] = []
        for join in joins:  # the subquery a scalar join decorrelated is its right side
            origin = join.scalar
            if origin is None:
                continue
            origins.append(origin)
            position = next(i for i, leaf in enumerate(leaves) if leaf is join.right)
            new = reordered[position]
            if self.context.params.key_transfer and isinstance(new, Aggregate):
                new, taken = transfer_keys(
                    new,
                    join,
                    origin,
                    reordered,
                    self.context,
                    partial(self._fresh_alias, origin.select),
                )
                reordered[position] = new
                transfers += taken
            subqueries[new] = origin
        planned, graph = self._best_order(reordered, predicates, _Joins(select, subqueries))
        loose = conjunction([p for p, mask in graph.predicates if mask == 0])
        result = planned if loose is None else Filter(planned, loose)
        self.groups.append(
            OrderedGroup(select, result, tuple(reordered), tuple(origins), tuple(transfers))
        )
        return result

    def _best_order(
        self, leaves: list[Node], predicates: list[exp.Expr], joins: _Joins
    ) -> tuple[Node, _Graph]:
        """The cheapest order over the conditions written; with `transitive_joins`, the
        cheapest over the implied ones too where it saves `implied_join_gain` of the
        group's cost with its inputs read (the table scan cost of each leaf's rows).
        Orders of broadcast joins cost nearly alike (TPC-H q2's two: 0.01% of the
        query's cost apart), and there Spark ran the written conditions' order faster
        (docs/benchmarks/2026-11-26-design-measurements.md#implied-join-conditions). `joins`
        builds the joins of both orders: one estimate of each join they share."""
        written = _Graph(leaves, predicates, transitive=False)
        best = _Planner(self.context, written, joins).best()
        params = self.context.params
        if not params.transitive_joins:
            return best.node, written
        implied = _Graph(leaves, predicates, transitive=True)
        if not implied.implies_more():
            return best.node, written
        other = _Planner(self.context, implied, joins).best()
        context = self.context
        read = sum(
            table_scan(Input(context.rows(leaf), context.row_size(leaf)), params).total
            for leaf in leaves
        )
        if best.cost.total - other.cost.total > params.implied_join_gain * (best.cost.total + read):
            return other.node, implied
        return best.node, written

    def _fresh_alias(self, within: exp.Expr) -> str:
        """`_ktN`, named by no table or alias of the statement (`within`'s root)."""
        if self.taken is None:
            self.taken = relation_names(within.root())
        while True:
            self.transfer_count += 1
            alias = f"_kt{self.transfer_count}"
            if alias not in self.taken:
                return alias


def _group_select(node: Node) -> exp.Select | None:
    """The SELECT whose group of inner joins `node` belongs to: an inner join of its FROM
    list, or the join of a scalar subquery of its WHERE that SQL can say
    (ScalarOrigin.writable); None for any other node."""
    if not isinstance(node, Join) or node.kind not in ("inner", "cross"):
        return None
    if node.scalar is not None and node.scalar.writable:
        return node.scalar.select
    return node.select


def _flatten(root: Node, select: exp.Select) -> tuple[list[Node], list[exp.Expr], list[Join]]:
    """The group's leaves, its conjuncts (join keys as equalities, residuals, filters between
    its joins) and the joins it takes in."""
    predicates: list[exp.Expr] = []
    leaves: list[Node] = []
    joins: list[Join] = []

    def visit(node: Node) -> None:
        if isinstance(node, Filter) and _group_select(node.child) is select:
            predicates.extend(conjuncts(node.condition))  # a filter commutes with inner joins
            visit(node.child)
        elif _group_select(node) is select:
            assert isinstance(node, Join)
            joins.append(node)
            visit(node.left)
            visit(node.right)
            predicates.extend(_equality(a, b) for a, b in node.keys)
            predicates.extend(conjuncts(node.residual))
        else:
            leaves.append(node)

    visit(root)
    return leaves, predicates, joins


def _col(ref: ColumnRef) -> exp.Column:
    return exp.column(ref[1], table=ref[0])


def _equality(a: ColumnRef, b: ColumnRef) -> exp.EQ:
    return exp.EQ(this=_col(a), expression=_col(b))


@dataclass(frozen=True)
class _Class:
    """An equivalence class of the group's join columns (optimizer.physical.equivalence):
    its members with their leaves' bits, in the order the query names them, the equalities
    the query writes between them, and the bits of its leaves."""

    members: tuple[tuple[ColumnRef, int], ...]
    written: tuple[tuple[ColumnRef, ColumnRef], ...]
    mask: int

    def key(self, a: int, b: int) -> tuple[ColumnRef, ColumnRef]:
        """The one equality joining parts a and b for this class (a's column, b's column): a
        written one where there is one, else the first member of each side."""
        bit = dict(self.members)
        for x, y in self.written:
            if bit[x] & a and bit[y] & b:
                return x, y
            if bit[x] & b and bit[y] & a:
                return y, x
        first = next(c for c, m in self.members if m & a)
        second = next(c for c, m in self.members if m & b)
        return first, second


def _classes(
    equalities: list[tuple[ColumnRef, ColumnRef]], bit: dict[ColumnRef, int]
) -> list[_Class]:
    """The classes of the equalities' columns, in the order the first of each is written."""
    union = ColumnClasses()
    for x, y in equalities:
        union.union(x, y)
    members: dict[ColumnRef, list[ColumnRef]] = {}
    written: dict[ColumnRef, list[tuple[ColumnRef, ColumnRef]]] = {}
    for x, y in equalities:
        root = union.find(x)
        found = members.setdefault(root, [])
        found += [c for c in (x, y) if c not in found]
        written.setdefault(root, []).append((x, y))
    return [
        _Class(
            tuple((c, bit[c]) for c in columns),
            tuple(written[root]),
            reduce(or_, (bit[c] for c in columns)),
        )
        for root, columns in members.items()
    ]


class _Graph:
    """The group's join graph: its leaves, its conjuncts with the bits of the leaves each
    reads, and (with `transitive`) the equivalence classes of the columns its equalities
    join, each linking every two of its leaves; without it, only the equalities written."""

    def __init__(self, leaves: list[Node], predicates: list[exp.Expr], transitive: bool) -> None:
        self.leaves = leaves
        owner: dict[str, int] = {}
        for index, leaf in enumerate(leaves):
            for alias, _ in leaf.output():
                owner.setdefault(alias, index)
        self.owner = owner
        self.predicates: list[tuple[exp.Expr, int]] = []
        equalities: list[tuple[ColumnRef, ColumnRef]] = []
        bit: dict[ColumnRef, int] = {}
        for predicate in predicates:
            mask = 0
            for alias, _ in columns_in(predicate):
                if alias in owner:
                    mask |= 1 << owner[alias]
            pair = column_equality(predicate) if transitive else None
            if pair is not None and all(c[0] in owner for c in pair):
                x, y = pair
                if owner[x[0]] != owner[y[0]]:  # joins two leaves
                    equalities.append(pair)
                    bit[x], bit[y] = 1 << owner[x[0]], 1 << owner[y[0]]
                    continue
            self.predicates.append((predicate, mask))
        self.classes = []
        for found in _classes(equalities, bit):
            if len(found.members) == bin(found.mask).count("1"):
                self.classes.append(found)
            else:  # two columns of one leaf: its equalities are kept as written
                self.predicates += [(_equality(x, y), found.mask) for x, y in found.written]
        self.full = (1 << len(leaves)) - 1

    def implies_more(self) -> bool:
        """Some class links a pair of leaves no written equality links."""
        return any(bin(found.mask).count("1") > 2 for found in self.classes)

    def connected(self, mask: int) -> bool:
        start = mask & -mask
        reached, frontier = start, start
        while frontier:
            grown = reached
            for _, pmask in self.predicates:
                if pmask & mask == pmask and pmask & reached and bin(pmask).count("1") > 1:
                    grown |= pmask
            for found in self.classes:  # a class links any two of its leaves
                inside = found.mask & mask
                if inside & reached:
                    grown |= inside
            frontier = grown & ~reached
            reached = grown
        return reached == mask

    def linked(self, a: int, b: int) -> bool:
        both = a | b
        return any(
            pmask & both == pmask and pmask & a and pmask & b for _, pmask in self.predicates
        ) or any(found.mask & a and found.mask & b for found in self.classes)

    def condition(
        self, a: int, b: int
    ) -> tuple[tuple[tuple[ColumnRef, ColumnRef], ...], list[exp.Expr]]:
        """Join keys (a's column, b's column): one per class with columns on both sides;
        and the residual conjuncts joining a and b."""
        keys = [found.key(a, b) for found in self.classes if found.mask & a and found.mask & b]
        residual: list[exp.Expr] = []
        both = a | b
        for predicate, pmask in self.predicates:
            if not (pmask & both == pmask and pmask & a and pmask & b):
                continue
            if isinstance(predicate, exp.EQ):
                left, right = column_of(predicate.left), column_of(predicate.right)
                if left and right:
                    lm, rm = 1 << self.owner[left[0]], 1 << self.owner[right[0]]
                    if lm & a and rm & b:
                        keys.append((left, right))
                        continue
                    if lm & b and rm & a:
                        keys.append((right, left))
                        continue
            residual.append(predicate)
        return tuple(keys), residual


@dataclass(eq=False)
class _Best:
    """A part's best plan so far (known by identity: a better one replaces it)."""

    node: Node
    cost: Cost
    rows: float


class _Joins:
    """The joins a group's planners build, one node per join of the same inputs on the same
    condition: the estimator keeps its figures per node, so a join both orders (or two
    candidates) build is estimated once. Each names the group's SELECT, and the scalar
    subquery one of its sides plans (`subqueries`: leaf -> its subquery)."""

    def __init__(self, select: exp.Select, subqueries: Mapping[Node, ScalarOrigin]) -> None:
        self.select, self.subqueries = select, subqueries
        self._built: dict[_JoinKey, Join] = {}

    def join(
        self,
        left: Node,
        right: Node,
        kind: JoinKind,
        keys: tuple[tuple[ColumnRef, ColumnRef], ...],
        residual: list[exp.Expr],
    ) -> Join:
        # conjuncts are known by identity (sqlglot nodes compare by structure); their ids
        # are stable: the join built keeps them alive
        key = (left, right, kind, keys, tuple(map(id, residual)))
        found = self._built.get(key)
        if found is None:
            scalar = next((self.subqueries[s] for s in (right, left) if s in self.subqueries), None)
            found = Join(
                left, right, kind, keys, conjunction(residual), select=self.select, scalar=scalar
            )
            self._built[key] = found
        return found


_JoinKey = tuple[Node, Node, JoinKind, tuple[tuple[ColumnRef, ColumnRef], ...], tuple[int, ...]]


class _Planner:
    def __init__(self, context: PlanningContext, graph: _Graph, joins: _Joins) -> None:
        self.context, self.graph, self.joins = context, graph, joins
        self.best_of: dict[int, _Best] = {}
        self.rows_of: dict[int, float] = {}
        self.sides: dict[tuple[int, tuple[ColumnRef, ...]], Side] = {}  # leaves' sides
        self.join_sides: dict[_Best, Side] = {}  # parts' best plans' sides
        # each output column's bytes per row in the leaf that produces it: a join's row size
        # is theirs (its estimate carries its inputs' columns as they are)
        self.widths: dict[ColumnRef, float] = {}
        for leaf in graph.leaves:
            columns = context.stats.of(leaf).columns
            for ref in leaf.output():
                column = columns.get(ref)
                self.widths[ref] = column.width if column is not None else DEFAULT_WIDTH

    def best(self) -> _Best:
        graph = self.graph
        for index, leaf in enumerate(graph.leaves):
            self.best_of[1 << index] = _Best(leaf, Cost(), self.context.rows(leaf))
        n = len(graph.leaves)
        if n <= self.context.params.greedy_above:
            self._dynamic_programming(n)
        if graph.full in self.best_of:
            return self.best_of[graph.full]
        return self._greedy()

    def _dynamic_programming(self, n: int) -> None:
        masks = sorted(range(1, self.graph.full + 1), key=lambda m: (bin(m).count("1"), m))
        for mask in masks:
            if bin(mask).count("1") < 2 or not self.graph.connected(mask):
                continue
            sub = (mask - 1) & mask
            while sub:
                other = mask ^ sub
                if sub < other and sub in self.best_of and other in self.best_of:
                    single = _one_bit(sub) or _one_bit(other)
                    if (single or self.context.params.bushy) and self.graph.linked(sub, other):
                        self._consider(mask, sub, other)
                sub = (sub - 1) & mask

    def _greedy(self) -> _Best:
        """Greedy operator ordering: join the two linked parts whose result is smallest;
        parts nothing links are joined last, smallest first (cross products)."""
        parts = [1 << i for i in range(len(self.graph.leaves))]
        # start from the connected parts dynamic programming already planned
        for mask in sorted(self.best_of, key=lambda m: -bin(m).count("1")):
            if all(mask & p == p or not mask & p for p in parts) and bin(mask).count("1") > 1:
                parts = [p for p in parts if not mask & p] + [mask]
        while len(parts) > 1:
            linked = [
                (a, b)
                for i, a in enumerate(parts)
                for b in parts[i + 1 :]
                if self.graph.linked(a, b)
            ]
            deep = [(a, b) for a, b in linked if _one_bit(a) or _one_bit(b)]
            pairs = linked if self.context.params.bushy else (deep or linked)
            if not pairs:
                parts.sort(key=lambda m: self.best_of[m].rows)
                pairs = [(parts[0], parts[1])]
            candidates = [self._consider(a | b, a, b) for a, b in pairs]
            a, b = pairs[min(range(len(pairs)), key=lambda i: candidates[i].rows)]
            self.best_of[a | b] = candidates[pairs.index((a, b))]
            parts = [p for p in parts if p not in (a, b)] + [a | b]
        return self.best_of[parts[0]]

    def _consider(self, mask: int, a: int, b: int) -> _Best:
        first, second = self.best_of[a], self.best_of[b]
        if _one_bit(a) and not _one_bit(b):  # left-deep: the relation joins on the right
            first, second, a, b = second, first, b, a
        elif _one_bit(a) == _one_bit(b) and (second.rows, -b) > (first.rows, -a):
            # two relations (or two joins): the larger on the left, written order on ties
            first, second, a, b = second, first, b, a
        keys, residual = self.graph.condition(a, b)
        kind: JoinKind = "inner" if keys or residual else "cross"
        join = self.joins.join(first.node, second.node, kind, keys, residual)
        if mask not in self.rows_of:
            self.rows_of[mask] = self.context.rows(join)
        rows = self.rows_of[mask]
        left_keys = tuple(k for k, _ in keys)
        right_keys = tuple(k for _, k in keys)
        choice = choose_join(
            self._side(first, a, left_keys),
            self._side(second, b, right_keys),
            kind,
            bool(keys),
            rows,
            self.context.params,
            pruning_side(first.node, second.node, keys),
        )
        total = first.cost + second.cost + choice.cost
        candidate = _Best(join, total, rows)
        current = self.best_of.get(mask)
        if current is None or (total.total, total.rows) < (current.cost.total, current.cost.rows):
            self.best_of[mask] = candidate
        return candidate

    def _side(self, best: _Best, mask: int, keys: tuple[ColumnRef, ...]) -> Side:
        if _one_bit(mask):
            found = self.sides.get((mask, keys))
            if found is None:
                found = self.sides[mask, keys] = self.context.side(best.node, keys, best.rows)
            return found
        side = self.join_sides.get(best)
        if side is None:  # a part's best is used often
            side = Side(best.rows, self._row_size(best.node), describe(best.node), relation=False)
            self.join_sides[best] = side
        return side

    def _row_size(self, join: Node) -> float:
        """PlanningContext.row_size of a join of the group's leaves, without its estimate."""
        needed, total = self.context.needed, 0.0
        for ref in join.output():
            if ref in needed:
                total += self.widths[ref]
        return max(total, 1.0)


def _one_bit(mask: int) -> bool:
    return mask & (mask - 1) == 0
