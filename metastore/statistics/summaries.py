"""Statistics of any set of partitions, rolled up exactly from the partitions' records:
counts add, min/max compare, HLL, Theta, KLL and heavy-hitter sketches merge. Nothing is
re-scanned. NDV comes from the Theta union where every partition has a Theta sketch (exact
up to 4,096 values, then within about 1.6%), else from the HLL union (lgK 12, about 1.6%)."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from typing import Any

from datasketches import frequent_items_error_type
from sqlalchemy import Connection, Engine, func, select

from metastore.catalog.column_names import resolve_all
from metastore.catalog.lookup import PartitionQuery, build_predicate
from metastore.catalog.tables import TableInfo, get_table
from metastore.column_type import ColumnType
from metastore.engine import run_read
from metastore.models import ColumnStats, PartitionStats
from metastore.statistics.block_reads import Selection, column_pieces, select_partitions
from metastore.statistics.column_pieces import ColumnPiece, distinct_sum, value_parser
from metastore.statistics.histograms import (
    Histogram,
    equi_depth,
    equi_width,
    merge_hll,
    merge_kll,
    merge_text_items,
    merge_theta,
    most_common,
    seed_uniform,
)

DEFAULT_BUCKETS = 64
MCV_LIMIT = 10
EPOCH = dt.datetime(1970, 1, 1)
MAX_DECIMAL_DIGITS = 38  # Spark's and Hive's widest decimal


@dataclass
class ColumnSummary:
    name: str
    type: str
    null_count: int
    min: Any
    max: Any
    ndv: float | None
    ndv_source: str | None
    avg_len: float | None
    max_len: int | None
    mcv: list[tuple[Any, int]]
    equi_depth: Histogram | None
    equi_width: Histogram | None
    uniform: Histogram | None
    mcv_error: int = 0  # the merged heavy-hitters sketch's maximum error (0: exact)
    # the merged sketches themselves, for estimators (not part of the JSON form)
    kll: Any = field(default=None, repr=False)
    theta: Any = field(default=None, repr=False)
    # each partition's own distinct count, summed over the partitions: the distinct
    # (partition, value) pairs (None when a partition or block lacks it)
    partition_distinct: int | None = None
    # selected partitions whose files lack the column: their rows are in null_count
    absent_partitions: int = 0
    # selected partitions with a record of the column (0: never collected, e.g. skipped)
    collected_partitions: int = 0

    def as_json(self) -> dict[str, Any]:
        def hist(h: Histogram | None) -> dict[str, list[Any]] | None:
            if h is None:
                return None
            decode = _bound_decoder(self.type)
            return {"bounds": [json_scalar(decode(b)) for b in h.bounds], "counts": list(h.counts)}

        return {
            "type": self.type,
            "null_count": self.null_count,
            "min": json_scalar(self.min),
            "max": json_scalar(self.max),
            "ndv": None if self.ndv is None else round(self.ndv),
            "ndv_source": self.ndv_source,
            "avg_len": self.avg_len,
            "max_len": self.max_len,
            "mcv": [[json_scalar(v), c] for v, c in self.mcv],
            "equi_depth": hist(self.equi_depth),
            "equi_width": hist(self.equi_width),
            "uniform": hist(self.uniform),
            "absent_partitions": self.absent_partitions,
            "collected_partitions": self.collected_partitions,
        }


@dataclass
class TableSummary:
    table: str
    partitions: int
    row_count: int
    columns: dict[str, ColumnSummary]

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "partitions": self.partitions,
            "row_count": self.row_count,
            "columns": {n: c.as_json() for n, c in self.columns.items()},
        }


def table_statistics(
    engine: Engine,
    table: str,
    query: PartitionQuery | None = None,
    columns: list[str] | None = None,
    buckets: int = DEFAULT_BUCKETS,
    mcv_limit: int = MCV_LIMIT,
    sketches: bool = True,
) -> TableSummary:
    """Roll up the statistics of the partitions of `table` that `query` selects (all);
    without `sketches`, only what the database can add up itself (rows, nulls, lengths):
    a summary of a large table in milliseconds, without min/max, NDV or histograms."""
    summarise = _summarise if sketches else _summarise_sizes
    return run_read(
        engine,
        lambda conn: summarise(
            conn, get_table(conn, table), query or PartitionQuery(), columns, buckets, mcv_limit
        ),
    )


def _summarise(
    conn: Connection,
    info: TableInfo,
    query: PartitionQuery,
    wanted: list[str] | None,
    buckets: int,
    mcv_limit: int = MCV_LIMIT,
) -> TableSummary:
    names = _column_names(info, wanted)
    predicate = build_predicate(conn.dialect.name, info, query)
    selection = select_partitions(conn, info.id, info.store(), predicate)
    return summarise_selection(conn, info, selection, names, buckets, mcv_limit)


def _column_names(info: TableInfo, wanted: list[str] | None) -> list[str]:
    """The described columns `wanted` names, found in any case (all without `wanted`)."""
    known = info.described_columns()
    return resolve_all(known, wanted, info.name) if wanted else list(known)


def summarise_selection(
    conn: Connection,
    info: TableInfo,
    selection: Selection,
    wanted: list[str] | None = None,
    buckets: int = DEFAULT_BUCKETS,
    mcv_limit: int = MCV_LIMIT,
) -> TableSummary:
    """The statistics of a selection of the table's partitions (`select_partitions`), its
    columns' pieces read in one statement."""
    known = info.described_columns()
    names = _column_names(info, wanted)
    row_count = selection.rows
    by_column = column_pieces(conn, info.id, selection, names, top_k=mcv_limit > 0)
    summaries = {
        n: _column(n, known[n], by_column[n], row_count, buckets, mcv_limit) for n in names
    }
    return TableSummary(info.name, int(selection.ids.size), row_count, summaries)


def _summarise_sizes(
    conn: Connection,
    info: TableInfo,
    query: PartitionQuery,
    wanted: list[str] | None,
    buckets: int,
    mcv_limit: int = MCV_LIMIT,
) -> TableSummary:
    """Rows, and per column nulls and lengths, added up by the database."""
    known = info.described_columns()
    names = _column_names(info, wanted)
    parts = info.store().table
    predicate = build_predicate(conn.dialect.name, info, query)
    p, c = PartitionStats.__table__.c, ColumnStats.__table__.c
    counted = (
        select(func.count(), func.coalesce(func.sum(p.row_count), 0))
        .join(parts, parts.c.id == p.partition_id)
        .where(p.table_id == info.id)
    )
    per_column = (
        select(
            c.column_name,
            func.sum(c.null_count),
            func.sum(c.total_len),
            func.max(c.max_len),
            func.count(),
        )
        .join(parts, parts.c.id == c.partition_id)
        .where(c.table_id == info.id, c.column_name.in_(names))
        .group_by(c.column_name)
    )
    if predicate is not None:
        counted, per_column = counted.where(predicate), per_column.where(predicate)
    partitions, rows = conn.execute(counted).one()
    summaries = {}
    for name, nulls, lengths, max_len, records in conn.execute(per_column):
        non_null = int(rows) - int(nulls or 0)
        summaries[name] = ColumnSummary(
            name=name,
            type=known[name],
            null_count=int(nulls or 0),
            min=None,
            max=None,
            ndv=None,
            ndv_source=None,
            avg_len=(int(lengths) / non_null) if lengths is not None and non_null else None,
            max_len=None if max_len is None else int(max_len),
            mcv=[],
            equi_depth=None,
            equi_width=None,
            uniform=None,
            collected_partitions=int(records),
        )
    return TableSummary(info.name, int(partitions), int(rows), summaries)


def _column(
    name: str,
    type_: str,
    pieces: Sequence[ColumnPiece],
    row_count: int,
    buckets: int,
    mcv_limit: int,
) -> ColumnSummary:
    """One column's summary from its pieces (partitions' records and merged blocks)."""
    parse = value_parser(type_)
    nulls = sum(p.null_count for p in pieces)
    mins = [parse(p.min_value) for p in pieces if p.min_value is not None]
    maxs = [parse(p.max_value) for p in pieces if p.max_value is not None]
    hlls = [p.hll for p in pieces if p.hll is not None]
    klls = [p.kll for p in pieces if p.kll is not None]
    tops = [text for p in pieces if (text := p.top_k_as_text()) is not None]
    top_items = next((p.top_k_items for p in pieces if p.top_k is not None), None)
    non_null = row_count - nulls
    lengths = [p.total_len for p in pieces if p.total_len is not None]
    thetas = [p.theta for p in pieces if p.theta is not None]
    with_theta = sum(p.with_theta for p in pieces)
    merged_top = merge_text_items(tops, top_items) if tops else None
    ndv, ndv_source = _distinct_count(
        hlls,
        thetas,
        sum(p.with_hll for p in pieces),
        with_theta,
        sum(p.with_sketch for p in pieces),
    )
    depth = width = uniform = kll = None
    scale = histogram_scale(type_)
    if klls:
        kll = merge_kll(klls)
        depth, width = equi_depth(kll, buckets, scale), equi_width(kll, buckets, scale)
    low, high = (min(mins), max(maxs)) if mins and maxs else (None, None)
    if not klls and ndv and low is not None and isinstance(low, int | float | Decimal):
        uniform = seed_uniform(float(low), float(high), round(ndv), non_null, scale)  # type: ignore[arg-type]
    every_theta = thetas and with_theta == sum(p.partitions for p in pieces)
    return ColumnSummary(
        name=name,
        type=type_,
        null_count=nulls,
        min=low,
        max=high,
        ndv=ndv,
        ndv_source=ndv_source,
        avg_len=(sum(lengths) / non_null) if lengths and non_null else None,
        max_len=max((p.max_len for p in pieces if p.max_len is not None), default=None),
        mcv=_most_common_values(merged_top, top_items, type_, mcv_limit),
        mcv_error=_mcv_error(merged_top, mcv_limit),
        equi_depth=depth,
        equi_width=width,
        uniform=uniform,
        kll=kll,
        theta=merge_theta(thetas) if every_theta else None,
        partition_distinct=distinct_sum(pieces) if pieces else None,
        absent_partitions=sum(p.absent for p in pieces),
        collected_partitions=sum(p.partitions for p in pieces),
    )


def _distinct_count(
    hlls: list[bytes], thetas: list[bytes], with_hll: int, with_theta: int, sketched: int
) -> tuple[float | None, str | None]:
    """NDV from the Theta union when every partition has a Theta sketch, else from the HLL
    union when every partition has an HLL; partitions sketched differently (the table's
    Theta columns changed between runs) give the larger of the two, a lower bound."""
    if not sketched:
        return None, None
    if with_theta == sketched:
        return merge_theta(thetas).get_estimate(), "theta"
    if with_hll == sketched:
        return merge_hll(hlls).get_estimate(), "hll"
    estimates = [merge_theta(thetas).get_estimate(), merge_hll(hlls).get_estimate()]
    return max(estimates), "mixed"


def _most_common_values(
    merged: Any, items: str | None, type_: str, limit: int = MCV_LIMIT
) -> list[tuple[Any, int]]:
    """The heaviest values of the merged heavy-hitters sketch, as the column's values."""
    if merged is None:
        return []
    decode = _item_decoder(type_, items)
    return [(decode(v), c) for v, c in most_common(merged, limit)]


def _mcv_error(merged: Any, limit: int) -> int:
    """How far the heavy hitters' estimates may be above their true counts."""
    if merged is None:
        return 0
    items = merged.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)[:limit]
    return max((int(estimate - lower) for _, estimate, lower, _ in items), default=0)


def _item_decoder(type_: str, items: str | None) -> Callable[[Any], Any]:
    """Sketch items back to values: dates were tracked as days, timestamps as microseconds,
    decimals as doubles."""
    if items == "longs" and type_ == "date":
        return lambda days: EPOCH.date() + dt.timedelta(days=days)
    if items == "longs" and type_.startswith("timestamp"):
        return lambda micros: EPOCH + dt.timedelta(microseconds=micros)
    if items == "doubles" and type_.startswith("decimal"):
        scale = decimal_scale(type_)
        return lambda value: _decimal_of(value, scale)
    return lambda value: value


def _decimal_of(value: float, scale: int) -> Decimal | float:
    """A decimal column's value tracked as a double, at the column's scale (a decimal(38,18)
    needs more digits than Python's default 28); NaN and infinities stay doubles."""
    if not math.isfinite(value):
        return value
    with localcontext() as context:
        context.prec = 2 * MAX_DECIMAL_DIGITS
        return round(Decimal(repr(value)), scale)


def decimal_scale(type_: str) -> int:
    """The scale s of a decimal(p,s) type (Spark's bare decimal is decimal(10,0))."""
    return int(type_.rstrip(")").split(",")[1]) if "," in type_ else 0


def histogram_scale(type_: str) -> int | None:
    """The grid of a column's histogram edges: steps of 10**-scale, None for real numbers."""
    # as sketched: integers as they are, dates in days, timestamps in microseconds
    if ColumnType.of(type_).integral or type_ == "date" or type_.startswith("timestamp"):
        return 0
    if type_.startswith("decimal"):
        scale = decimal_scale(type_)
        return scale if scale >= 0 else None  # a negative scale: real-valued edges
    return None


def _bound_decoder(type_: str) -> Callable[[float], Any]:
    """Histogram bounds back to the column's values as JSON (KLL holds dates as days since
    the epoch and timestamps as microseconds): dates and timestamps in ISO form, integers
    as integers, decimals as numbers of their scale, doubles as they are."""
    scale = histogram_scale(type_)
    if type_ == "date":
        return lambda days: (EPOCH + dt.timedelta(days=round(days))).date().isoformat()
    if type_.startswith("timestamp"):
        return lambda micros: (EPOCH + dt.timedelta(microseconds=round(micros))).isoformat(sep=" ")
    if scale == 0:
        return lambda value: round(value)
    if scale is not None:
        return lambda value: round(value, scale)
    return lambda value: value


def json_scalar(value: Any) -> Any:
    """A statistic's value as JSON: numbers and strings as they are, dates and timestamps
    in ISO form, decimals, NaN, infinities and anything else as text (no digit lost; JSON
    has no NaN: "NaN", "Infinity", "-Infinity" as Spark prints them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class PartitionRows:
    """The collected row count of one selected partition, with its key values."""

    values: tuple[Any, ...]
    rows: int


def partition_rows(
    engine: Engine, table: str, query: PartitionQuery | None = None
) -> list[PartitionRows]:
    """Row counts of the partitions of `table` that `query` selects and that have statistics:
    the exact distribution of the partition keys."""

    def read(conn: Connection) -> list[PartitionRows]:
        info = get_table(conn, table)
        store = info.store()
        parts = store.table
        p = PartitionStats.__table__.c
        selected = (
            select(*store.key_columns, p.row_count)
            .join(parts, parts.c.id == p.partition_id)
            .where(p.table_id == info.id)
        )
        predicate = build_predicate(conn.dialect.name, info, query or PartitionQuery())
        if predicate is not None:
            selected = selected.where(predicate)
        width = len(info.partition_keys)
        return [
            PartitionRows(tuple(row[:width]), int(row[width])) for row in conn.execute(selected)
        ]

    return run_read(engine, read)


def rows_of_selection(selection: Selection) -> list[PartitionRows]:
    """The row counts and key values of a selection read with its keys (no query)."""
    _, values = selection.keys
    return [
        PartitionRows(tuple(v[i] for v in values), int(rows))
        for i, rows in enumerate(selection.row_counts.tolist())
    ]
