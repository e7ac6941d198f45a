"""A FROM list of inner joins followed by LEFT joins (TPC-DS q72, q75): `--emit spark` writes
its inner part in the plan's order and keeps the LEFT joins after it as written
(optimizer.physical.emit_spark._inner_prefix). Planned over made-up TPC-DS SF 1 statistics;
the last test runs the texts on Spark, rows without a match in the LEFT join included."""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot

from optimizer.physical.api import emit
from tests.support.planning import planned
from tests.support.tpcds import TpcdsStatistics

# q72's shape: the written order joins catalog_sales to inventory first, on the item alone
INNER_THEN_LEFT = """
SELECT i_item_desc, d1.d_week_seq, count(*) AS total_cnt,
       sum(CASE WHEN p_promo_sk IS NULL THEN 1 ELSE 0 END) AS no_promo
FROM catalog_sales
JOIN inventory ON (cs_item_sk = inv_item_sk)
JOIN item ON (i_item_sk = cs_item_sk)
JOIN household_demographics ON (cs_bill_hdemo_sk = hd_demo_sk)
JOIN date_dim d1 ON (cs_sold_date_sk = d1.d_date_sk)
JOIN date_dim d2 ON (inv_date_sk = d2.d_date_sk)
LEFT OUTER JOIN promotion ON (cs_promo_sk = p_promo_sk)
WHERE d1.d_week_seq = d2.d_week_seq AND inv_quantity_on_hand < cs_quantity
  AND hd_buy_potential = '>10000' AND d1.d_year = 1999
GROUP BY i_item_desc, d1.d_week_seq
"""


def _relations(sql: str) -> list[str]:
    """The aliases of the outermost FROM list, in written order, with each join's kind."""
    tree = sqlglot.parse_one(sql, read="spark")
    items = [tree.args["from_"].this.alias_or_name]
    for join in tree.args.get("joins") or ():
        items.append(f"{(join.side or '').lower()} {join.this.alias_or_name}".strip())
    return items


def test_the_inner_part_is_ordered_and_the_left_join_follows_it() -> None:
    emitted = emit(planned(INNER_THEN_LEFT, TpcdsStatistics()))
    relations = _relations(emitted)
    assert relations[-1] == "left promotion"
    # the plan hashes catalog_sales joined to the filtered household_demographics (_j1)
    # before inventory streams through it; d1, d2 and item follow
    assert relations[:-1] == ["_j1", "inventory", "d1", "d2", "item"]
    assert "BROADCAST(_j1)" in emitted
    # the LEFT join's ON reads catalog_sales's column from the derived table now holding it
    tree = sqlglot.parse_one(emitted, read="spark")
    left = next(j for j in tree.args["joins"] if j.side == "LEFT")
    assert left.args["on"].sql(dialect="spark") == "(_j1.cs_promo_sk = promotion.p_promo_sk)"


@pytest.mark.parametrize(
    "tail",
    [
        "RIGHT OUTER JOIN promotion ON (cs_promo_sk = p_promo_sk)",
        "FULL OUTER JOIN promotion ON (cs_promo_sk = p_promo_sk)",
        "LEFT OUTER JOIN promotion ON (cs_promo_sk = p_promo_sk) JOIN warehouse "
        "ON (inv_warehouse_sk = w_warehouse_sk)",
    ],
)
def test_other_joins_after_the_inner_part_keep_the_written_order(tail: str) -> None:
    sql = INNER_THEN_LEFT.replace("LEFT OUTER JOIN promotion ON (cs_promo_sk = p_promo_sk)", tail)
    emitted = emit(planned(sql, TpcdsStatistics()))
    assert _relations(emitted)[:3] == ["catalog_sales", "inventory", "item"]


@pytest.mark.spark
def test_spark_returns_the_rows_of_the_query_as_written(spark: Any) -> None:
    """Small views; some sales have no promotion (the LEFT join's NULLs) and some a
    promotion key no promotion has."""
    views = {
        "catalog_sales": (
            [(k % 6, k % 4, k % 3 + 10, (k % 5) or None, k % 9) for k in range(60)],
            "cs_item_sk int, cs_bill_hdemo_sk int, cs_sold_date_sk int, cs_promo_sk int, "
            "cs_quantity int",
        ),
        "inventory": (
            [(k % 6, k % 3 + 10, k % 7) for k in range(30)],
            "inv_item_sk int, inv_date_sk int, inv_quantity_on_hand int",
        ),
        "item": ([(k, f"item {k}") for k in range(6)], "i_item_sk int, i_item_desc string"),
        "household_demographics": (
            [(k, ">10000" if k % 2 else "0-500") for k in range(4)],
            "hd_demo_sk int, hd_buy_potential string",
        ),
        "date_dim": (
            [(k, 1999 if k < 12 else 2000, k // 2) for k in range(10, 14)],
            "d_date_sk int, d_year int, d_week_seq int",
        ),
        "promotion": ([(k,) for k in range(1, 4)], "p_promo_sk int"),
    }
    for name, (rows, schema) in views.items():
        spark.createDataFrame(rows, schema).createOrReplaceTempView(name)
    try:
        expected = sorted(spark.sql(INNER_THEN_LEFT).collect())
        emitted = emit(planned(INNER_THEN_LEFT, TpcdsStatistics()))
        assert _relations(emitted)[0] == "_j1"  # the order changed
        rows = sorted(spark.sql(emitted).collect())
    finally:  # the session is shared: its temporary views go with the test
        for name in views:
            spark.catalog.dropTempView(name)
    assert rows == expected
    assert any(r.no_promo for r in expected)
