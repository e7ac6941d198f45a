"""Shuffle elimination (docs/design.md#correlation-optimizer, after YSmart) and the count of jobs,
shuffles and table scans.

Job-flow correlation: a shuffle (ReduceSink) is unnecessary when the rows reaching it are
already partitioned and sorted on its keys by an upstream reduce-side operator (a common join
or an aggregation, through filters and projections only) and the two do not conflict on the
number of reducers; the downstream operator then runs in the upstream's reduce phase. A join's
output is partitioned on the key columns of the sides Hive's join-type rules allow (left of
an inner, left outer or left semi join; right of an inner or right outer join); detection stops
at map joins. Input correlation: a table scanned by several map phases of one job is read once.

`multiway_only` applies only Hive's multi-way join (a common join directly on top of a common
join with the same keys shares its reduce phase): the plan "before" the correlation optimizer.
Elimination returns a marked copy and leaves the plan it reads as it is, so the counts before
(`before_correlation`) and after come from one plan.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from optimizer.physical.plan import PhysicalNode, Shuffle
from optimizer.plan import ColumnRef, column_of

Classes = list[set[ColumnRef]]


@dataclass(frozen=True)
class Counts:
    jobs: int
    shuffles: int
    scans: int


def eliminate_shuffles(root: PhysicalNode, multiway_only: bool = False) -> PhysicalNode:
    """The plan with its unnecessary shuffles marked removed; `root` is left as it is."""
    return _marked(root, unnecessary_shuffles(root, multiway_only))


def unnecessary_shuffles(root: PhysicalNode, multiway_only: bool = False) -> dict[Shuffle, str]:
    """The shuffles that are not removed yet and need not run, each with why: decided
    bottom-up, merging reduce phases."""
    phases = _Phases()
    removed: dict[Shuffle, str] = {}
    for node in root.walk():
        for index, shuffle in enumerate(node.shuffles):
            if shuffle is None or shuffle.removed:
                continue
            child = node.children[index]
            if multiway_only:
                if not (_is_common_join(node) and _is_common_join(child)):
                    continue
                classes = partitioning(child, through=False)
            else:
                classes = partitioning(child)
            if classes is None or not _matches(shuffle.keys, classes):
                continue
            upstream = _reduce_side(child)
            if upstream is None or not phases.merge(upstream, node):
                continue
            removed[shuffle] = (
                "multi-way join: same keys as the join below"
                if multiway_only
                else f"correlated with the {upstream.op} below (same partitioning and order)"
            )
    return removed


def relied_on(root: PhysicalNode) -> set[PhysicalNode]:
    """The reduce-side operators of a plan marked by `eliminate_shuffles` whose partitioning
    a removed shuffle relies on: an engine that picks a join's algorithm itself must keep
    those joins shuffled for the plan's count of shuffles to hold."""
    kept: set[PhysicalNode] = set()
    for node in root.walk():
        for child, shuffle in zip(node.children, node.shuffles, strict=True):
            upstream = _reduce_side(child) if shuffle is not None and shuffle.removed else None
            if upstream is not None:
                kept.add(upstream)
    return kept


def before_correlation(root: PhysicalNode) -> Counts:
    """The counts of the plan before the correlation optimizer: only Hive's multi-way joins
    share reduce phases, and every table scan reads its table (no input correlation)."""
    multiway = counts(eliminate_shuffles(root, multiway_only=True))
    return Counts(multiway.jobs, multiway.shuffles, len([n for n in root.walk() if n.op == "scan"]))


def _marked(node: PhysicalNode, removed: dict[Shuffle, str]) -> PhysicalNode:
    """A copy of the plan with the shuffles of `removed` marked removed."""
    shuffles = [
        None
        if shuffle is None
        else replace(shuffle, removed=True, why_removed=removed[shuffle])
        if shuffle in removed
        else replace(shuffle)
        for shuffle in node.shuffles
    ]
    return replace(
        node,
        children=[_marked(child, removed) for child in node.children],
        shuffles=shuffles,
        broadcast=list(node.broadcast),
        stage_break=list(node.stage_break),
    )


def partitioning(node: PhysicalNode, through: bool = True) -> Classes | None:
    """How the node's output rows are partitioned within a reduce phase: per key position,
    the output columns equal to that key; None when not partitioned (or unknown)."""
    if node.op in ("filter", "limit") and through:
        return partitioning(node.children[0])
    if node.op == "project" and through:
        below = partitioning(node.children[0])
        if below is None:
            return None
        outputs = node.logical.outputs  # type: ignore[attr-defined]
        return [{ref for ref, e in outputs if column_of(e) in cls} for cls in below]
    if _is_common_join(node):
        join = node.logical
        kind = join.kind  # type: ignore[attr-defined]
        keys = join.keys  # type: ignore[attr-defined]
        if kind == "full" or not keys:
            return None
        left_ok = kind in ("inner", "left", "semi", "anti")
        right_ok = kind in ("inner", "right")
        return [({a} if left_ok else set()) | ({b} if right_ok else set()) for a, b in keys]
    if node.op == "aggregate" and node.shuffles[0] is not None and node.shuffles[0].keys:
        aggregate = node.logical
        classes: Classes = []
        for key in node.shuffles[0].keys:
            if isinstance(key, str):
                return None
            classes.append({ref for ref, e in aggregate.outputs if column_of(e) == key})  # type: ignore[attr-defined]
        return classes
    return None


def _is_common_join(node: PhysicalNode) -> bool:
    return node.op == "join" and node.algorithm == "common"


def _matches(keys: tuple[ColumnRef | str, ...], classes: Classes) -> bool:
    if len(keys) != len(classes) or not keys:
        return False
    used: set[int] = set()
    for key in keys:
        if isinstance(key, str):
            return False
        found = [i for i, cls in enumerate(classes) if key in cls and i not in used]
        if not found:
            return False
        used.add(found[0])
    return True


def _reduce_side(node: PhysicalNode) -> PhysicalNode | None:
    while node.op in ("filter", "limit", "project"):
        node = node.children[0]
    return node if any(s is not None for s in node.shuffles) else None


class _Phases:
    """Reduce phases as a union-find over reduce-side operators, with their reducers."""

    def __init__(self) -> None:
        self.parent: dict[PhysicalNode, PhysicalNode] = {}
        self.reducers: dict[PhysicalNode, tuple[int, bool]] = {}

    def find(self, node: PhysicalNode) -> PhysicalNode:
        if node not in self.parent:
            self.parent[node] = node
            kept = [s for s in node.shuffles if s is not None]
            fixed = [s.reducers for s in kept if s.fixed]
            count = fixed[0] if fixed else max((s.reducers for s in kept), default=1)
            self.reducers[node] = (count, bool(fixed))
        while self.parent[node] is not node:
            node = self.parent[node]
        return node

    def merge(self, upstream: PhysicalNode, downstream: PhysicalNode) -> bool:
        a, b = self.find(upstream), self.find(downstream)
        if a is b:
            return True
        (ca, fa), (cb, fb) = self.reducers[a], self.reducers[b]
        if fa and fb and ca != cb:
            return False  # both need their own reducer counts: a conflict
        self.parent[b] = a
        self.reducers[a] = (ca if fa else cb if fb else max(ca, cb), fa or fb)
        return True


def job_of_nodes(root: PhysicalNode) -> dict[PhysicalNode, int]:
    """The job (numbered 1.. in execution order) of every node of the plan as its shuffles
    stand.

    Fragments are the pieces between shuffle, broadcast and map-stage edges. A fragment that
    consumes a shuffle is the reduce phase of a job whose map phases are the fragments
    shuffling into it; a fragment whose output is the result or starts a new map stage is a
    map-only job; a hash-table side is a local task of the job it feeds."""
    nodes = root.walk()
    parent = {n: n for n in nodes}

    def find(node: PhysicalNode) -> PhysicalNode:
        while parent[node] is not node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    cut: set[PhysicalNode] = set()
    consumer: dict[PhysicalNode, PhysicalNode] = {}
    stage_tops: set[PhysicalNode] = set()
    for node in nodes:
        for index, child in enumerate(node.children):
            shuffle = node.shuffles[index]
            consumer[child] = node
            if shuffle is not None and not shuffle.removed:
                cut.add(child)
            elif node.broadcast[index]:
                cut.add(child)
            elif node.stage_break[index]:
                cut.add(child)
                stage_tops.add(child)
            else:
                parent[find(child)] = find(node)
    reduce_fragments = {
        find(n) for n in nodes if any(s is not None and not s.removed for s in n.shuffles)
    }
    top_of = {find(n): n for n in nodes if n in cut or n is root}
    jobs = reduce_fragments | {
        fragment
        for fragment, top in top_of.items()
        if fragment not in reduce_fragments and (top is root or top in stage_tops)
    }

    def job_fragment(fragment: PhysicalNode) -> PhysicalNode:
        while fragment not in jobs:
            top = top_of[fragment]
            fragment = find(consumer[top])
        return fragment

    numbers: dict[PhysicalNode, int] = {}
    result: dict[PhysicalNode, int] = {}
    for node in nodes:  # children first: jobs numbered in the order they can run
        fragment = job_fragment(find(node))
        result[node] = numbers.setdefault(fragment, len(numbers) + 1)
    return result


def counts(root: PhysicalNode) -> Counts:
    """Jobs, shuffles and table scans as the shuffles stand; with input correlation, a table
    counts once per job that scans it."""
    jobs = job_of_nodes(root)
    nodes = root.walk()
    shuffles = sum(1 for n in nodes for s in n.shuffles if s is not None and not s.removed)
    scanned = {(jobs[n], n.logical.table) for n in nodes if n.op == "scan"}  # type: ignore[attr-defined]
    return Counts(len(set(jobs.values())), shuffles, len(scanned))
