"""The 99 TPC-DS queries, as DuckDB's TPC-DS extension carries them, in Spark SQL.

The queries are read from the installed extension (duckdb-extension-tpcds, `tpcds_queries()`:
the specification's templates with its qualification substitution parameters) and rewritten
from DuckDB's dialect to Spark's by sqlglot. `without_final_limit` drops the outermost LIMIT,
as the q-error benchmark estimates the rows a query returns before it is cut.
"""

from __future__ import annotations

import functools
from pathlib import Path

import sqlglot

PARTITION_KEYS = {
    "store_sales": "ss_sold_date_sk",
    "store_returns": "sr_returned_date_sk",
    "catalog_sales": "cs_sold_date_sk",
    "catalog_returns": "cr_returned_date_sk",
    "web_sales": "ws_sold_date_sk",
    "web_returns": "wr_returned_date_sk",
    "inventory": "inv_date_sk",
}
TABLES = (
    "call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer",
    "customer_address", "customer_demographics", "date_dim", "household_demographics",
    "income_band", "inventory", "item", "promotion", "reason", "ship_mode", "store",
    "store_returns", "store_sales", "time_dim", "warehouse", "web_page", "web_returns",
    "web_sales", "web_site",
)  # fmt: skip


def duckdb_connection(database: Path | str = ":memory:", read_only: bool = False):  # type: ignore[no-untyped-def]
    """A DuckDB connection with the installed wheel's TPC-DS extension loaded."""
    import duckdb
    import duckdb_extension_tpcds

    (extension,) = Path(duckdb_extension_tpcds.__file__).parent.glob("extensions/*/tpcds.*")
    connection = duckdb.connect(str(database), read_only=read_only)
    connection.execute(f"LOAD '{extension}'")
    return connection


@functools.cache
def duckdb_queries() -> dict[str, str]:
    """{"q1": sql, ..., "q99": sql} in DuckDB's dialect, as the extension has them."""
    connection = duckdb_connection()
    rows = connection.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall()
    connection.close()
    return {f"q{number}": sql.strip().rstrip(";") for number, sql in rows}


def to_spark(sql: str) -> str:
    """DuckDB's text of a query as Spark SQL."""
    return sqlglot.transpile(sql, read="duckdb", write="spark", pretty=True)[0]


@functools.cache
def queries() -> dict[str, str]:
    """The 99 queries in Spark SQL, in number order."""
    return {name: to_spark(sql) for name, sql in duckdb_queries().items()}


def without_final_limit(sql: str, dialect: str = "spark") -> str:
    """The query without its outermost LIMIT (and the ORDER BY that only served it)."""
    tree = sqlglot.parse_one(sql, read=dialect)
    if tree.args.get("limit") is None:
        return sql
    tree.set("limit", None)
    tree.set("order", None)
    return tree.sql(dialect=dialect, pretty=True)
