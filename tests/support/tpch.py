"""TPC-H's tables as a planner sees them, without Spark or a database: their TableInfo
(`tpch_lookup`) and made-up statistics (`MadeUpStatistics`, and `KeyedStatistics` with some
columns' distinct counts given), for the planner's tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from benchmarks.tpch_queries import PARTITION_KEYS, ROWS, SCHEMA
from metastore.catalog.discovery import Column
from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.tables import PartitionKey, TableInfo
from metastore.errors import UnknownTable
from metastore.statistics.summaries import ColumnSummary, PartitionRows, TableSummary
from metastore.types import parse_key_type
from optimizer.estimate.sources import StatisticsSource

__all__ = [
    "ROWS",
    "SCHEMA",
    "TPCH_INFO",
    "KeyedStatistics",
    "MadeUpStatistics",
    "info",
    "tpch_lookup",
]


def info(
    name: str, columns: dict[str, str], keys: dict[str, str] | None = None, table_id: int = 1
) -> TableInfo:
    return TableInfo(
        table_id,
        name,
        "/data/" + name,
        "parquet",
        tuple(Column(c, t, True) for c, t in columns.items()),
        tuple(PartitionKey(k, parse_key_type(t)) for k, t in (keys or {}).items()),
        None,
        {},
        1,
    )


TPCH_INFO = {
    name: info(
        name,
        columns,
        {PARTITION_KEYS[name]: "date"} if name in PARTITION_KEYS else None,
        900 + position,
    )
    for position, (name, columns) in enumerate(SCHEMA.items())
}


def tpch_lookup(name: str) -> TableInfo:
    if name not in TPCH_INFO:
        raise UnknownTable(f"unknown table {name}")
    return TPCH_INFO[name]


class MadeUpStatistics(StatisticsSource):
    """TPC-H SF 1 row counts, every column with an NDV and no range (no Spark needed)."""

    def table(self, name: str) -> TableInfo:
        return tpch_lookup(name)

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        rows = ROWS[name]
        columns = {
            column: ColumnSummary(
                column,
                type_,
                0,
                None,
                None,
                float(min(rows, 1000)),
                "hll",
                8.0,
                8,
                [],
                None,
                None,
                None,
            )
            for column, type_ in SCHEMA[name].items()
        }
        return TableSummary(name, 1, rows, columns)

    def partitions(self, name: str, query: PartitionQuery) -> list[PartitionRows]:
        return []


class KeyedStatistics(MadeUpStatistics):
    """The made-up statistics with the distinct counts `ndv` gives for some columns (a key
    column has one value per row of the table it keys)."""

    def __init__(self, ndv: Mapping[str, float]) -> None:
        self.ndv = dict(ndv)

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        summary = super().summary(name, query)
        columns = {
            column: replace(found, ndv=float(self.ndv[column])) if column in self.ndv else found
            for column, found in summary.columns.items()
        }
        return replace(summary, columns=columns)
