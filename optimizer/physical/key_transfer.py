"""Key transfer into a subquery: the join keys a small, filtered side of the enclosing query
allows are pushed into the subquery as a semi join: before the aggregation of a decorrelated
scalar subquery, and into the FROM list of an EXISTS, NOT EXISTS or IN subquery.

docs/design.md#key-transfer: the extension of map-join partition pruning, a small table's
values pushed down as a predicate on the big table. Here the big side
is the subquery's input, and the values reach it through the correlation equality; it is
the magic-sets rewrite for correlated subqueries (Mumick, Finkelstein, Pirahesh and
Ramakrishnan, "Magic is relevant", SIGMOD 1990; Seshadri et al., "Cost-based optimization
for magic", SIGMOD 1996).

Exact: a scalar subquery is grouped by its correlated columns and joined on them, so a group
whose key no row of the small side holds never joins, and filtering the subquery's input by
that key removes whole groups, never part of one; an EXISTS or IN subquery's rows only
matter through the key equal to a left row's, which the small side holds (never NOT IN: a
NULL the semi join drops changes its answer). Taken where the small side is filters over
one table scan (at least one filter: otherwise it keeps every key) whose estimated bytes fit
the map-join threshold (it is then a map join's hash table), where the planned cost of the
subquery with the semi join is below its cost without (CPU + IO, then rows), and where the
semi join keeps at most `key_transfer_kept` (default a quarter) of the subquery's rows: the
cost formulas do not price the second scan of the small relation, its job and its
broadcast, which on Spark outweigh a smaller shuffle
(docs/benchmarks/2026-11-26-design-measurements.md#key-transfer). `key_transfer=0`
plans without it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from sqlglot import exp

from optimizer.origins import ScalarOrigin, SemiOrigin
from optimizer.physical.build import to_physical
from optimizer.physical.context import PlanningContext
from optimizer.plan import Aggregate, ColumnRef, Filter, Join, Node, Scan, column_of
from optimizer.sql_scope import from_items


@dataclass(frozen=True)
class KeyTransfer:
    """The subquery of `origin` semi-joined, on its column `inner`, with `table` under
    `alias` filtered by `conditions` (over `alias`), on its column `column`."""

    origin: ScalarOrigin | SemiOrigin
    inner: exp.Expr
    table: exp.Table
    alias: str
    column: str
    conditions: tuple[exp.Expr, ...]


@dataclass(frozen=True)
class _SmallSide:
    """A small filtered leaf renamed `alias`, as a plan (`node`, its key `key`) and as SQL."""

    node: Node
    key: ColumnRef
    table: exp.Table
    alias: str
    conditions: tuple[exp.Expr, ...]

    def transfer(self, origin: ScalarOrigin | SemiOrigin, inner: exp.Expr) -> KeyTransfer:
        return KeyTransfer(origin, inner, self.table, self.alias, self.key[1], self.conditions)


def transfer_keys(
    subquery: Aggregate,
    join: Join,
    origin: ScalarOrigin,
    leaves: list[Node],
    context: PlanningContext,
    fresh: Callable[[], str],
) -> tuple[Aggregate, list[KeyTransfer]]:
    """The subquery (the right side of the scalar join `join`) with the semi joins worth
    taking, one per correlation key whose outer column belongs to a small filtered leaf of
    the group, and what SQL needs to say them."""
    transfers: list[KeyTransfer] = []
    cost: tuple[float, float] | None = None  # costed when a key has a small side
    for outer, (_, name) in join.keys:
        inner = next((e for (_, n), e in subquery.outputs if n == name), None)
        inner_ref = column_of(inner) if inner is not None else None
        if inner is None or inner_ref is None:
            continue
        small = _small_side(outer, leaves, origin.select, context, fresh)
        if small is None:
            continue
        semi = Join(subquery.child, small.node, "semi", ((inner_ref, small.key),))
        candidate = Aggregate(semi, subquery.group_by, subquery.outputs)
        cost = cost or _cost(subquery, context)
        candidate_cost = _cost(candidate, context)
        if candidate_cost < cost and _keeps_few(semi, context):
            subquery, cost = candidate, candidate_cost
            transfers.append(small.transfer(origin, inner))
    return subquery, transfers


def transfer_into_semi_join(
    join: Join, origin: SemiOrigin, context: PlanningContext, fresh: Callable[[], str]
) -> tuple[Join, list[KeyTransfer]]:
    """The semi or anti join `join` (of an EXISTS, NOT EXISTS or IN subquery) with its
    subquery semi-joined to the keys of a small filtered relation of its left side, where
    the planned cost is lower. Exact: a left row matches only subquery rows whose key equals
    its own, which the small relation holds (NOT IN is never transferred: its NULLs)."""
    transfers: list[KeyTransfer] = []
    leaves = list(_left_leaves(join.left))
    cost: tuple[float, float] | None = None  # costed when a key has a small side
    for outer, inner_ref in join.keys:
        small = _small_side(outer, leaves, origin.outer, context, fresh)
        if small is None:
            continue
        semi = Join(join.right, small.node, "semi", ((inner_ref, small.key),))
        candidate = replace(join, right=semi)
        cost = cost or _cost(join, context)
        candidate_cost = _cost(candidate, context)
        if candidate_cost < cost and _keeps_few(semi, context):
            join, cost = candidate, candidate_cost
            inner = origin.projected or exp.column(inner_ref[1], table=inner_ref[0])
            transfers.append(small.transfer(origin, inner))
    return join, transfers


def _left_leaves(node: Node) -> Iterator[Node]:
    """The filtered scans whose columns a join's left side passes on unchanged: through
    filters and joins (only the left side of a semi or anti join), not projections."""
    if _filtered_scan(node) is not None:
        yield node
    elif isinstance(node, Filter):
        yield from _left_leaves(node.child)
    elif isinstance(node, Join):
        yield from _left_leaves(node.left)
        if node.kind not in ("semi", "anti"):
            yield from _left_leaves(node.right)


def _small_side(
    outer: ColumnRef,
    leaves: list[Node],
    select: exp.Select,
    context: PlanningContext,
    fresh: Callable[[], str],
) -> _SmallSide | None:
    """The leaf holding `outer`, renamed, when it is filters over one table scan of
    `select`'s FROM list that fit the map-join threshold."""
    leaf = next((n for n in leaves if outer in n.output()), None)
    found = _filtered_scan(leaf) if leaf is not None else None
    if leaf is None or found is None or not _fits(leaf, context):
        return None
    scan, filters = found
    table = _table_item(select, scan.alias)
    if table is None:
        return None
    alias = fresh()
    on_keys = tuple(_renamed(c, scan.alias, alias) for c in scan.partition_filter)
    node: Node = replace(scan, alias=alias, partition_filter=on_keys)
    renamed = tuple(_renamed(c, scan.alias, alias) for c in filters)
    for condition in renamed:
        node = Filter(node, condition.copy())
    key = (alias, outer[1])
    context.needed.add(key)
    return _SmallSide(node, key, table, alias, renamed + on_keys)


def _filtered_scan(node: Node) -> tuple[Scan, list[exp.Expr]] | None:
    """The scan under a chain of filters, and the filters' conditions; None when the node
    is anything else, or nothing (not even a partition filter) filters the scan."""
    conditions: list[exp.Expr] = []
    while isinstance(node, Filter):
        conditions.append(node.condition)
        node = node.child
    if not isinstance(node, Scan) or not (conditions or node.partition_filter):
        return None
    return node, conditions


def _keeps_few(semi: Join, context: PlanningContext) -> bool:
    """The transfer's semi join keeps at most `key_transfer_kept` of the subquery's rows."""
    before = context.rows(semi.left)
    return context.rows(semi) <= context.params.key_transfer_kept * before


def _fits(node: Node, context: PlanningContext) -> bool:
    return context.rows(node) * context.row_size(node) <= context.params.map_join_threshold


def _table_item(select: exp.Select, alias: str) -> exp.Table | None:
    """The FROM item of `select` read under `alias`, when it is a table."""
    for item in from_items(select):
        if isinstance(item, exp.Table) and item.alias_or_name.lower() == alias:
            return item
    return None


def _renamed(condition: exp.Expr, old: str, new: str) -> exp.Expr:
    copy = condition.copy()
    for column in copy.find_all(exp.Column):
        if column.table.lower() == old:
            column.set("table", exp.to_identifier(new))
    return copy


def _cost(node: Node, context: PlanningContext) -> tuple[float, float]:
    """Plan comparison (docs/design.md#plan-comparison): CPU + IO first, rows second."""
    total = to_physical(node, context).total_cost()
    return (total.total, total.rows)
