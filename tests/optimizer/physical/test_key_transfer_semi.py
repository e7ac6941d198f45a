"""Key transfer into EXISTS, NOT EXISTS and IN subqueries (optimizer.physical.key_transfer,
transfer_into_semi_join): a small filtered relation of the semi or anti join's left side
sends its keys into the subquery's FROM list as a broadcast LEFT SEMI JOIN, where the planned
cost is lower; never for NOT IN (a NULL key the semi join would drop changes its answer), a
grouped subquery, or with `key_transfer=0`. Planned over made-up TPC-H statistics (no
Spark); the rows are compared on Spark in test_tpch_planning."""

from __future__ import annotations

from functools import partial

import pytest
import sqlglot
from sqlglot import exp

from optimizer.physical.api import emit
from tests.support import planning
from tests.support.tpch import ROWS, KeyedStatistics

# TPC-H's distinct keys (a key column has one value per row of the table it keys), 25 nations
SOURCE = KeyedStatistics(
    {
        "l_orderkey": ROWS["orders"],
        "o_orderkey": ROWS["orders"],
        "o_custkey": ROWS["customer"] * 2 / 3,
        "c_custkey": ROWS["customer"],
        "c_nationkey": 25,
    }
)

CLERK = "o_clerk = 'Clerk#000000001'"
LATE = "l_commitdate < l_receiptdate"
EXISTS_QUERY = (  # TPC-H q4 with one clerk's orders for its quarter's
    f"SELECT o_orderpriority, COUNT(*) FROM orders WHERE {CLERK} AND EXISTS "
    f"(SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND {LATE}) GROUP BY o_orderpriority"
)
IN_QUERY = (
    f"SELECT o_orderpriority, COUNT(*) FROM orders WHERE {CLERK} AND o_orderkey IN "
    f"(SELECT l_orderkey FROM lineitem WHERE {LATE}) GROUP BY o_orderpriority"
)
NOT_EXISTS_QUERY = (
    "SELECT c_custkey FROM customer WHERE c_nationkey = 7 AND NOT EXISTS "
    "(SELECT * FROM orders WHERE o_custkey = c_custkey)"
)

planned = partial(planning.planned, source=SOURCE)


def semi_joins(sql: str) -> list[exp.Join]:
    tree = sqlglot.parse_one(sql, read="spark")
    return [j for j in tree.find_all(exp.Join) if (j.side, j.kind) == ("LEFT", "SEMI")]


def hints(select: exp.Expr) -> list[str]:
    return sorted(h.sql(dialect="spark") for h in select.find_all(exp.JoinHint))


def test_exists_subquery_reads_only_the_clerks_orders() -> None:
    plan = planned(EXISTS_QUERY, semi_join_hints="0")  # the EXISTS as written
    (transfer,) = plan.ordering.semi_transfers
    assert (transfer.alias, transfer.column, transfer.inner.sql()) == (
        "_kt1",
        "o_orderkey",
        "lineitem.l_orderkey",
    )
    joins = [n for n in plan.root.walk() if n.op == "join"]
    exists, transfer_join = sorted(joins, key=lambda n: n.logical.right.op != "join")
    assert (exists.logical.kind, transfer_join.logical.kind) == ("semi", "semi")
    assert exists.logical.right is transfer_join.logical  # orders with (lineitem semi _kt1)
    assert transfer_join.algorithm == "map"
    emitted = emit(plan)
    (join,) = semi_joins(emitted)
    assert join.args["on"].sql() == "lineitem.l_orderkey = _kt1.o_orderkey"
    small = join.this.this
    assert small.args["from_"].this.sql() == "orders AS _kt1"
    assert small.args["where"].sql() == "WHERE _kt1.o_clerk = 'Clerk#000000001'"
    exists = join.find_ancestor(exp.Exists)
    assert exists is not None  # written inside the EXISTS subquery, which stays correlated
    assert "lineitem.l_orderkey = orders.o_orderkey" in exists.sql()
    assert hints(exists) == ["BROADCAST(_kt1)"]


def test_in_subquery_takes_the_keys_on_its_projected_column() -> None:
    plan = planned(IN_QUERY)
    (transfer,) = plan.ordering.semi_transfers
    assert transfer.inner.sql() == "lineitem.l_orderkey"
    (join,) = semi_joins(emit(plan))
    assert join.args["on"].sql() == "lineitem.l_orderkey = _kt1.o_orderkey"
    assert join.find_ancestor(exp.In) is not None


def test_not_exists_subquery_takes_the_filtered_customers_keys() -> None:
    plan = planned(NOT_EXISTS_QUERY, semi_join_hints="0")  # the NOT EXISTS as written
    (transfer,) = plan.ordering.semi_transfers
    assert (transfer.column, transfer.inner.sql()) == ("c_custkey", "orders.o_custkey")
    (join,) = semi_joins(emit(plan))
    assert join.this.this.args["where"].sql() == "WHERE _kt1.c_nationkey = 7"
    assert join.find_ancestor(exp.Exists) is not None


def test_a_transfer_stays_in_the_subquery_written_as_a_join() -> None:
    """With the NOT EXISTS written as a broadcast anti join (optimizer.physical.emit_semi),
    the transferred keys' semi join is inside that join's derived table."""
    emitted = emit(planned(NOT_EXISTS_QUERY))
    tree = sqlglot.parse_one(emitted, read="spark")
    (anti,) = [j for j in tree.find_all(exp.Join) if (j.side, j.kind) == ("LEFT", "ANTI")]
    (transfer,) = [j for j in tree.find_all(exp.Join) if (j.side, j.kind) == ("LEFT", "SEMI")]
    assert transfer.find_ancestor(exp.Join) is anti
    assert transfer.this.this.args["where"].sql() == "WHERE _kt1.c_nationkey = 7"
    assert tree.find(exp.Exists) is None


def test_not_in_never_takes_keys() -> None:
    """NOT IN is false for every row when the subquery returns a NULL; the semi join would
    drop that NULL."""
    sql = IN_QUERY.replace("o_orderkey IN", "o_orderkey NOT IN")
    plan = planned(sql)
    assert not plan.ordering.semi_transfers
    assert not semi_joins(emit(plan))


@pytest.mark.parametrize(
    "subquery",
    [
        f"SELECT l_orderkey FROM lineitem WHERE {LATE} GROUP BY l_orderkey",
        f"SELECT l_orderkey FROM lineitem WHERE {LATE} LIMIT 10",
        f"SELECT MAX(l_orderkey) FROM lineitem WHERE {LATE}",
        f"SELECT l_orderkey FROM lineitem LEFT JOIN part ON l_partkey = p_partkey WHERE {LATE}",
        f"SELECT l_orderkey FROM lineitem WHERE {LATE} UNION ALL SELECT o_orderkey FROM orders",
        f"SELECT l_orderkey + 0 FROM lineitem WHERE {LATE}",
    ],
    ids=["grouped", "limit", "aggregate", "outer join", "union", "expression"],
)
def test_a_subquery_a_semi_join_could_change_takes_no_keys(subquery: str) -> None:
    sql = (
        f"SELECT o_orderpriority, COUNT(*) FROM orders WHERE {CLERK} AND o_orderkey IN "
        f"({subquery}) GROUP BY o_orderpriority"
    )
    assert not planned(sql).ordering.semi_transfers


def test_an_unfiltered_left_side_takes_no_keys() -> None:
    sql = EXISTS_QUERY.replace(f"{CLERK} AND ", "")
    assert "Clerk" not in sql
    assert not planned(sql).ordering.semi_transfers


def test_key_transfer_off_and_over_the_threshold_take_no_keys() -> None:
    assert not planned(EXISTS_QUERY, key_transfer="0").ordering.semi_transfers
    assert not planned(EXISTS_QUERY, map_join_threshold="1").ordering.semi_transfers
    assert "SEMI" not in emit(planned(EXISTS_QUERY, key_transfer="0"))


def test_a_transfer_keeping_much_of_the_subquery_is_not_taken() -> None:
    """One nation's customers keep 6% of the orders (6,000 of 100,000 ordering customers):
    taken at the default (at most a quarter), not when at most 5% may be kept."""
    assert planned(NOT_EXISTS_QUERY).ordering.semi_transfers
    assert not planned(NOT_EXISTS_QUERY, key_transfer_kept="0.05").ordering.semi_transfers
