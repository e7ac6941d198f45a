"""Join conditions the query implies (optimizer.physical.equivalence): `p_partkey = l_partkey
AND ps_partkey = l_partkey` links part with partsupp, so the join order may join those two
first and hash the few supplies of the parts kept (TPC-H q9's shape), and `--emit spark`
writes the equality it used; `transitive_joins=0` plans over the conditions written only.
Planned over made-up TPC-H statistics with TPC-H's key NDVs (no Spark); the emitted SQL's
rows are compared on Spark in test_tpch_planning."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from optimizer.physical.api import PhysicalPlan, emit, plan_query
from optimizer.physical.equivalence import ColumnClasses, column_equality, implied_equalities
from optimizer.plan import Join, Node, conjuncts
from tests.support.tpch import KeyedStatistics

KEY_NDV = {
    "p_partkey": 200_000,
    "ps_partkey": 200_000,
    "l_partkey": 200_000,
    "ps_suppkey": 10_000,
    "l_suppkey": 10_000,
}


SOURCE = KeyedStatistics(KEY_NDV)  # TPC-H SF 1 row counts with its key columns' NDVs
GREEN_SUPPLIES = (
    "SELECT ps_supplycost, l_quantity FROM lineitem, part, partsupp "
    "WHERE p_partkey = l_partkey AND ps_partkey = l_partkey AND ps_suppkey = l_suppkey "
    "AND p_name LIKE '%green%'"
)


def condition(sql: str) -> exp.Expr:
    return sqlglot.parse_one(f"SELECT 1 FROM t WHERE {sql}").args["where"].this


def covered(node: Node) -> set[str]:
    return {alias for alias, _ in node.output()}


def logical_joins(plan: PhysicalPlan) -> list[Join]:
    return [n.logical for n in plan.root.walk() if isinstance(n.logical, Join)]


def first_join(sql: str, **config: str) -> set[str]:
    """The relations of the plan's first join (the one covering the fewest)."""
    plan = plan_query(None, sql, config=config, source=SOURCE)
    return min((covered(j) for j in logical_joins(plan)), key=len)


def on_conditions(sql: str) -> list[str]:
    tree = sqlglot.parse_one(sql, read="spark")
    return [c.sql() for j in tree.find_all(exp.Join) for c in conjuncts(j.args.get("on"))]


def test_column_equality_is_two_bare_qualified_columns() -> None:
    assert column_equality(condition("a.x = b.y")) == (("a", "x"), ("b", "y"))
    assert column_equality(condition("a.x = 1")) is None
    assert column_equality(condition("a.x = b.y + 1")) is None
    assert column_equality(condition("a.x < b.y")) is None
    assert column_equality(condition("a.x = a.x")) is None


def test_an_or_implies_the_equalities_of_every_disjunct() -> None:
    both = condition("(a.x = b.y AND a.z > 1) OR (b.y = a.x AND c.w = a.x)")
    assert implied_equalities(both) == [(("a", "x"), ("b", "y"))]
    assert implied_equalities(condition("a.x = b.y OR a.z = b.y")) == []
    assert implied_equalities(condition("(a.x = b.y) AND c.z = b.y")) == [
        (("a", "x"), ("b", "y")),
        (("c", "z"), ("b", "y")),
    ]


def test_classes_join_the_columns_equalities_chain() -> None:
    classes = ColumnClasses()
    assert classes.union(("a", "x"), ("b", "y"))
    assert classes.union(("b", "y"), ("c", "z"))
    assert not classes.union(("c", "z"), ("a", "x"))  # known already
    assert classes.same(("a", "x"), ("c", "z"))
    assert not classes.same(("a", "x"), ("d", "w"))


def test_the_implied_condition_lets_part_join_partsupp_first() -> None:
    """The green parts' supplies (part hashed into partsupp) are the small side lineitem
    streams through; the written conditions alone never join part with partsupp."""
    assert first_join(GREEN_SUPPLIES) == {"part", "partsupp"}
    assert first_join(GREEN_SUPPLIES, transitive_joins="0") == {"lineitem", "part"}


def test_the_emitted_sql_writes_the_implied_equality_once() -> None:
    """part JOIN partsupp ON the implied equality; lineitem then joins on part's key (a
    written equality) and the supplier key, and the written ps_partkey = l_partkey, which
    the two before imply, is left out."""
    emitted = emit(plan_query(None, GREEN_SUPPLIES, source=SOURCE))
    on = on_conditions(emitted)
    assert "partsupp.ps_partkey = part.p_partkey" in on
    assert sorted(c for c in on if "lineitem" in c) == [
        "_j1.p_partkey = lineitem.l_partkey",
        "_j1.ps_suppkey = lineitem.l_suppkey",
    ]
    assert "BROADCAST(_j1)" in emitted


def test_without_transitive_joins_the_written_conditions_are_emitted() -> None:
    emitted = emit(
        plan_query(None, GREEN_SUPPLIES, config={"transitive_joins": "0"}, source=SOURCE)
    )
    assert sorted(on_conditions(emitted)) == [
        "part.p_partkey = lineitem.l_partkey",
        "partsupp.ps_partkey = lineitem.l_partkey",
        "partsupp.ps_suppkey = lineitem.l_suppkey",
    ]


def test_an_equality_every_disjunct_writes_is_not_written_again() -> None:
    """TPC-H q19's join condition is an OR whose every branch equates the part keys: the
    plan joins on that key, and the emitter adds nothing to the written OR."""
    sql = (
        "SELECT SUM(l_quantity) FROM lineitem, part WHERE (p_partkey = l_partkey AND "
        "p_size < 5) OR (p_partkey = l_partkey AND l_quantity > 40)"
    )
    plan = plan_query(None, sql, source=SOURCE)
    (join,) = logical_joins(plan)
    assert join.keys  # the key the OR implies
    (on,) = on_conditions(emit(plan))
    assert on.startswith("(part.p_partkey = lineitem.l_partkey AND part.p_size < 5) OR")


def test_an_implied_order_that_saves_little_keeps_the_written_conditions() -> None:
    """Orders whose costs are near each other keep the written conditions: here
    the implied one saves less than 99% of the group's cost."""
    assert first_join(GREEN_SUPPLIES, implied_join_gain="0.99") == {"lineitem", "part"}


def test_two_columns_of_one_relation_in_a_class_keep_every_written_equality() -> None:
    """l_partkey = ps_partkey = l_suppkey also says l_partkey = l_suppkey, which one key per
    join would lose: such a class stays the conditions written, each applied (even where
    any saving would take an implied order)."""
    sql = (
        "SELECT COUNT(*) FROM lineitem, part, partsupp WHERE p_partkey = l_partkey "
        "AND ps_partkey = l_partkey AND ps_partkey = l_suppkey AND p_name LIKE '%green%'"
    )
    plan = plan_query(None, sql, config={"implied_join_gain": "0"}, source=SOURCE)
    keys = {frozenset(pair) for join in logical_joins(plan) for pair in join.keys}
    assert {
        frozenset({("partsupp", "ps_partkey"), ("lineitem", "l_partkey")}),
        frozenset({("partsupp", "ps_partkey"), ("lineitem", "l_suppkey")}),
        frozenset({("part", "p_partkey"), ("lineitem", "l_partkey")}),
    } <= keys
    assert sorted(on_conditions(emit(plan))) == [
        "part.p_partkey = lineitem.l_partkey",
        "partsupp.ps_partkey = lineitem.l_partkey",
        "partsupp.ps_partkey = lineitem.l_suppkey",
    ]
