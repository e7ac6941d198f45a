"""Which algorithm runs a join, and why (docs/design.md#join-algorithms: Hive's join
optimizations and CBO proposal).

Eligibility follows those documents: a map join hashes the sides that are not streamed, and their
estimated size must fit `map_join_threshold` (an outer join streams its preserved side, a
full outer join is never a map join); a bucket map join needs both sides bucketed on the join
keys with compatible bucket counts, an SMB join also sorted on them with equal counts. Among
the eligible algorithms the cheapest by the cost formulas wins (ties: SMB, bucket map,
map, common). A common join whose key has a value holding `skew_share` of a side's rows
becomes a skew join (Hive's rewrite: the join on the skewed values UNION ALL the rest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from metastore.catalog.tables import BucketSpec
from optimizer.cost import formulas as f
from optimizer.cost.params import CostParams
from optimizer.physical.plan import Algorithm
from optimizer.physical.pruning_side import Pruning
from optimizer.plan import JoinKind

PREFERENCE: tuple[Algorithm, ...] = ("smb", "bucket_map", "map", "common")


@dataclass(frozen=True)
class Side:
    """What the join algorithm choice needs to know about one input."""

    rows: float
    size: float  # bytes per row of the columns read
    label: str  # how the side is named in reasons (alias or "the join of a, b")
    bucketing: BucketSpec | None = None  # of the base table, when the side is one scan
    key_columns: tuple[str, ...] = ()  # this side's join-key columns of that base table
    table_bytes: float = 0.0
    partitions: int = 0
    heavy_share: float = 0.0  # the largest share of the rows one join-key value holds
    heavy_values: tuple[object, ...] = ()  # the key values above the skew threshold
    relation: bool = True  # one relation (a table or derived table), not a join of several

    @property
    def bytes(self) -> float:
        return self.rows * self.size

    def as_input(self) -> f.Input:
        return f.Input(self.rows, self.size)

    @property
    def average_partition_bytes(self) -> float:
        return self.table_bytes / max(self.partitions, 1)


@dataclass(frozen=True)
class JoinChoice:
    algorithm: Algorithm
    cost: f.Cost
    streamed: int | None  # 0 left, 1 right (map-side algorithms), None for shuffles
    reason: str
    skew_values: tuple[object, ...] = ()


def mappers(stream: Side, p: CostParams) -> float:
    return max(1.0, math.ceil(stream.bytes / p.split_bytes))


def hashable_sides(kind: JoinKind) -> tuple[int, ...]:
    """The sides a map join may hold in memory (docs/design.md#join-algorithms, outer joins)."""
    if kind in ("inner", "cross"):
        return (0, 1)
    if kind in ("left", "semi", "anti"):
        return (1,)
    if kind == "right":
        return (0,)
    return ()  # full outer: both sides must be streamed


def _bucketed_on_keys(side: Side) -> bool:
    spec = side.bucketing
    return (
        spec is not None
        and bool(side.key_columns)
        and (
            tuple(spec.columns) == side.key_columns
            or sorted(spec.columns) == sorted(side.key_columns)
        )
    )


def _sorted_on_keys(side: Side) -> bool:
    spec = side.bucketing
    if spec is None or not spec.sort_columns:
        return False
    order = tuple(c for c, _ in spec.sort_columns[: len(side.key_columns)])
    return sorted(order) == sorted(side.key_columns)


def big_table(left: Side, right: Side, p: CostParams) -> int:
    """The streamed side of a bucket map / SMB join by the configured policy
    (docs/design.md#join-algorithms: average partition size by default, leftmost, table size)."""
    if p.big_table_policy == "leftmost":
        return 0
    if p.big_table_policy == "table_size":
        return 0 if left.table_bytes >= right.table_bytes else 1
    return 0 if left.average_partition_bytes >= right.average_partition_bytes else 1


def choose_join(
    left: Side,
    right: Side,
    kind: JoinKind,
    has_keys: bool,
    out_rows: float,
    p: CostParams,
    pruning: Pruning | None = None,
) -> JoinChoice:
    """`pruning`: the side whose keys would prune a partitioned table of the other side
    (optimizer.physical.pruning_side); with `dynamic_pruning`, a map join hashes that side
    when it fits, never the other."""
    sides = (left, right)
    kept = (  # the pruning the map join keeps by hashing its side
        pruning
        if p.dynamic_pruning
        and pruning is not None
        and pruning.side in hashable_sides(kind)
        and sides[pruning.side].bytes <= p.map_join_threshold
        else None
    )
    candidates: list[JoinChoice] = []
    if has_keys and kind != "full" and _bucketed_on_keys(left) and _bucketed_on_keys(right):
        assert left.bucketing is not None and right.bucketing is not None
        lb, rb = left.bucketing.num_buckets, right.bucketing.num_buckets
        big = big_table(left, right, p)
        if big not in hashable_sides(kind) or kind in ("inner", "cross"):
            stream, other = sides[big], sides[1 - big]
            m = mappers(stream, p)
            if lb == rb and _sorted_on_keys(left) and _sorted_on_keys(right):
                cost = f.smb_join(stream.as_input(), [other.as_input()], m, out_rows, p)
                reason = f"both sides bucketed ({lb}) and sorted on the join keys"
                candidates.append(JoinChoice("smb", cost, big, reason))
            small_per_bucket = other.bytes / max(sides[1 - big].bucketing.num_buckets, 1)  # type: ignore[union-attr]
            if max(lb, rb) % min(lb, rb) == 0 and small_per_bucket <= p.map_join_threshold:
                cost = f.bucket_map_join(stream.as_input(), [other.as_input()], m, out_rows, p)
                reason = (
                    f"both sides bucketed on the join keys ({lb} and {rb} buckets), "
                    f"{other.label} per bucket {small_per_bucket:,.0f} B fits"
                )
                candidates.append(JoinChoice("bucket_map", cost, big, reason))
    for hashed in hashable_sides(kind):
        if kept is not None and hashed != kept.side:
            continue  # Spark's dynamic partition pruning needs the pruning side hashed
        small, stream = sides[hashed], sides[1 - hashed]
        if not small.relation and not (p.bushy or p.broadcast_join_results):
            continue  # a join's result is hashed only when asked for (emitted as _jN)
        if small.bytes <= p.map_join_threshold:
            cost = f.map_join(
                stream.as_input(), [small.as_input()], mappers(stream, p), out_rows, p
            )
            reason = (
                f"{small.label} ({small.bytes:,.0f} B) fits the map-join threshold "
                f"({p.map_join_threshold:,.0f} B)"
            )
            if kept is not None:
                reason += f"; hashed so that its keys prune {kept.table}'s partitions"
            candidates.append(JoinChoice("map", cost, 1 - hashed, reason))
    common_cost = f.common_join([left.as_input(), right.as_input()], out_rows, p)
    candidates.append(JoinChoice("common", common_cost, None, _common_reason(left, right, kind, p)))
    best = min(candidates, key=lambda c: (c.cost.total, c.cost.rows, PREFERENCE.index(c.algorithm)))
    if best.algorithm == "common" and has_keys:
        skewed = _skew(left, right, kind, out_rows, p)
        if skewed is not None:
            return skewed
    return best


def _common_reason(left: Side, right: Side, kind: JoinKind, p: CostParams) -> str:
    if kind == "full":
        return "a full outer join streams both sides"
    hashable = [(left, right)[i] for i in hashable_sides(kind)]
    if not hashable:
        return "no side may be held in memory"
    smallest = min(hashable, key=lambda s: s.bytes)
    if smallest.bytes > p.map_join_threshold:
        return (
            f"{smallest.label} ({smallest.bytes:,.0f} B) exceeds the map-join threshold "
            f"({p.map_join_threshold:,.0f} B)"
        )
    return "cheaper than a map join by the cost model"


def _skew(
    left: Side, right: Side, kind: JoinKind, out_rows: float, p: CostParams
) -> JoinChoice | None:
    """Skew join (docs/design.md#join-algorithms): (R1 join R2 on the skewed values) UNION ALL
    (R1 join R2 on the rest); the skewed part runs as a map join streaming the skewed side."""
    skewed_index = 0 if left.heavy_share >= right.heavy_share else 1
    skewed, other = (left, right)[skewed_index], (left, right)[1 - skewed_index]
    if skewed.heavy_share < p.skew_share or kind == "full":
        return None
    share = min(skewed.heavy_share, 1.0)
    hot = f.Input(skewed.rows * share, skewed.size)
    cold = f.Input(skewed.rows * (1 - share), skewed.size)
    other_hot = f.Input(min(other.rows, other.rows * share), other.size)
    hot_out, cold_out = out_rows * share, out_rows * (1 - share)
    hot_cost = f.map_join(hot, [other_hot], mappers(skewed, p), hot_out, p)
    cold_cost = f.common_join([cold, other.as_input()], cold_out, p)
    size = left.size + right.size
    cost = f.skew_join(hot_cost, cold_cost, f.Input(hot_out, size), f.Input(cold_out, size), p)
    values = ", ".join(repr(v) for v in skewed.heavy_values[:5])
    reason = (
        f"{skewed.label}: key value(s) {values} hold {share:.0%} of its rows "
        f"(skew threshold {p.skew_share:.0%})"
    )
    return JoinChoice("skew", cost, None, reason, skewed.heavy_values)
