"""The cost variables and planning thresholds, with the Hive CBO proposal's defaults, configurable.

docs/design.md#cost-variables: CPUc = 1 ns, NEt = 150 x CPUc,
Lw = Lr = 4 x NEt, Hw = 10 x Lw, Hr = 1.5 x Lr. A variable left unset follows the chain
from the ones set (`--config CPUc=2` doubles every IO constant too).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from metastore.errors import InvalidValue

BIG_TABLE_POLICIES = ("avg_partition_size", "leftmost", "table_size")
COMMON_HINTS = ("correlated", "none", "merge", "shuffle_hash")


@dataclass(frozen=True)
class CostParams:
    cpu_c: float = 1.0  # CPUc: one comparison, ns
    net: float = 150.0  # NEt: one byte over the network, ns
    local_write: float = 600.0  # Lw: one byte to local disk
    local_read: float = 600.0  # Lr: one byte from local disk
    hdfs_write: float = 6000.0  # Hw: one byte to HDFS
    hdfs_read: float = 900.0  # Hr: one byte from HDFS
    map_join_threshold: float = 10_000_000.0  # bytes of all small sides of one map stage
    split_bytes: float = 128 * 1024 * 1024  # input bytes per mapper
    bytes_per_reducer: float = 256 * 1024 * 1024  # as Hive's hive.exec.reducers.bytes.per.reducer
    max_reducers: int = 1009  # as Hive's hive.exec.reducers.max
    skew_share: float = 0.2  # a join key value holding this share of a side's rows is skewed
    big_table_policy: str = "avg_partition_size"
    greedy_above: int = 12  # join order: dynamic programming up to this many relations
    bushy: int = 0  # join order: 1 also considers joining two joins (0: left-deep trees)
    # the Spark hint emitted for common joins: correlated (MERGE on the common joins whose
    # partitioning a shuffle elimination relies on; Spark decides the others), none (Spark
    # decides all), merge or shuffle_hash (every common join)
    common_hint: str = "correlated"
    # 1: a small filtered side's join keys filter a decorrelated, EXISTS or IN subquery
    # (optimizer.physical.key_transfer); 0: without (docs/design.md#key-transfer)
    key_transfer: int = 1
    # the largest share of the subquery's rows a key transfer may keep: a transfer costs
    # Spark a scan, a job and a broadcast the cost formulas do not price
    key_transfer_kept: float = 0.25
    # 1: a map join may hash a join's result (left-deep plans: the joins so far), emitted as
    # a derived table `_jN` with BROADCAST(_jN); 0: only one relation is hashed (bushy=1
    # still hashes joins of joins)
    broadcast_join_results: int = 1
    # 1: join order links relations by the equalities the query implies (a.x = b.y AND
    # b.y = c.z: a joins c on a.x = c.z; optimizer.physical.equivalence); 0: only by the
    # conditions it writes
    transitive_joins: int = 1
    # the least share of a join group's cost (its inputs read included) an order using an
    # implied condition must save over the best order over the written ones
    # (optimizer.physical.join_order: near-ties keep the written conditions)
    implied_join_gain: float = 0.05
    # 1: a map join whose one side is a filtered relation joining a partition key of a
    # partitioned table of the other side hashes that relation, so Spark's dynamic partition
    # pruning prunes the table (optimizer.physical.pruning_side); 0: the cheaper side by the
    # cost formulas, as Hive's documents choose it
    dynamic_pruning: int = 1
    # 1: an EXISTS or NOT EXISTS the plan answers with a map join hashing the subquery is
    # emitted as a broadcast LEFT SEMI / LEFT ANTI JOIN (optimizer.physical.emit_semi);
    # 0: left as written (Spark decides the join)
    semi_join_hints: int = 1
    # 1: one-row aggregates of one SELECT over the same relations (derived tables of its FROM
    # list, scalar subqueries of its SELECT list) are merged into one read of the relations
    # when the cost formulas price the merged plan cheaper (optimizer.rewrite.merge_aggregates);
    # 0: each read on its own, as written
    merge_aggregates: int = 1


ALIASES = {
    "cpuc": "cpu_c",
    "net": "net",
    "lw": "local_write",
    "lr": "local_read",
    "hw": "hdfs_write",
    "hr": "hdfs_read",
    "noconditionaltask.size": "map_join_threshold",
}


def cost_params(config: Mapping[str, str] | None = None) -> CostParams:
    """Parameters from `key=value` settings (the Hive CBO proposal's names CPUc, NEt, Lw, Lr,
    Hw, Hr or the field names); unset IO constants follow its chain from those set."""
    given: dict[str, Any] = {}
    known = {f.name: f for f in fields(CostParams)}
    for raw_key, raw_value in (config or {}).items():
        key = ALIASES.get(raw_key.strip().lower(), raw_key.strip().lower())
        if key not in known:
            names = ", ".join(sorted(set(known) | {"CPUc", "NEt", "Lw", "Lr", "Hw", "Hr"}))
            raise InvalidValue(f"unknown setting {raw_key!r} (known: {names})")
        given[key] = _parse(key, known[key].default, raw_value)
    cpu = given.get("cpu_c", CostParams.cpu_c)
    net = given.get("net", 150 * cpu)
    lw = given.get("local_write", 4 * net)
    lr = given.get("local_read", 4 * net)
    chained = {
        "cpu_c": cpu,
        "net": net,
        "local_write": lw,
        "local_read": lr,
        "hdfs_write": given.get("hdfs_write", 10 * lw),
        "hdfs_read": given.get("hdfs_read", 1.5 * lr),
    }
    return replace(CostParams(), **{**given, **chained})


def parse_settings(pairs: list[str] | None) -> dict[str, str]:
    """`["CPUc=2", "map_join_threshold=5e6"]` -> {"CPUc": "2", ...}."""
    settings: dict[str, str] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidValue(f"a setting is key=value, got {pair!r}")
        settings[key.strip()] = value.strip()
    return settings


def _parse(key: str, default: Any, raw: str) -> Any:
    if key == "big_table_policy":
        if raw not in BIG_TABLE_POLICIES:
            raise InvalidValue(f"big_table_policy is one of {', '.join(BIG_TABLE_POLICIES)}")
        return raw
    if key == "common_hint":
        if raw not in COMMON_HINTS:
            raise InvalidValue(f"common_hint is one of {', '.join(COMMON_HINTS)}")
        return raw
    try:
        value = float(raw)
    except ValueError:
        raise InvalidValue(f"setting {key} needs a number, got {raw!r}") from None
    if value < 0 or value != value:
        raise InvalidValue(f"setting {key} must be a non-negative number, got {raw!r}")
    if key in ("skew_share", "key_transfer_kept") and not 0 < value <= 1:
        raise InvalidValue(f"{key} is a fraction in (0, 1]")
    if key == "implied_join_gain" and not value < 1:
        raise InvalidValue(f"{key} is a fraction in [0, 1)")
    return int(value) if isinstance(default, int) else value
