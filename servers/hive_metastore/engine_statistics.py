"""statlas's statistics in the forms engines read from a Hive Metastore.

- Spark: the table parameters Spark's HiveExternalCatalog writes on ANALYZE TABLE ...
  COMPUTE STATISTICS FOR ALL COLUMNS and reads back (`statsFromProperties`): row count,
  size, and per column the `CatalogColumnStat` map, with Spark's serialised equi-height
  histogram built from the merged KLL sketch. Spark's CBO then uses them with no ANALYZE.
- Hive and Trino: `ColumnStatisticsObj` structs for the column-statistics calls, their JSON
  form (what an engine writes is stored as given and served back unchanged), and the basic
  partition parameters (`numRows`, `numFiles`, `totalSize`).

Pure functions over a `TableSummary`, plus readers that fetch what they need from the
metastore database. Each format detail names the source it follows.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from hive_metastore import ttypes
from sqlalchemy import Connection, Engine, func, select
from thrift.Thrift import TType

from metastore.catalog import get_table
from metastore.column_names import fold
from metastore.column_type import ColumnType
from metastore.engine import run_read
from metastore.lookup import PartitionQuery, build_predicate
from metastore.models import PartitionStats
from metastore.statistics import ColumnSummary, TableSummary, decimal_scale, table_statistics

# --- Spark ------------------------------------------------------------------------------

STATISTICS_PREFIX = "spark.sql.statistics."  # HiveExternalCatalog.STATISTICS_PREFIX
COL_STATS_PREFIX = STATISTICS_PREFIX + "colStats."  # HiveExternalCatalog
COLUMN_STAT_VERSION = 2  # CatalogColumnStat.VERSION (interface.scala)
DEFAULT_NUM_BINS = 254  # spark.sql.statistics.histogram.numBins (SQLConf)
# CatalogTable.splitLargeTableProp's threshold in CatalogColumnStat.toMap (interface.scala)
LARGE_PROPERTY_LENGTH = 4000
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = EPOCH.date()

NUMBERS = ("integral", "fractional", "decimal")  # the numeric type families
_STRING_DEFAULT_SIZE = 20  # StringType.defaultSize
_BINARY_DEFAULT_SIZE = 100  # BinaryType.defaultSize
_VARCHAR = re.compile(r"(var)?char\(\s*\d+\s*\)")


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


def spark_statistics_parameters(
    summary: TableSummary, total_size: int, num_bins: int = DEFAULT_NUM_BINS
) -> dict[str, str]:
    """The table parameters Spark's HiveExternalCatalog.statsToProperties writes and
    statsFromProperties reads (sql/hive/.../HiveExternalCatalog.scala): totalSize, numRows
    and, per column Spark can describe, CatalogColumnStat.toMap under `colStats.`.

    >>> from metastore.statistics import TableSummary
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
    type_ = _spark_type(column.type)
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


def distinct_count(ndv: float, non_null: int) -> int:
    """A sketch's NDV estimate as a count: rounded, at most the non-null rows, at least 1
    where there is a value (the estimate can stray on either side of the truth)."""
    if non_null <= 0:
        return 0
    return max(1, min(round(ndv), non_null))


def _spark_type(type_: str) -> str | None:
    """The Spark type name statistics are kept for (char/varchar read as string)."""
    if _VARCHAR.fullmatch(type_):
        return "string"
    if (
        ColumnType.of(type_).width is not None
        or type_ in ("string", "binary")
        or type_.startswith("decimal")
    ):
        return type_
    return None


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
    # (CommandUtils.statExprs); _spark_type admits no other type here
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
        return _as_date(value).isoformat()
    if type_ in ("timestamp", "timestamp_ntz"):
        return f"{_as_datetime(value):%Y-%m-%d %H:%M:%S.%f}"
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


def _as_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def _as_datetime(value: Any) -> dt.datetime:
    """A timestamp as a naive datetime (statlas's collector runs Spark in UTC: a naive
    timestamp is UTC; an aware one is converted to UTC)."""
    if isinstance(value, dt.datetime):
        moment = value
    else:
        moment = dt.datetime.fromisoformat(str(value))
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment


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


# --- Spark's equi-height histogram ----------------------------------------------------


def spark_histogram(
    column: ColumnSummary, row_count: int, num_bins: int = DEFAULT_NUM_BINS
) -> EquiHeightHistogram | None:
    """Spark's equi-height histogram of a numeric, date or timestamp column from its merged
    KLL sketch, as CommandUtils.rowToColumnStat builds it: endpoints are the quantiles at
    ranks i/numBins (i = 0..numBins, so min and max are the outer ones), each bin holds
    (non-null rows)/numBins rows. Values are Spark's doubles of the internal encoding:
    days for dates, microseconds for timestamps, as KLL holds them. None where Spark keeps
    no histogram (other types, every value NULL, no sketch)."""
    type_ = _spark_type(column.type)
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


# --- lz4-java's block stream (net.jpountz.lz4.LZ4BlockOutputStream) ------------------

LZ4_MAGIC = b"LZ4Block"  # LZ4BlockOutputStream.MAGIC
LZ4_METHOD_RAW = 0x10  # COMPRESSION_METHOD_RAW
LZ4_METHOD_LZ4 = 0x20  # COMPRESSION_METHOD_LZ4
LZ4_COMPRESSION_LEVEL_BASE = 10  # COMPRESSION_LEVEL_BASE
LZ4_BLOCK_SIZE = 1 << 16  # the stream's default block size (64 KB)
LZ4_CHECKSUM_SEED = 0x9747B28C  # LZ4BlockOutputStream.DEFAULT_SEED
LZ4_CHECKSUM_MASK = 0xFFFFFFF  # StreamingXXHash32.asChecksum().getValue() & 0xFFFFFFFL
_LZ4_HEADER = struct.Struct("<8sBiii")  # magic, token, compressed, original, checksum


def lz4_block_stream(data: bytes, block_size: int = LZ4_BLOCK_SIZE, compress: bool = True) -> bytes:
    """`data` framed as lz4-java's LZ4BlockOutputStream writes it (LZ4BlockOutputStream.java):
    per block the magic, a token (method | compression level), compressed and original
    lengths and the XXHash32 checksum of the original bytes (little-endian), then the block,
    LZ4-compressed (lz4_compress_block) or stored RAW where that is no smaller, as lz4-java
    does; finish() adds an empty block as the end mark."""
    level = max(0, (block_size - 1).bit_length() - LZ4_COMPRESSION_LEVEL_BASE)
    out = bytearray()
    for start in range(0, len(data), block_size):
        block = data[start : start + block_size]
        check = xxhash32(block, LZ4_CHECKSUM_SEED) & LZ4_CHECKSUM_MASK
        packed = lz4_compress_block(block) if compress else block
        method = LZ4_METHOD_LZ4
        if len(packed) >= len(block):
            packed, method = block, LZ4_METHOD_RAW
        out += _LZ4_HEADER.pack(LZ4_MAGIC, method | level, len(packed), len(block), check)
        out += packed
    out += _LZ4_HEADER.pack(LZ4_MAGIC, LZ4_METHOD_RAW | level, 0, 0, 0)  # the end mark
    return bytes(out)


def read_lz4_block_stream(stream: bytes) -> bytes:
    """The bytes of an LZ4 block stream (LZ4BlockInputStream.java), RAW or LZ4 blocks,
    checksums verified."""
    out = bytearray()
    offset = 0
    while offset < len(stream):
        magic, token, compressed, original, check = _LZ4_HEADER.unpack_from(stream, offset)
        offset += _LZ4_HEADER.size
        if magic != LZ4_MAGIC:
            raise ValueError("not an LZ4 block stream (bad magic)")
        if original == 0 and compressed == 0:
            break
        packed = stream[offset : offset + compressed]
        offset += compressed
        method = token & 0xF0
        if method == LZ4_METHOD_RAW and compressed == original:
            block = packed
        elif method == LZ4_METHOD_LZ4:
            block = lz4_decompress_block(packed, original)
        else:
            raise ValueError(f"an LZ4 block of unknown method {method:#x}")
        if xxhash32(block, LZ4_CHECKSUM_SEED) & LZ4_CHECKSUM_MASK != check:
            raise ValueError("LZ4 block checksum mismatch")
        out += block
    return bytes(out)


_LZ4_MIN_MATCH = 4
_LZ4_LAST_LITERALS = 5  # the last 5 bytes of a block are literals
_LZ4_MATCH_FROM_END = 12  # no match starts within the last 12 bytes
_LZ4_MAX_OFFSET = 0xFFFF


def lz4_compress_block(src: bytes) -> bytes:
    """An LZ4 block (lz4/doc/lz4_Block_format.md): sequences of a token (literal length,
    match length - 4), literals, a 2-byte offset and length extensions. Greedy matching
    through a table of the last position of each 4-byte string; the format's end rules
    kept (last 5 bytes literals, no match within the last 12)."""
    n = len(src)
    out = bytearray()
    table: dict[bytes, int] = {}
    anchor = i = 0
    while i + _LZ4_MATCH_FROM_END <= n:
        key = src[i : i + _LZ4_MIN_MATCH]
        candidate = table.get(key)
        table[key] = i
        if candidate is None or i - candidate > _LZ4_MAX_OFFSET:
            i += 1
            continue
        length = _LZ4_MIN_MATCH
        longest = n - _LZ4_LAST_LITERALS - i
        while length < longest and src[candidate + length] == src[i + length]:
            length += 1
        _lz4_sequence(out, src[anchor:i], i - candidate, length)
        i += length
        anchor = i
    _lz4_sequence(out, src[anchor:], 0, 0)
    return bytes(out)


def _lz4_sequence(out: bytearray, literals: bytes, offset: int, length: int) -> None:
    match = length - _LZ4_MIN_MATCH if length else 0
    out.append((min(len(literals), 15) << 4) | min(match, 15))
    if len(literals) >= 15:
        _lz4_length(out, len(literals) - 15)
    out += literals
    if length:  # the last sequence has literals only
        out += offset.to_bytes(2, "little")
        if match >= 15:
            _lz4_length(out, match - 15)


def _lz4_length(out: bytearray, rest: int) -> None:
    while rest >= 255:
        out.append(255)
        rest -= 255
    out.append(rest)


def lz4_decompress_block(src: bytes, size: int) -> bytes:
    """The `size` bytes an LZ4 block encodes (lz4/doc/lz4_Block_format.md)."""
    out = bytearray()
    i = 0
    while i < len(src):
        token = src[i]
        i += 1
        literal = token >> 4
        if literal == 15:
            while True:
                literal += src[i]
                i += 1
                if src[i - 1] != 255:
                    break
        out += src[i : i + literal]
        i += literal
        if i >= len(src):
            break
        offset = src[i] | src[i + 1] << 8
        i += 2
        length = (token & 15) + _LZ4_MIN_MATCH
        if token & 15 == 15:
            while True:
                length += src[i]
                i += 1
                if src[i - 1] != 255:
                    break
        if offset == 0 or offset > len(out):
            raise ValueError("a corrupt LZ4 block (bad offset)")
        start = len(out) - offset
        for k in range(length):  # byte by byte: a match may overlap what it copies
            out.append(out[start + k])
    if len(out) != size:
        raise ValueError(f"a corrupt LZ4 block ({len(out)} bytes, {size} expected)")
    return bytes(out)


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxhash32(data: bytes, seed: int = 0) -> int:
    """XXH32 (Cyan4973/xxHash, doc/xxhash_spec.md; lz4-java's XXHash32), unsigned.

    >>> hex(xxhash32(b"")), hex(xxhash32(b"abc"))
    ('0x2cc5d05', '0x32d153ff')
    """
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while i <= n - 16:
            for lane in range(4):
                word = int.from_bytes(data[i : i + 4], "little")
                v[lane] = (_rotl((v[lane] + word * _P2) & _M32, 13) * _P1) & _M32
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while i + 4 <= n:
        word = int.from_bytes(data[i : i + 4], "little")
        h = (_rotl((h + word * _P3) & _M32, 17) * _P4) & _M32
        i += 4
    while i < n:
        h = (_rotl((h + data[i] * _P5) & _M32, 11) * _P1) & _M32
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


# --- Hive / Trino column statistics ----------------------------------------------------

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
            stats.lowValue = ttypes.Date(daysSinceEpoch=(_as_date(low) - EPOCH_DATE).days)
            stats.highValue = ttypes.Date(daysSinceEpoch=(_as_date(high) - EPOCH_DATE).days)
        return ttypes.ColumnStatisticsData(dateStats=stats)
    if kind == "timestamp":
        return _hive_timestamp(column, nulls, dvs, timestamps_as_long)
    if kind in ("string",) or _VARCHAR.fullmatch(kind):
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
        low = math.floor(_epoch_seconds(_as_datetime(column.min)))
        high = math.ceil(_epoch_seconds(_as_datetime(column.max)))
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


# --- JSON form of written statistics ---------------------------------------------------


def column_statistics_to_json(obj: Any) -> dict[str, Any]:
    """A ColumnStatisticsObj (as an engine wrote it, e.g. Trino's
    update_table_column_statistics) as JSON, field by field after its Thrift spec: binary
    fields (bitVectors, Decimal.unscaled) in Base64, unset fields left out."""
    return _struct_to_json(obj)


def column_statistics_from_json(data: Mapping[str, Any]) -> Any:
    """The ColumnStatisticsObj that column_statistics_to_json gave `data` for."""
    result = _struct_from_json(ttypes.ColumnStatisticsObj, data)
    result.validate()
    return result


def _struct_to_json(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in obj.thrift_spec:
        if spec is None:
            continue
        value = getattr(obj, spec[2])
        if value is not None:
            out[spec[2]] = _value_to_json(spec[1], spec[3], value)
    return out


def _value_to_json(ttype: int, arg: Any, value: Any) -> Any:
    if ttype == TType.STRUCT:
        return _struct_to_json(value)
    if ttype == TType.STRING and arg == "BINARY":
        return base64.b64encode(value).decode("ascii")
    if ttype in (TType.LIST, TType.SET):
        return [_value_to_json(arg[0], arg[1], v) for v in value]
    if ttype == TType.DOUBLE and not math.isfinite(value):
        return repr(value)  # JSON has no NaN or infinities: kept as text, read back
    return value


def _struct_from_json(cls: Any, data: Mapping[str, Any]) -> Any:
    fields = {}
    for spec in cls.thrift_spec:
        if spec is None or spec[2] not in data:
            continue
        fields[spec[2]] = _value_from_json(spec[1], spec[3], data[spec[2]])
    unknown = set(data) - set(fields)
    if unknown:
        raise ValueError(f"unknown fields of {cls.__name__}: {', '.join(sorted(unknown))}")
    return cls(**fields)


def _value_from_json(ttype: int, arg: Any, value: Any) -> Any:
    if ttype == TType.STRUCT:
        return _struct_from_json(arg[0], value)
    if ttype == TType.STRING and arg == "BINARY":
        return base64.b64decode(value)
    if ttype in (TType.LIST, TType.SET):
        return [_value_from_json(arg[0], arg[1], v) for v in value]
    if ttype == TType.DOUBLE:
        return float(value)
    if ttype in (TType.I08, TType.I16, TType.I32, TType.I64):
        return int(value)
    return value


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


# --- readers ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionSize:
    """One partition's files now, and its collected row count (None: never collected);
    `current` when the statistics were taken at the partition's present fingerprint."""

    name: str
    file_count: int
    total_bytes: int
    row_count: int | None
    current: bool


def partition_sizes(
    engine: Engine, table: str, query: PartitionQuery | None = None
) -> list[PartitionSize]:
    """The selected partitions' file counts and bytes (the partitions table) with their
    collected row counts (partition_stats), in name order."""

    def read(conn: Connection) -> list[PartitionSize]:
        info = get_table(conn, table)
        parts = info.store().table
        stats = PartitionStats.__table__
        p = stats.c
        selected = (
            select(
                parts.c.name,
                parts.c.file_count,
                parts.c.total_bytes,
                parts.c.modified_ns,
                p.row_count,
                p.file_count,
                p.total_bytes,
                p.modified_ns,
            )
            .select_from(parts)
            .outerjoin(stats, (p.partition_id == parts.c.id) & (p.table_id == info.id))
            .order_by(parts.c.name)
        )
        predicate = build_predicate(conn.dialect.name, info, query or PartitionQuery())
        if predicate is not None:
            selected = selected.where(predicate)
        return [
            PartitionSize(
                name,
                int(files),
                int(size),
                None if rows is None else int(rows),
                rows is not None and (files, size, modified) == (s_files, s_size, s_modified),
            )
            for name, files, size, modified, rows, s_files, s_size, s_modified in conn.execute(
                selected
            )
        ]

    return run_read(engine, read)


def table_total_size(engine: Engine, table: str, query: PartitionQuery | None = None) -> int:
    """The bytes of the selected partitions' files now (the partitions table)."""

    def read(conn: Connection) -> int:
        info = get_table(conn, table)
        parts = info.store().table
        total = select(func.coalesce(func.sum(parts.c.total_bytes), 0))
        predicate = build_predicate(conn.dialect.name, info, query or PartitionQuery())
        if predicate is not None:
            total = total.where(predicate)
        return int(conn.execute(total).scalar_one())

    return run_read(engine, read)


def spark_table_parameters(
    engine: Engine,
    table: str,
    query: PartitionQuery | None = None,
    num_bins: int = DEFAULT_NUM_BINS,
) -> dict[str, str]:
    """spark_statistics_parameters of a table's (or the selected partitions') merged
    statistics and present size."""
    summary = table_statistics(engine, table, query)
    return spark_statistics_parameters(summary, table_total_size(engine, table, query), num_bins)


def hive_table_column_statistics(
    engine: Engine,
    table: str,
    hive_types: Mapping[str, str],
    query: PartitionQuery | None = None,
    timestamps_as_long: bool = False,
) -> list[Any]:
    """hive_column_statistics_objects of a table's (or the selected partitions') merged
    statistics, for the columns of `hive_types` statlas knows."""
    summary = table_statistics(
        engine, table, query, columns=_known_columns(engine, table, hive_types)
    )
    return hive_column_statistics_objects(summary, hive_types, timestamps_as_long)


def _known_columns(engine: Engine, table: str, hive_types: Mapping[str, str]) -> list[str]:
    def read(conn: Connection) -> list[str]:
        names = {fold(c.name): c.name for c in get_table(conn, table).columns}
        return [names[fold(n)] for n in hive_types if fold(n) in names]

    return run_read(engine, read)


def partition_parameters(
    engine: Engine, table: str, query: PartitionQuery | None = None
) -> dict[str, dict[str, str]]:
    """partition_basic_parameters per selected partition name: COLUMN_STATS_ACCURATE where
    its collected row count was taken at the partition's present files."""
    return {
        size.name: partition_basic_parameters(
            size.row_count, size.file_count, size.total_bytes, accurate=size.current
        )
        for size in partition_sizes(engine, table, query)
    }


__all__ = [
    "EquiHeightHistogram",
    "HistogramBin",
    "PartitionSize",
    "column_statistics_from_json",
    "column_statistics_to_json",
    "hive_column_statistics_objects",
    "hive_table_column_statistics",
    "partition_basic_parameters",
    "partition_parameters",
    "partition_sizes",
    "serialize_histogram",
    "spark_histogram",
    "spark_statistics_parameters",
    "spark_table_parameters",
    "table_total_size",
]
