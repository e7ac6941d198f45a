"""The statistics Hive and Trino read from a Hive Metastore: `ColumnStatisticsObj` structs for
the column-statistics calls, their ColumnStatisticsData member following the column's Hive
type, and the basic partition (and table) parameters (`numRows`, `numFiles`, `totalSize`)."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from hive_metastore import ttypes

from metastore.catalog.column_names import fold
from metastore.column_type import ColumnType
from metastore.statistics.summaries import ColumnSummary, TableSummary
from servers.hive_metastore.statistics_values import (
    EPOCH,
    EPOCH_DATE,
    VARCHAR,
    as_date,
    as_datetime,
    distinct_count,
)

_HIVE_DECIMAL = re.compile(r"decimal(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?")


def hive_column_statistics_objects(
    summary: TableSummary, hive_types: Mapping[str, str], timestamps_as_long: bool = False
) -> list[Any]:
    """One hive_metastore ColumnStatisticsObj per column of `hive_types` (name -> Hive type)
    that `summary` has, every required field set; the ColumnStatisticsData member follows
    the Hive type as Hive's ColumnStatisticsObjTranslator / StatObjectConverter do
    (ql/.../stats/ColumnStatisticsObjTranslator.java, standalone-metastore hive_metastore.thrift).
    Types Hive keeps no statistics of (array, map, struct, union) are left out.
    `timestamps_as_long`: timestamp columns as longStats of the same seconds, for clients
    without Hive 4's timestampStats (Trino's ThriftMetastoreUtil.fromMetastoreApiColumnStatistics
    has no branch for it and fails the table's statistics with HIVE_INVALID_METADATA)."""
    objects = []
    for name, hive_type in hive_types.items():
        column = summary.columns.get(name) or _folded_get(summary.columns, name)
        if column is None:
            continue
        data = hive_statistics_data(column, hive_type, summary.row_count, timestamps_as_long)
        if data is not None:
            objects.append(
                ttypes.ColumnStatisticsObj(colName=name, colType=hive_type, statsData=data)
            )
    return objects


def _folded_get(columns: Mapping[str, ColumnSummary], name: str) -> ColumnSummary | None:
    """The summary of the column `name` names ignoring case (clients name columns in lower
    case, the files may not)."""
    return next((c for n, c in columns.items() if fold(n) == fold(name)), None)


def hive_statistics_data(
    column: ColumnSummary, hive_type: str, row_count: int, timestamps_as_long: bool = False
) -> Any | None:
    """The ColumnStatisticsData union of one column for its Hive type (None: no member).
    numDVs is 0 where statlas has no distinct-count sketch (Hive's "unknown")."""
    kind = hive_type.strip().lower()
    nulls = column.null_count
    non_null = max(0, row_count - nulls)
    dvs = 0 if column.ndv is None else distinct_count(column.ndv, non_null)
    low, high = column.min, column.max
    known = low is not None and high is not None
    if ColumnType.of(kind).integral:
        stats = ttypes.LongColumnStatsData(numNulls=nulls, numDVs=dvs)
        if known:
            stats.lowValue, stats.highValue = int(low), int(high)
        return ttypes.ColumnStatisticsData(longStats=stats)
    if kind in ("float", "double", "double precision"):
        stats = ttypes.DoubleColumnStatsData(numNulls=nulls, numDVs=dvs)
        if known:
            stats.lowValue, stats.highValue = float(low), float(high)
        return ttypes.ColumnStatisticsData(doubleStats=stats)
    decimal = _HIVE_DECIMAL.fullmatch(kind)
    if decimal:
        scale = int(decimal.group(2) or 0)  # Hive's bare decimal is decimal(10,0)
        stats = ttypes.DecimalColumnStatsData(numNulls=nulls, numDVs=dvs)
        if known:
            stats.lowValue, stats.highValue = hive_decimal(low, scale), hive_decimal(high, scale)
        return ttypes.ColumnStatisticsData(decimalStats=stats)
    if kind == "date":
        stats = ttypes.DateColumnStatsData(numNulls=nulls, numDVs=dvs)
        if known:
            stats.lowValue = ttypes.Date(daysSinceEpoch=(as_date(low) - EPOCH_DATE).days)
            stats.highValue = ttypes.Date(daysSinceEpoch=(as_date(high) - EPOCH_DATE).days)
        return ttypes.ColumnStatisticsData(dateStats=stats)
    if kind == "timestamp":
        return _hive_timestamp(column, nulls, dvs, timestamps_as_long)
    if kind in ("string",) or VARCHAR.fullmatch(kind):
        string_stats = ttypes.StringColumnStatsData(
            maxColLen=column.max_len or 0,
            avgColLen=float(column.avg_len or 0.0),
            numNulls=nulls,
            numDVs=dvs,
        )
        return ttypes.ColumnStatisticsData(stringStats=string_stats)
    if kind == "binary":
        binary_stats = ttypes.BinaryColumnStatsData(
            maxColLen=column.max_len or 0, avgColLen=float(column.avg_len or 0.0), numNulls=nulls
        )
        return ttypes.ColumnStatisticsData(binaryStats=binary_stats)
    if kind == "boolean":
        trues, falses = boolean_counts(column, non_null)
        boolean_stats = ttypes.BooleanColumnStatsData(
            numTrues=trues, numFalses=falses, numNulls=nulls
        )
        return ttypes.ColumnStatisticsData(booleanStats=boolean_stats)
    return None


def _hive_timestamp(column: ColumnSummary, nulls: int, dvs: int, as_long: bool) -> Any:
    """Hive 4's TimestampColumnStatsData (seconds since the epoch of the wall clock in UTC,
    TimestampColumnStatsData in hive_metastore.thrift); the low value is floored and the high
    value rounded up to whole seconds so that the range holds every value (Hive truncates
    both). `as_long`, or an IDL without it, gives longStats of the same seconds."""
    low = high = None
    if column.min is not None and column.max is not None:
        low = math.floor(_epoch_seconds(as_datetime(column.min)))
        high = math.ceil(_epoch_seconds(as_datetime(column.max)))
    if as_long or not hasattr(ttypes, "TimestampColumnStatsData"):
        longs = ttypes.LongColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=dvs)
        return ttypes.ColumnStatisticsData(longStats=longs)
    stats = ttypes.TimestampColumnStatsData(numNulls=nulls, numDVs=dvs)
    if low is not None:
        stats.lowValue = ttypes.Timestamp(secondsSinceEpoch=low)
        stats.highValue = ttypes.Timestamp(secondsSinceEpoch=high)
    return ttypes.ColumnStatisticsData(timestampStats=stats)


def _epoch_seconds(moment: dt.datetime) -> float:
    return (moment - EPOCH).total_seconds()


def hive_decimal(value: Any, scale: int) -> Any:
    """hive_metastore Decimal: the unscaled value at `scale` as Java's
    BigInteger.toByteArray (big-endian two's complement, fewest bytes), and the scale."""
    unscaled = int(Decimal(value).scaleb(scale).to_integral_value())
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    data = unscaled.to_bytes(bits // 8 + 1, "big", signed=True)
    return ttypes.Decimal(unscaled=data, scale=scale)


def decimal_from_hive(value: Any) -> Decimal:
    """The inverse of hive_decimal."""
    return Decimal(int.from_bytes(value.unscaled, "big", signed=True)).scaleb(-value.scale)


def boolean_counts(column: ColumnSummary, non_null: int) -> tuple[int, int]:
    """numTrues, numFalses of a boolean column. statlas collects no true count; it comes
    from the merged heavy hitters (exact while both values are tracked: two values never
    overflow the sketch), else from min/max (one value only), else the non-null rows are
    split evenly (an estimate, stated here). The two always add up to the non-null rows."""
    if non_null <= 0:
        return 0, 0
    counts = {_as_bool(value): count for value, count in column.mcv}
    if True in counts:
        trues = counts[True]
    elif False in counts:
        trues = non_null - counts[False]
    elif column.min is not None and _as_bool(column.min) is True:
        trues = non_null
    elif column.max is not None and _as_bool(column.max) is False:
        trues = 0
    else:
        trues = non_null // 2
    trues = max(0, min(non_null, trues))
    return trues, non_null - trues


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return True if text in ("true", "1") else False if text in ("false", "0") else None


# --- partition parameters --------------------------------------------------------------

BASIC_STATS_ACCURATE = json.dumps({"BASIC_STATS": "true"}, separators=(",", ":"))


def partition_basic_parameters(
    row_count: int | None,
    file_count: int,
    total_size: int,
    raw_data_size: int | None = None,
    accurate: bool = False,
) -> dict[str, str]:
    """The basic statistics Hive and Trino read from partition (and table) parameters
    (StatsSetupConst.java: numRows, numFiles, totalSize, rawDataSize, COLUMN_STATS_ACCURATE;
    Trino's MetastoreUtil/ThriftMetastoreUtil.getHiveBasicStatistics): numRows and
    rawDataSize only where known; COLUMN_STATS_ACCURATE = {"BASIC_STATS":"true"} only when
    the caller says the row count was taken from the partition's current files (Hive
    answers count(*) from it), never for column statistics.

    >>> partition_basic_parameters(10, 1, 2048)
    {'numFiles': '1', 'totalSize': '2048', 'numRows': '10'}
    """
    parameters = {"numFiles": str(file_count), "totalSize": str(total_size)}
    if row_count is not None:
        parameters["numRows"] = str(row_count)
    if raw_data_size is not None:
        parameters["rawDataSize"] = str(raw_data_size)
    if accurate and row_count is not None:
        parameters["COLUMN_STATS_ACCURATE"] = BASIC_STATS_ACCURATE
    return parameters
