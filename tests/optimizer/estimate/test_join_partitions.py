"""A table joined on its partition key to a filtered dimension reads only the partitions the
dimension's keys meet (optimizer.estimate.operators.join_partitions): its columns take the
distinct values of those partitions as the metastore merges them, not the whole table's
thinned at random. Real collections (Spark) into SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metastore import Metastore
from optimizer.estimate.api import estimate, estimate_rows

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DAYS = 60  # sales partitioned by day
CUSTOMERS_A_DAY = 20  # day d: customers 7d .. 7d + 19, 10 sales each (a customer buys on
SHIFT = 7  # about three days running: no customer determines the day)
CALENDAR_DAYS = 365  # the dimension: every day of a year, 30 days a month


def write_lake(root: Path) -> None:
    for day in range(1, DAYS + 1):
        customers = [day * SHIFT + i % CUSTOMERS_A_DAY for i in range(200)]
        table = pa.table(
            {
                "customer": pa.array(customers, pa.int64()),
                "amount": pa.array([float(i % 13) for i in range(len(customers))]),
            }
        )
        directory = root / "sales" / f"day={day}"
        directory.mkdir(parents=True)
        pq.write_table(table, directory / "part-00000.parquet")
    keys = list(range(1, CALENDAR_DAYS + 1))
    calendar = pa.table(
        {
            "day_key": pa.array(keys, pa.int64()),
            "month": pa.array([(k - 1) // 30 + 1 for k in keys], pa.int64()),
        }
    )
    (root / "calendar").mkdir()
    pq.write_table(calendar, root / "calendar" / "part-00000.parquet")


@pytest.fixture
def collected(metastore: Metastore, spark: object, tmp_path: Path) -> Metastore:
    from collectors.collect import collect

    write_lake(tmp_path)
    for table in ("sales", "calendar"):
        metastore.register_table(table, str(tmp_path / table))
        collect(metastore.engine, table, spark=spark)
    return metastore


GROUPED = (
    "SELECT s.customer FROM sales s JOIN calendar c ON s.day = c.day_key "
    "WHERE c.month = {month} GROUP BY s.customer"
)


def customers(first_day: int, last_day: int) -> int:
    return last_day * SHIFT + CUSTOMERS_A_DAY - first_day * SHIFT


def test_a_month_of_sales_holds_that_months_customers(collected: Metastore) -> None:
    # month 1 meets days 1..30: their 223 customers, not nearly all 433 of the table as
    # 6,000 of 12,000 rows drawn at random would hold
    groups = estimate_rows(collected.engine, GROUPED.format(month=1))
    assert groups == pytest.approx(customers(1, 30), rel=0.05)
    answer = estimate(collected.engine, GROUPED.format(month=1))
    join = answer["plan"]["children"][0]
    customer = join["columns"]["s.customer"]
    assert customer["ndv_source"] == "partitions the join reads"


def test_every_partition_met_keeps_the_tables_figures(collected: Metastore) -> None:
    # the calendar's first two months meet all 60 days: nothing narrowed, the table's own
    # distinct customers
    sql = (
        "SELECT s.customer FROM sales s JOIN calendar c ON s.day = c.day_key "
        "WHERE c.month <= 2 GROUP BY s.customer"
    )
    assert estimate_rows(collected.engine, sql) == pytest.approx(customers(1, DAYS), rel=0.05)
