"""`statlas prune`: map-join partition pruning through the metastore
(docs/design.md#pruning-run-time).

Compile time (pruner.candidates) plans the query as `statlas explain` does
(optimizer.physical.api.plan_query: one map-join threshold, CostParams.map_join_threshold)
and finds, among the joins the plan runs as map joins, the big table's qualifying keys.
Run time, per small table: Spark collects the distinct values of its key columns after its
own filters (tuples when one small table supplies several keys); the metastore answers
"partitions of BIG where k1 in (...) and (k2, k3) in (...)", intersected with the
partitions the query's own filters on BIG keep. Beyond `max_values` distinct values a key
falls back to its [min, max] range, and the report says so. Keys that are not partition
columns become predicates for BIG's scan (docs/design.md#pruning-extension). A partition is dropped
only when it provably cannot match: NULL keys never equal anything, and a key without
values keeps nothing.

A query no map join can prune is an answer, not an error: the report says `pruned: false`,
names the largest partitioned table the query scans and keeps the partitions its own
filters keep, and says why each join does not prune; run, the query reads those partitions.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from decimal import Decimal
from functools import partial
from typing import Any

from sqlalchemy import Engine

from metastore.catalog.lookup import Partition, PartitionQuery, TupleList, lookup_partitions
from metastore.catalog.tables import TableInfo
from metastore.partitions.filters import Compare, all_of
from metastore.statistics.summaries import json_scalar
from optimizer.estimate.sources import MetastoreSource, StatisticsSource, consistently
from optimizer.partition_predicates import static_selection
from optimizer.physical.api import PhysicalPlan, plan_query
from optimizer.physical.plan import PhysicalNode
from optimizer.plan import Scan, walk
from optimizer.sql_to_plan import parse, referenced_tables
from pruner.candidates import Analysis, Candidate, Origin, PruningKey, analyse, describe_join
from pruner.spark_views import (
    Read,
    pinned_view_name,
    reads,
    register_views,
    rewrite_onto_views,
    table_frame,
)

MAX_VALUES = 10_000
PRUNED_TABLE = "the table the map joins' small sides prune (most partition keys, then most keys)"
LARGEST_PARTITIONED = (
    "no map join prunes: the largest partitioned table the query scans (estimated bytes read)"
)
LARGEST = "no map join prunes and the query scans no partitioned table: the largest it scans"


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
    """`pruned`: some map join's small side pruned `table` (else `table` is the largest
    partitioned table the query scans, and partitions_after = partitions_before: what the
    query's own filters keep). `table` is None only for a query that reads no table.

    Its fields are the answer of `statlas prune --json` (as_json) and of POST /prune
    (servers.http.models.PruneOut, made of them): all but `extra`, `rows` only when run."""

    pruned: bool = field(
        metadata={"description": "false: no map join prunes; the query's own filters keep"}
    )
    table: str | None = field(
        metadata={"description": "the pruned table, else the largest partitioned one"}
    )
    table_reason: str
    keys: list[str]
    partitions_before: int
    partitions_after: int
    partitions: list[Partition]  # as JSON: {"values": ..., "location": ...}
    values_collected: dict[str, int]
    fallback: str | None
    predicates: list[str]
    candidates: list[dict[str, Any]]
    rejected: list[dict[str, str]]  # {"join": ..., "reason": ...}
    seconds: float = 0.0
    rows: int | None = field(default=None, metadata={"description": "with run only"})
    extra: dict[str, Any] = field(default_factory=dict, metadata={"json": False})

    def as_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get("json", True)
        }
        result["partitions"] = [
            {"values": {k: json_scalar(v) for k, v in p.values.items()}, "location": p.location}
            for p in sorted(self.partitions, key=lambda p: p.name)
        ]
        result["seconds"] = round(self.seconds, 3)
        if self.rows is None:
            del result["rows"]
        return result

    def as_text(self) -> str:
        """What `statlas prune` prints without --json."""
        if self.pruned:
            values = ", ".join(f"{k}: {n:,} values" for k, n in self.values_collected.items())
            lines = [
                f"{self.table}: {self.partitions_after} of {self.partitions_before} partitions "
                f"kept, on {', '.join(self.keys)} ({values}) in {self.seconds:.1f} s"
            ]
        elif self.table is not None:
            lines = [
                f"{self.table}: not pruned, {self.partitions_after} of {self.partitions_before} "
                f"partitions kept (those the query's own filters keep) in {self.seconds:.1f} s",
                f"why {self.table}: {self.table_reason}",
            ]
        else:
            lines = [f"not pruned: {self.table_reason}"]
        if self.fallback:
            lines.append(f"fallback: {self.fallback}")
        lines += [f"predicate for {self.table}: {p}" for p in self.predicates]
        lines += [f"not pruned: {r['join']}: {r['reason']}" for r in self.rejected]
        if self.rows is not None:
            lines.append(f"rows: {self.rows:,}")
        return "\n".join(lines)


@dataclass
class PrunePlan:
    """The compile-time result: the physical plan, its analysis, the big table pruning
    prunes (None when no map join qualifies), the scan the report is about (that big table,
    else the largest partitioned scan) and why, and the tables the query reads."""

    physical: PhysicalPlan
    analysis: Analysis
    big: Scan | None
    table: Scan | None
    table_reason: str
    tables: dict[str, TableInfo]
    once: frozenset[Read]  # the reads the query makes of a table under a name only once

    def read_once(self, scan: Scan) -> bool:
        return (scan.table, scan.alias) in self.once


def plan_pruning(
    engine: Engine | None,
    sql: str,
    dialect: str = "spark",
    threshold: float | None = None,
    config: Mapping[str, str] | None = None,
    source: StatisticsSource | None = None,
) -> PrunePlan:
    """Compile time: the query's physical plan, as `statlas explain` makes it with the same
    `config` (`threshold` sets its map_join_threshold), the map joins that can prune, and
    the big table they prune (the scan with the most qualifying partition keys, then keys).
    Statistics come from `source` (default: the metastore behind `engine`)."""
    source = source if source is not None else MetastoreSource(engine, memo=True)
    return consistently(
        source, partial(_plan_pruning, engine, sql, dialect, threshold, config, source)
    )


def _plan_pruning(
    engine: Engine | None,
    sql: str,
    dialect: str,
    threshold: float | None,
    config: Mapping[str, str] | None,
    source: StatisticsSource,
) -> PrunePlan:
    settings = dict(config or {})
    if threshold is not None:
        settings["map_join_threshold"] = repr(float(threshold))
    physical = plan_query(engine, sql, dialect, settings, source)
    tables = {name: source.table(name) for name in referenced_tables(parse(sql, dialect))}
    once = _read_once(physical.root, reads(sql, dialect))

    def column_type(scan: Scan, column: str) -> str:
        info = source.table(scan.table)
        for key in info.partition_keys:
            if key.name == column:
                return str(key.type)
        return next(c.type for c in info.columns if c.name == column)

    analysis = analyse(physical.root, column_type, lambda scan: (scan.table, scan.alias) in once)
    bigs = analysis.big_tables()
    big = bigs[0] if bigs else None
    table, reason = (big, PRUNED_TABLE) if big is not None else _largest_scan(physical.root)
    return PrunePlan(physical, analysis, big, table, reason, tables, once)


def _read_once(root: PhysicalNode, query_reads: list[Read]) -> frozenset[Read]:
    """The (table, alias) pairs that one reference of the query reads, through one scan of
    the plan (not a self join's two sides under one name, nor a CTE read twice)."""
    scans = Counter((n.table, n.alias) for n in walk(root.logical) if isinstance(n, Scan))
    written = Counter(query_reads)
    return frozenset(read for read, count in written.items() if count == 1 and scans[read] == 1)


def _largest_scan(root: PhysicalNode) -> tuple[Scan | None, str]:
    """The partitioned scan of the most estimated bytes (else the largest scan at all)."""
    scans = [(n.logical, n.bytes) for n in root.walk() if isinstance(n.logical, Scan)]
    partitioned = [(scan, size) for scan, size in scans if scan.partition_keys]
    chosen, reason = (partitioned, LARGEST_PARTITIONED) if partitioned else (scans, LARGEST)
    if not chosen:
        return None, "the query reads no table"
    return max(chosen, key=lambda item: item[1])[0], reason


def prune(
    engine: Engine,
    sql: str,
    *,
    spark: Any = None,
    master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    dialect: str = "spark",
    threshold: float | None = None,
    config: Mapping[str, str] | None = None,
    max_values: int = MAX_VALUES,
    run: bool = False,
) -> PruneReport:
    """Compile and run-time pruning of `sql`'s big table; with `run`, also execute the query
    on Spark reading only the kept partitions and report its row count. A query nothing
    prunes is reported `pruned: false` (and run over what its own filters keep). `threshold`
    (default CostParams.map_join_threshold) and `config` are `statlas explain`'s settings.
    Spark starts only to collect values or to run."""
    session = _Session(spark, master, spark_conf)
    report, compiled, frames = _prune(engine, sql, session, dialect, threshold, config, max_values)
    if run:
        frame = _pruned_query(session.get(), sql, dialect, compiled, frames, report)
        report.rows = int(frame.count())
        report.seconds += time.perf_counter() - report.extra.pop("finished")
    return report


def pruned_dataframe(
    spark: Any,
    engine: Engine,
    sql: str,
    dialect: str = "spark",
    threshold: float | None = None,
    max_values: int = MAX_VALUES,
    config: Mapping[str, str] | None = None,
) -> Any:
    """Python API: the query as a Spark DataFrame whose big table reads only the partitions
    pruning keeps (with its non-partition keys' predicates); when nothing prunes, the
    partitions the query's own filters keep."""
    session = _Session(spark, None, None)
    report, compiled, frames = _prune(engine, sql, session, dialect, threshold, config, max_values)
    return _pruned_query(session.get(), sql, dialect, compiled, frames, report)


class _Session:
    """The Spark session given, or one started on first use."""

    def __init__(self, spark: Any, master: str | None, conf: Mapping[str, str] | None) -> None:
        self.spark, self.master, self.conf = spark, master, conf

    def get(self) -> Any:
        if self.spark is None:
            from collectors.spark_session import spark_session

            self.spark = spark_session(self.master, self.conf)
        return self.spark


def _prune(
    engine: Engine,
    sql: str,
    session: _Session,
    dialect: str,
    threshold: float | None,
    config: Mapping[str, str] | None,
    max_values: int,
) -> tuple[PruneReport, PrunePlan, _Frames]:
    started = time.perf_counter()
    compiled = plan_pruning(engine, sql, dialect, threshold, config)
    frames = _Frames(session, compiled.tables)
    scan = compiled.table
    before = _static_partitions(engine, compiled, scan) if scan is not None else []
    report = PruneReport(
        pruned=compiled.big is not None,
        table=scan.table if scan is not None else None,
        table_reason=compiled.table_reason,
        keys=[],
        partitions_before=len(before),
        partitions_after=len(before),
        partitions=before,
        values_collected={},
        fallback=None,
        predicates=[],
        candidates=[_candidate_json(c) for c in compiled.analysis.candidates],
        rejected=[{"join": r.join, "reason": r.reason} for r in compiled.analysis.rejected],
    )
    if compiled.big is not None:
        _prune_big(engine, compiled, compiled.big, frames, max_values, report)
    report.seconds = time.perf_counter() - started
    report.extra["finished"] = time.perf_counter()
    return report, compiled, frames


def _static_partitions(engine: Engine, compiled: PrunePlan, scan: Scan) -> list[Partition]:
    """The partitions of the scan's table its own filters keep."""
    static, _ = static_selection(scan, compiled.tables[scan.table])
    return list(lookup_partitions(engine, scan.table, static))


def _prune_big(
    engine: Engine,
    compiled: PrunePlan,
    big: Scan,
    frames: _Frames,
    max_values: int,
    report: PruneReport,
) -> None:
    """Collect the small sides' values and keep the big table's partitions they can match."""
    info = compiled.tables[big.table]
    keys = compiled.analysis.keys_of(big)
    spark = frames.session.get()
    collected = [_collect(spark, frames, group, max_values) for group in _groups(keys)]
    static, _ = static_selection(big, info)
    kept, fallback, predicates = _select(engine, info, static, collected)
    report.keys = list(dict.fromkeys(k.big_column for k in keys))
    report.partitions_after, report.partitions = len(kept), kept
    report.values_collected = {key: v.distinct for v in collected for key in v.keys}
    report.fallback, report.predicates = fallback, predicates


def _pruned_query(
    spark: Any,
    sql: str,
    dialect: str,
    compiled: PrunePlan,
    frames: _Frames,
    report: PruneReport,
) -> Any:
    """The query over views: the report's scan (when the query reads it under its name only
    once) reads the report's partitions and predicates, every other read its whole table."""
    scan = compiled.table
    pinned: dict[Read, str] = {}
    if scan is not None and compiled.read_once(scan):
        locations = [p.location for p in report.partitions]
        frame = table_frame(spark, compiled.tables[scan.table], locations)
        for predicate in report.predicates:
            frame = frame.where(predicate)
        pinned[(scan.table, scan.alias)] = pinned_view_name(scan.table)
        frame.createOrReplaceTempView(pinned[(scan.table, scan.alias)])
    whole = {name for name, alias in reads(sql, dialect) if (name, alias) not in pinned}
    views = register_views(
        spark, {n: compiled.tables[n] for n in whole}, {n: frames[n] for n in whole}
    )
    return spark.sql(rewrite_onto_views(sql, views, dialect, pinned))


class _Frames:
    """Each table's full DataFrame, made when first needed (listing a big table's
    directory costs seconds, and the pruned big table is never read whole)."""

    def __init__(self, session: _Session, tables: dict[str, TableInfo]) -> None:
        self.session, self.tables = session, tables
        self.made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.made:
            self.made[name] = table_frame(self.session.get(), self.tables[name])
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
    filters = [static.filter] if static.filter is not None else []
    key_types = dict(zip(info.key_names, info.store().key_types, strict=True))
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
            if key in partition_keys:
                low, high = key_types[key].coerce(low), key_types[key].coerce(high)
                filters.append(all_of((Compare(key, ">=", low), Compare(key, "<=", high))))
            else:
                predicates.append(f"`{key}` BETWEEN {_sql_literal(low)} AND {_sql_literal(high)}")
    selected = all_of(filters) if filters else None
    query = PartitionQuery(tuple(in_lists), tuple(tuples), filter=selected)
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


def _candidate_json(candidate: Candidate) -> dict[str, Any]:
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
