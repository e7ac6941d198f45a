"""`--emit spark` over TPC-DS-shaped queries (benchmarks/plans.py --set tpcds): a join the
emitted SQL writes without an ON is a plain `JOIN`, not `CROSS JOIN`: Spark keeps the Cross
join type after it moves the WHERE's equalities into the join, and its dynamic partition
pruning skips Cross joins (TPC-DS q6 read every store_sales partition and ran 3-5x slower).
Planned over made-up TPC-H statistics (no Spark)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from optimizer.physical.api import emit, plan_query
from tests.test_tpch_planning import MadeUpStatistics

SOURCE = MadeUpStatistics()


def test_a_join_without_on_is_an_inner_join_not_a_cross_join() -> None:
    sql = "SELECT n.n_name, r.r_name FROM nation AS n, region AS r WHERE r.r_name = 'ASIA'"
    emitted = emit(plan_query(None, sql, source=SOURCE))
    assert "CROSS" not in emitted.upper()
    tree = sqlglot.parse_one(emitted, read="spark")
    (join,) = list(tree.find_all(exp.Join))
    assert not join.kind  # Spark parses it as an Inner join
    assert not join.side
