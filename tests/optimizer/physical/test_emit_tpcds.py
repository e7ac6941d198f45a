"""`--emit spark` over TPC-DS-shaped queries (benchmarks/plans.py --set tpcds): a join the
emitted SQL writes without an ON is a plain `JOIN`, not `CROSS JOIN`: Spark keeps the Cross
join type after it moves the WHERE's equalities into the join, and its dynamic partition
pruning skips Cross joins (TPC-DS q6 read every store_sales partition:
docs/benchmarks/2026-11-26-design-measurements.md#cross-join-in-emitted-sql).
Planned over made-up TPC-H statistics (no Spark)."""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from benchmarks.tpcds_queries import queries
from optimizer.physical.api import emit, plan_query
from tests.support.tpcds import TpcdsStatistics
from tests.support.tpch import MadeUpStatistics

SOURCE = MadeUpStatistics()


def test_a_join_without_on_is_an_inner_join_not_a_cross_join() -> None:
    sql = "SELECT n.n_name, r.r_name FROM nation AS n, region AS r WHERE r.r_name = 'ASIA'"
    emitted = emit(plan_query(None, sql, source=SOURCE))
    assert "CROSS" not in emitted.upper()
    tree = sqlglot.parse_one(emitted, read="spark")
    (join,) = list(tree.find_all(exp.Join))
    assert not join.kind  # Spark parses it as an Inner join
    assert not join.side


def test_the_from_lists_commas_stay_inner_joins() -> None:
    """TPC-DS q6's shape (its FROM list kept, a correlated scalar subquery joined to it):
    sqlglot reads the commas of Spark SQL as CROSS JOIN, which Spark would plan as Cross."""
    sql = (
        "SELECT n.n_name, COUNT(*) FROM nation n, supplier s, partsupp ps, part p "
        "WHERE s.s_nationkey = n.n_nationkey AND ps.ps_suppkey = s.s_suppkey "
        "AND ps.ps_partkey = p.p_partkey AND p.p_size = (SELECT MAX(p_size) FROM part) "
        "AND p.p_retailprice > 1.2 * (SELECT AVG(p2.p_retailprice) FROM part p2 "
        "WHERE p2.p_brand = p.p_brand) GROUP BY n.n_name"
    )
    emitted = emit(plan_query(None, sql, source=SOURCE))
    assert "CROSS" not in emitted.upper()
    tree = sqlglot.parse_one(emitted, read="spark")
    kinds = [str(j.args.get("kind") or "") for j in tree.find_all(exp.Join)]
    assert "CROSS" not in kinds
    assert "_sq" in emitted  # the subquery became a join, the FROM list stayed


CROSS_JOIN = re.compile(r"\bCROSS\s+JOIN\b", re.IGNORECASE)  # not `cross_items` (q14)


def test_no_tpcds_query_is_emitted_with_a_cross_join_it_does_not_write() -> None:
    """All 99 TPC-DS queries, planned over made-up SF 1 statistics: none of the emitted
    texts says CROSS JOIN unless the query does (none of them does)."""
    source = TpcdsStatistics()
    written = {name: sql for name, sql in queries().items() if not CROSS_JOIN.search(sql)}
    assert len(written) == 99
    crossed = [
        name
        for name, sql in written.items()
        if CROSS_JOIN.search(emit(plan_query(None, sql, source=source)))
    ]
    assert crossed == []
