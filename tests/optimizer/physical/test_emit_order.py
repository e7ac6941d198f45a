"""`--emit spark` writes the FROM list in the plan's join order, and two relations joined to
each other in the order the query writes them: an inner join's sides commute and the hint
names the build side, so a swap there would only make Spark's plan differ from its own
(optimizer.physical.emit_spark._FromWriter). Planned over made-up TPC-H statistics (no
Spark); the emitted SQL's rows are compared on Spark in test_tpch_planning."""

from __future__ import annotations

import sqlglot

from optimizer.physical.api import emit
from tests.support.planning import hints, planned

THREE = (
    "SELECT o_orderkey, l_quantity FROM {tables} WHERE l_orderkey = o_orderkey "
    "AND o_custkey = c_custkey AND c_mktsegment = 'BUILDING' AND c_acctbal > 9990"
)


def written(sql: str) -> list[str]:
    tree = sqlglot.parse_one(sql, read="spark")
    items = [tree.args["from_"].this] + [j.this for j in tree.args.get("joins") or ()]
    return [i.alias_or_name for i in items]


def test_the_first_pair_keeps_the_written_order_and_the_rest_follows_the_plan() -> None:
    """The few customers join orders first, whichever of the two the query writes first;
    lineitem, written first, joins last."""
    for tables, pair in (
        ("lineitem, orders, customer", ["orders", "customer"]),
        ("lineitem, customer, orders", ["customer", "orders"]),
    ):
        sql = emit(planned(THREE.format(tables=tables), broadcast_join_results="0"))
        assert written(sql) == [*pair, "lineitem"]
        assert hints(sql) == ["BROADCAST(customer)"]
