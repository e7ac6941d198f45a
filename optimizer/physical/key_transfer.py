"""Key transfer into a decorrelated scalar subquery: the join keys a small, filtered side of
the enclosing query allows are pushed into the subquery as a semi join, before its
aggregation.

Seed "mapjoin-partition-pruning" (section on the extension): "the set of values generated
from small tables could be pushed down as a predicate on the big table". Here the big side
is the subquery's input, and the values reach it through the correlation equality; it is
the magic-sets rewrite for correlated subqueries (Mumick, Finkelstein, Pirahesh and
Ramakrishnan, "Magic is relevant", SIGMOD 1990; Seshadri et al., "Cost-based optimization
for magic", SIGMOD 1996).

Exact: the subquery is grouped by its correlated columns and joined on them, so a group
whose key no row of the small side holds never joins, and filtering the subquery's input by
that key removes whole groups, never part of one. Taken where the small side is filters over
one table scan (at least one filter: otherwise it keeps every key) whose estimated bytes fit
the map-join threshold (it is then a map join's hash table), and where the seed's cost of the
subquery with the semi join is below its cost without (CPU + IO, then rows). `key_transfer=0`
plans without it (the seed's plans).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlglot import exp

from optimizer.physical.build import to_physical
from optimizer.physical.context import PlanningContext
from optimizer.plan import Aggregate, Filter, Join, Node, Scan, column_of
from optimizer.sql_to_plan import ScalarOrigin, from_items


@dataclass(frozen=True)
class KeyTransfer:
    """The subquery of `origin` semi-joined, on its grouping column `inner`, with `table`
    under `alias` filtered by `conditions` (over `alias`), on its column `column`."""

    origin: ScalarOrigin
    inner: exp.Expr
    table: exp.Table
    alias: str
    column: str
    conditions: tuple[exp.Expr, ...]


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
    cost = _cost(subquery, context)
    for outer, (_, name) in join.keys:
        inner = next((e for (_, n), e in subquery.outputs if n == name), None)
        inner_ref = column_of(inner) if inner is not None else None
        leaf = next((n for n in leaves if outer in n.output()), None)
        if inner is None or inner_ref is None or leaf is None:
            continue
        found = _filtered_scan(leaf)
        if found is None or not _fits(leaf, context):
            continue
        scan, filters = found
        table = _table_item(origin.select, scan.alias)
        if table is None:
            continue
        alias = fresh()
        on_keys = tuple(_renamed(c, scan.alias, alias) for c in scan.partition_filter)
        small: Node = replace(scan, alias=alias, partition_filter=on_keys)
        renamed = tuple(_renamed(c, scan.alias, alias) for c in filters)
        for condition in renamed:
            small = Filter(small, condition.copy())
        key = (alias, outer[1])
        context.needed.add(key)
        candidate = Aggregate(
            Join(subquery.child, small, "semi", ((inner_ref, key),)),
            subquery.group_by,
            subquery.outputs,
        )
        candidate_cost = _cost(candidate, context)
        if candidate_cost < cost:
            subquery, cost = candidate, candidate_cost
            conditions = renamed + on_keys
            transfers.append(KeyTransfer(origin, inner, table, alias, outer[1], conditions))
    return subquery, transfers


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
    """The seed's plan comparison: CPU + IO first, rows second."""
    total = to_physical(node, context).total_cost()
    return (total.total, total.rows)
