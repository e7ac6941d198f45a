"""statlas's statistics in the forms engines read from a Hive Metastore, and the readers that
fetch what they need from the metastore database. The forms, pure functions over a
`TableSummary` (each format detail names the source it follows), live beside this module
and are importable from it:

- Spark (spark_parameters, spark_histogram): the table parameters Spark's
  HiveExternalCatalog writes on ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS and
  reads back (`statsFromProperties`): row count, size, and per column the
  `CatalogColumnStat` map, with Spark's serialised equi-height histogram built from the
  merged KLL sketch, framed as lz4-java's block stream (lz4_java_stream). Spark's CBO then
  uses them with no ANALYZE.
- Hive and Trino (hive_statistics, thrift_json): `ColumnStatisticsObj` structs for the
  column-statistics calls, their JSON form (what an engine writes is stored as given and
  served back unchanged), and the basic partition parameters (`numRows`, `numFiles`,
  `totalSize`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, func, select

from metastore.catalog.column_names import fold
from metastore.catalog.lookup import PartitionQuery, build_predicate
from metastore.catalog.tables import get_table
from metastore.engine import run_read
from metastore.models import PartitionStats
from metastore.statistics.summaries import table_statistics
from servers.hive_metastore.hive_statistics import (
    BASIC_STATS_ACCURATE,
    boolean_counts,
    decimal_from_hive,
    hive_column_statistics_objects,
    hive_decimal,
    hive_statistics_data,
    partition_basic_parameters,
)
from servers.hive_metastore.lz4_java_stream import (
    LZ4_BLOCK_SIZE,
    LZ4_CHECKSUM_MASK,
    LZ4_CHECKSUM_SEED,
    LZ4_COMPRESSION_LEVEL_BASE,
    LZ4_MAGIC,
    LZ4_METHOD_LZ4,
    LZ4_METHOD_RAW,
    lz4_block_stream,
    lz4_decompress_block,
    read_lz4_block_stream,
    xxhash32,
)
from servers.hive_metastore.spark_histogram import (
    DEFAULT_NUM_BINS,
    NUMBERS,
    EquiHeightHistogram,
    HistogramBin,
    bin_distinct_counts,
    deserialize_histogram,
    serialize_histogram,
    spark_histogram,
)
from servers.hive_metastore.spark_parameters import (
    COL_STATS_PREFIX,
    COLUMN_STAT_VERSION,
    LARGE_PROPERTY_LENGTH,
    STATISTICS_PREFIX,
    java_double_string,
    spark_column_stat,
    spark_external_string,
    spark_statistics_parameters,
)
from servers.hive_metastore.statistics_values import EPOCH, EPOCH_DATE, distinct_count
from servers.hive_metastore.thrift_json import (
    column_statistics_from_json,
    column_statistics_to_json,
)


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
    "BASIC_STATS_ACCURATE",
    "COLUMN_STAT_VERSION",
    "COL_STATS_PREFIX",
    "DEFAULT_NUM_BINS",
    "EPOCH",
    "EPOCH_DATE",
    "LARGE_PROPERTY_LENGTH",
    "LZ4_BLOCK_SIZE",
    "LZ4_CHECKSUM_MASK",
    "LZ4_CHECKSUM_SEED",
    "LZ4_COMPRESSION_LEVEL_BASE",
    "LZ4_MAGIC",
    "LZ4_METHOD_LZ4",
    "LZ4_METHOD_RAW",
    "NUMBERS",
    "STATISTICS_PREFIX",
    "EquiHeightHistogram",
    "HistogramBin",
    "PartitionSize",
    "bin_distinct_counts",
    "boolean_counts",
    "column_statistics_from_json",
    "column_statistics_to_json",
    "decimal_from_hive",
    "deserialize_histogram",
    "distinct_count",
    "hive_column_statistics_objects",
    "hive_decimal",
    "hive_statistics_data",
    "hive_table_column_statistics",
    "java_double_string",
    "lz4_block_stream",
    "lz4_decompress_block",
    "partition_basic_parameters",
    "partition_parameters",
    "partition_sizes",
    "read_lz4_block_stream",
    "serialize_histogram",
    "spark_column_stat",
    "spark_external_string",
    "spark_histogram",
    "spark_statistics_parameters",
    "spark_table_parameters",
    "table_total_size",
    "xxhash32",
]
