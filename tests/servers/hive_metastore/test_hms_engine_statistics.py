"""statlas's statistics as engines read them from a Hive Metastore
(servers/hive_metastore/engine_statistics and the modules it gathers):
Spark's own parsers read the table parameters back (CatalogColumnStat.fromMap, toPlanStat,
HistogramSerializer), Hive's ColumnStatisticsObj structs survive Thrift's binary protocol
with every required field set, and written statistics survive their JSON form. A small
partitioned dataset of every scalar type is collected by a real Spark into SQLite and
PostgreSQL."""

from __future__ import annotations

import datetime as dt
import doctest
import json
import math
import random
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hive_metastore import ttypes
from sqlalchemy import update
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

from metastore import Metastore
from metastore.catalog.tables import get_table
from metastore.partitions.names import partition_name
from metastore.statistics.summaries import table_statistics
from servers.hive_metastore import engine_statistics as es
from servers.hive_metastore import (
    hive_statistics,
    lz4_java_stream,
    spark_histogram,
    spark_parameters,
)

EPOCH = dt.datetime(1970, 1, 1)
ROWS_PER_PARTITION = 300
HIVE_TYPES = {
    "ti": "tinyint",
    "si": "smallint",
    "i": "int",
    "b": "bigint",
    "f": "float",
    "d": "double",
    "amount": "decimal(10,2)",
    "neg": "decimal(12,3)",
    "day": "date",
    "ts": "timestamp",
    "ts_ntz": "timestamp",
    "name": "string",
    "code": "varchar(8)",
    "payload": "binary",
    "flag": "boolean",
}
# the Hive ColumnStatisticsData member each Hive type must give
MEMBERS = {
    "tinyint": "longStats",
    "smallint": "longStats",
    "int": "longStats",
    "bigint": "longStats",
    "float": "doubleStats",
    "double": "doubleStats",
    "decimal(10,2)": "decimalStats",
    "decimal(12,3)": "decimalStats",
    "date": "dateStats",
    "timestamp": "timestampStats",
    "string": "stringStats",
    "varchar(8)": "stringStats",
    "binary": "binaryStats",
    "boolean": "booleanStats",
}


def _maybe(rng: random.Random, value: Any, nulls: float = 0.1) -> Any:
    return None if rng.random() < nulls else value


def write_partition(root: Path, values: list[str], rng: random.Random) -> pa.Table:
    n = ROWS_PER_PARTITION
    base = dt.datetime(2024, 3, 1, 12, 0, 0)
    table = pa.table(
        {
            "ti": pa.array([_maybe(rng, rng.randrange(-100, 100)) for _ in range(n)], pa.int8()),
            "si": pa.array([rng.randrange(-3000, 3000) for _ in range(n)], pa.int16()),
            "i": pa.array([_maybe(rng, rng.randrange(10**6)) for _ in range(n)], pa.int32()),
            "b": pa.array([rng.randrange(-(10**12), 10**12) for _ in range(n)], pa.int64()),
            "f": pa.array([_maybe(rng, rng.uniform(-5, 5)) for _ in range(n)], pa.float32()),
            "d": pa.array([rng.gauss(0, 1e8) for _ in range(n)], pa.float64()),
            "amount": pa.array(
                [_maybe(rng, Decimal(rng.randrange(100_000)) / 100) for _ in range(n)],
                pa.decimal128(10, 2),
            ),
            "neg": pa.array(
                [Decimal(rng.randrange(-(10**6), 10**4)) / 1000 for _ in range(n)],
                pa.decimal128(12, 3),
            ),
            "day": pa.array(
                [
                    _maybe(rng, dt.date(2023, 12, 1) + dt.timedelta(rng.randrange(90)))
                    for _ in range(n)
                ],
                pa.date32(),
            ),
            "ts": pa.array(
                [base + dt.timedelta(microseconds=rng.randrange(10**11)) for _ in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "ts_ntz": pa.array(
                [_maybe(rng, base + dt.timedelta(seconds=rng.randrange(10**6))) for _ in range(n)],
                pa.timestamp("us"),
            ),
            "name": [
                _maybe(rng, f"name-{rng.randrange(40)}" * rng.randrange(1, 3)) for _ in range(n)
            ],
            "code": [rng.choice(["A1", "B22", "C333"]) for _ in range(n)],
            "payload": pa.array(
                [
                    _maybe(rng, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9))))
                    for _ in range(n)
                ],
                pa.binary(),
            ),
            "flag": pa.array([_maybe(rng, rng.random() < 0.3) for _ in range(n)], pa.bool_()),
        }
    )
    directory = root / partition_name(["dt", "region"], list(values))
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / "part-00000.parquet")
    return table


class Lake:
    def __init__(self, root: Path, tables: list[pa.Table]) -> None:
        self.root = root
        data = pa.concat_tables(tables)
        self.values = {c: data[c].to_pylist() for c in data.column_names}
        self.rows = data.num_rows
        self.bytes = sum(p.stat().st_size for p in root.rglob("*.parquet"))

    def present(self, column: str) -> list[Any]:
        return [v for v in self.values[column] if v is not None]


@pytest.fixture
def lake(metastore: Metastore, spark: Any, tmp_path: Path) -> Lake:
    from collectors.collect import collect

    rng = random.Random(23)
    root = tmp_path / "mix"
    parts = [["2024-01-01", "emea"], ["2024-01-01", "apac"], ["2024-01-02", "emea"]]
    tables = [write_partition(root, values, rng) for values in parts]
    metastore.register_table("mix", str(root))
    collect(metastore.engine, "mix", spark=spark)
    return Lake(root, tables)


def _scala_map(spark: Any, mapping: dict[str, str]) -> Any:
    jvm = spark._jvm
    java_map = jvm.java.util.HashMap()
    for key, value in mapping.items():
        java_map.put(key, value)
    return jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(java_map)


def _count(option: Any) -> int:
    """A ColumnStat count (Option[BigInt]) through py4j."""
    value = option.get()
    return value if isinstance(value, int) else int(value.toString())


def _micros(value: dt.datetime) -> int:
    naive = value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value
    delta = naive - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds


def _encoded(column: str, value: Any) -> float:
    """A value as Spark's histogram endpoints hold it (days, microseconds, doubles)."""
    if isinstance(value, dt.datetime):
        return float(_micros(value))
    if isinstance(value, dt.date):
        return float((value - EPOCH.date()).days)
    return float(value)


def _spark_value(column: str, internal: Any) -> Any:
    """A ColumnStat min/max (Catalyst's internal value through py4j) as a Python value."""
    if column in ("amount", "neg"):
        return Decimal(internal.toString())
    if column == "f":  # py4j passes a Float through its shortest text: compare as float32
        return _float32(internal)
    return internal


def _float32(value: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return result


def _truth_value(column: str, value: Any) -> Any:
    if column == "day":
        return (value - EPOCH.date()).days
    if column in ("ts", "ts_ntz"):
        return _micros(value)
    if column == "f":
        return _float32(value)
    return value


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_reads_the_parameters_back(metastore: Metastore, spark: Any, lake: Lake) -> None:
    """(a) Spark's own parsers decode statlas's statistics to statlas's figures."""
    jvm = spark._jvm
    parameters = es.spark_table_parameters(metastore.engine, "mix")
    summary = table_statistics(metastore.engine, "mix")
    assert parameters["spark.sql.statistics.numRows"] == str(lake.rows)
    assert parameters["spark.sql.statistics.totalSize"] == str(lake.bytes)
    prefix = es.COL_STATS_PREFIX
    col_props = {k[len(prefix) :]: v for k, v in parameters.items() if k.startswith(prefix)}
    scala_map = _scala_map(spark, col_props)
    schema = spark.read.parquet(str(lake.root))._jdf.schema()
    catalog_stat = jvm.org.apache.spark.sql.catalyst.catalog.CatalogColumnStat
    histograms = 0
    for column in HIVE_TYPES:
        decoded = catalog_stat.fromMap("mix", column, scala_map)
        assert decoded.isDefined(), f"Spark could not parse the statistics of {column}"
        data_type = schema.apply(column).dataType()
        stat = decoded.get().toPlanStat(column, data_type)
        present = lake.present(column)
        ours = summary.columns[column]
        assert _count(stat.nullCount()) == lake.rows - len(present)
        assert _count(stat.distinctCount()) == es.distinct_count(ours.ndv or 0, len(present))
        assert _count(stat.distinctCount()) == pytest.approx(len(set(present)), rel=0.05)
        if column in ("name", "code", "payload"):
            assert not stat.hasMinMaxStats() or stat.min().get() is None
            lengths = [len(v) for v in present]
            assert stat.avgLen().get() == math.ceil(sum(lengths) / len(lengths))
            assert stat.maxLen().get() == max(lengths)
            continue
        low, high = stat.min().get(), stat.max().get()
        assert _spark_value(column, low) == _truth_value(column, min(present)), column
        assert _spark_value(column, high) == _truth_value(column, max(present)), column
        if column == "flag":
            assert stat.histogram().isEmpty()
            continue
        if column == "ts_ntz":
            continue  # Spark keeps no histogram of timestamp_ntz (supportsHistogram)
        histogram = stat.histogram().get()
        histograms += 1
        bins = histogram.bins()
        assert len(bins) == es.DEFAULT_NUM_BINS
        # heights add up to the non-null rows; the bins cover min..max without a gap
        assert histogram.height() * len(bins) == pytest.approx(len(present))
        assert bins[0].lo() == _encoded(column, min(present))
        assert bins[len(bins) - 1].hi() == _encoded(column, max(present))
        for i in range(len(bins) - 1):
            assert bins[i].lo() <= bins[i].hi() == bins[i + 1].lo()
            assert bins[i].ndv() >= 1
        # the inner endpoints are quantiles: their true ranks within KLL's rank error
        values = sorted(_encoded(column, v) for v in present)
        for i in range(1, len(bins), 16):
            edge = bins[i].lo()
            below = sum(v < edge for v in values) / len(values)
            at_most = sum(v <= edge for v in values) / len(values)
            assert below - 0.02 <= i / len(bins) <= at_most + 0.02, (column, i)
        # distinct values per bin add up to about the column's NDV (at least one a bin:
        # a value spanning several bins is counted in each, as Spark's own count does)
        ndv_sum = sum(bins[i].ndv() for i in range(len(bins)))
        distinct = len(set(present))
        assert 0.75 * distinct <= ndv_sum <= 1.25 * max(distinct, len(bins)), column
        # Spark's deserializer and ours agree bin for bin (the split property reassembled)
        text = jvm.org.apache.spark.sql.catalyst.catalog.CatalogTable.readLargeTableProp(
            scala_map, f"{column}.histogram"
        ).get()
        ours_hist = es.deserialize_histogram(text)
        assert [(b.lo, b.hi, b.ndv) for b in ours_hist.bins] == [
            (bins[i].lo(), bins[i].hi(), bins[i].ndv()) for i in range(len(bins))
        ]
    assert histograms == 10  # every numeric, date and timestamp column
    # a long histogram takes Spark's split form (splitLargeTableProp); Spark reads it back
    long_form = es.spark_column_stat(summary.columns["d"], summary.row_count, num_bins=2000)
    assert "d.histogram.numParts" in long_form and "d.histogram" not in long_form
    parsed = catalog_stat.fromMap("mix", "d", _scala_map(spark, long_form))
    assert len(parsed.get().histogram().get().bins()) == 2000


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_lz4_framing_and_xxhash_match_lz4_java(spark: Any) -> None:
    """Our XXHash32 (the xxhash package's) equals lz4-java's; multi-block streams, RAW and
    LZ4 blocks (the lz4 package's), read back through lz4-java's LZ4BlockInputStream, and
    lz4-java's own streams through ours."""
    jvm = spark._jvm
    rng = random.Random(5)
    java_hash = jvm.net.jpountz.xxhash.XXHashFactory.fastestJavaInstance().hash32()
    for size in [0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 100, 1000]:
        data = bytes(rng.randrange(256) for _ in range(size))
        for seed in (0, es.LZ4_CHECKSUM_SEED):
            expected = java_hash.hash(bytearray(data), 0, size, seed - (1 << 32) * (seed >> 31))
            assert es.xxhash32(data, seed) == expected & 0xFFFFFFFF
    # three 64 KB blocks: random bytes (stored RAW), runs and repeats (LZ4-compressed)
    noise = bytes(rng.randrange(256) for _ in range(70_000))
    text = b"".join(rng.choice([b"abc", b"abcd", b"\x00" * 40, b"xyzzy"]) for _ in range(20_000))
    for data in [noise + text[:80_000], text[:20], b"", bytes(300)]:
        stream = es.lz4_block_stream(data)
        java_in = jvm.net.jpountz.lz4.LZ4BlockInputStream(jvm.java.io.ByteArrayInputStream(stream))
        assert bytes(java_in.readAllBytes()) == data
        assert es.read_lz4_block_stream(stream) == data
        # and what lz4-java writes, we read
        sink = jvm.java.io.ByteArrayOutputStream()
        java_out = jvm.net.jpountz.lz4.LZ4BlockOutputStream(sink)
        java_out.write(bytearray(data))
        java_out.close()
        assert es.read_lz4_block_stream(bytes(sink.toByteArray())) == data
    compressed = es.lz4_block_stream(text[:60_000])
    assert len(compressed) < 60_000 // 4  # compressed, not stored


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_java_double_strings_are_javas(spark: Any) -> None:
    jvm = spark._jvm
    rng = random.Random(11)
    values = [0.001, 1e7, 9999999.0, 123.456, -0.5, 1e-5, 2.5e300, 1e21, 0.1, 100.0]
    values += [rng.uniform(-1e9, 1e9) * 10 ** rng.randrange(-12, 12) for _ in range(200)]
    for value in values:
        ours, javas = es.java_double_string(value), jvm.java.lang.Double.toString(value)
        # the same notation, and the same double when Java reads it (JDK < 19 may print a
        # digit more than the shortest: both read back exactly)
        assert ("E" in ours, ours.startswith("-")) == ("E" in javas, javas.startswith("-"))
        assert jvm.java.lang.Double.parseDouble(ours) == value, (ours, javas)
        assert len(ours) <= len(javas), (ours, javas)


def _validate_all(obj: Any) -> int:
    """validate() on a struct and every struct inside it; the count of structs checked."""
    obj.validate()
    checked = 1
    for spec in obj.thrift_spec:
        if spec is None:
            continue
        value = getattr(obj, spec[2])
        if value is not None and spec[1] == TType.STRUCT:
            checked += _validate_all(value)
        elif value is not None and spec[1] == TType.LIST and spec[3][0] == TType.STRUCT:
            checked += sum(_validate_all(v) for v in value)
    return checked


def _thrift_round_trip(obj: Any) -> tuple[Any, bytes]:
    out = TMemoryBuffer()
    obj.write(TBinaryProtocol(out))
    encoded = out.getvalue()
    back = type(obj)()
    back.read(TBinaryProtocol(TMemoryBuffer(encoded)))
    return back, encoded


def _set_members(data: Any) -> list[str]:
    return [s[2] for s in data.thrift_spec if s is not None and getattr(data, s[2]) is not None]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_hive_column_statistics_through_thrift(metastore: Metastore, lake: Lake) -> None:
    """(b) one ColumnStatisticsObj per column type, every required field set, through the
    binary protocol; figures equal to the data's."""
    objects = es.hive_table_column_statistics(metastore.engine, "mix", HIVE_TYPES)
    assert [o.colName for o in objects] == list(HIVE_TYPES)
    desc = ttypes.ColumnStatisticsDesc(isTblLevel=True, dbName="default", tableName="mix")
    statistics = ttypes.ColumnStatistics(statsDesc=desc, statsObj=objects, engine="hive")
    back, _ = _thrift_round_trip(statistics)
    assert back == statistics
    # the reply, its desc, 15 objects, their unions and stats, decimals, dates, timestamps
    assert _validate_all(back) >= 2 + 3 * len(objects)
    for obj in back.statsObj:
        column, hive_type = obj.colName, obj.colType
        assert obj.colType == HIVE_TYPES[column]
        assert _set_members(obj.statsData) == [MEMBERS[hive_type]]
        stats = getattr(obj.statsData, MEMBERS[hive_type])
        present = lake.present(column)
        assert stats.numNulls == lake.rows - len(present)
        if hasattr(stats, "numDVs"):
            assert stats.numDVs == pytest.approx(len(set(present)), rel=0.05)
        low, high = min(present), max(present)
        if hive_type in ("tinyint", "smallint", "int", "bigint"):
            assert (stats.lowValue, stats.highValue) == (low, high)
        elif hive_type in ("float", "double"):
            assert (stats.lowValue, stats.highValue) == (low, high)
        elif hive_type.startswith("decimal"):
            lo, hi = es.decimal_from_hive(stats.lowValue), es.decimal_from_hive(stats.highValue)
            assert (lo, hi) == (low, high)
            assert stats.lowValue.scale == int(hive_type.rstrip(")").split(",")[1])
        elif hive_type == "date":
            epoch = EPOCH.date()
            assert stats.lowValue.daysSinceEpoch == (low - epoch).days
            assert stats.highValue.daysSinceEpoch == (high - epoch).days
        elif hive_type == "timestamp":
            assert stats.lowValue.secondsSinceEpoch == _micros(low) // 10**6
            assert stats.highValue.secondsSinceEpoch == -(-_micros(high) // 10**6)
        elif hive_type in ("string", "varchar(8)", "binary"):
            lengths = [len(v) for v in present]
            assert stats.maxColLen == max(lengths)
            assert stats.avgColLen == pytest.approx(sum(lengths) / len(lengths))
        elif hive_type == "boolean":
            assert (stats.numTrues, stats.numFalses) == (present.count(True), present.count(False))


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_timestamps_as_long_for_clients_without_timestamp_stats(
    metastore: Metastore, lake: Lake
) -> None:
    objects = es.hive_table_column_statistics(
        metastore.engine, "mix", {"ts": "timestamp", "i": "int"}, timestamps_as_long=True
    )
    ts, i = objects
    assert _set_members(ts.statsData) == ["longStats"] == _set_members(i.statsData)
    back, _ = _thrift_round_trip(ts)
    _validate_all(back)
    present = lake.present("ts")
    longs = back.statsData.longStats
    assert longs.lowValue == _micros(min(present)) // 10**6
    assert longs.highValue == -(-_micros(max(present)) // 10**6)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_written_statistics_json_round_trip(metastore: Metastore, lake: Lake) -> None:
    """(c) what an engine writes comes back unchanged from its JSON form, bit vectors and
    negative decimals included; unknown fields are refused."""
    objects = es.hive_table_column_statistics(metastore.engine, "mix", HIVE_TYPES)
    written = ttypes.ColumnStatisticsObj(
        colName="price",
        colType="decimal(20,4)",
        statsData=ttypes.ColumnStatisticsData(
            decimalStats=ttypes.DecimalColumnStatsData(
                lowValue=es.hive_decimal(Decimal("-128.0000"), 4),
                highValue=es.hive_decimal(Decimal("99999999.9999"), 4),
                numNulls=3,
                numDVs=41,
                bitVectors=b"HLL\x00\x01\xff",
            )
        ),
    )
    odd = ttypes.ColumnStatisticsObj(
        colName="x",
        colType="double",
        statsData=ttypes.ColumnStatisticsData(
            doubleStats=ttypes.DoubleColumnStatsData(
                lowValue=-math.inf, highValue=math.nan, numNulls=0, numDVs=2
            )
        ),
    )
    for obj in [*objects, written, odd]:
        stored = json.dumps(es.column_statistics_to_json(obj), allow_nan=False)
        back = es.column_statistics_from_json(json.loads(stored))
        assert _thrift_round_trip(back)[1] == _thrift_round_trip(obj)[1]
        _validate_all(back)
    assert es.decimal_from_hive(written.statsData.decimalStats.lowValue) == Decimal("-128.0000")
    with pytest.raises(ValueError, match="unknown fields"):
        es.column_statistics_from_json({"colName": "a", "colType": "int", "statsData": {}, "x": 1})


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_partition_parameters(metastore: Metastore, lake: Lake) -> None:
    """numRows, numFiles, totalSize per partition; COLUMN_STATS_ACCURATE only while the
    collected statistics are of the partition's present files."""
    parameters = es.partition_parameters(metastore.engine, "mix")
    assert len(parameters) == 3
    for name, params in parameters.items():
        files = list((lake.root / name).glob("*.parquet"))
        assert params == {
            "numFiles": str(len(files)),
            "totalSize": str(sum(f.stat().st_size for f in files)),
            "numRows": str(ROWS_PER_PARTITION),
            "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}',
        }
    stale = next(iter(parameters))
    with metastore.engine.begin() as conn:
        parts = get_table(conn, "mix").store().table
        conn.execute(
            update(parts).where(parts.c.name == stale).values(total_bytes=parts.c.total_bytes + 1)
        )
    after = es.partition_parameters(metastore.engine, "mix")
    assert "COLUMN_STATS_ACCURATE" not in after[stale]
    assert after[stale]["numRows"] == str(ROWS_PER_PARTITION)
    assert all("COLUMN_STATS_ACCURATE" in p for n, p in after.items() if n != stale)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((None, 2, 10), {"numFiles": "2", "totalSize": "10"}),
        ((5, 1, 10, 40), {"numFiles": "1", "totalSize": "10", "numRows": "5", "rawDataSize": "40"}),
    ],
)
def test_partition_basic_parameters(args: tuple[Any, ...], expected: dict[str, str]) -> None:
    assert es.partition_basic_parameters(*args) == expected
    # an accurate flag without a row count claims nothing
    assert "COLUMN_STATS_ACCURATE" not in es.partition_basic_parameters(None, 1, 1, accurate=True)


def test_bin_distinct_counts() -> None:
    # a heavy value spans bins of one value; the rest is shared, capped by grid points
    assert es.bin_distinct_counts([0, 0, 0, 10], ndv=8, height=4, grid=0) == [1, 1, 4]
    # capped bins pass their surplus on: 2 grid points in (1, 3], the rest elsewhere
    counts = es.bin_distinct_counts([0, 1, 3, 100], ndv=30, height=50, grid=0)
    assert counts == [2, 2, 26]
    # real-valued columns: even shares, at least one each
    assert es.bin_distinct_counts([0.0, 0.5, 1.0], ndv=1, height=3, grid=None) == [1, 1]


def test_docstring_examples() -> None:
    """The examples of the modules engine_statistics gathers (each module's own)."""
    modules = [es, spark_parameters, spark_histogram, lz4_java_stream, hive_statistics]
    results = [doctest.testmod(module, raise_on_error=False) for module in modules]
    assert sum(r.attempted for r in results) >= 5 and sum(r.failed for r in results) == 0


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_same_keys_and_figures_as_sparks_own_analyze(
    metastore: Metastore, spark: Any, lake: Lake
) -> None:
    """Beside Spark's own ANALYZE TABLE ... FOR ALL COLUMNS of the same files: the same
    parameter keys per column, and the same figures (NDV within HLL's error, histogram
    heights and bins alike)."""
    jvm = spark._jvm
    table = f"mix_{abs(hash(str(lake.root))) % 10**8}"
    spark.sql(f"CREATE TABLE {table} USING parquet LOCATION '{lake.root}'")
    spark.sql(f"MSCK REPAIR TABLE {table}")  # the partitions, for a catalog-tracked table
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    try:
        spark.sql(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR ALL COLUMNS")
        ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier.apply(table)
        catalog = spark._jsparkSession.sessionState().catalog()
        theirs_stats = catalog.getTableMetadata(ident).stats().get()
        col_stats = theirs_stats.colStats()
    finally:
        spark.conf.unset("spark.sql.statistics.histogram.enabled")
        spark.sql(f"DROP TABLE {table}")
    assert theirs_stats.rowCount().get() == lake.rows
    parameters = es.spark_table_parameters(metastore.engine, "mix")
    converters = jvm.scala.jdk.javaapi.CollectionConverters
    deserialize = jvm.org.apache.spark.sql.catalyst.plans.logical.HistogramSerializer.deserialize
    read_large = jvm.org.apache.spark.sql.catalyst.catalog.CatalogTable.readLargeTableProp
    for column in HIVE_TYPES:
        scala_theirs = col_stats.get(column).get().toMap(column)
        theirs = dict(converters.asJava(scala_theirs))
        ours = {
            k[len(es.COL_STATS_PREFIX) :]: v
            for k, v in parameters.items()
            if k.startswith(f"{es.COL_STATS_PREFIX}{column}.")
        }
        # the histogram may be one property or Spark's split form (splitLargeTableProp):
        # ours is in RAW LZ4 blocks, longer than Spark's compressed one
        assert {_histogram_key(k) for k in ours} == {_histogram_key(k) for k in theirs}, column
        for key in ("version", "nullCount", "avgLen", "maxLen", "min", "max"):
            mine, spark_text = ours.get(f"{column}.{key}"), theirs.get(f"{column}.{key}")
            if column == "f" and key in ("min", "max"):  # the same float32, maybe more digits
                assert _float32(float(str(mine))) == _float32(float(str(spark_text)))
            else:
                assert mine == spark_text, (column, key)
        assert int(ours[f"{column}.distinctCount"]) == pytest.approx(
            int(theirs[f"{column}.distinctCount"]), rel=0.15
        ), column  # Spark's HyperLogLog++ has a 5% relative standard deviation
        if f"{column}.histogram" in {_histogram_key(k) for k in theirs}:
            our_hist = es.deserialize_histogram(
                read_large(_scala_map(spark, ours), f"{column}.histogram").get()
            )
            spark_hist_text = read_large(scala_theirs, f"{column}.histogram").get()
            our_text = read_large(_scala_map(spark, ours), f"{column}.histogram").get()
            assert len(our_text) <= 1.5 * len(spark_hist_text), column  # compressed alike
            spark_hist = deserialize(spark_hist_text)
            # our reader decodes Spark's compressed histogram exactly
            decoded = es.deserialize_histogram(spark_hist_text)
            assert [(b.lo, b.hi, b.ndv) for b in decoded.bins] == [
                (b.lo(), b.hi(), b.ndv()) for b in spark_hist.bins()
            ]
            assert our_hist.height == pytest.approx(spark_hist.height())
            spark_bins = spark_hist.bins()
            assert len(our_hist.bins) == len(spark_bins)
            spread = our_hist.bins[-1].hi - our_hist.bins[0].lo
            for i in range(0, len(spark_bins), 8):  # endpoints agree within the sketches' error
                assert abs(our_hist.bins[i].lo - spark_bins[i].lo()) <= 0.05 * spread, (column, i)


def _histogram_key(key: str) -> str:
    """`<col>.histogram.numParts` and `<col>.histogram.part.<i>` as `<col>.histogram`."""
    head, found, _ = key.partition(".histogram")
    return f"{head}.histogram" if found else key
