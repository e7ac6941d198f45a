"""The side of a join that dynamic partition pruning needs hashed
(docs/design.md#dynamic-partition-pruning).

Spark prunes a partitioned table's scan at run time by the join keys of a filtered relation it
joins on the table's partition key (dynamic partition pruning), through the joins between
them, but only when that relation is the build (broadcast) side of the join: with
`spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly` (true by default) the pruning
reuses the join's broadcast. A map join that streams the filtered relation and hashes the side
holding the table reads every partition of it (TPC-DS q25: the join of store_sales, store_returns
and catalog_sales hashed, date_dim's filtered rows streamed, both fact tables read whole).
"""

from __future__ import annotations

from typing import NamedTuple

from optimizer.plan import ColumnRef, Filter, Join, Limit, Node, Project, Scan, Sort


class Pruning(NamedTuple):
    side: int  # 0 left, 1 right: the filtered relation whose keys prune
    table: str  # the pruned table as the query names it (its alias)


def pruning_side(
    left: Node, right: Node, keys: tuple[tuple[ColumnRef, ColumnRef], ...]
) -> Pruning | None:
    """The side (0 left, 1 right) that is one filtered relation joining, by one of `keys`
    (left's column, right's column), a partition key of a partitioned table the other side
    scans, and that table; None when neither side is."""
    for index, (side, other) in enumerate(((left, right), (right, left))):
        if not _filtered_relation(side):
            continue
        for pair in keys:
            theirs = pair[1 - index]
            if _partition_key_scanned(other, theirs):
                return Pruning(index, theirs[0])
    return None


def _filtered_relation(node: Node) -> bool:
    """One table read under a filter of its own (Spark's pruning needs a filter on the
    relation whose keys prune)."""
    filtered = False
    while isinstance(node, Filter | Project | Limit | Sort):
        filtered = filtered or isinstance(node, Filter)
        node = node.child
    return filtered and isinstance(node, Scan)


def _partition_key_scanned(node: Node, column: ColumnRef) -> bool:
    """`column` is a partition key of a table `node` scans, through filters, projections and
    inner joins (where Spark traces a join key down to its scan)."""
    alias, name = column
    while isinstance(node, Filter | Project):
        node = node.child
    if isinstance(node, Scan):
        return node.alias == alias and name in node.partition_keys
    if isinstance(node, Join) and node.kind in ("inner", "cross"):
        return _partition_key_scanned(node.left, column) or _partition_key_scanned(
            node.right, column
        )
    return False
