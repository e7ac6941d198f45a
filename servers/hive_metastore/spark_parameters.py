"""The table parameters Spark's HiveExternalCatalog writes on ANALYZE TABLE ... COMPUTE
STATISTICS FOR ALL COLUMNS and reads back (`statsFromProperties`): row count, size, and per
column the `CatalogColumnStat` map, with Spark's serialised equi-height histogram
(spark_histogram). Spark's CBO then uses them with no ANALYZE."""

from __future__ import annotations

import math
import re
import struct
from decimal import Decimal
from typing import Any

from metastore.column_type import ColumnType
from metastore.statistics.summaries import ColumnSummary, TableSummary, decimal_scale
from servers.hive_metastore.spark_histogram import (
    DEFAULT_NUM_BINS,
    serialize_histogram,
    spark_histogram,
)
from servers.hive_metastore.statistics_values import (
    as_date,
    as_datetime,
    distinct_count,
    spark_type,
)

STATISTICS_PREFIX = "spark.sql.statistics."  # HiveExternalCatalog.STATISTICS_PREFIX
COL_STATS_PREFIX = STATISTICS_PREFIX + "colStats."  # HiveExternalCatalog
COLUMN_STAT_VERSION = 2  # CatalogColumnStat.VERSION (interface.scala)
# CatalogTable.splitLargeTableProp's threshold in CatalogColumnStat.toMap (interface.scala)
LARGE_PROPERTY_LENGTH = 4000

_STRING_DEFAULT_SIZE = 20  # StringType.defaultSize
_BINARY_DEFAULT_SIZE = 100  # BinaryType.defaultSize


def spark_statistics_parameters(
    summary: TableSummary, total_size: int, num_bins: int = DEFAULT_NUM_BINS
) -> dict[str, str]:
    """The table parameters Spark's HiveExternalCatalog.statsToProperties writes and
    statsFromProperties reads (sql/hive/.../HiveExternalCatalog.scala): totalSize, numRows
    and, per column Spark can describe, CatalogColumnStat.toMap under `colStats.`.

    >>> from metastore.statistics.summaries import TableSummary
    >>> spark_statistics_parameters(TableSummary("t", 1, 10, {}), 2048)
    {'spark.sql.statistics.totalSize': '2048', 'spark.sql.statistics.numRows': '10'}
    """
    parameters = {
        STATISTICS_PREFIX + "totalSize": str(total_size),
        STATISTICS_PREFIX + "numRows": str(summary.row_count),
    }
    for column in summary.columns.values():
        for key, value in spark_column_stat(column, summary.row_count, num_bins).items():
            parameters[COL_STATS_PREFIX + key] = value
    return parameters


def spark_column_stat(
    column: ColumnSummary, row_count: int, num_bins: int = DEFAULT_NUM_BINS
) -> dict[str, str]:
    """CatalogColumnStat.toMap(colName) (interface.scala) of one column, as ANALYZE ... FOR
    ALL COLUMNS fills it (CommandUtils.statExprs / rowToColumnStat); {} for a type Spark
    keeps no column statistics of (nested, void)."""
    type_ = spark_type(column.type)
    if type_ is None:
        return {}
    name = column.name
    non_null = row_count - column.null_count
    stat = {f"{name}.version": str(COLUMN_STAT_VERSION)}
    if column.ndv is not None:
        stat[f"{name}.distinctCount"] = str(distinct_count(column.ndv, non_null))
    stat[f"{name}.nullCount"] = str(column.null_count)
    average, longest = _spark_lengths(type_, column)
    stat[f"{name}.avgLen"], stat[f"{name}.maxLen"] = str(average), str(longest)
    if _has_spark_min_max(type_) and column.min is not None and column.max is not None:
        stat[f"{name}.min"] = spark_external_string(column.min, type_)
        stat[f"{name}.max"] = spark_external_string(column.max, type_)
    histogram = spark_histogram(column, row_count, num_bins)
    if histogram is not None:
        _put_large_property(stat, f"{name}.histogram", serialize_histogram(histogram))
    return stat


def _has_spark_min_max(type_: str) -> bool:
    # CatalogColumnStat.toExternalString: no min/max for string and binary
    return type_ not in ("string", "binary")


def _spark_lengths(type_: str, column: ColumnSummary) -> tuple[int, int]:
    """avgLen, maxLen as CommandUtils.statExprs computes them: the default size for fixed
    widths; for strings and binary ceil(avg(length)) and max(length), the default size
    where every value is NULL."""
    if type_ in ("string", "binary"):
        default = _STRING_DEFAULT_SIZE if type_ == "string" else _BINARY_DEFAULT_SIZE
        average = default if column.avg_len is None else math.ceil(column.avg_len)
        return average, default if column.max_len is None else column.max_len
    if type_.startswith("decimal"):
        # DecimalType.defaultSize: 8 up to Decimal.MAX_LONG_DIGITS (18), else 16
        size = 8 if _decimal_precision(type_) <= 18 else 16
        return size, size
    # ColumnType's width is DataType.defaultSize: what ANALYZE writes as avgLen and maxLen
    # (CommandUtils.statExprs); spark_type admits no other type here
    width = ColumnType.of(type_).width
    assert width is not None
    return width, width


def _decimal_precision(type_: str) -> int:
    match = re.fullmatch(r"decimal\(\s*(\d+)\s*(?:,\s*-?\d+\s*)?\)", type_)
    return int(match.group(1)) if match else 10  # Spark's bare decimal is decimal(10,0)


def spark_external_string(value: Any, type_: str) -> str:
    """CatalogColumnStat.toExternalString (interface.scala): dates as yyyy-MM-dd, timestamps
    as yyyy-MM-dd HH:mm:ss.SSSSSS (UTC for timestamp, wall clock for timestamp_ntz),
    decimals as BigDecimal.toString, booleans true/false, numbers as Java prints them."""
    if type_ == "boolean":
        return "true" if value in (True, "true") else "false"
    if type_ == "date":
        return as_date(value).isoformat()
    if type_ in ("timestamp", "timestamp_ntz"):
        return f"{as_datetime(value):%Y-%m-%d %H:%M:%S.%f}"
    if ColumnType.of(type_).integral:
        return str(int(value))
    if type_ == "float":
        return java_double_string(float(value), single=True)
    if type_ == "double":
        return java_double_string(float(value))
    if type_.startswith("decimal"):
        scale = decimal_scale(type_)
        return f"{Decimal(value).quantize(Decimal(1).scaleb(-scale)):f}"
    raise ValueError(f"Spark keeps no min/max for a column of type {type_}")


def java_double_string(value: float, single: bool = False) -> str:
    """Java's Double.toString (Float.toString with `single`): the shortest digits that read
    back; plain between 1e-3 and 1e7, else d.dddE<n>; NaN and Infinity by name."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    text = _shortest_float32(value) if single else repr(value)
    sign, digits, exponent = Decimal(text).as_tuple()
    mantissa = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + int(exponent)  # the decimal point's position after the digits
    prefix = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{mantissa}"
        whole, fraction = mantissa[:point].ljust(point, "0"), mantissa[point:] or "0"
        return f"{prefix}{whole}.{fraction}"
    return f"{prefix}{mantissa[0]}.{mantissa[1:] or '0'}E{point - 1}"


def _shortest_float32(value: float) -> str:
    """The shortest decimal that reads back as the same single-precision float."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == single:
            return text
    return repr(single)


def _put_large_property(target: dict[str, str], key: str, value: str) -> None:
    """CatalogTable.splitLargeTableProp (interface.scala): a value longer than the threshold
    becomes `<key>.numParts` and `<key>.part.<i>`, read back by readLargeTableProp."""
    if len(value) <= LARGE_PROPERTY_LENGTH:
        target[key] = value
        return
    parts = [
        value[i : i + LARGE_PROPERTY_LENGTH] for i in range(0, len(value), LARGE_PROPERTY_LENGTH)
    ]
    target[f"{key}.numParts"] = str(len(parts))
    for index, part in enumerate(parts):
        target[f"{key}.part.{index}"] = part
