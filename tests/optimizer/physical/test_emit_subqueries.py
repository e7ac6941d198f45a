"""`--emit spark` writes a correlated scalar subquery whose join the plan orders among the
FROM list's out as that join, in its place and with its hint, only where the join returns the
same rows as the subquery (optimizer.physical.emit_spark, module docstring); a small filtered
side's keys reach the subquery as a broadcast semi join (optimizer.physical.key_transfer).
Planned over made-up TPC-H statistics (no Spark); the rows are compared on Spark in
test_tpch_planning."""

from __future__ import annotations

from functools import partial

import pytest
import sqlglot
from sqlglot import exp

from benchmarks.tpch_queries import QUERIES
from optimizer.physical.api import PhysicalPlan, emit
from optimizer.plan import Join, conjuncts
from tests.support import planning
from tests.support.planning import hints

# planned hashing relations only (join results written as derived tables are
# test_emit_join_results' subject), unless the test says otherwise
planned = partial(planning.planned, broadcast_join_results="0")


def scalar_algorithms(plan: PhysicalPlan) -> list[str]:
    """The algorithm of each join that decorrelated a scalar subquery."""
    return [
        n.algorithm or ""
        for n in plan.root.walk()
        if isinstance(n.logical, Join) and n.logical.scalar is not None
    ]


def derived_table(sql: str, alias: str = "_sq1") -> exp.Subquery:
    tree = sqlglot.parse_one(sql, read="spark")
    (derived,) = [s for s in tree.find_all(exp.Subquery) if s.alias == alias]
    return derived


def join_conditions(sql: str) -> list[str]:
    tree = sqlglot.parse_one(sql, read="spark")
    return [c.sql() for j in tree.find_all(exp.Join) for c in conjuncts(j.args.get("on"))]


def test_q17_joins_its_grouped_subquery_and_broadcasts_it() -> None:
    plan = planned(QUERIES["q17"])
    assert scalar_algorithms(plan) == ["map"]
    emitted = emit(plan)
    tree = sqlglot.parse_one(emitted, read="spark")
    derived = derived_table(emitted)
    inner = derived.this
    assert [g.sql() for g in inner.args["group"].expressions] == ["lineitem.l_partkey"]
    assert inner.args.get("where") is None  # the correlation became the join's ON
    assert isinstance(derived.parent, exp.Join)
    on = join_conditions(emitted)
    assert "part.p_partkey = _sq1.l_partkey" in on
    assert "lineitem.l_quantity < _sq1._col_0" in on  # the comparison joins too
    assert "_sq1" not in tree.args["where"].sql()
    assert "BROADCAST(_sq1)" in hints(emitted)
    # no correlated subquery is left: the derived table and the semi join's small side
    assert sorted(s.alias for s in tree.find_all(exp.Subquery)) == ["_kt1", "_sq1"]


def test_q17_subquery_reads_only_the_parts_the_query_keeps() -> None:
    """The filtered part's keys, a broadcast semi join, before the aggregation."""
    plan = planned(QUERIES["q17"])
    (group,) = [g for g in plan.ordering.groups if g.scalars]
    (transfer,) = group.transfers
    assert (transfer.alias, transfer.column, transfer.inner.sql()) == (
        "_kt1",
        "p_partkey",
        "lineitem.l_partkey",
    )
    semi = [n for n in plan.root.walk() if n.op == "join" and n.logical.kind == "semi"]
    assert [(n.algorithm, n.streamed) for n in semi] == [("map", 0)]
    emitted = emit(plan)
    inner = derived_table(emitted).this
    (join,) = inner.args["joins"]
    assert (join.side, join.kind) == ("LEFT", "SEMI")
    assert join.args["on"].sql() == "lineitem.l_partkey = _kt1.p_partkey"
    small = join.this.this
    assert small.args["from_"].this.sql() == "part AS _kt1"
    assert small.args["where"].sql() == (
        "WHERE _kt1.p_brand = 'Brand#23' AND _kt1.p_container = 'MED BOX'"
    )
    assert hints(inner.sql(dialect="spark")) == ["BROADCAST(_kt1)"]


def test_key_transfer_off_plans_the_seeds_subquery() -> None:
    plan = planned(QUERIES["q17"], key_transfer="0")
    # one group, holding the one correlated subquery, and no semi join transferring keys
    assert [(len(g.scalars), g.transfers) for g in plan.ordering.groups] == [(1, ())]
    assert not [n for n in plan.root.walk() if n.op == "join" and n.logical.kind == "semi"]
    emitted = emit(plan)
    assert "SEMI" not in emitted
    assert "_sq1" in emitted


def test_an_unfiltered_side_transfers_no_keys() -> None:
    """Every part's key reaches the subquery anyway: nothing to filter it by."""
    sql = (
        "SELECT p_partkey FROM part WHERE p_retailprice < "
        "(SELECT 100 * MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey)"
    )
    plan = planned(sql)
    # one group, holding the one correlated subquery, and no semi join transferring keys
    assert [(len(g.scalars), g.transfers) for g in plan.ordering.groups] == [(1, ())]
    assert "SEMI" not in emit(plan)


def test_a_side_above_the_map_join_threshold_transfers_no_keys() -> None:
    plan = planned(QUERIES["q17"], map_join_threshold="1")
    # one group, holding the one correlated subquery, and no semi join transferring keys
    assert [(len(g.scalars), g.transfers) for g in plan.ordering.groups] == [(1, ())]
    assert not [n for n in plan.root.walk() if n.op == "join" and n.logical.kind == "semi"]
    assert "SEMI" not in emit(plan)


def test_q2_keeps_the_subquerys_own_filters_in_the_derived_table() -> None:
    emitted = emit(planned(QUERIES["q2"]))
    where = derived_table(emitted).this.args["where"].sql()
    assert "region.r_name = 'EUROPE'" in where
    assert "p_partkey" not in where
    assert "partsupp.ps_supplycost = _sq1._col_0" in join_conditions(emitted)


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


def test_a_common_join_is_written_out_in_its_place() -> None:
    plan = planned(QUERIES["q17"], map_join_threshold="0")
    assert scalar_algorithms(plan) == ["common"]
    emitted = emit(plan)
    # the join to lineitem on the same key reads its output as it is partitioned: MERGE
    # keeps it shuffled (common_hint=correlated); nothing else is hinted
    assert hints(emitted) == ["MERGE(part)"]
    assert hints(emit(planned(QUERIES["q17"], map_join_threshold="0", common_hint="none"))) == []
    tree = sqlglot.parse_one(emitted, read="spark")
    items = [tree.args["from_"].this] + [j.this for j in tree.args["joins"]]
    # the grouped subquery joins part before lineitem does: it is ordered with the FROM list,
    # and that pair is written in the query's order (the subquery is written after part)
    assert [i.alias_or_name for i in items] == ["part", "_sq1", "lineitem"]
    assert "part.p_partkey = _sq1.l_partkey" in join_conditions(emitted)
    assert "lineitem.l_quantity < _sq1._col_0" in join_conditions(emitted)


def test_the_subquerys_join_is_ordered_among_the_from_lists() -> None:
    """200 parts against 1,000 groups: the parts are the hash table (the hint says so), and
    the pair is written in the query's order, part first."""
    sql = (
        "SELECT p_partkey FROM part WHERE p_size = 1 AND p_retailprice < "
        "(SELECT 100 * MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey)"
    )
    plan = planned(sql, key_transfer="0")
    assert [(n.algorithm, n.streamed) for n in plan.root.walk() if n.op == "join"] == [("map", 0)]
    emitted = emit(plan)
    assert hints(emitted) == ["BROADCAST(part)"]
    assert "FROM part AS part JOIN (SELECT partsupp.ps_partkey AS ps_partkey, 100 * MIN(" in emitted
    assert "part.p_retailprice < _sq1._col_0" in join_conditions(emitted)


def test_a_semi_join_keeps_at_most_the_small_sides_keys() -> None:
    """The subquery grouped after the semi join has no more groups than the parts whose keys
    it kept (200 of size 1), where it had 1,000 without them."""
    sql = (
        "SELECT p_partkey FROM part WHERE p_size = 1 AND p_retailprice < "
        "(SELECT 100 * MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey)"
    )
    groups = {}
    for setting in ("1", "0"):
        plan = planned(sql, key_transfer=setting)
        (aggregate,) = [n for n in plan.root.walk() if n.op == "aggregate"]
        groups[setting] = aggregate.rows
    assert groups["0"] == pytest.approx(1000)
    assert groups["1"] <= 200
