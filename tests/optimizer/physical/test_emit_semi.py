"""`semi_join_hints=1` (the default): an EXISTS or NOT EXISTS the plan answers with a map join
hashing the subquery is emitted as a broadcast LEFT SEMI / LEFT ANTI JOIN with the
subquery's correlation as its ON (optimizer.physical.emit_semi); `semi_join_hints=0` leaves
the predicate as written. Planned over made-up TPC-DS SF 1 statistics; the last test runs
the texts on Spark, NULL keys included."""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from optimizer.physical.api import emit
from tests.support.planning import hints, planned
from tests.support.tpcds import TpcdsStatistics

# TPC-DS q69's shape: customers with store sales in a quarter and no web sales in it
EXISTS_NOT_EXISTS = """
SELECT c.c_birth_country, COUNT(*) FROM customer c, customer_address ca
WHERE c.c_current_addr_sk = ca.ca_address_sk AND ca.ca_state IN ('KY', 'GA', 'NM')
  AND EXISTS (SELECT * FROM store_sales, date_dim WHERE c.c_customer_sk = ss_customer_sk
              AND ss_sold_date_sk = d_date_sk AND d_year = 2001 AND d_moy BETWEEN 4 AND 6)
  AND NOT EXISTS (SELECT * FROM web_sales, date_dim WHERE c.c_customer_sk = ws_bill_customer_sk
              AND ws_sold_date_sk = d_date_sk AND d_year = 2001 AND d_moy BETWEEN 4 AND 6)
GROUP BY c.c_birth_country
"""
# the made-up statistics keep most of a quarter's sales: a threshold the subqueries fit
FITS = {"map_join_threshold": "200000000"}


def _semi_joins(sql: str) -> list[str]:
    """`SIDE KIND alias ON condition` of each semi or anti join of the emitted text."""
    tree = sqlglot.parse_one(sql, read="spark")
    return [
        f"{j.side} {j.kind} {j.this.alias} ON {j.args['on'].sql(dialect='spark')}"
        for j in tree.find_all(exp.Join)
        if j.kind in ("SEMI", "ANTI")
    ]


def test_exists_and_not_exists_are_written_as_broadcast_semi_and_anti_joins() -> None:
    emitted = emit(planned(EXISTS_NOT_EXISTS, TpcdsStatistics(), **FITS))
    assert _semi_joins(emitted) == [
        "LEFT SEMI _sj1 ON c.c_customer_sk = _sj1._k1",
        "LEFT ANTI _sj2 ON c.c_customer_sk = _sj2._k1",
    ]
    assert {"BROADCAST(_sj1)", "BROADCAST(_sj2)"} <= set(hints(emitted))
    tree = sqlglot.parse_one(emitted, read="spark")
    assert tree.find(exp.Exists) is None
    # each derived table projects the correlation's inner column and keeps the other
    # conditions of the subquery
    first = tree.find(exp.Subquery)
    assert first is not None
    assert "store_sales.ss_customer_sk AS _k1" in first.sql("spark")
    assert "date_dim.d_moy BETWEEN 4 AND 6" in first.sql("spark")


def test_the_seed_level_leaves_the_predicates_as_written() -> None:
    emitted = emit(planned(EXISTS_NOT_EXISTS, TpcdsStatistics(), semi_join_hints="0", **FITS))
    assert _semi_joins(emitted) == []
    assert len(list(sqlglot.parse_one(emitted, read="spark").find_all(exp.Exists))) == 2


def test_in_a_common_join_and_a_predicate_under_or_stay_as_written() -> None:
    source = TpcdsStatistics()
    in_list = (
        "SELECT COUNT(*) FROM customer c WHERE c.c_customer_sk IN "
        "(SELECT ss_customer_sk FROM store_sales, date_dim WHERE ss_sold_date_sk = d_date_sk "
        "AND d_year = 2001 AND d_moy = 4)"
    )
    assert _semi_joins(emit(planned(in_list, source, **FITS))) == []
    under_or = EXISTS_NOT_EXISTS.replace(
        "'NM')\n  AND EXISTS", "'NM')\n  AND (c.c_birth_year = 1 OR EXISTS"
    )
    under_or = under_or.replace(
        "d_moy BETWEEN 4 AND 6)\n  AND NOT", "d_moy BETWEEN 4 AND 6))\n  AND NOT"
    )
    emitted = emit(planned(under_or, source, **FITS))
    assert [s.split(" ON")[0] for s in _semi_joins(emitted)] == ["LEFT ANTI _sj1"]
    big = emit(planned(EXISTS_NOT_EXISTS, source))
    assert _semi_joins(big) == []  # the subqueries' sides are common joins: Spark decides


def test_an_exists_in_a_cte_read_twice_is_written_once() -> None:
    """The CTE's body is planned at each reference: two semi joins of one subquery."""
    sql = (
        "WITH buyers AS (SELECT c.c_customer_sk, c.c_birth_country FROM customer c WHERE EXISTS "
        "(SELECT * FROM store_sales, date_dim WHERE c.c_customer_sk = ss_customer_sk "
        "AND ss_sold_date_sk = d_date_sk AND d_year = 2001 AND d_moy = 4)) "
        "SELECT a.c_birth_country, COUNT(*) FROM buyers a JOIN buyers b "
        "ON a.c_customer_sk = b.c_customer_sk GROUP BY a.c_birth_country"
    )
    plan = planned(sql, TpcdsStatistics(), **FITS)
    assert len([n for n in plan.root.walk() if n.op == "join" and n.algorithm == "map"]) >= 2
    assert _semi_joins(emit(plan)) == ["LEFT SEMI _sj1 ON c.c_customer_sk = _sj1._k1"]


def test_a_subquery_no_derived_table_can_hold_stays_as_written() -> None:
    """The outer query read in an ON of the subquery, or a correlated condition holding a
    subquery (Spark takes none in a join's condition)."""
    in_on = (
        "SELECT COUNT(*) FROM customer c WHERE EXISTS (SELECT ss_customer_sk FROM store_sales "
        "JOIN date_dim ON ss_sold_date_sk = d_date_sk AND d_year = c.c_birth_year "
        "WHERE c.c_customer_sk = ss_customer_sk AND d_moy = 4)"
    )
    nested = (
        "SELECT COUNT(*) FROM customer c WHERE EXISTS (SELECT ss_customer_sk FROM store_sales, "
        "date_dim WHERE ss_sold_date_sk = d_date_sk AND c.c_customer_sk = ss_customer_sk "
        "AND d_moy = 4 AND d_year IN (SELECT c.c_birth_year FROM item))"
    )
    for sql in (in_on, nested):
        emitted = emit(planned(sql, TpcdsStatistics(), **FITS))
        assert _semi_joins(emitted) == [], sql
        assert sqlglot.parse_one(emitted, read="spark").find(exp.Exists) is not None


@pytest.mark.spark
def test_spark_runs_the_written_joins_as_broadcasts_with_the_predicates_rows(
    spark: Any,
) -> None:
    """Small customer, store_sales and web_sales views (NULL keys on both sides of the NOT
    EXISTS): the emitted text returns the query's rows, its semi and anti joins broadcast
    the subqueries."""
    customers = [(k if k % 5 else None, k % 3, f"land{k % 4}") for k in range(1, 41)]
    spark.createDataFrame(
        customers, "c_customer_sk int, c_current_addr_sk int, c_birth_country string"
    ).createOrReplaceTempView("customer")
    spark.createDataFrame(
        [(0, "KY"), (1, "GA"), (2, "TX")], "ca_address_sk int, ca_state string"
    ).createOrReplaceTempView("customer_address")
    spark.createDataFrame(
        [(k, 2450815 + k % 3) for k in range(1, 41, 2)], "ss_customer_sk int, ss_sold_date_sk int"
    ).createOrReplaceTempView("store_sales")
    web = [(k if k % 7 else None, 2450815) for k in range(1, 41, 3)]
    spark.createDataFrame(
        web, "ws_bill_customer_sk int, ws_sold_date_sk int"
    ).createOrReplaceTempView("web_sales")
    spark.createDataFrame(
        [(2450815 + k, 2001, 4 + k) for k in range(3)], "d_date_sk int, d_year int, d_moy int"
    ).createOrReplaceTempView("date_dim")
    try:
        expected = sorted(spark.sql(EXISTS_NOT_EXISTS).collect())
        frame = spark.sql(emit(planned(EXISTS_NOT_EXISTS, TpcdsStatistics(), **FITS)))
        rows = sorted(frame.collect())
        plan = str(frame._jdf.queryExecution().executedPlan().toString())
    finally:  # the session is shared: its temporary views go with the test
        for view in ("customer", "customer_address", "store_sales", "web_sales", "date_dim"):
            spark.catalog.dropTempView(view)
    assert rows == expected
    assert expected  # the data leaves some customers
    assert "LeftSemi, BuildRight" in plan
    assert "LeftAnti, BuildRight" in plan
