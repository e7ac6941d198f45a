"""Compile time of map-join partition pruning (seed "mapjoin-partition-pruning", Compile
Time, steps 1-4): on the optimizer's plan, the joins that will run as map joins and the
keys of their big (streamed) table whose values the small sides can supply.

A join runs as a map join when its small side's estimated size (rows x row size) fits the
map-join threshold (Hive's noconditionaltask size, 10,000,000 bytes). Outer joins stream
their preserved side (so it is the big one), full outer joins never run as map joins, and
a semi join builds its subquery side. A big-table key qualifies, as the seed says, when:

  - it is part of the join condition, as a bare column on both sides (no function);
  - the big table is on the inner side (a left/right outer join's preserved side, or the
    left of an anti join, keeps rows without a match: no pruning);
  - the value is not mutated between the scan and the join (bare columns through
    projections, GROUP BY keys), and never passes through a union;
  - it is a partition column (else, the seed's extension: a predicate for the big
    table's scan);
  - and, ours: both sides have the same kind of type (values are looked up as the key's
    type; an int compared with a string key would be a cast, not a lookup).

The values of a small key are those of its table after the filters on the way from its
scan to the join that read only that table: a superset of what reaches the join (other
joins of the small side only remove values), so pruning with it is always safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

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

MAP_JOIN_THRESHOLD = 10_000_000  # bytes: Hive's hive.auto.convert.join.noconditionaltask.size

TYPE_FAMILIES = {
    "tinyint": "integral",
    "smallint": "integral",
    "int": "integral",
    "bigint": "integral",
    "string": "string",
    "date": "date",
    "timestamp": "timestamp",
    "timestamp_ntz": "timestamp",
    "boolean": "boolean",
}


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
class Candidate:
    """A map join whose small side can prune its big table on `keys`."""

    join: Join
    big: Scan
    keys: tuple[PruningKey, ...]
    small_bytes: float


@dataclass(frozen=True)
class Rejection:
    join: str
    reason: str


@dataclass
class Analysis:
    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)

    def big_tables(self) -> list[Scan]:
        """The scans some candidate prunes: most partition keys first, then most keys."""
        counts: dict[int, tuple[Scan, int, int]] = {}
        for candidate in self.candidates:
            scan, keys, all_keys = counts.get(id(candidate.big), (candidate.big, 0, 0))
            partition = sum(k.partition_key for k in candidate.keys)
            counts[id(candidate.big)] = (scan, keys + partition, all_keys + len(candidate.keys))
        ranked = sorted(counts.values(), key=lambda item: (-item[1], -item[2]))
        return [scan for scan, _, _ in ranked]

    def keys_of(self, big: Scan) -> list[PruningKey]:
        return [k for c in self.candidates if c.big is big for k in c.keys]


class _NotTraceable(Exception):
    """A column whose value a node computes rather than passes through."""


def analyse(
    plan: Node,
    size_of: Callable[[Node], float],
    column_type: Callable[[Scan, str], str],
    threshold: float = MAP_JOIN_THRESHOLD,
) -> Analysis:
    """Map-join pruning candidates of `plan`; `size_of` estimates a node's bytes,
    `column_type` gives a scan column's type."""
    analysis = Analysis()
    for node in walk(plan):
        if isinstance(node, Join):
            _consider(node, analysis, size_of, column_type, threshold)
    return analysis


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


def _consider(
    join: Join,
    analysis: Analysis,
    size_of: Callable[[Node], float],
    column_type: Callable[[Scan, str], str],
    threshold: float,
) -> None:
    def reject(reason: str) -> None:
        analysis.rejected.append(Rejection(describe_join(join), reason))

    if join.kind == "full":
        return reject("a full outer join never runs as a map join")
    if join.kind == "cross" or (not join.keys and join.residual is None):
        return reject("no join condition")
    left_bytes, right_bytes = size_of(join.left), size_of(join.right)
    if join.kind in ("semi", "anti", "left"):
        big_side, small_side, small_bytes = join.left, join.right, right_bytes
    elif join.kind == "right":
        big_side, small_side, small_bytes = join.right, join.left, left_bytes
    elif right_bytes <= left_bytes:
        big_side, small_side, small_bytes = join.left, join.right, right_bytes
    else:
        big_side, small_side, small_bytes = join.right, join.left, left_bytes
    if small_bytes > threshold:
        return reject(
            f"not a map join: the small side's estimated {small_bytes:,.0f} bytes exceed the "
            f"map-join threshold of {threshold:,.0f}"
        )
    if join.kind in ("left", "right"):
        return reject(f"the big table is on the preserved side of the {join.kind} outer join")
    if join.kind == "anti":
        return reject("an anti join keeps the big table's rows that have no match")
    if not join.keys:
        return reject("no join key is a bare column on both sides (functions on the keys)")
    big_refs = set(big_side.output())
    keys: list[tuple[Scan, PruningKey]] = []
    reasons: list[str] = []
    for a, b in join.keys:
        big_ref, small_ref = (a, b) if a in big_refs else (b, a)
        try:
            big = trace(big_side, big_ref, streamed=True)
            small = trace(small_side, small_ref)
        except _NotTraceable as error:
            reasons.append(f"{big_ref[0]}.{big_ref[1]}: {error}")
            continue
        big_type = column_type(big.scan, big.column)
        small_type = column_type(small.scan, small.column)
        if _family(big_type) != _family(small_type):
            reasons.append(f"{big_ref[0]}.{big_ref[1]}: types differ ({big_type} and {small_type})")
            continue
        is_key = big.column in big.scan.partition_keys
        keys.append((big.scan, PruningKey(big.column, is_key, small)))
    if not keys:
        return reject("; ".join(reasons) or "no qualifying key")
    scans = {id(scan): scan for scan, _ in keys}
    for scan_id, scan in scans.items():
        mine = tuple(k for s, k in keys if id(s) == scan_id)
        analysis.candidates.append(Candidate(join, scan, mine, small_bytes))


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
    if type_.startswith("decimal"):
        return "decimal"
    if type_ in ("float", "double"):
        return "floating"
    if type_.startswith(("varchar", "char")):
        return "string"
    return TYPE_FAMILIES.get(type_, type_)
