"""A scan's partition-key conjuncts as the metastore's partition selection: those the
metastore's partition filter expresses (metastore.partitions.where, as typed filters) select
partitions by lookup, the rest are left to estimates (docs/design.md#partition-lookup).
Shared by the estimator (a scan reads the statistics of exactly the partitions it selects:
docs/design.md#estimates) and the pruner (the partitions a query's own filters keep:
docs/design.md#pruning-run-time).
"""

from __future__ import annotations

from sqlglot import exp

from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.tables import TableInfo
from metastore.errors import StatlasError
from metastore.partitions.filters import PartitionFilter, all_of
from metastore.partitions.where import expression_filter
from optimizer.plan import Scan


def split_partition_conjuncts(node: Scan, info: TableInfo) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """The Scan's partition-key conjuncts the metastore's partition filter expresses, and
    the rest."""
    usable, rest = [], []
    for conjunct in node.partition_filter:
        try:
            _typed(conjunct, info)
            usable.append(conjunct)
        except StatlasError:
            rest.append(conjunct)
    return usable, rest


def static_selection(node: Scan, info: TableInfo) -> tuple[PartitionQuery, list[exp.Expr]]:
    """The metastore query for the partitions a scan's own key filters keep, and the key
    conjuncts it cannot express (they keep every partition)."""
    usable, rest = split_partition_conjuncts(node, info)
    return selection_of(usable, info), rest


def selection_of(usable: list[exp.Expr], info: TableInfo) -> PartitionQuery:
    """The metastore's query for the partitions a scan's usable key conjuncts select."""
    if not usable:
        return PartitionQuery()
    return PartitionQuery(filter=all_of(_typed(c, info) for c in usable))


def _typed(conjunct: exp.Expr, info: TableInfo) -> PartitionFilter:
    """A key conjunct as a typed partition filter; StatlasError where it has none."""
    return expression_filter(conjunct, info.store(), frozenset(c.name for c in info.columns))
