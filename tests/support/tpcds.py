"""TPC-DS's 24 tables as a planner sees them, without Spark or a database: their schema from
DuckDB's TPC-DS extension (an empty `dsdgen(sf=0)`), the seven fact tables partitioned by
their date key as benchmarks/data.py --set tpcds lays them out, and made-up statistics
(the specification's SF 1 row counts, every column with an NDV and no range), for planning
the 99 queries of benchmarks/tpcds_queries.py in tests."""

from __future__ import annotations

from functools import cache

from benchmarks.tpcds_queries import PARTITION_KEYS, duckdb_connection
from metastore.catalog.discovery import Column
from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.tables import PartitionKey, TableInfo
from metastore.errors import UnknownTable
from metastore.statistics.summaries import ColumnSummary, PartitionRows, TableSummary
from metastore.types import parse_key_type
from optimizer.estimate.sources import StatisticsSource

# rows at scale factor 1 (TPC-DS specification, table 3-2)
ROWS = {
    "call_center": 6, "catalog_page": 11_718, "catalog_returns": 144_067,
    "catalog_sales": 1_441_548, "customer": 100_000, "customer_address": 50_000,
    "customer_demographics": 1_920_800, "date_dim": 73_049, "household_demographics": 7_200,
    "income_band": 20, "inventory": 11_745_000, "item": 18_000, "promotion": 300,
    "reason": 35, "ship_mode": 20, "store": 12, "store_returns": 287_514,
    "store_sales": 2_880_404, "time_dim": 86_400, "warehouse": 5, "web_page": 60,
    "web_returns": 71_763, "web_sales": 719_384, "web_site": 30,
}  # fmt: skip


def _type(duckdb_type: str) -> str:
    kind = duckdb_type.lower()
    return {"integer": "int", "varchar": "string"}.get(kind, kind)


@cache
def schema() -> dict[str, dict[str, str]]:
    """{table: {column: Spark type}} as DuckDB's TPC-DS extension creates them."""
    connection = duckdb_connection()
    connection.execute("CALL dsdgen(sf=0)")
    rows = connection.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "ORDER BY table_name, ordinal_position"
    ).fetchall()
    connection.close()
    tables: dict[str, dict[str, str]] = {}
    for table, column, type_ in rows:
        tables.setdefault(table, {})[column] = _type(type_)
    return tables


@cache
def tpcds_info(name: str) -> TableInfo:
    columns = schema().get(name)
    if columns is None:
        raise UnknownTable(f"unknown table {name}")
    key = PARTITION_KEYS.get(name)
    return TableInfo(
        800 + sorted(ROWS).index(name),
        name,
        "/data/tpcds/" + name,
        "parquet",
        tuple(Column(c, t, True) for c, t in columns.items() if c != key),
        (PartitionKey(key, parse_key_type("int")),) if key else (),
        None,
        {},
        1,
    )


class TpcdsStatistics(StatisticsSource):
    """SF 1 row counts, every column with an NDV (its rows, at most 1000) and no range."""

    def table(self, name: str) -> TableInfo:
        return tpcds_info(name)

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        rows = ROWS[name]
        columns = {
            c.name: ColumnSummary(
                c.name, c.type, 0, None, None, float(min(rows, 1000)), "hll", 8.0, 8, [],
                None, None, None,
            )
            for c in tpcds_info(name).columns
        }  # fmt: skip
        return TableSummary(name, 1, rows, columns)

    def partitions(self, name: str, query: PartitionQuery) -> list[PartitionRows]:
        return []
