"""One entry point for every estimate of a plan (Calcite's RelMetadataQuery): `StatsQuery.of(
node)` gives the node's rows, row size and per-column statistics (NodeStats), derived once
per node and cached, by one module per operator (optimizer.estimate.operators, as Spark's
statistics visitor hands each operator to its estimation; docs/design.md#estimates).

Scans take the statistics of exactly the partitions their partition-key conjuncts select
(the metastore's lookup + sketch roll-up); partition keys themselves are described exactly
by the per-partition row counts. Joins at level `basic` follow the Hive CBO proposal
(docs/design.md#join-cardinality); at `histogram`,
PostgreSQL's MCV matching; at `sketch`, Theta-sketch key overlap plus heavy hitters.

Nodes of one shape (optimizer.estimate.node_shape: equal subtrees up to their aliases, as
the plans of a CTE at each of its references) are derived once: the others take the first
one's figures renamed. `counts` says how many nodes were derived, taken from a node of their
shape, or found cached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.tables import TableInfo
from optimizer.estimate.node_shape import Shape, Shapes
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators import aggregate, join, limit_sort, project, scan, union, window
from optimizer.estimate.operators import filter as filter_
from optimizer.estimate.predicates import LEVELS, SKETCH, SKETCH_INDEPENDENT, Level
from optimizer.estimate.sample_join import SampledJoin
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


@dataclass
class CacheCounts:
    """What `StatsQuery.of` did: nodes whose estimate it derived, nodes that took the figures
    of a node of their shape (renamed), and calls answered from the node's own cache."""

    derived: int = 0
    shared: int = 0
    cached: int = 0


class StatsQuery:
    """The estimates of one request (a query's planning or its EXPLAIN): per node, cached,
    and derived once per shape; per table, its schema; per pair of Theta sketches, their
    intersection."""

    def __init__(self, source: StatisticsSource, level: Level = SKETCH) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}")
        # the level as asked for, and the family of rules its estimates follow: a named
        # variant of `sketch` follows sketch's (`joint_fanouts` says which joins differ)
        self.named_level: Level = level
        self.level: Level = SKETCH if level == SKETCH_INDEPENDENT else level
        self.source = source
        # joins on one key read the keys' degrees (optimizer.estimate.key_degrees)
        self.joint_fanouts = level == SKETCH
        # per node (nodes hash by identity: frozen, eq=False)
        self._cache: dict[Node, NodeStats] = {}
        self._shapes = Shapes()
        self._by_shape: dict[int, tuple[Shape, NodeStats]] = {}
        self.counts = CacheCounts()
        self.intersections: dict[tuple[Any, Any], float] = {}  # Theta pairs (join_key_overlap)
        # composite keys' sampled joins (operators.join_rows._sampled_composite)
        self.sample_joins: dict[tuple[Any, ...], SampledJoin | None] = {}
        # IN subqueries' output distinct values, by their SQL (in_subquery): a join's
        # residual is weighed once per candidate join
        self.subquery_distinct: dict[str, float | None] = {}
        self._tables: dict[str, TableInfo] = {}
        # per scan: its partition conjuncts split and the usable ones' query (operators.scan)
        self.scans: dict[Scan, tuple[Any, PartitionQuery]] = {}

    def of(self, node: Node) -> NodeStats:
        cached = self._cache.get(node)
        if cached is not None:
            self.counts.cached += 1
            return cached
        stats = self._cache[node] = self._shared(node)
        return stats

    def _shared(self, node: Node) -> NodeStats:
        """The figures of the first node of this node's shape, renamed to its aliases;
        derived when it is the first."""
        shape = self._shapes.of(node)
        found = self._by_shape.get(shape.key)
        if found is not None:
            self.counts.shared += 1
            first, stats = found
            return stats.renamed(dict(zip(first.aliases, shape.aliases, strict=True)))
        stats = self._derive(node)
        self.counts.derived += 1
        self._by_shape[shape.key] = (shape, stats)
        return stats

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
