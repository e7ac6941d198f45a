"""A FROM list of inner joins followed by LEFT joins (TPC-DS q72, q75): `--emit spark` writes
its inner part in the plan's order and keeps the LEFT joins after it as written
(optimizer.physical.emit_spark._inner_prefix); a LEFT join written before the inner joins
is moved after them when that plan costs less (optimizer.rewrite.lift_left_joins, q40, q80).
Planned over made-up TPC-DS SF 1 statistics; the Spark tests run the texts, rows without a
match in the LEFT join included."""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot

from optimizer.physical.api import emit
from optimizer.rewrite.lift_left_joins import lift_left_joins
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


# q40's shape: the LEFT join of sales and returns written before the dimensions' joins
LEFT_FIRST = """
SELECT i_item_id, sum(cs_sales_price - coalesce(cr_refunded_cash, 0)) AS net
FROM catalog_sales LEFT OUTER JOIN catalog_returns
  ON (cs_order_number = cr_order_number AND cs_item_sk = cr_item_sk), item, date_dim
WHERE i_current_price BETWEEN 0.99 AND 1.49 AND i_item_sk = cs_item_sk
  AND cs_sold_date_sk = d_date_sk AND d_year = 2000 AND d_moy = 3
GROUP BY i_item_id
"""


def test_a_left_join_written_first_is_moved_after_the_inner_joins() -> None:
    """The dimensions' filters keep a few sales: the plan joins them first and the LEFT
    join reads what is left (rewritten, cheaper); `lift_left_joins=0` keeps it first."""
    moved = planned(LEFT_FIRST, TpcdsStatistics())
    kept = planned(LEFT_FIRST, TpcdsStatistics(), lift_left_joins="0")
    assert moved.rewritten == 1
    assert kept.rewritten == 0
    assert moved.root.total_cost().total < kept.root.total_cost().total
    relations = _relations(emit(moved))
    assert relations[0] == "catalog_sales"
    assert set(relations[1:3]) == {"item", "date_dim"}
    assert relations[3] == "left catalog_returns"
    assert _relations(emit(kept)) == ["catalog_sales", "left catalog_returns", "item", "date_dim"]


@pytest.mark.parametrize(
    "sql",
    [
        # the LEFT join's ON reads a relation after it
        "SELECT 1 FROM a AS a LEFT JOIN b AS b ON a.k = b.k AND b.j = c.j, c AS c",
        # a later join's ON reads the LEFT join's relation
        "SELECT 1 FROM a AS a LEFT JOIN b AS b ON a.k = b.k JOIN c AS c ON c.j = b.j",
        # not a LEFT outer join, or no inner join after it
        "SELECT 1 FROM a AS a RIGHT JOIN b AS b ON a.k = b.k, c AS c",
        "SELECT 1 FROM a AS a LEFT ANTI JOIN b AS b ON a.k = b.k, c AS c",
        "SELECT 1 FROM a AS a LEFT JOIN b AS b ON a.k = b.k LEFT JOIN c AS c ON a.j = c.j",
    ],
)
def test_what_stays_where_it_is_written(sql: str) -> None:
    tree = sqlglot.parse_one(sql, read="spark")
    assert lift_left_joins(tree) == 0
    assert tree.sql(dialect="spark") == sqlglot.parse_one(sql, read="spark").sql(dialect="spark")


@pytest.mark.spark
def test_spark_returns_the_rows_of_the_left_join_written_first(spark: Any) -> None:
    """Sales with and without returns (coalesce reads the NULLs), items and dates the
    filters drop."""
    views = {
        "catalog_sales": (
            [(k, k % 6, 10 + k % 4, float(k)) for k in range(50)],
            "cs_order_number int, cs_item_sk int, cs_sold_date_sk int, cs_sales_price double",
        ),
        "catalog_returns": (
            [(k, k % 6, 0.5 * k) for k in range(0, 50, 4)],
            "cr_order_number int, cr_item_sk int, cr_refunded_cash double",
        ),
        "item": (
            [(k, f"item {k % 3}", 0.99 + 0.2 * k) for k in range(6)],
            "i_item_sk int, i_item_id string, i_current_price double",
        ),
        "date_dim": (
            [(10 + k, 2000, 3 if k < 3 else 4) for k in range(4)],
            "d_date_sk int, d_year int, d_moy int",
        ),
    }
    for name, (rows, schema) in views.items():
        spark.createDataFrame(rows, schema).createOrReplaceTempView(name)
    try:
        expected = sorted(spark.sql(LEFT_FIRST).collect())
        emitted = emit(planned(LEFT_FIRST, TpcdsStatistics()))
        rows = sorted(spark.sql(emitted).collect())
    finally:  # the session is shared: its temporary views go with the test
        for name in views:
            spark.catalog.dropTempView(name)
    assert _relations(emitted)[-1] == "left catalog_returns"
    assert rows == expected
    assert expected
