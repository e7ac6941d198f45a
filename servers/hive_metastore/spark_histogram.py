"""Spark's equi-height histogram of a column (Statistics.scala's Histogram), built from
statlas's merged KLL sketch as ANALYZE TABLE ... FOR ALL COLUMNS builds it, and its
serialised text (HistogramSerializer: lz4-java's block stream in Base64)."""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from metastore.column_type import ColumnType
from metastore.statistics.summaries import ColumnSummary, decimal_scale
from servers.hive_metastore.lz4_java_stream import lz4_block_stream, read_lz4_block_stream
from servers.hive_metastore.statistics_values import distinct_count, spark_type

DEFAULT_NUM_BINS = 254  # spark.sql.statistics.histogram.numBins (SQLConf)
NUMBERS = ("integral", "fractional", "decimal")  # the numeric type families


@dataclass(frozen=True)
class HistogramBin:
    """One bin of Spark's equi-height histogram (Statistics.scala HistogramBin)."""

    lo: float
    hi: float
    ndv: int


@dataclass(frozen=True)
class EquiHeightHistogram:
    """Spark's `Histogram(height, bins)`: every bin holds `height` rows (Statistics.scala)."""

    height: float
    bins: tuple[HistogramBin, ...]


def spark_histogram(
    column: ColumnSummary, row_count: int, num_bins: int = DEFAULT_NUM_BINS
) -> EquiHeightHistogram | None:
    """Spark's equi-height histogram of a numeric, date or timestamp column from its merged
    KLL sketch, as CommandUtils.rowToColumnStat builds it: endpoints are the quantiles at
    ranks i/numBins (i = 0..numBins, so min and max are the outer ones), each bin holds
    (non-null rows)/numBins rows. Values are Spark's doubles of the internal encoding:
    days for dates, microseconds for timestamps, as KLL holds them. None where Spark keeps
    no histogram (other types, every value NULL, no sketch)."""
    type_ = spark_type(column.type)
    numeric = type_ is not None and ColumnType.of(type_).family in NUMBERS
    if not (numeric or type_ in ("date", "timestamp", "timestamp_ntz")):
        return None  # CommandUtils.supportsHistogram (Spark 4's ANALYZE: timestamp_ntz too)
    non_null = row_count - column.null_count
    sketch = column.kll
    if sketch is None or sketch.is_empty() or non_null <= 0:
        return None
    if num_bins < 1:
        raise ValueError("a histogram needs at least one bin")
    ranks = [i / num_bins for i in range(1, num_bins)]
    inner = list(sketch.get_quantiles(ranks)) if ranks else []
    endpoints = [float(sketch.get_min_value()), *map(float, inner), float(sketch.get_max_value())]
    grid = _grid_scale(str(type_))
    if grid is not None:  # snap to the column's values against floating-point noise
        endpoints = [round(e * 10**grid) / 10**grid for e in endpoints]
    for i in range(1, len(endpoints)):  # quantiles never decrease; keep it so when snapped
        endpoints[i] = max(endpoints[i], endpoints[i - 1])
    height = non_null / num_bins
    ndv = distinct_count(column.ndv if column.ndv is not None else non_null, non_null)
    ndvs = bin_distinct_counts(endpoints, ndv, height, grid)
    bins = tuple(HistogramBin(endpoints[i], endpoints[i + 1], ndvs[i]) for i in range(num_bins))
    return EquiHeightHistogram(height, bins)


def _grid_scale(type_: str) -> int | None:
    """The values of integral, date and timestamp columns are whole numbers (as encoded),
    those of decimal(p,s) multiples of 10**-s; float and double have no grid."""
    if ColumnType.of(type_).family in ("integral", "date", "timestamp"):
        return 0
    if type_.startswith("decimal"):
        scale = decimal_scale(type_)
        return scale if scale >= 0 else None
    return None


def bin_distinct_counts(
    endpoints: Sequence[float], ndv: int, height: float, grid: int | None
) -> list[int]:
    """Each bin's distinct values (Spark counts them with ApproxCountDistinctForIntervals;
    a sketch of the whole column cannot): the column's NDV shared evenly among the bins,
    each capped by what it can hold (its rows, rounded up; for a grid type the grid points
    in (lo, hi], [lo, hi] for the first bin; one value where lo = hi), the surplus of
    capped bins passed on to the others, and at least 1 per bin.

    >>> bin_distinct_counts([0, 0, 0, 10], ndv=8, height=4, grid=0)
    [1, 1, 4]
    """
    count = len(endpoints) - 1
    capacity = []
    for i in range(count):
        lo, hi = endpoints[i], endpoints[i + 1]
        room = float(max(1, math.ceil(height - 1e-9)))
        if lo == hi:
            room = 1.0
        elif grid is not None:
            points = round((hi - lo) * 10**grid) + (1 if i == 0 else 0)
            room = min(room, float(max(1, points)))
        capacity.append(room)
    shares = [0.0] * count
    open_bins = list(range(count))
    left = float(ndv)
    while open_bins and left > 1e-9:  # water-filling: capped bins give their surplus away
        share = left / len(open_bins)
        still_open = []
        for i in open_bins:
            take = min(share, capacity[i] - shares[i])
            shares[i] += take
            left -= take
            if shares[i] < capacity[i] - 1e-9:
                still_open.append(i)
        if len(still_open) == len(open_bins):
            break
        open_bins = still_open
    return [max(1, round(share)) for share in shares]


def serialize_histogram(histogram: EquiHeightHistogram) -> str:
    """HistogramSerializer.serialize (Statistics.scala): through a DataOutputStream (big-
    endian) over an LZ4BlockOutputStream: height, bin count, every lo, every hi, every ndv,
    then -1; Base64 of the stream's bytes."""
    bins = histogram.bins
    n = len(bins)
    payload = struct.pack(
        f">di{n}d{n}d{n}qi",
        histogram.height,
        n,
        *(b.lo for b in bins),
        *(b.hi for b in bins),
        *(b.ndv for b in bins),
        -1,
    )
    return base64.b64encode(lz4_block_stream(payload)).decode("ascii")


def deserialize_histogram(text: str) -> EquiHeightHistogram:
    """HistogramSerializer.deserialize (Statistics.scala): Spark's text or ours."""
    data = read_lz4_block_stream(base64.b64decode(text))
    height, n = struct.unpack_from(">di", data)
    values = struct.unpack_from(f">{n}d{n}d{n}q", data, 12)
    bins = tuple(HistogramBin(values[i], values[n + i], values[2 * n + i]) for i in range(n))
    return EquiHeightHistogram(height, bins)
