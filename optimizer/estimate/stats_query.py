"""One entry point for every estimate of a plan (Calcite's RelMetadataQuery): `StatsQuery.of(
node)` gives the node's rows, row size and per-column statistics (NodeStats), derived once
per node and cached, by one module per operator (optimizer.estimate.operators, as Spark's
statistics visitor hands each operator to its estimation; docs/design.md#estimates).

Scans take the statistics of exactly the partitions their partition-key conjuncts select
(the metastore's lookup + sketch roll-up); partition keys themselves are described exactly
by the per-partition row counts. Joins at level `basic` follow the Hive CBO proposal
(docs/design.md#join-cardinality); at `histogram`,
PostgreSQL's MCV matching; at `sketch`, Theta-sketch key overlap plus heavy hitters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metastore.catalog import TableInfo
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators import aggregate, join, limit_sort, project, scan, union, window
from optimizer.estimate.operators import filter as filter_
from optimizer.estimate.predicates import LEVELS, SKETCH, Level
from optimizer.estimate.sources import StatisticsSource
from optimizer.plan import (
    Aggregate,
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


class StatsQuery:
    """The estimates of one request (a query's planning or its EXPLAIN): per node, cached;
    per table, its schema; per pair of Theta sketches, their intersection."""

    def __init__(self, source: StatisticsSource, level: Level = SKETCH) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}")
        self.source, self.level = source, level
        self._cache: dict[int, tuple[Node, NodeStats]] = {}
        self.intersections: dict[tuple[Any, Any], float] = {}  # Theta pairs (join_key_overlap)
        self._tables: dict[str, TableInfo] = {}

    def of(self, node: Node) -> NodeStats:
        key = id(node)
        cached = self._cache.get(key)
        if cached is None or cached[0] is not node:
            # the node is kept with its figures: an id is unique only while its object lives
            cached = self._cache[key] = (node, self._derive(node))
        return cached[1]

    def _derive(self, node: Node) -> NodeStats:
        derive = _DERIVE.get(type(node))
        if derive is None:
            raise NotImplementedError(type(node).__name__)
        return derive(self, node)

    def table(self, name: str) -> TableInfo:
        """The table's schema and partition keys, read once per query."""
        if name not in self._tables:
            self._tables[name] = self.source.table(name)
        return self._tables[name]


# Each node type's estimate, on its exact type: the nodes are a closed set of frozen
# dataclasses, and a type left out (a Window is a Project) fails instead of taking its
# parent's rule, as singledispatch would let it.
_DERIVE: dict[type[Node], Callable[[StatsQuery, Any], NodeStats]] = {
    Scan: scan.derive,
    Filter: filter_.derive,
    Project: project.derive,
    Window: window.derive,
    Sort: limit_sort.derive_sort,
    Limit: limit_sort.derive_limit,
    Aggregate: aggregate.derive,
    Union: union.derive,
    Join: join.derive,
}
