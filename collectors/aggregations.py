"""Which statistics each column gets, as Spark aggregate expressions, and how a result row
turns back into per-column records. All of them run in ONE aggregation (no Python UDF):

  every column      row count, non-null count (-> nulls)
  orderable         min, max  (numbers, decimals, dates, timestamps, strings, booleans)
  string, binary    total and max length (-> average and max length)
  scalar columns    a distinct-count sketch: Theta (lgK 12) for join-key candidates, HLL
                    (lgK 12) for the others; heavy hitters (approx_top_k)
  numeric/temporal  KLL sketch (k 200) of the value as a double (dates as days, timestamps
                    as microseconds since the epoch): the histograms' source
  integral, string  the join-key candidates by default: their Theta sketches give join-key
                    overlap AND the NDV (exact up to 4,096 values, then as accurate as the
                    HLL); the table's `theta_columns` property, when set, names them instead
  nested            counts and nulls only
  the row           a Bernoulli sample of the partition's rows at the run's rate, as a list
                    of structs of the sampled columns (metastore.statistics.samples)

Sketches are fed the cheapest faithful encoding of a value, never its text: integers and
strings as they are, dates as days, timestamps as microseconds, other types through
xxhash64 (for HLL only, where just distinctness matters). Heavy hitters of integral and
temporal columns are tracked as longs, of fractional and decimal columns as doubles, of
the rest as strings: `TopKItems` says which, so the sketch can be decoded.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from collectors.forced_keys import ForcedKeys
from metastore.column_type import ColumnType
from metastore.statistics.column_pieces import FIGURES, ColumnFigures
from metastore.statistics.histograms import HLL_LG_K, KLL_K, THETA_LG_K, stored_top_k
from metastore.statistics.samples import (
    FORCED,
    encode_table,
    sample_kind,
    sample_of_rows,
    unpack_sample,
)
from metastore.types import format_value

TOP_K_ITEMS = 100
SAMPLE_SEED = 20261122
DRAW = "__statlas_draw"


class TopKItems:
    """How a heavy-hitters sketch's items are serialised (DataSketches ArrayOf*SerDe)."""

    LONGS = "longs"
    DOUBLES = "doubles"
    STRINGS = "strings"


@dataclass(frozen=True)
class ColumnPlan:
    """What is collected for one column (see the module docstring)."""

    name: str
    type: str
    alias: str
    theta: bool | None = None  # None: the default rule (integral and string columns)
    path: tuple[str, ...] = ()  # the field path read (a struct's leaf); () for the column
    # a second Theta sketch of the values as Iceberg serialises them, for an Iceberg table's
    # statistics file (collectors.iceberg.publish; the one-pass scan's only)
    iceberg: bool = False

    @property
    def source(self) -> tuple[str, ...]:
        """The column, or the struct fields down to the leaf, the value is read from."""
        return self.path or (self.name,)

    @property
    def nested(self) -> bool:
        return self.type.startswith(("array<", "map<", "struct<"))

    @property
    def numeric(self) -> bool:
        return ColumnType.of(self.type).family in ("integral", "fractional", "decimal")

    @property
    def temporal(self) -> bool:
        return self.type in ("date", "timestamp", "timestamp_ntz")

    @property
    def orderable(self) -> bool:
        return not self.nested and self.type not in ("binary", "void")

    @property
    def has_length(self) -> bool:
        return self.type in ("string", "binary")

    @property
    def has_kll(self) -> bool:
        return self.numeric or self.temporal

    @property
    def has_theta(self) -> bool:
        if self.theta is not None:
            return self.theta and self.has_sketches
        return ColumnType.of(self.type).integral or self.type == "string"

    @property
    def top_k_items(self) -> str:
        if ColumnType.of(self.type).integral or self.temporal:
            return TopKItems.LONGS
        if ColumnType.of(self.type).family in ("fractional", "decimal"):
            return TopKItems.DOUBLES
        return TopKItems.STRINGS

    @property
    def has_sketches(self) -> bool:
        return not self.nested and self.type != "void"


def plan_columns(
    columns: Sequence[tuple[str, str] | tuple[str, str, tuple[str, ...]]],
    theta_columns: list[str] | None = None,
) -> list[ColumnPlan]:
    """One plan per column, (name, type) or (name, type, field path); `theta_columns`,
    when given, are the only ones with Theta (named as spelled)."""
    wanted = None if theta_columns is None else set(theta_columns)
    plans = []
    for i, (name, type_, *path) in enumerate(columns):
        theta = None if wanted is None else name in wanted
        plans.append(ColumnPlan(name, type_, f"c{i}", theta, tuple(path[0]) if path else ()))
    return plans


def quoted(path: Sequence[str]) -> str:
    """A column (or a struct's field path) as Spark SQL names it, whatever its characters."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in path)


def project(frame: Any, keys: Sequence[str], plans: Sequence[ColumnPlan]) -> Any:
    """The frame as the scans read it: the partition keys under their names, then each
    planned column (or struct leaf) under its alias `c<i>`, so that no column's name (any
    case, spaces, dots, a path into a struct) needs resolving again."""
    from pyspark.sql import functions as F

    return frame.select(
        *[F.col(quoted([k])).alias(k) for k in keys],
        *[F.col(quoted(p.source)).alias(p.alias) for p in plans],
    )


def aggregate(
    frame: Any,
    keys: Sequence[str],
    plans: list[ColumnPlan],
    sample_rate: float,
    theta_lg_k: int = THETA_LG_K,
    kll_k: int = KLL_K,
    forced: Sequence[ForcedKeys] = (),
) -> Any:
    """Spark's aggregation of the frame's columns grouped by `keys` (the scan without the
    one-pass jar): one row per partition, shaped as `aggregate_expressions` says."""
    drawn = with_draw(project(frame, keys, plans), sample_rate)
    grouped = drawn.groupBy(*[quoted([k]) for k in keys]) if keys else drawn.groupBy()
    return grouped.agg(*aggregate_expressions(plans, sample_rate, theta_lg_k, kll_k, forced))


def sampled(plans: list[ColumnPlan]) -> list[ColumnPlan]:
    """The columns a row sample keeps (numbers, temporal values, booleans, strings)."""
    return [plan for plan in plans if sample_kind(plan.type) is not None]


def forced_columns(
    plans: list[ColumnPlan], forced: Sequence[ForcedKeys]
) -> list[tuple[int, tuple[int, ...]]]:
    """The indexes among `plans` of the integral columns whose `forced` keys put a row in the
    sample, each with its keys (none where a column is not scanned or has no keys)."""
    found = []
    for keys in forced:
        for index, plan in enumerate(plans):
            if keys.values and plan.source == (keys.column,) and ColumnType.of(plan.type).integral:
                found.append((index, keys.values))
                break
    return found


def forcing(plans: list[ColumnPlan], sample_rate: float, forced: Sequence[ForcedKeys]) -> bool:
    """Whether a scan's sample marks its rows as forced in or drawn (FORCED): a sample
    drawn at a rate below one, with forced keys of a scanned column."""
    return 0 < sample_rate < 1 and bool(sampled(plans)) and bool(forced_columns(plans, forced))


def with_draw(frame: Any, sample_rate: float) -> Any:
    """The frame with each row's uniform draw for the sample (Spark allows no random
    expression inside an aggregate, so it is drawn in the projection below it)."""
    from pyspark.sql import functions as F

    if 0 < sample_rate < 1:
        return frame.withColumn(DRAW, F.rand(SAMPLE_SEED))
    return frame


def aggregate_expressions(
    plans: list[ColumnPlan],
    sample_rate: float = 0.0,
    theta_lg_k: int = THETA_LG_K,
    kll_k: int = KLL_K,
    forced: Sequence[ForcedKeys] = (),
) -> list[Any]:
    """The Spark columns of the one aggregation over a projected frame (`project`),
    aliased `c<i>__<statistic>`, and with a positive `sample_rate` the partition's sampled
    rows as `__sample` (a row of a `forced` key whatever its draw, marked FORCED); each
    partition's Theta sketches are of `theta_lg_k`, its KLL sketches of `kll_k`."""
    from pyspark.sql import functions as F

    exprs = [F.count(F.lit(1)).alias("__rows")]
    kept = sampled(plans)
    if sample_rate > 0 and kept:
        fields = [F.col(p.alias) for p in kept]
        chosen = F.col(DRAW) < sample_rate
        if forcing(plans, sample_rate, forced):
            hits = [
                F.coalesce(F.col(plans[index].alias).isin(list(values)), F.lit(False))
                for index, values in forced_columns(plans, forced)
            ]
            hit = functools.reduce(lambda a, b: a | b, hits)
            fields.append(hit.cast("double").alias(FORCED))
            chosen = chosen | hit
        row = F.struct(*fields)
        drawn = row if sample_rate >= 1 else F.when(chosen, row)
        exprs.append(F.collect_list(drawn).alias("__sample"))  # NULLs (not drawn) skipped
    for plan in plans:
        col = F.col(plan.alias)
        a = plan.alias
        exprs.append(F.count(col).alias(f"{a}__nn"))
        if plan.orderable:
            exprs += [F.min(col).alias(f"{a}__min"), F.max(col).alias(f"{a}__max")]
        if plan.has_length:
            exprs += [
                F.sum(F.length(col)).alias(f"{a}__len"),
                F.max(F.length(col)).alias(f"{a}__maxlen"),
            ]
        if not plan.has_sketches:
            continue
        hashable = _hashable(col, plan)
        if plan.has_theta:  # also the column's distinct count: no HLL of the same values
            exprs.append(F.theta_sketch_agg(hashable, theta_lg_k).alias(f"{a}__theta"))
        else:
            exprs.append(F.hll_sketch_agg(hashable, HLL_LG_K).alias(f"{a}__hll"))
        if plan.has_kll:
            exprs.append(F.kll_sketch_agg_double(_as_double(col, plan), kll_k).alias(f"{a}__kll"))
        exprs.append(
            F.expr(f"approx_top_k_accumulate({_top_k_item(plan)}, {TOP_K_ITEMS})")
            .getField("sketch")
            .alias(f"{a}__topk")
        )
    return exprs


def _hashable(col: Any, plan: ColumnPlan) -> Any:
    """What HLL and Theta sketches hash: the value itself where the sketch takes it (int,
    bigint, string, binary), else an integer encoding that keeps values distinct."""
    from pyspark.sql import functions as F

    if plan.type in ("int", "bigint", "string", "binary"):
        return col
    if plan.type in ("tinyint", "smallint", "boolean"):
        return col.cast("int")
    if plan.type == "date":
        return F.unix_date(col)
    if plan.temporal:
        return F.unix_micros(col.cast("timestamp"))
    return F.when(col.isNotNull(), F.xxhash64(col))


def _top_k_item(plan: ColumnPlan) -> str:
    """The SQL of the value the heavy-hitters sketch tracks (see `ColumnPlan.top_k_items`)."""
    name = plan.alias
    if plan.type == "date":
        return f"CAST(unix_date({name}) AS BIGINT)"
    if plan.temporal:
        return f"unix_micros(CAST({name} AS TIMESTAMP))"
    if plan.top_k_items == TopKItems.LONGS:
        return f"CAST({name} AS BIGINT)"
    if plan.top_k_items == TopKItems.DOUBLES:
        return f"CAST({name} AS DOUBLE)"
    return name if plan.type == "string" else f"CAST({name} AS STRING)"


def _as_double(col: Any, plan: ColumnPlan) -> Any:
    from pyspark.sql import functions as F

    if plan.type == "date":
        return F.unix_date(col).cast("double")
    if plan.temporal:
        return F.unix_micros(col.cast("timestamp")).cast("double")
    return col.cast("double")


@dataclass(frozen=True)
class ColumnRecord(ColumnFigures):
    """One partition's figures of a column as collected: a column_stats record."""

    name: str
    absent: bool = False  # the partition's files lack the column (all its rows NULL)
    iceberg_theta: bytes | None = None  # (ColumnPlan.iceberg)

    def as_absent(self, rows: int) -> ColumnRecord:
        """The record of a column the partition's files do not have: its rows NULL."""
        lacking: dict[str, Any] = {**dict.fromkeys(FIGURES), "null_count": rows}
        return ColumnRecord(**lacking, name=self.name, absent=True)


def column_records(values: Mapping[str, Any], plans: list[ColumnPlan]) -> list[ColumnRecord]:
    """Per-column records of one result row (one partition), by column name."""
    rows = int(values["__rows"])
    records = []
    for plan in plans:
        a = plan.alias
        top_k = stored_top_k(_bytes(values.get(f"{a}__topk")))
        records.append(
            ColumnRecord(
                name=plan.name,
                null_count=rows - int(values[f"{a}__nn"]),
                min_value=format_value(values.get(f"{a}__min")),
                max_value=format_value(values.get(f"{a}__max")),
                total_len=_int_or_none(values.get(f"{a}__len")),
                max_len=_int_or_none(values.get(f"{a}__maxlen")),
                hll=_bytes(values.get(f"{a}__hll")),
                kll=_bytes(values.get(f"{a}__kll")),
                theta=_bytes(values.get(f"{a}__theta")),
                top_k=top_k,
                # the kind of the heavy hitters' items, kept with them (none, where they
                # tell nothing: collectors/jvm LiveState.informative)
                top_k_items=plan.top_k_items if top_k is not None else None,
                iceberg_theta=_bytes(values.get(f"{a}__iceberg")),
            )
        )
    return records


def sample_record(
    values: Mapping[str, Any], plans: list[ColumnPlan], marked: bool = False, encode: bool = True
) -> tuple[int, bytes | None, pa.Table] | None:
    """The partition's sampled rows (of one result row, by column name) as (count, stored
    bytes, the table they encode); None when none were drawn. The one-pass scan packs them
    by column (`__sample_columns`), Spark's aggregation gives them as rows (`__sample`);
    `marked`: each row says whether it was forced in (FORCED, `forcing`); not `encode`:
    the bytes None (a sample its block is to hold is pooled from the tables)."""
    kept = sampled(plans)
    columns = [(p.name, p.type) for p in kept] + ([(FORCED, "double")] if marked else [])
    aliases = [p.alias for p in kept] + ([FORCED] if marked else [])
    packed = values.get("__sample_columns")
    if packed is not None:
        table = unpack_sample(bytes(packed), columns)
    elif values.get("__sample"):
        rows = ([r[a] for a in aliases] for r in values["__sample"])
        table = sample_of_rows(columns, rows)
    else:
        return None
    if not table.num_rows:
        return None
    return table.num_rows, encode_table(table) if encode else None, table


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)
