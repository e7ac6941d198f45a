"""Groups over a partitioned table's rows filled by its partitions' pairs (statlas's rule,
docs/estimator.md#groups-a-partitions-pairs-fill). Where every grouping key is a function
of the table's partition key or of one of its columns C (the column itself, or a column of
a table joined on the key's or C's values by that table's unique key), the groups are
filled not by the rows but by the distinct (partition, C) pairs the rows carry: at most the
sum over the selected partitions of each one's distinct count of C, which the metastore
keeps (metastore.statistics.column_pieces). A ticket's lines share their customer and their day, so
the groups of customer and year are filled by 240,000 such pairs, not by 2.7 million
independent rows (TPC-DS q4's store sales: 214,739 groups estimated so, 610,408 from the
rows, 190,581 true)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from optimizer.estimate.column import distinct_after_sampling
from optimizer.estimate.node_stats import NodeStats
from optimizer.estimate.sample_distinct import determines
from optimizer.estimate.scan_sample import ScanSample
from optimizer.plan import ColumnRef, Filter, Join, Node, Scan, column_of, columns_in

if TYPE_CHECKING:
    from optimizer.estimate.stats_query import StatsQuery

# a column with at least this share of its rows' distinct values is a unique key (the Theta
# sketch's estimate of a key's distinct count is within about 3% of its rows)
UNIQUE_SHARE = 0.95


def partition_pairs(
    stats: StatsQuery, child: Node, child_stats: NodeStats, group_by: Sequence[exp.Expr]
) -> float | None:
    """The distinct (partition, C) pairs left among the child's rows, when the grouping keys
    are functions of a partitioned scan's partition key and of its column C; else None."""
    refs = [column_of(k) for k in group_by]
    if not refs or any(r is None for r in refs):
        return None
    scans, links, filtered = _inner_joins(child)
    for fact in scans.values():
        if not fact.partition_keys:
            continue
        others = _fact_columns(stats, fact, refs, scans, links)  # type: ignore[arg-type]
        if others is None:
            continue
        sample = _fact_sample(child_stats, fact)
        column = _determining(sample, others)
        if column is None:
            continue
        # the fact's columns its rows are dropped by: its joins' keys, its filters' columns
        dropping = {name for alias, name in links if alias == fact.alias}
        dropping |= {name for alias, name in filtered if alias == fact.alias}
        whole = all(
            name in fact.partition_keys
            or name == column
            or (sample is not None and determines(sample, column, name))
            for name in dropping
        )
        pairs = _surviving_pairs(fact, child_stats, column, whole)
        if pairs is not None:
            return pairs
    return None


def _inner_joins(
    node: Node,
) -> tuple[dict[str, Scan], dict[ColumnRef, list[ColumnRef]], set[ColumnRef]]:
    """The scans whose rows the node's rows are made of (through filters and inner joins;
    the kept side of semi, anti and left joins), the columns each is equal to by an inner
    join's keys, and the columns the filters and joins on the way read."""
    scans: dict[str, Scan] = {}
    links: dict[ColumnRef, list[ColumnRef]] = {}
    filtered: set[ColumnRef] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Scan):
            scans[current.alias] = current
        elif isinstance(current, Filter):
            filtered |= columns_in(current.condition)
            stack.append(current.child)
        elif isinstance(current, Join) and current.kind in ("inner", "semi", "anti", "left"):
            if current.residual is not None:
                filtered |= columns_in(current.residual)
            if current.kind == "inner":
                for a, b in current.keys:
                    links.setdefault(a, []).append(b)
                    links.setdefault(b, []).append(a)
                stack += [current.left, current.right]
            else:
                filtered |= {a for a, _ in current.keys} if current.kind != "left" else set()
                stack.append(current.left)
    return scans, links, filtered


def _fact_columns(
    stats: StatsQuery,
    fact: Scan,
    refs: list[ColumnRef],
    scans: dict[str, Scan],
    links: dict[ColumnRef, list[ColumnRef]],
) -> set[str] | None:
    """The fact's columns other than its partition keys that the grouping keys are
    functions of; None when a key is a function of none of the fact's columns."""
    others: set[str] = set()
    for alias, name in refs:
        target = name if alias == fact.alias else _linked(stats, scans, (alias, name), fact, links)
        if target is None:
            return None
        if target not in fact.partition_keys:
            others.add(target)
    return others


def _linked(
    stats: StatsQuery,
    scans: dict[str, Scan],
    ref: ColumnRef,
    fact: Scan,
    links: dict[ColumnRef, list[ColumnRef]],
) -> str | None:
    """The fact's column whose value fixes `ref`'s: a column of another scan joined to the
    fact on `ref` itself or on its table's unique key."""
    alias, name = ref
    scan = scans.get(alias)
    if scan is None:
        return None
    for (side, column), partners in links.items():
        if side != alias:
            continue
        for partner_alias, partner in partners:
            if partner_alias == fact.alias and (column == name or _unique(stats, scan, column)):
                return partner
    return None


def _unique(stats: StatsQuery, scan: Scan, column: str) -> bool:
    """Whether the scanned table's column has (about) as many distinct values as rows."""
    figures = stats.of(scan)
    found = figures.columns.get((scan.alias, column))
    rows = figures.rows.value * (1.0 - (found.null_fraction if found else 0.0))
    return found is not None and rows > 0 and found.ndv.value >= UNIQUE_SHARE * rows


def _fact_sample(child_stats: NodeStats, fact: Scan) -> ScanSample | None:
    """The row sample behind the fact's columns in the child."""
    for (alias, _), column in child_stats.columns.items():
        if alias == fact.alias and column.origin is not None:
            return column.origin[0]  # type: ignore[no-any-return]
    return None


def _determining(sample: ScanSample | None, others: set[str]) -> str | None:
    """The one fact column that fixes the other grouped ones: the only one, or the one
    whose sampled rows sharing a value share the others' values (a ticket number, which
    fixes its customer; sample_distinct.determines)."""
    names = sorted(others)
    if len(names) == 1:
        return names[0]
    if not names or sample is None:
        return None
    for name in names:
        if all(other == name or determines(sample, name, other) for other in names):
            return name
    return None


def _surviving_pairs(fact: Scan, child_stats: NodeStats, column: str, whole: bool) -> float | None:
    """The (partition, column) pairs of the fact's selected partitions that the child's
    rows keep. Where every fact column the child's joins and filters read is the partition
    key, the column, or fixed by the column (`whole`: TPC-DS's calendar years, customers,
    a ticket's store and household), rows are dropped pair by pair, with their pairs:
    the pairs in the share of rows kept. Otherwise as a filter keeps a column's values
    (distinct_after_sampling: rows dropped independently of the pairs, an item's)."""
    found = child_stats.columns.get((fact.alias, column))
    if found is None or found.partition_distinct <= 0 or found.source_rows <= 0:
        return None
    rows = min(child_stats.rows.value, found.source_rows)
    if whole:
        return found.partition_distinct * rows / found.source_rows
    return distinct_after_sampling(found.partition_distinct, found.source_rows, rows)
