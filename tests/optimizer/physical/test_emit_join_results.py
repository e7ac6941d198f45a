"""`broadcast_join_results=1` (the default): a map join may hash the result of the joins
below it, and `--emit spark` writes that join as a derived table `_jN` (its columns the
SELECT reads, renamed apart where two relations share a name) with BROADCAST(_jN), the hints
of the joins inside it in its own SELECT (optimizer.physical.emit_spark). Planned over
made-up TPC-H statistics (no Spark); the rows are compared on Spark in test_tpch_planning."""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from benchmarks.tpch_queries import QUERIES
from optimizer.physical.api import PhysicalPlan, emit
from tests.support.planning import planned

ON = {"broadcast_join_results": "1"}


def hashed_joins(plan: PhysicalPlan) -> list[str]:
    """The detail of each map join's hash-table side that is itself a join."""
    found = []
    for node in plan.root.walk():
        if node.op == "join" and node.algorithm in ("map", "bucket_map"):
            assert node.streamed is not None
            side = node.children[1 - node.streamed]
            if side.op == "join":
                found.append(side.detail)
    return found


# lineitem x part a x part b, the two parts filtered: the plan hashes a x b as one side
TWO_PARTS = (
    "FROM lineitem JOIN part a ON l_partkey = a.p_partkey "
    "JOIN part b ON a.p_size = b.p_partkey WHERE a.p_brand = 'Brand#23' AND b.p_size = 1 "
)


def planned_join_result(sql: str, **config: str) -> tuple[PhysicalPlan, str]:
    """The plan (one join result hashed) and its emitted SQL."""
    plan = planned(sql, **ON, **config)
    assert len(hashed_joins(plan)) == 1
    return plan, emit(plan)


def select_of(tree: exp.Expr, alias: str) -> exp.Select:
    (derived,) = [s for s in tree.find_all(exp.Subquery) if s.alias == alias]
    assert isinstance(derived.this, exp.Select)
    return derived.this


def own_hints(select: exp.Select) -> list[str]:
    hint = select.args.get("hint")
    return sorted(h.sql(dialect="spark") for h in hint.expressions) if hint else []


@pytest.mark.parametrize("name", list(QUERIES))
def test_turned_off_only_relations_are_hashed(name: str) -> None:
    plan = planned(QUERIES[name], broadcast_join_results="0")
    assert hashed_joins(plan) == []
    assert "_j1" not in emit(plan)


def test_join_results_are_hashed_by_default() -> None:
    assert hashed_joins(planned(QUERIES["q17"])) == hashed_joins(planned(QUERIES["q17"], **ON))
    assert len(hashed_joins(planned(QUERIES["q17"]))) == 1


def test_q17_broadcasts_the_parts_joined_with_their_groups() -> None:
    """The CBO's shape: part x the grouped subquery (one part's rows at most) is hashed,
    lineitem streams through it."""
    plan = planned(QUERIES["q17"], **ON)
    assert len(hashed_joins(plan)) == 1
    emitted = emit(plan)
    tree = sqlglot.parse_one(emitted, read="spark")
    assert own_hints(tree) == ["BROADCAST(_j1)"]
    inner = select_of(tree, "_j1")
    assert own_hints(inner) == ["BROADCAST(part)"]
    assert {
        i.alias_or_name for i in [inner.args["from_"].this, *(j.this for j in inner.args["joins"])]
    } == {"_sq1", "part"}
    for column in tree.find_all(exp.Column):  # part and _sq1 are read inside _j1 only
        if column.table in ("part", "_sq1"):
            assert column.find_ancestor(exp.Subquery) is not None, column.sql()
    assert "_j1.p_partkey = lineitem.l_partkey" in emitted
    assert "lineitem.l_quantity < _j1._col_0" in emitted


def test_shared_column_names_are_told_apart() -> None:
    sql = (
        "SELECT a.p_name, b.p_name, SUM(l_quantity) FROM lineitem "
        "JOIN part a ON l_partkey = a.p_partkey JOIN part b ON a.p_size = b.p_partkey "
        "WHERE a.p_brand = 'Brand#23' AND a.p_container = 'MED BOX' AND b.p_size = 1 "
        "GROUP BY a.p_name, b.p_name"
    )
    plan = planned(sql, **ON)
    assert len(hashed_joins(plan)) == 1
    tree = sqlglot.parse_one(emit(plan), read="spark")
    inner = select_of(tree, "_j1")
    outputs = {p.alias: p.this.sql() for p in inner.expressions}
    assert outputs["a_p_name"] == "a.p_name"
    assert outputs["b_p_name"] == "b.p_name"
    assert [p.sql() for p in tree.expressions[:2]] == [
        "_j1.a_p_name AS p_name",
        "_j1.b_p_name AS p_name",
    ]
    assert [g.sql() for g in tree.args["group"].expressions] == ["_j1.a_p_name", "_j1.b_p_name"]


def test_a_join_a_subquery_reads_is_left_unwritten() -> None:
    """The EXISTS reads `a`, which a derived table would hide: the join stays as written and
    Spark chooses its build side."""
    exists = "EXISTS (SELECT 1 FROM supplier WHERE s_suppkey = a.p_partkey)"
    sql = f"SELECT SUM(l_quantity) {TWO_PARTS} AND {exists}"
    _, emitted = planned_join_result(sql, semi_join_hints="0")
    assert "_j1" not in emitted
    assert "supplier.s_suppkey = a.p_partkey" in emitted
    # written as a semi join (the default), its condition reads `a` all the same
    _, emitted = planned_join_result(sql)
    assert "_j1" not in emitted
    assert "ON _sj1._k1 = a.p_partkey" in emitted


def test_nested_join_results_read_through_each_other() -> None:
    """q5: nation x region, then x supplier, then x lineitem, each hashed for the next."""
    emitted = emit(planned(QUERIES["q5"], **ON))
    tree = sqlglot.parse_one(emitted, read="spark")
    names = sorted(s.alias for s in tree.find_all(exp.Subquery) if s.alias.startswith("_j"))
    assert len(names) >= 2
    for outer, inner in zip(names[1:], names[:-1], strict=True):
        select = select_of(tree, outer)
        assert any(
            isinstance(c.table, str) and c.table == inner for c in select.find_all(exp.Column)
        ), (outer, inner)
        assert f"BROADCAST({inner})" in own_hints(select)


def test_an_uncorrelated_subquery_keeps_its_own_relations() -> None:
    """q11: the HAVING's subquery names supplier and nation too, its own: the outer join is
    written as _j1 all the same, and the subquery's columns are not read from _j1."""
    emitted = emit(planned(QUERIES["q11"], **ON))
    tree = sqlglot.parse_one(emitted, read="spark")
    assert own_hints(tree) == ["BROADCAST(_j1)"]
    having = tree.args["having"]
    (nested,) = list(having.find_all(exp.Select))[:1]
    assert "_j1" not in nested.sql()
    assert "BROADCAST(_j2)" in own_hints(nested)


def test_count_star_reads_no_column_and_is_no_obstacle() -> None:
    _, emitted = planned_join_result(f"SELECT COUNT(*) {TWO_PARTS} AND a.p_container = 'MED BOX'")
    assert "BROADCAST(_j1)" in emitted
    assert emitted.startswith("SELECT /*+ BROADCAST(_j1) */")
    assert "COUNT(*)" in emitted
