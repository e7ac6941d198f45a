"""`merge_aggregates=1` (the default): one-row aggregates of one SELECT over the same
relations are planned and emitted as one read when the cost formulas price it lower
(optimizer.rewrite.merge_aggregates); `merge_aggregates=0` plans and writes each on its own.
Planned over made-up TPC-DS SF 1 statistics; the last test runs the texts on Spark."""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from optimizer.physical.api import emit, explain_json
from tests.optimizer.test_merge_aggregates import DERIVED
from tests.support.planning import planned
from tests.support.tpcds import TpcdsStatistics

# TPC-DS q9's shape; the third subquery's filter keeps no row of the test's data
SCALAR = """
SELECT r_reason_sk,
       CASE WHEN (SELECT count(*) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20) > 3
            THEN (SELECT avg(ss_list_price) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20)
            ELSE (SELECT sum(ss_list_price) FROM store_sales WHERE ss_quantity > 20) END AS b,
       (SELECT sum(ss_list_price) FROM store_sales WHERE ss_quantity > 1000) AS none_kept,
       (SELECT count(ss_item_sk) FROM store_sales WHERE ss_quantity > 1000) AS none_counted
FROM reason WHERE r_reason_sk < 3
"""


def _subqueries(sql: str) -> list[exp.Subquery]:
    return list(sqlglot.parse_one(sql, read="spark").find_all(exp.Subquery))


def test_derived_tables_are_planned_and_written_as_one_read() -> None:
    merged = planned(DERIVED, TpcdsStatistics())
    separate = planned(DERIVED, TpcdsStatistics(), merge_aggregates="0")
    assert merged.merged == 1
    assert separate.merged == 0
    assert explain_json(merged)["scans"]["after"] == 2  # store_sales and time_dim, once
    assert explain_json(separate)["scans"]["after"] == 6
    assert merged.root.total_cost().total < separate.root.total_cost().total
    written = emit(merged)
    assert [s.alias for s in _subqueries(written)] == ["s1"]
    assert "COUNT(DISTINCT CASE WHEN time_dim.t_hour = 10" in written
    assert {"s1", "s2", "s3"} <= {s.alias for s in _subqueries(emit(separate))}


def test_scalar_subqueries_are_costed_as_the_jobs_they_are() -> None:
    """The plan reads a SELECT list's scalar subqueries as expressions, at no cost: the
    comparison adds each one's own plan, without which the merged read (one scan of
    store_sales, costed) would lose to a plan pricing none."""
    merged = planned(SCALAR, TpcdsStatistics())
    assert merged.merged == 1
    assert explain_json(merged)["scans"]["after"] == 2  # reason and store_sales
    written = emit(merged)
    assert [s.alias for s in _subqueries(written)] == ["_ma1"]
    assert written.endswith(") AS _ma1 ON TRUE WHERE reason.r_reason_sk < 3")
    unmerged = emit(planned(SCALAR, TpcdsStatistics(), merge_aggregates="0"))
    assert len(_subqueries(unmerged)) == 5
    assert "_ma1" not in unmerged


@pytest.mark.spark
def test_spark_returns_the_rows_of_the_separate_aggregates(spark: Any) -> None:
    """Small store_sales, time_dim and reason views with NULLs in the aggregated and filtered
    columns, and filters that keep no row: each merged text returns the query's rows."""
    sales = [
        (k % 7 if k % 11 else None, k % 5, k % 3 + 1, k % 13 if k % 4 else None, k * 1.5)
        for k in range(1, 120)
    ]
    spark.createDataFrame(
        sales,
        "ss_sold_time_sk int, ss_item_sk int, ss_store_sk int, ss_quantity int, "
        "ss_list_price double",
    ).createOrReplaceTempView("store_sales")
    spark.createDataFrame(
        [(t, 8 + t % 3 if t != 4 else None, 20 * (t % 3)) for t in range(7)],
        "t_time_sk int, t_hour int, t_minute int",
    ).createOrReplaceTempView("time_dim")
    spark.createDataFrame([(r,) for r in range(5)], "r_reason_sk int").createOrReplaceTempView(
        "reason"
    )
    try:
        for sql in (DERIVED, SCALAR):
            written = emit(planned(sql, TpcdsStatistics()))
            assert len(_subqueries(written)) == 1
            expected = sorted(spark.sql(sql).collect())
            assert sorted(spark.sql(written).collect()) == expected
            assert expected
    finally:  # the session is shared: its temporary views go with the test
        for view in ("store_sales", "time_dim", "reason"):
            spark.catalog.dropTempView(view)
