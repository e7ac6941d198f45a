"""`--emit spark` writes a correlated scalar subquery that the plan joins as a map join out
as that join, with BROADCAST on the hashed side, only where the join returns the same rows
as the subquery (optimizer.physical.emit_spark, module docstring). Planned over made-up
TPC-H statistics (no Spark); the rows are compared on Spark in test_tpch_planning."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from benchmarks.tpch_queries import QUERIES
from optimizer.physical.api import PhysicalPlan, emit, plan_query
from tests.test_tpch_planning import MadeUpStatistics

SOURCE = MadeUpStatistics()


def planned(sql: str, **config: str) -> PhysicalPlan:
    return plan_query(None, sql, config=config, source=SOURCE)


def scalar_algorithms(plan: PhysicalPlan) -> list[str]:
    """The algorithm of each join that decorrelated a scalar subquery."""
    joins = plan.ordering.scalar_joins
    return [
        n.algorithm or "" for n in plan.root.walk() if n.op == "join" and id(n.logical) in joins
    ]


def hints(sql: str) -> list[str]:
    tree = sqlglot.parse_one(sql, read="spark")
    return sorted(h.sql(dialect="spark") for h in tree.find_all(exp.JoinHint))


def test_q17_joins_its_grouped_subquery_and_broadcasts_it() -> None:
    plan = planned(QUERIES["q17"])
    assert scalar_algorithms(plan) == ["map"]
    emitted = emit(plan)
    tree = sqlglot.parse_one(emitted, read="spark")
    derived = [s for s in tree.find_all(exp.Subquery) if s.alias == "_sq1"]
    assert len(derived) == 1, emitted
    inner = derived[0].this
    assert [g.sql() for g in inner.args["group"].expressions] == ["lineitem.l_partkey"]
    assert inner.args.get("where") is None  # the correlation became the join's ON
    join = derived[0].parent
    assert isinstance(join, exp.Join)
    assert join.args["on"].sql() == "part.p_partkey = _sq1.l_partkey"
    assert "lineitem.l_quantity < _sq1._col_0" in tree.args["where"].sql()
    assert "BROADCAST(_sq1)" in hints(emitted)
    assert len(list(tree.find_all(exp.Subquery))) == 1  # no correlated subquery is left


def test_q2_keeps_the_subquerys_own_filters_in_the_derived_table() -> None:
    emitted = emit(planned(QUERIES["q2"]))
    tree = sqlglot.parse_one(emitted, read="spark")
    (derived,) = [s for s in tree.find_all(exp.Subquery) if s.alias == "_sq1"]
    where = derived.this.args["where"].sql()
    assert "region.r_name = 'EUROPE'" in where and "p_partkey" not in where
    assert "partsupp.ps_supplycost = _sq1._col_0" in tree.args["where"].sql()


NOT_EQUIVALENT = [
    # COUNT over no rows is 0, not NULL: the join would drop parts the query keeps
    "SELECT p_partkey FROM part WHERE p_size > "
    "(SELECT COUNT(*) FROM partsupp WHERE ps_partkey = p_partkey)",
    # COALESCE turns the missing group's NULL into a value
    "SELECT p_partkey FROM part WHERE p_retailprice > "
    "COALESCE((SELECT MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey), 0)",
    # not a conjunct: the OR keeps rows whose subquery is NULL
    "SELECT p_partkey FROM part WHERE p_size = 1 OR p_retailprice > "
    "(SELECT MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey)",
    # IS NULL of the value is true exactly where the join has no row
    "SELECT p_partkey FROM part WHERE "
    "(SELECT MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey) IS NULL",
]


@pytest.mark.parametrize("sql", NOT_EQUIVALENT)
def test_a_subquery_the_join_would_not_equal_is_left_as_written(sql: str) -> None:
    assert emit(planned(sql)) == sql  # one relation: nothing else to rewrite


def test_the_cases_left_as_written_are_map_joins_in_the_plan() -> None:
    """They are not left so for want of a map join."""
    for sql in NOT_EQUIVALENT:
        assert scalar_algorithms(planned(sql)) == ["map"], sql


def test_a_common_join_leaves_the_subquery_to_spark() -> None:
    plan = planned(QUERIES["q17"], map_join_threshold="0")
    assert scalar_algorithms(plan) == ["common"]
    assert "_sq1" not in emit(plan)


def test_a_hashed_outer_relation_gets_the_broadcast() -> None:
    """200 parts against 1,000 groups: the plan hashes the parts and streams the groups."""
    sql = (
        "SELECT p_partkey FROM part WHERE p_size = 1 AND p_retailprice < "
        "(SELECT 100 * MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey)"
    )
    plan = planned(sql)
    assert [(n.algorithm, n.streamed) for n in plan.root.walk() if n.op == "join"] == [("map", 1)]
    emitted = emit(plan)
    assert hints(emitted) == ["BROADCAST(part)"]
    assert "JOIN (SELECT partsupp.ps_partkey AS ps_partkey, 100 * MIN(" in emitted
    assert "part.p_retailprice < _sq1._col_0" in emitted
