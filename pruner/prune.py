"""`statlas prune`: map-join partition pruning through the metastore (seed
"mapjoin-partition-pruning", Run Time).

Compile time (pruner.candidates) finds the map joins and the big table's qualifying keys.
Run time, per small table: Spark collects the distinct values of its key columns after its
own filters (tuples when one small table supplies several keys); the metastore answers
"partitions of BIG where k1 in (...) and (k2, k3) in (...)", intersected with the
partitions the query's own filters on BIG keep. Beyond `max_values` distinct values a key
falls back to its [min, max] range, and the report says so. Keys that are not partition
columns become predicates for BIG's scan (the seed's extension). A partition is dropped
only when it provably cannot match: NULL keys never equal anything, and a key without
values keeps nothing.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine

from metastore.catalog import TableInfo
from metastore.errors import StatlasError
from metastore.lookup import Partition, PartitionQuery, TupleList, lookup_partitions
from metastore.statistics import json_scalar
from optimizer.estimate.stats_query import MetastoreSource, StatsQuery, static_selection
from optimizer.plan import Node, Scan
from optimizer.sql_to_plan import build_plan
from pruner.candidates import MAP_JOIN_THRESHOLD, Analysis, Origin, PruningKey, analyse

MAX_VALUES = 10_000
SKETCH_ROWS = 1_000_000  # larger selections are sized from exact figures only


class NothingToPrune(StatlasError):
    """The query has no map join whose small side can prune a partitioned big table."""


@dataclass
class KeyValues:
    """What the small side supplied for some big-table keys: exact values (rows of one value
    per key), or per-key [min, max] ranges after a fallback."""

    keys: tuple[str, ...]
    rows: list[tuple[Any, ...]] | None = None
    ranges: dict[str, tuple[Any, Any]] | None = None
    distinct: int = 0


@dataclass
class PruneReport:
    table: str
    keys: list[str]
    partitions_before: int
    partitions_after: int
    partitions: list[Partition]
    values_collected: dict[str, int]
    fallback: str | None
    predicates: list[str]
    candidates: list[dict[str, Any]]
    rejected: list[dict[str, str]]
    seconds: float = 0.0
    rows: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "table": self.table,
            "keys": self.keys,
            "partitions_before": self.partitions_before,
            "partitions_after": self.partitions_after,
            "partitions": [
                {"values": {k: json_scalar(v) for k, v in p.values.items()}, "location": p.location}
                for p in sorted(self.partitions, key=lambda p: p.name)
            ],
            "values_collected": self.values_collected,
            "fallback": self.fallback,
            "predicates": self.predicates,
            "candidates": self.candidates,
            "rejected": self.rejected,
            "seconds": round(self.seconds, 3),
        }
        if self.rows is not None:
            result["rows"] = self.rows
        return result


@dataclass
class PrunePlan:
    """The compile-time result: the plan, its analysis and the chosen big table."""

    plan: Node
    analysis: Analysis
    big: Scan | None
    tables: dict[str, TableInfo]


def plan_pruning(
    engine: Engine, sql: str, dialect: str = "spark", threshold: float = MAP_JOIN_THRESHOLD
) -> PrunePlan:
    """Compile time: the query's plan, its map-join candidates and the big table they prune
    (the scan with the most qualifying keys; None when there is none)."""
    # sizes need no heavy hitters, and a large table's size no sketches: it is the big side
    source = MetastoreSource(engine, memo=True, mcv_limit=0, sketch_rows=SKETCH_ROWS)
    tables: dict[str, TableInfo] = {}

    def lookup(name: str) -> TableInfo:
        tables[name] = source.table(name)
        return tables[name]

    plan = build_plan(sql, lookup, dialect)
    stats = StatsQuery(source)

    def size_of(node: Node) -> float:
        estimate = stats.of(node)
        return estimate.rows.value * estimate.row_size

    def column_type(scan: Scan, column: str) -> str:
        info = tables[scan.table]
        for key in info.partition_keys:
            if key.name == column:
                return str(key.type)
        return next(c.type for c in info.columns if c.name == column)

    analysis = analyse(plan, size_of, column_type, threshold)
    bigs = analysis.big_tables()
    return PrunePlan(plan, analysis, bigs[0] if bigs else None, tables)


def prune(
    engine: Engine,
    sql: str,
    *,
    spark: Any = None,
    master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    dialect: str = "spark",
    threshold: float = MAP_JOIN_THRESHOLD,
    max_values: int = MAX_VALUES,
    run: bool = False,
) -> PruneReport:
    """Compile and run-time pruning of `sql`'s big table; with `run`, also execute the query
    on Spark reading only the kept partitions and report its row count."""
    report, compiled, frames, spark = _prune(
        engine, sql, spark, master, spark_conf, dialect, threshold, max_values
    )
    if run:
        frame = _pruned_query(spark, sql, dialect, compiled, frames, report)
        report.rows = int(frame.count())
        report.seconds += time.perf_counter() - report.extra.pop("finished")
    return report


def pruned_dataframe(
    spark: Any,
    engine: Engine,
    sql: str,
    dialect: str = "spark",
    threshold: float = MAP_JOIN_THRESHOLD,
    max_values: int = MAX_VALUES,
) -> Any:
    """Python API: the query as a Spark DataFrame whose big table reads only the partitions
    pruning keeps (with its non-partition keys' predicates)."""
    report, compiled, frames, spark = _prune(
        engine, sql, spark, None, None, dialect, threshold, max_values
    )
    return _pruned_query(spark, sql, dialect, compiled, frames, report)


def _prune(
    engine: Engine,
    sql: str,
    spark: Any,
    master: str | None,
    spark_conf: Mapping[str, str] | None,
    dialect: str,
    threshold: float,
    max_values: int,
) -> tuple[PruneReport, PrunePlan, _Frames, Any]:
    started = time.perf_counter()
    compiled = plan_pruning(engine, sql, dialect, threshold)
    if compiled.big is None:
        reasons = "; ".join(f"{r.join}: {r.reason}" for r in compiled.analysis.rejected)
        raise NothingToPrune(f"nothing to prune: {reasons or 'the query has no join'}")
    big = compiled.big
    info = compiled.tables[big.table]
    keys = compiled.analysis.keys_of(big)
    if spark is None:
        from collectors.spark_session import spark_session

        spark = spark_session(master, spark_conf)
    frames = _Frames(spark, compiled.tables)
    collected = [_collect(spark, frames, group, max_values) for group in _groups(keys)]
    static, _ = static_selection(big, info)
    before = lookup_partitions(engine, big.table, static)
    kept, fallback, predicates = _select(engine, info, static, collected)
    report = PruneReport(
        table=big.table,
        keys=list(dict.fromkeys(k.big_column for k in keys)),
        partitions_before=len(before),
        partitions_after=len(kept),
        partitions=kept,
        values_collected={key: values.distinct for values in collected for key in values.keys},
        fallback=fallback,
        predicates=predicates,
        candidates=[_candidate_json(c) for c in compiled.analysis.candidates],
        rejected=[{"join": r.join, "reason": r.reason} for r in compiled.analysis.rejected],
    )
    report.seconds = time.perf_counter() - started
    report.extra["finished"] = time.perf_counter()
    return report, compiled, frames, spark


def _pruned_query(
    spark: Any,
    sql: str,
    dialect: str,
    compiled: PrunePlan,
    frames: _Frames,
    report: PruneReport,
) -> Any:
    from pruner.spark_views import register_views, rewrite_onto_views, table_frame

    assert compiled.big is not None
    name = compiled.big.table
    big = table_frame(spark, compiled.tables[name], [p.location for p in report.partitions])
    for predicate in report.predicates:
        big = big.where(predicate)
    others = {n: frames[n] for n in compiled.tables if n != name}
    views = register_views(spark, compiled.tables, {**others, name: big})
    return spark.sql(rewrite_onto_views(sql, views, dialect))


class _Frames:
    """Each table's full DataFrame, made when first needed (listing a big table's
    directory costs seconds, and the pruned big table is never read whole)."""

    def __init__(self, spark: Any, tables: dict[str, TableInfo]) -> None:
        self.spark, self.tables = spark, tables
        self.made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        from pruner.spark_views import table_frame

        if name not in self.made:
            self.made[name] = table_frame(self.spark, self.tables[name])
        return self.made[name]


def _groups(keys: list[PruningKey]) -> list[list[PruningKey]]:
    """Keys whose values come from one small scan: collected together, as tuples."""
    groups: dict[int, list[PruningKey]] = {}
    for key in keys:
        groups.setdefault(id(key.small.scan), []).append(key)
    return list(groups.values())


def _collect(spark: Any, frames: _Frames, group: list[PruningKey], max_values: int) -> KeyValues:
    """Distinct non-NULL values (tuples) of a small scan's key columns after its filters;
    beyond `max_values`, each column's [min, max] instead."""
    small: Origin = group[0].small
    alias = small.scan.alias
    frame = frames[small.scan.table].alias(alias)
    filters = list({f.sql(dialect="spark"): f for k in group for f in k.small.filters})
    for condition in filters:
        frame = frame.where(condition)
    columns = [f"`{alias}`.`{k.small.column}`" for k in group]
    not_null = " AND ".join(f"{c} IS NOT NULL" for c in columns)
    values = frame.where(not_null).selectExpr(*columns).distinct()
    rows = [tuple(r) for r in values.limit(max_values + 1).collect()]
    keys = tuple(k.big_column for k in group)
    if len(rows) <= max_values:
        return KeyValues(keys, rows=rows, distinct=len(rows))
    bounds = values.selectExpr(
        *[f"min({c})" for c in columns], *[f"max({c})" for c in columns]
    ).first()
    width = len(columns)
    ranges = {key: (bounds[i], bounds[width + i]) for i, key in enumerate(keys)}
    return KeyValues(keys, ranges=ranges, distinct=int(values.count()))


def _select(
    engine: Engine, info: TableInfo, static: PartitionQuery, collected: list[KeyValues]
) -> tuple[list[Partition], str | None, list[str]]:
    """The partitions the collected values keep, why a range was used (if it was), and the
    predicates for non-partition keys."""
    partition_keys = set(info.key_names)
    in_lists: list[tuple[str, list[Any]]] = []
    tuples: list[TupleList] = []
    wheres = [static.where] if static.where else []
    predicates: list[str] = []
    fallbacks: list[str] = []
    for values in collected:
        positions = [i for i, k in enumerate(values.keys) if k in partition_keys]
        others = [i for i, k in enumerate(values.keys) if k not in partition_keys]
        if values.rows is not None and not values.rows:
            return [], None, []  # the small side is empty: no big row can match
        if values.rows is not None:
            for i in others:
                items = sorted({row[i] for row in values.rows}, key=_order)
                predicates.append(f"`{values.keys[i]}` IN ({', '.join(map(_sql_literal, items))})")
            if len(positions) == 1:
                i = positions[0]
                in_lists.append((values.keys[i], list({row[i] for row in values.rows})))
            elif positions:
                keys = tuple(values.keys[i] for i in positions)
                rows = list({tuple(row[i] for i in positions) for row in values.rows})
                tuples.append(TupleList(keys, rows))
            continue
        assert values.ranges is not None
        fallbacks.append(
            f"{', '.join(values.keys)}: {values.distinct:,} distinct values exceed the limit; "
            "used their [min, max] range"
        )
        for key, (low, high) in values.ranges.items():
            condition = f"`{key}` BETWEEN {_sql_literal(low)} AND {_sql_literal(high)}"
            if key in partition_keys:
                wheres.append(condition)
            else:
                predicates.append(condition)
    where = " AND ".join(f"({w})" for w in wheres) if wheres else None
    query = PartitionQuery(tuple(in_lists), tuple(tuples), where)
    kept = list(lookup_partitions(engine, info.name, query))
    return kept, "; ".join(fallbacks) or None, predicates


def _order(value: Any) -> Any:
    return (str(type(value)), value)


def _sql_literal(value: Any) -> str:
    """A Spark SQL (and metastore --where) literal of a collected value."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def _candidate_json(candidate: Any) -> dict[str, Any]:
    from pruner.candidates import describe_join

    return {
        "join": describe_join(candidate.join),
        "big_table": f"{candidate.big.table} {candidate.big.alias}",
        "small_bytes": round(candidate.small_bytes),
        "keys": [
            {
                "big": f"{candidate.big.alias}.{k.big_column}",
                "small": f"{k.small.scan.alias}.{k.small.column}",
                "partition_key": k.partition_key,
                "small_filters": [f.sql(dialect="spark") for f in k.small.filters],
            }
            for k in candidate.keys
        ],
    }
