"""`common_hint=correlated` (the default): a common join whose partitioning a shuffle
elimination relies on (optimizer.physical.correlation.relied_on) is emitted with MERGE, so
Spark keeps it shuffled and the operator above reads its output without a second shuffle;
the other common joins are left to Spark. `common_hint=none` leaves every common join to
Spark (TPC-DS q95: Spark broadcast one side of the self-join of web_sales, then shuffled its
millions of rows again for the IN subquery's semi join)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from collectors.spark_session import session_settings
from optimizer.physical.api import emit
from optimizer.physical.correlation import relied_on
from tests.support.planning import hints, planned
from tests.support.tpcds import TpcdsStatistics

# web_sales joined to itself on the order number (TPC-DS q95's ws_wh), read by an IN
# subquery on the same key: the semi join's shuffle of the CTE's rows is removed
SELF_JOIN_IN = """
WITH ws_wh AS (
  SELECT ws1.ws_order_number, ws1.ws_warehouse_sk AS wh1, ws2.ws_warehouse_sk AS wh2
  FROM web_sales ws1, web_sales ws2
  WHERE ws1.ws_order_number = ws2.ws_order_number AND ws1.ws_warehouse_sk <> ws2.ws_warehouse_sk
)
SELECT COUNT(*), SUM(ws.ws_net_profit) FROM web_sales ws
WHERE ws.ws_order_number IN (SELECT ws_order_number FROM ws_wh)
"""
# the same self-join, grouped by another key: nothing relies on its partitioning
SELF_JOIN_GROUPED = """
SELECT ws1.ws_warehouse_sk, COUNT(*) FROM web_sales ws1, web_sales ws2
WHERE ws1.ws_order_number = ws2.ws_order_number AND ws1.ws_warehouse_sk <> ws2.ws_warehouse_sk
GROUP BY ws1.ws_warehouse_sk
"""


def test_the_common_join_a_removed_shuffle_relies_on_is_found() -> None:
    plan = planned(SELF_JOIN_IN, TpcdsStatistics())
    (join,) = relied_on(plan.root)
    assert (join.op, join.algorithm) == ("join", "common")
    assert join.detail.startswith("inner ws1.ws_order_number = ws2.ws_order_number")
    assert (plan.before.shuffles, plan.after.shuffles) == (5, 4)


def test_the_relied_on_join_is_hinted_merge_and_only_with_the_default() -> None:
    source = TpcdsStatistics()
    assert hints(emit(planned(SELF_JOIN_IN, source))) == ["MERGE(ws2)"]
    assert hints(emit(planned(SELF_JOIN_IN, source, common_hint="none"))) == []


def test_a_common_join_nothing_relies_on_is_left_to_spark() -> None:
    plan = planned(SELF_JOIN_GROUPED, TpcdsStatistics())
    assert [n.algorithm for n in plan.root.walk() if n.op == "join"] == ["common"]
    assert relied_on(plan.root) == set()
    assert hints(emit(plan)) == []


def _shape(frame: Any) -> tuple[list[str], int]:
    """The joins of the executed (final adaptive) plan, as `Operator JoinType`, and how many
    of its shuffle exchanges hash-partition a join's output."""
    joins: list[str] = []
    reshuffled = 0

    def visit(node: Any) -> bool:
        """Whether a join is at or below `node`."""
        nonlocal reshuffled
        name = str(node.getClass().getSimpleName())
        if name == "AdaptiveSparkPlanExec":
            return visit(node.executedPlan())
        if name.endswith("QueryStageExec"):
            return visit(node.plan())
        below = [
            visit(children.apply(index))
            for children in (node.children(), node.subqueries())
            for index in range(children.size())
        ]
        if name.endswith("JoinExec"):
            joins.append(f"{name.removesuffix('Exec')} {node.joinType()}")
        if name == "ShuffleExchangeExec" and any(below):
            reshuffled += "HashPartitioning" in str(node.outputPartitioning().getClass().getName())
        return name.endswith("JoinExec") or any(below)

    visit(frame._jdf.queryExecution().executedPlan())
    return joins, reshuffled


@pytest.mark.spark
def test_spark_keeps_the_hinted_join_shuffled_and_shuffles_its_output_no_more(
    spark: Any, tmp_path: Path
) -> None:
    """Over a small web_sales whose projected size Spark finds under its broadcast threshold
    (and the self-join's output, the product of its sides, over it), the default's text runs
    the self-join as a sort-merge join read by the semi join as it is; without the hint Spark
    broadcasts one side and shuffles the join's output again. Both give the same rows."""
    rows = [(i // 3, i % 4, float(i)) for i in range(600)]
    spark.createDataFrame(
        rows, "ws_order_number long, ws_warehouse_sk int, ws_net_profit double"
    ).write.parquet(str(tmp_path / "web_sales"))
    spark.read.parquet(str(tmp_path / "web_sales")).createOrReplaceTempView("web_sales")
    source = TpcdsStatistics()
    projected = spark.sql("SELECT ws_order_number, ws_warehouse_sk FROM web_sales")
    size = int(str(projected._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    threshold = str(2 * size)  # one side fits; the self-join's product does not
    settings = {
        "spark.sql.autoBroadcastJoinThreshold": threshold,
        "spark.sql.adaptive.autoBroadcastJoinThreshold": threshold,
    }
    try:
        with session_settings(spark, settings):
            hinted = spark.sql(emit(planned(SELF_JOIN_IN, source)))
            hinted_rows = hinted.collect()
            left = spark.sql(emit(planned(SELF_JOIN_IN, source, common_hint="none")))
            left_rows = left.collect()
            hinted_joins, hinted_reshuffled = _shape(hinted)
            left_joins, left_reshuffled = _shape(left)
    finally:  # the session is shared: its temporary view goes with the test
        spark.catalog.dropTempView("web_sales")
    assert "SortMergeJoin Inner" in hinted_joins
    assert "BroadcastHashJoin Inner" in left_joins
    assert (hinted_reshuffled, left_reshuffled) == (0, 1)
    assert hinted_rows == left_rows
