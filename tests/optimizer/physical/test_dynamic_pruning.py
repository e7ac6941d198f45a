"""`dynamic_pruning=1` (the default): a map join whose one side is a filtered relation joining
a partition key of a partitioned table on the other side hashes that relation, the side
Spark's dynamic partition pruning needs broadcast (optimizer.physical.pruning_side);
`dynamic_pruning=0` keeps the cost formulas' cheaper side. Planned without Spark, then (the
last test) both emitted texts run on Spark over a small partitioned store_sales."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlglot

from optimizer.cost.params import cost_params
from optimizer.physical.algorithms import Side, choose_join
from optimizer.physical.api import emit
from optimizer.physical.pruning_side import Pruning, pruning_side
from optimizer.plan import Filter, Join, Scan
from tests.support.planning import hints, planned
from tests.support.tpcds import TpcdsStatistics

SALES = Scan("store_sales", "ss", ("ss_item_sk", "ss_price"), ("ss_sold_date_sk",))
DATES = Scan("date_dim", "d", ("d_date_sk", "d_year"))
ITEMS = Scan("item", "i", ("i_item_sk", "i_brand_id"))
YEAR = sqlglot.parse_one("d.d_year > 1999")
BRAND = sqlglot.parse_one("i.i_brand_id = 5")
ON_DATE = ((("ss", "ss_sold_date_sk"), ("d", "d_date_sk")),)
SALES_ITEMS = Join(
    SALES, Filter(ITEMS, BRAND), "inner", ((("ss", "ss_item_sk"), ("i", "i_item_sk")),)
)


def test_a_filtered_relation_on_the_partition_key_is_the_pruning_side() -> None:
    assert pruning_side(SALES, Filter(DATES, YEAR), ON_DATE) == Pruning(1, "ss")
    flipped = tuple((b, a) for a, b in ON_DATE)
    assert pruning_side(Filter(DATES, YEAR), SALES, flipped) == Pruning(0, "ss")


def test_the_pruned_table_is_found_through_inner_joins() -> None:
    """Spark traces the join key down to the scan through the joins below (TPC-DS q25:
    store_sales joined to store_returns and catalog_sales before date_dim)."""
    assert pruning_side(SALES_ITEMS, Filter(DATES, YEAR), ON_DATE) == Pruning(1, "ss")


def test_no_pruning_side_without_a_filter_a_partition_key_or_an_inner_path() -> None:
    assert pruning_side(SALES, DATES, ON_DATE) is None  # nothing filters date_dim
    on_item = ((("ss", "ss_item_sk"), ("i", "i_item_sk")),)
    assert pruning_side(SALES, Filter(ITEMS, BRAND), on_item) is None  # not a partition key
    outer = Join(SALES, Filter(ITEMS, BRAND), "left", SALES_ITEMS.keys)
    assert pruning_side(outer, Filter(DATES, YEAR), ON_DATE) is None
    unpartitioned = Scan("store_sales", "ss", ("ss_item_sk", "ss_sold_date_sk"))
    assert pruning_side(unpartitioned, Filter(DATES, YEAR), ON_DATE) is None


FACTS = Side(rows=50, size=40, label="the join of i, ss")  # filtered through item: few rows
DAYS = Side(rows=24_000, size=16, label="date_dim d")  # a third of date_dim


def test_the_pruning_side_is_hashed_even_when_it_is_the_larger() -> None:
    seed = choose_join(FACTS, DAYS, "inner", True, 40, cost_params({"dynamic_pruning": "0"}))
    assert (seed.algorithm, seed.streamed) == ("map", 1)  # the smaller side hashed
    pruned = choose_join(FACTS, DAYS, "inner", True, 40, cost_params(), Pruning(1, "ss"))
    assert (pruned.algorithm, pruned.streamed) == ("map", 0)
    assert "prune ss's partitions" in pruned.reason


def test_a_pruning_side_over_the_threshold_leaves_the_choice_to_the_costs() -> None:
    params = cost_params({"map_join_threshold": "100000"})  # DAYS is 384,000 B
    choice = choose_join(FACTS, DAYS, "inner", True, 40, params, Pruning(1, "ss"))
    assert (choice.algorithm, choice.streamed) == ("map", 1)


QUERY = (
    "SELECT d.d_year, SUM(ss.ss_ext_sales_price) FROM store_sales ss "
    "JOIN item i ON ss.ss_item_sk = i.i_item_sk "
    "JOIN date_dim d ON ss.ss_sold_date_sk = d.d_date_sk "
    "WHERE i.i_manufact_id = 128 AND i.i_brand_id = 5 AND d.d_year > 1999 GROUP BY d.d_year"
)


def test_the_emitted_sql_broadcasts_date_dim_not_the_join_of_the_facts() -> None:
    """Over made-up SF 1 statistics the join of store_sales and the filtered items is
    estimated smaller than a third of date_dim: the seed's choice hashes that join (and
    Spark would read every store_sales partition); the default broadcasts date_dim."""
    source = TpcdsStatistics()
    assert hints(emit(planned(QUERY, source, dynamic_pruning="0"))) == [
        "BROADCAST(_j1)",
        "BROADCAST(i)",
    ]
    assert hints(emit(planned(QUERY, source))) == ["BROADCAST(d)", "BROADCAST(i)"]


@pytest.mark.spark
def test_spark_prunes_the_partitions_only_with_the_relation_hashed(
    spark: Any, tmp_path: Path
) -> None:
    """The two emitted texts of QUERY over a small store_sales partitioned by its date key:
    the final adaptive plan of the default's prunes store_sales by a broadcast subquery on
    its scan, the seed's does not; both return the same rows."""
    sales = [(i % 7, float(i), 2450815 + i % 30) for i in range(300)]
    spark.createDataFrame(
        sales, "ss_item_sk long, ss_ext_sales_price double, ss_sold_date_sk int"
    ).write.partitionBy("ss_sold_date_sk").parquet(str(tmp_path / "store_sales"))
    spark.read.parquet(str(tmp_path / "store_sales")).createOrReplaceTempView("store_sales")
    spark.createDataFrame(
        [(k, 1998 + (k - 2450815) // 10) for k in range(2450815, 2450845)],
        "d_date_sk int, d_year int",
    ).createOrReplaceTempView("date_dim")
    spark.createDataFrame(
        [(k, 128, k % 6) for k in range(7)], "i_item_sk long, i_manufact_id int, i_brand_id int"
    ).createOrReplaceTempView("item")
    source = TpcdsStatistics()

    def run(sql: str) -> tuple[list[Any], bool]:
        """The rows, and whether the final adaptive plan (once run) prunes by a broadcast
        subquery on a scan."""
        frame = spark.sql(sql)
        rows = sorted(frame.collect())
        return rows, "SubqueryBroadcast" in frame._jdf.queryExecution().executedPlan().toString()

    try:
        seed_rows, seed_pruned = run(emit(planned(QUERY, source, dynamic_pruning="0")))
        default_rows, default_pruned = run(emit(planned(QUERY, source)))
    finally:  # the session is shared: its temporary views go with the test
        for view in ("store_sales", "date_dim", "item"):
            spark.catalog.dropTempView(view)
    assert not seed_pruned
    assert default_pruned
    assert seed_rows == default_rows
