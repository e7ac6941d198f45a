"""A table joined on its partition key to a filtered side reads only the partitions whose key
that side kept: its columns take the distinct values the metastore merges over exactly those
partitions, not the whole table's thinned as if the join kept rows drawn at random (the rows
of one sales ticket share a customer; a quarter's sales hold a quarter's customers, not
nearly all). statlas's rule (docs/estimator.md#columns-of-the-partitions-a-join-reads)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from metastore.catalog.lookup import PartitionQuery
from metastore.statistics.samples import as_number
from optimizer.estimate.column import ColumnEstimate, changed
from optimizer.estimate.listed_join import ListedJoin
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.operators.scan import scan_partitions
from optimizer.estimate.sample_filter import holds_every_row
from optimizer.estimate.values import ESTIMATED, Estimate
from optimizer.plan import ColumnRef, Filter, Node, Scan

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery

SOURCE = "partitions the join reads"


def matched_partition_keys(
    listed: ColumnEstimate, other: NodeStats, other_key: str, found: ListedJoin
) -> list[object] | None:
    """The partition-key values (as the listing holds them) that the other side's rows
    meet, where its sample holds every row of its table (else None: a sample would miss
    keys, and too few partitions would be read); None also when every listed value is
    met (nothing narrowed)."""
    if other.sample is None:
        return None
    loaded = other.sample.loaded()
    if loaded is None or not holds_every_row(loaded) or other_key not in loaded.columns:
        return None
    met = set(np.unique(loaded.columns[other_key][found.matched]).tolist())
    values = [value for value, _ in listed.mcv if _number(value) in met]
    if not values or len(values) == len(listed.mcv):
        return None
    return values


def narrowed_to_partitions(
    stats: StatsQuery,
    side: Node,
    key: ColumnRef,
    values: list[object],
    columns: dict[ColumnRef, ColumnEstimate],
    join_keys: set[ColumnRef],
) -> dict[ColumnRef, ColumnEstimate]:
    """The columns of the scan under `side` (through its filters) whose partition key is
    `key`, each at most the distinct values of the partitions holding `values` (their
    Theta sketch, merged by the metastore, for the joins above); the columns as they were
    when the scan's own partitions are narrowed by its query, or the side is more than a
    filtered scan."""
    scan = _scan_under(side, key[0])
    if scan is None:
        return columns
    (_, rest), selected = scan_partitions(stats, scan)
    if rest or selected != PartitionQuery():
        return columns
    summary = stats.source.summary(scan.table, PartitionQuery.of({key[1]: tuple(values)}))
    result = dict(columns)
    for ref, column in columns.items():
        merged = summary.columns.get(ref[1]) if ref[0] == scan.alias else None
        if ref in join_keys or merged is None or merged.ndv is None:
            continue
        ndv = float(max(merged.ndv, 1))
        if ndv >= column.ndv.value:
            continue
        if merged.theta is not None:
            column = changed(column, theta=merged.theta, theta_share=1.0)
        result[ref] = changed(column, ndv=Estimate(ndv, ESTIMATED, SOURCE))
    return result


def _scan_under(node: Node, alias: str) -> Scan | None:
    while isinstance(node, Filter):
        node = node.child
    return node if isinstance(node, Scan) and node.alias == alias else None


def _number(value: object) -> float | None:
    try:
        return as_number(value)
    except TypeError:
        return None
