"""A scan's partition-key conjuncts as the metastore's partition selection: those its
`--where` language accepts select partitions by lookup, the rest are left to estimates
(docs/design.md#partition-lookup). Shared by the estimator (a scan reads the statistics of
exactly the partitions it selects: docs/design.md#estimates) and the pruner (the partitions
a query's own filters keep: docs/design.md#pruning-run-time).
"""

from __future__ import annotations

from sqlglot import exp

from metastore.catalog import TableInfo
from metastore.lookup import PartitionQuery
from optimizer.plan import Scan


def split_partition_conjuncts(node: Scan, info: TableInfo) -> tuple[list[exp.Expr], list[exp.Expr]]:
    """The Scan's partition-key conjuncts the metastore's --where accepts, and the rest."""
    from metastore.errors import StatlasError
    from metastore.where import where_predicate

    store = info.store()
    usable, rest = [], []
    for conjunct in node.partition_filter:
        try:
            where_predicate(_partition_where([conjunct]), store, "sqlite")
            usable.append(conjunct)
        except StatlasError:
            rest.append(conjunct)
    return usable, rest


def static_selection(node: Scan, info: TableInfo) -> tuple[PartitionQuery, list[exp.Expr]]:
    """The metastore query for the partitions a scan's own key filters keep, and the key
    conjuncts it cannot express (they keep every partition)."""
    usable, rest = split_partition_conjuncts(node, info)
    return selection_of(usable), rest


def selection_of(usable: list[exp.Expr]) -> PartitionQuery:
    """The metastore's query for the partitions a scan's usable key conjuncts select."""
    return PartitionQuery(where=_partition_where(usable)) if usable else PartitionQuery()


def _partition_where(conjuncts: list[exp.Expr] | tuple[exp.Expr, ...]) -> str:
    """Partition-key conjuncts as a --where expression on bare key names."""

    def strip(n: exp.Expr) -> exp.Expr:
        if isinstance(n, exp.Column):
            return exp.column(n.name)
        return n

    parts = [p.transform(strip).sql(dialect="spark") for p in conjuncts]
    return " AND ".join(f"({p})" for p in parts)
