"""One-row aggregates of one SELECT over the same relations merged into one read
(optimizer.rewrite.merge_aggregates): which groups merge, what the merged SELECT computes,
and what is left as written."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from optimizer.rewrite.merge_aggregates import merge_aggregates

# TPC-DS q88's shape: counts of one star join under different filters of one dimension
DERIVED = """
SELECT s1.n1, s2.n2, s3.d3, s3.a3 FROM
 (SELECT count(*) AS n1 FROM store_sales, time_dim
  WHERE ss_sold_time_sk = t_time_sk AND ss_store_sk = 1 AND t_hour = 8) AS s1,
 (SELECT count(*) AS n2 FROM store_sales, time_dim
  WHERE ss_sold_time_sk = t_time_sk AND ss_store_sk = 1 AND t_hour = 9) AS s2,
 (SELECT count(DISTINCT ss_item_sk) AS d3, avg(ss_list_price) AS a3 FROM store_sales, time_dim
  WHERE ss_sold_time_sk = t_time_sk AND ss_store_sk = 1 AND t_hour = 10 AND t_minute < 30) AS s3
"""
# TPC-DS q9's shape: scalar subqueries of a SELECT list
SCALAR = """
SELECT CASE WHEN (SELECT count(*) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20) > 10
            THEN (SELECT avg(ss_net_paid) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20)
            ELSE (SELECT sum(ss_net_paid) FROM store_sales WHERE ss_quantity > 20) END AS b
FROM reason WHERE r_reason_sk = 1
"""


def _merged(sql: str) -> tuple[int, exp.Expr]:
    tree = sqlglot.parse_one(sql, read="spark")
    return merge_aggregates(tree).groups, tree


def _text(tree: exp.Expr) -> str:
    return tree.sql(dialect="spark")


def test_derived_tables_over_the_same_join_become_one_read() -> None:
    count, tree = _merged(DERIVED)
    assert count == 1
    assert len(list(tree.find_all(exp.Subquery))) == 1
    assert tree.find(exp.Subquery).alias == "s1"  # type: ignore[union-attr]
    merged = tree.find(exp.Subquery).this  # type: ignore[union-attr]
    assert [p.alias for p in merged.expressions] == ["n1", "n2", "d3", "a3"]
    assert [p.this.sql("spark") for p in merged.expressions] == [
        "COUNT(CASE WHEN t_hour = 8 THEN 1 END)",
        "COUNT(CASE WHEN t_hour = 9 THEN 1 END)",
        "COUNT(DISTINCT CASE WHEN t_hour = 10 AND t_minute < 30 THEN ss_item_sk END)",
        "AVG(CASE WHEN t_hour = 10 AND t_minute < 30 THEN ss_list_price END)",
    ]
    assert merged.args["where"].this.sql("spark") == (
        "ss_sold_time_sk = t_time_sk AND ss_store_sk = 1 AND "
        "(t_hour = 8 OR t_hour = 9 OR (t_hour = 10 AND t_minute < 30))"
    )
    # the outer SELECT reads every output from the one derived table
    assert [c.sql("spark") for c in tree.expressions] == ["s1.n1", "s1.n2", "s1.d3", "s1.a3"]


def test_scalar_subqueries_become_one_cross_joined_read() -> None:
    count, tree = _merged(SCALAR)
    assert count == 1
    assert tree.find(exp.Subquery).alias == "_ma1"  # type: ignore[union-attr]
    text = _text(tree)
    assert text.startswith(
        "SELECT CASE WHEN _ma1._ma1_0 > 10 THEN _ma1._ma1_1 ELSE _ma1._ma1_2 END AS b "
        "FROM reason CROSS JOIN (SELECT "
    )
    # equal filters are one branch of the OR
    assert "WHERE ss_quantity BETWEEN 1 AND 20 OR ss_quantity > 20) AS _ma1" in text
    assert text.endswith("WHERE r_reason_sk = 1")


def test_an_unfiltered_aggregate_keeps_all_rows() -> None:
    count, tree = _merged(
        "SELECT a.n, b.m FROM (SELECT count(*) AS n FROM t) AS a, "
        "(SELECT max(y) AS m FROM t WHERE x = 1) AS b"
    )
    assert count == 1
    assert _text(tree) == (
        "SELECT a.n, a.m FROM (SELECT COUNT(*) AS n, "
        "MAX(CASE WHEN x = 1 THEN y END) AS m FROM t) AS a"
    )


@pytest.mark.parametrize(
    "sql",
    [
        # other relations
        "SELECT * FROM (SELECT count(*) AS n FROM t) AS a, (SELECT count(*) AS m FROM u) AS b",
        # a GROUP BY: more than one row
        "SELECT * FROM (SELECT count(*) AS n FROM t GROUP BY x) AS a, "
        "(SELECT count(*) AS m FROM t) AS b",
        # an aggregate that does not ignore NULLs, and a column outside an aggregate
        "SELECT * FROM (SELECT collect_list(x) AS n FROM t) AS a, "
        "(SELECT count(*) AS m FROM t) AS b",
        "SELECT * FROM (SELECT x AS n FROM t) AS a, (SELECT count(*) AS m FROM t) AS b",
        # the same output name twice
        "SELECT * FROM (SELECT count(*) AS n FROM t WHERE x = 1) AS a, "
        "(SELECT count(*) AS n FROM t WHERE x = 2) AS b",
        # a table inside named as a derived table outside
        "SELECT a.n, b.m FROM (SELECT count(*) AS n FROM t AS b WHERE b.x = 1) AS a, "
        "(SELECT count(*) AS m FROM t AS b WHERE b.x = 2) AS b",
        # not next to each other: a * would change its column order
        "SELECT * FROM (SELECT count(*) AS n FROM t) AS a, u, (SELECT count(*) AS m FROM t) AS b",
        # a join with ON, a subquery inside, a window
        "SELECT * FROM (SELECT count(*) AS n FROM t) AS a JOIN (SELECT count(*) AS m FROM t) AS b "
        "ON a.n = b.m",
        "SELECT * FROM (SELECT count(*) AS n FROM t WHERE x IN (SELECT y FROM u)) AS a, "
        "(SELECT count(*) AS m FROM t) AS b",
        "SELECT * FROM (SELECT sum(count(*)) OVER () AS n FROM t) AS a, "
        "(SELECT count(*) AS m FROM t) AS b",
        # correlated scalar subqueries, and scalar subqueries of an aggregated SELECT
        "SELECT (SELECT count(*) FROM t WHERE t.x = r.k), (SELECT max(y) FROM t WHERE t.x = r.k) "
        "FROM r",
        "SELECT count(*), (SELECT count(*) FROM t), (SELECT max(y) FROM t) FROM r",
    ],
)
def test_what_is_left_as_written(sql: str) -> None:
    count, tree = _merged(sql)
    assert count == 0
    assert _text(tree) == _text(sqlglot.parse_one(sql, read="spark"))
