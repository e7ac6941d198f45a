"""Compile time of map-join partition pruning (docs/design.md#pruning-compile-time, Hive's
design steps 1-4): on the optimizer's physical plan (joins ordered, algorithms chosen: what
`statlas explain` shows), the map joins and the keys of their big (streamed) table whose
values the small sides can supply.

One rule decides what runs as a map join: the physical planner's
(optimizer.physical.algorithms, with CostParams.map_join_threshold). A join is a map join
when the plan runs it with the algorithm `map`; its streamed side is the big one, its hashed
side the small one (an outer join streams its preserved side, a full outer join is never a
map join, a semi join hashes its subquery side). A big-table key of a map join qualifies, as
Hive's design says, when:

  - it is part of the join condition, as a bare column on both sides (no function);
  - the big table is on the inner side (a left/right outer join's preserved side, or the
    left of an anti join, keeps rows without a match: no pruning);
  - the value is not mutated between the scan and the join (bare columns through
    projections, GROUP BY keys), and never passes through a union;
  - it is a partition column (else, the design's extension: a predicate for the big
    table's scan);
  - and, ours: both sides have the same kind of type (values are looked up as the key's
    type; an int compared with a string key would be a cast, not a lookup), and the query
    reads the big table under that name only once (pruning that read must not change
    another read of the same table, such as a self join's other side or a subquery's).

The values of a small key are those of its table after the filters on the way from its
scan to the join that read only that table: a superset of what reaches the join (other
joins of the small side only remove values), so pruning with it is always safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

from metastore.column_type import ColumnType
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import (
    Aggregate,
    ColumnRef,
    Filter,
    Join,
    Limit,
    Node,
    Project,
    Scan,
    Sort,
    column_of,
    columns_in,
    conjuncts,
    walk,
)

MAP_JOIN = "map"  # the physical algorithm whose small sides can prune


@dataclass(frozen=True)
class Origin:
    """Where a join key's values come from: a column of a scan, and the conjuncts over that
    scan alone met on the way up (the scan's own partition filter included)."""

    scan: Scan
    column: str
    filters: tuple[exp.Expr, ...]


@dataclass(frozen=True)
class PruningKey:
    """A big-table column the values of a small-side column can prune."""

    big_column: str
    partition_key: bool
    small: Origin


@dataclass(frozen=True)
class MapJoin:
    """A join the physical plan runs as a map join: `big` is streamed, `small` hashed."""

    join: Join
    big: Node
    small: Node
    small_bytes: float


@dataclass(frozen=True)
class Candidate:
    """A map join whose small side can prune its big table on `keys`; `big_bytes` is the
    big scan's estimated bytes read."""

    join: Join
    big: Scan
    keys: tuple[PruningKey, ...]
    small_bytes: float
    big_bytes: float


@dataclass(frozen=True)
class Rejection:
    join: str
    reason: str


@dataclass
class Analysis:
    map_joins: list[MapJoin] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def big_tables(self) -> list[Scan]:
        """The scans some candidate prunes: most partition keys first, then the largest (a
        dimension streamed through a smaller one's map join prunes little), then most keys."""
        counts: dict[int, tuple[Scan, int, float, int]] = {}
        for candidate in self.candidates:
            big = candidate.big
            _, keys, size, all_keys = counts.get(id(big), (big, 0, candidate.big_bytes, 0))
            partition = sum(k.partition_key for k in candidate.keys)
            counts[id(big)] = (big, keys + partition, size, all_keys + len(candidate.keys))
        ranked = sorted(counts.values(), key=lambda item: (-item[1], -item[2], -item[3]))
        return [scan for scan, _, _, _ in ranked]

    def keys_of(self, big: Scan) -> list[PruningKey]:
        return [k for c in self.candidates if c.big is big for k in c.keys]


class _NotTraceable(Exception):
    """A column whose value a node computes rather than passes through."""


def analyse(
    root: PhysicalNode,
    column_type: Callable[[Scan, str], str],
    read_once: Callable[[Scan], bool],
) -> Analysis:
    """Map-join pruning candidates of the physical plan `root`: its joins run as map joins
    whose keys qualify; `column_type` gives a scan column's type, `read_once` whether the
    query reads a scan's table under the scan's name only there."""
    analysis = Analysis()
    sizes = {id(n.logical): n.bytes for n in root.walk() if n.op == "scan"}
    for node in root.walk():
        if node.op != "join":
            continue
        join = node.logical
        assert isinstance(join, Join)
        if node.algorithm != MAP_JOIN:
            reason = f"not a map join: the plan runs it as a {node.algorithm} join ({node.reason})"
            analysis.rejected.append(Rejection(describe_join(join), reason))
            continue
        mapped = map_join(node)
        analysis.map_joins.append(mapped)
        _consider(mapped, analysis, column_type, read_once, sizes)
    return analysis


def map_join(node: PhysicalNode) -> MapJoin:
    """The physical map join `node` as its logical join, streamed side and hashed side."""
    join = node.logical
    assert isinstance(join, Join) and node.streamed is not None
    small = node.children[1 - node.streamed]
    return MapJoin(join, join.children[node.streamed], small.logical, small.bytes)


def describe_join(join: Join) -> str:
    keys = " AND ".join(f"{a[0]}.{a[1]} = {b[0]}.{b[1]}" for a, b in join.keys)
    if join.residual is not None:
        residual = join.residual.sql(dialect="spark")
        keys = f"{keys} AND {residual}" if keys else residual
    return (
        f"{join.kind} join of {_names(join.left)} with {_names(join.right)} on {keys or 'nothing'}"
    )


def _names(node: Node) -> str:
    scans = [n for n in walk(node) if isinstance(n, Scan)]
    return "(" + ", ".join(f"{s.table} {s.alias}" for s in scans) + ")"


def _side_rule(mapped: MapJoin) -> str | None:
    """Why no key of the map join can prune its big side (None: keys may)."""
    join = mapped.join
    preserved = {"left": join.left, "right": join.right}.get(join.kind)
    if preserved is mapped.big:
        return f"the big table is on the preserved side of the {join.kind} outer join"
    if join.kind == "anti":
        return "an anti join keeps the big table's rows that have no match"
    if join.kind == "cross" or (not join.keys and join.residual is None):
        return "no join condition"
    if not join.keys:
        return "no equality of bare columns on both sides (functions on the keys, or none)"
    return None


def _consider(
    mapped: MapJoin,
    analysis: Analysis,
    column_type: Callable[[Scan, str], str],
    read_once: Callable[[Scan], bool],
    sizes: dict[int, float],
) -> None:
    join = mapped.join
    refused = _side_rule(mapped)
    if refused is not None:
        analysis.rejected.append(Rejection(describe_join(join), refused))
        return
    big_refs = set(mapped.big.output())
    keys: list[tuple[Scan, PruningKey]] = []
    reasons: list[str] = []
    for a, b in join.keys:
        big_ref, small_ref = (a, b) if a in big_refs else (b, a)
        try:
            big = trace(mapped.big, big_ref, streamed=True)
            small = trace(mapped.small, small_ref)
        except _NotTraceable as error:
            reasons.append(f"{big_ref[0]}.{big_ref[1]}: {error}")
            continue
        big_type = column_type(big.scan, big.column)
        small_type = column_type(small.scan, small.column)
        if _family(big_type) != _family(small_type):
            reasons.append(f"{big_ref[0]}.{big_ref[1]}: types differ ({big_type} and {small_type})")
            continue
        if not read_once(big.scan):
            reasons.append(
                f"{big_ref[0]}.{big_ref[1]}: the query reads {big.scan.table} as "
                f"{big.scan.alias} more than once (pruning one read would change the others)"
            )
            continue
        is_key = big.column in big.scan.partition_keys
        keys.append((big.scan, PruningKey(big.column, is_key, small)))
    if not keys:
        analysis.rejected.append(
            Rejection(describe_join(join), "; ".join(reasons) or "no qualifying key")
        )
        return
    scans = {id(scan): scan for scan, _ in keys}
    for scan_id, scan in scans.items():
        mine = tuple(k for s, k in keys if id(s) == scan_id)
        size = sizes.get(scan_id, 0.0)
        analysis.candidates.append(Candidate(join, scan, mine, mapped.small_bytes, size))


def trace(node: Node, ref: ColumnRef, streamed: bool = False) -> Origin:
    """The scan column `ref` passes through from, unchanged, and the filters met on the way
    that read that scan alone; _NotTraceable when a node computes it (or, on the `streamed`
    big side, when dropping rows early could change the result)."""
    if isinstance(node, Scan):
        if ref[0] != node.alias:
            raise _NotTraceable("not produced by this side")
        filters = tuple(c for c in node.partition_filter)
        return Origin(node, ref[1], filters)
    if isinstance(node, Filter):
        origin = trace(node.child, ref, streamed)
        own = tuple(
            c
            for c in conjuncts(node.condition)
            if columns_in(c) and {a for a, _ in columns_in(c)} == {origin.scan.alias}
        )
        return Origin(origin.scan, origin.column, origin.filters + own)
    if isinstance(node, Sort):
        return trace(node.child, ref, streamed)
    if isinstance(node, Limit):
        if streamed:  # fewer big-table rows would change which rows the LIMIT keeps
            raise _NotTraceable("passes through a LIMIT")
        return trace(node.child, ref, streamed)  # some of the small side: a superset
    if isinstance(node, Project):
        for out, expression in node.outputs:
            if out == ref:
                inner = column_of(expression)
                if inner is None:
                    raise _NotTraceable(f"computed as {expression.sql(dialect='spark')}")
                return trace(node.child, inner, streamed)
        raise _NotTraceable("not an output of the projection")
    if isinstance(node, Aggregate):
        for out, expression in node.outputs:
            if out == ref:
                inner = column_of(expression)
                groups = {column_of(g) for g in node.group_by}
                if inner is None or inner not in groups:
                    raise _NotTraceable(f"computed as {expression.sql(dialect='spark')}")
                return trace(node.child, inner, streamed)
        raise _NotTraceable("not an output of the aggregation")
    if isinstance(node, Join):
        if ref in node.left.output():
            return _through_join(node, node.left, ref, streamed)
        if ref in node.right.output() and node.kind not in ("semi", "anti"):
            return _through_join(node, node.right, ref, streamed)
        raise _NotTraceable("not an output of the join")
    raise _NotTraceable(f"passes through a {node.op}")


def _through_join(join: Join, child: Node, ref: ColumnRef, streamed: bool) -> Origin:
    origin = trace(child, ref, streamed)
    if join.residual is None:
        return origin
    own = tuple(
        c
        for c in conjuncts(join.residual)
        if columns_in(c)
        and {a for a, _ in columns_in(c)} == {origin.scan.alias}
        and join.kind == "inner"
    )
    return Origin(origin.scan, origin.column, origin.filters + own)


def _family(type_: str) -> str:
    """Key types that compare as equal: one family, or the same name for the others."""
    family = ColumnType.of(type_).family
    return type_ if family == "other" else family
