"""Physical plan nodes: a logical node with its algorithm, cost, and the shuffle (Hive's
ReduceSink: docs/design.md#shuffles-and-reducers) on each input edge.

Both are known by identity (a plan's nodes and shuffles are never shared).

A shuffle partitions rows by its keys (each key a set of equivalent qualified columns) into
`reducers` reducers, sorted by the same keys; `fixed` marks a reducer count the operator
needs (1 for a global aggregate or a total ORDER BY), which a correlated shuffle may not
change. A broadcast input is a map join's hash-table side.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from optimizer.cost.formulas import Cost
from optimizer.plan import ColumnRef, Node

Algorithm = Literal["common", "map", "bucket_map", "smb", "skew"]
ALGORITHMS: tuple[Algorithm, ...] = get_args(Algorithm)


@dataclass(eq=False)
class Shuffle:
    keys: tuple[ColumnRef | str, ...]  # columns (alias, name), or expression text
    reducers: int
    fixed: bool = False
    removed: bool = False  # by the correlation optimizer (or a multi-way join)
    why_removed: str = ""

    def label(self) -> str:
        keys = ", ".join(k if isinstance(k, str) else f"{k[0]}.{k[1]}" for k in self.keys)
        count = f"{self.reducers} reducer{'s' if self.reducers != 1 else ''}"
        return f"shuffle by ({keys}) sorted, {count}{' (fixed)' if self.fixed else ''}"


@dataclass(eq=False)
class PhysicalNode:
    logical: Node
    op: str
    children: list[PhysicalNode]
    rows: float
    row_size: float  # bytes per row of the columns the query reads
    cost: Cost  # this operator's own CPU and IO
    detail: str = ""
    algorithm: Algorithm | None = None  # joins
    reason: str = ""  # why this algorithm
    streamed: int | None = None  # map-side joins: the child streamed through
    shuffles: list[Shuffle | None] = field(default_factory=list)  # per child
    broadcast: list[bool] = field(default_factory=list)  # per child: a hash-table side
    stage_break: list[bool] = field(default_factory=list)  # per child: a new map stage
    skew_values: tuple[object, ...] = ()

    def __post_init__(self) -> None:
        count = len(self.children)
        self.shuffles = self.shuffles or [None] * count
        self.broadcast = self.broadcast or [False] * count
        self.stage_break = self.stage_break or [False] * count

    @property
    def bytes(self) -> float:
        return self.rows * self.row_size

    def total_cost(self) -> Cost:
        """The cumulative cost of the subtree (Volcano: the sum over its operators)."""
        total = self.cost
        for child in self.children:
            total = total + child.total_cost()
        return total

    def walk(self) -> list[PhysicalNode]:
        nodes: list[PhysicalNode] = []
        for child in self.children:
            nodes += child.walk()
        nodes.append(self)
        return nodes
