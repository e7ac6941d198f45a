"""The constructs TPC-DS's queries use beyond TPC-H (issue 24): window functions, GROUP BY
ROLLUP / CUBE / GROUPING SETS, INTERSECT and EXCEPT, each with its cardinality rule and its
cost in the physical plan; and the sample-based rules TPC-DS's star joins need (a partition
key joined through its listing, correlated grouping columns, filters on a sample that holds
every row). Over TPC-H's schema with made-up statistics (no Spark)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
import sqlglot

from metastore.catalog.lookup import PartitionQuery
from metastore.statistics.samples import Sample
from metastore.statistics.summaries import TableSummary
from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.listed_join import listed_key_join
from optimizer.estimate.sample_distinct import determines, distinct_tuple_share, key_in_sample
from optimizer.estimate.sample_filter import holds_every_row
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.selectivity import composite_key_completion
from optimizer.estimate.stats_query import StatsQuery
from optimizer.estimate.values import EXACT, Estimate
from optimizer.physical.api import explain, plan_query
from optimizer.plan import Aggregate, Join, Node, Window, walk
from optimizer.sql_to_plan import build_plan, grouping_sets
from tests.support.tpch import ROWS, MadeUpStatistics

SOURCE = MadeUpStatistics()


def plan_of(sql: str) -> Node:
    return build_plan(sql, SOURCE.table)


def rows_of(sql: str) -> float:
    return StatsQuery(SOURCE).of(plan_of(sql)).rows.value


# ------------------------------------------------------------------------ window functions


def test_a_window_function_keeps_every_input_row() -> None:
    sql = (
        "SELECT l_orderkey, RANK() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice) AS r "
        "FROM lineitem"
    )
    plan = plan_of(sql)
    assert isinstance(plan, Window)
    stats = StatsQuery(SOURCE).of(plan)
    assert stats.rows.value == ROWS["lineitem"]
    assert stats.rows.precision != EXACT or stats.rows.value != 1.0


def test_a_windowed_aggregate_without_group_by_is_not_a_global_aggregate() -> None:
    sql = "SELECT o_custkey, SUM(o_totalprice) OVER (PARTITION BY o_custkey) AS total FROM orders"
    assert not any(isinstance(n, Aggregate) for n in walk(plan_of(sql)))
    assert rows_of(sql) == ROWS["orders"]


def test_a_window_over_groups_keeps_the_groups() -> None:
    sql = (
        "SELECT n_regionkey, SUM(n_nationkey) AS s, "
        "SUM(SUM(n_nationkey)) OVER (PARTITION BY n_regionkey) AS share "
        "FROM nation GROUP BY n_regionkey"
    )
    plan = plan_of(sql)
    assert isinstance(plan, Window)
    assert isinstance(plan.child, Aggregate)
    assert rows_of(sql) == StatsQuery(SOURCE).of(plan.child).rows.value


def test_the_top_ranks_of_each_partition_are_kept() -> None:
    # orders: 1,500,000 rows over 1,000 customers (made-up statistics)
    sql = (
        "SELECT * FROM (SELECT o_custkey, RANK() OVER (PARTITION BY o_custkey "
        "ORDER BY o_totalprice DESC) AS rk FROM orders) t WHERE rk <= 10"
    )
    assert rows_of(sql) == pytest.approx(10 * 1000, rel=0.01)


def test_a_rank_runs_within_its_own_window_not_the_first() -> None:
    # the first window partitions by o_orderstatus (1,000 made-up values), the rank by
    # o_custkey (1,000): each rank's partitions are its own window's
    sql = (
        "SELECT * FROM (SELECT o_custkey, SUM(o_totalprice) OVER (PARTITION BY o_orderstatus, "
        "o_orderpriority) AS s, RANK() OVER (PARTITION BY o_custkey ORDER BY o_totalprice) AS rk "
        "FROM orders) t WHERE rk <= 10"
    )
    assert rows_of(sql) == pytest.approx(10 * 1000, rel=0.01)


def test_a_rank_over_groups_runs_from_one_to_its_partitions_groups() -> None:
    # a window over a GROUP BY is computed with the aggregate: its rank still counts the
    # groups of each of its partitions (TPC-DS q47's rank by month of each item and store)
    inner = (
        "SELECT o_custkey, o_orderdate, SUM(o_totalprice) AS s, "
        "AVG(SUM(o_totalprice)) OVER (PARTITION BY o_custkey, o_orderstatus) AS a, "
        "RANK() OVER (PARTITION BY o_custkey ORDER BY o_orderdate) AS rk "
        "FROM orders GROUP BY o_custkey, o_orderstatus, o_orderdate"
    )
    groups = StatsQuery(SOURCE).of(plan_of(inner)).rows.value
    assert rows_of(f"SELECT * FROM ({inner}) t WHERE rk <= 1") == pytest.approx(1000, rel=0.01)
    ranks = rows_of(f"SELECT DISTINCT rk FROM ({inner}) t")
    assert ranks == pytest.approx(groups / 1000, rel=0.01)


class _PricedStatistics(MadeUpStatistics):
    """The made-up statistics, o_totalprice never negative (0 to 500,000)."""

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        summary = super().summary(name, query)
        columns = dict(summary.columns)
        if "o_totalprice" in columns:
            columns["o_totalprice"] = replace(columns["o_totalprice"], min=0.0, max=500000.0)
        return replace(summary, columns=columns)


def test_a_window_aggregate_of_groups_keeps_the_groups_bounds() -> None:
    # AVG(SUM(x)) OVER (...) of a never-negative x is never negative: `> 0` keeps the rows
    # (TPC-DS q47, q57: avg_monthly_sales > 0), as SUM(x) > 0 does
    source = _PricedStatistics()
    inner = (
        "SELECT o_custkey, SUM(o_totalprice) AS s, "
        "AVG(SUM(o_totalprice)) OVER (PARTITION BY o_orderstatus) AS a, "
        "SUM(SUM(o_totalprice)) OVER () AS total "
        "FROM orders GROUP BY o_custkey, o_orderstatus"
    )
    groups = StatsQuery(source).of(build_plan(inner, source.table)).rows.value
    for condition in ("a > 0", "a >= 0", "total >= 0", "s >= 0"):
        sql = f"SELECT * FROM ({inner}) t WHERE {condition}"
        kept = StatsQuery(source).of(build_plan(sql, source.table)).rows.value
        assert kept == pytest.approx(groups, rel=0.01), condition
    sql = f"SELECT * FROM ({inner}) t WHERE a < 0"
    assert StatsQuery(source).of(build_plan(sql, source.table)).rows.value < groups / 100


def test_a_window_shuffles_by_its_partition_keys() -> None:
    sql = (
        "SELECT o_custkey, RANK() OVER (PARTITION BY o_custkey ORDER BY o_orderdate) AS r "
        "FROM orders"
    )
    document = explain(None, sql, source=SOURCE)
    window = _find(document["plan"], "window")
    assert window is not None
    assert window["inputs"][0]["shuffle"].startswith("shuffle by (orders.o_custkey)")
    assert window["cost"]["cpu"] > 0


# ---------------------------------------------------------------------------- grouping sets


def _sets(sql: str) -> list[list[str]]:
    group = sqlglot.parse_one(sql, read="spark").args["group"]
    found = grouping_sets(group)
    assert found is not None
    return [[k.sql() for k in keys] for keys in found]


def test_grouping_sets_of_rollup_cube_and_lists() -> None:
    assert _sets("SELECT 1 FROM t GROUP BY ROLLUP (a, b)") == [["a", "b"], ["a"], []]
    assert _sets("SELECT 1 FROM t GROUP BY a, b WITH ROLLUP") == [["a", "b"], ["a"], []]
    assert _sets("SELECT 1 FROM t GROUP BY a, ROLLUP (b, c)") == [
        ["a", "b", "c"],
        ["a", "b"],
        ["a"],
    ]
    assert _sets("SELECT 1 FROM t GROUP BY CUBE (a, b)") == [["a", "b"], ["b"], ["a"], []]
    assert _sets("SELECT 1 FROM t GROUP BY GROUPING SETS ((a, b), (a), ())") == [
        ["a", "b"],
        ["a"],
        [],
    ]
    assert (
        grouping_sets(sqlglot.parse_one("SELECT 1 FROM t GROUP BY a", read="spark").args["group"])
        is None
    )


def test_rollup_counts_the_groups_of_every_grouping_set() -> None:
    # nation: 25 rows, every column 25 distinct values in the made-up statistics
    sql = "SELECT n_regionkey, n_name, COUNT(*) FROM nation GROUP BY ROLLUP (n_regionkey, n_name)"
    plan = plan_of(sql)
    assert isinstance(plan, Aggregate)
    assert len(plan.grouping_sets) == 3
    assert rows_of(sql) == 25 + 25 + 1  # (regionkey, name), (regionkey), ()


def test_grouping_sets_cost_their_copies_of_the_input() -> None:
    plain = plan_query(
        None, "SELECT o_custkey, COUNT(*) FROM orders GROUP BY o_custkey", source=SOURCE
    )
    cube = plan_query(
        None,
        "SELECT o_custkey, o_orderstatus, COUNT(*) FROM orders "
        "GROUP BY CUBE (o_custkey, o_orderstatus)",
        source=SOURCE,
    )
    assert cube.root.cost.cpu > 3 * plain.root.cost.cpu  # four copies of every row


# ------------------------------------------------------------------------ INTERSECT, EXCEPT


def test_intersect_is_a_semi_join_of_the_distinct_left_rows() -> None:
    sql = "SELECT c_custkey FROM customer INTERSECT SELECT o_custkey FROM orders"
    plan = plan_of(sql)
    assert isinstance(plan, Join)
    assert plan.kind == "semi"
    assert isinstance(plan.left, Aggregate)
    rows = rows_of(sql)
    left = StatsQuery(SOURCE).of(plan.left).rows.value
    assert 0 < rows <= left  # bounded by the left side's distinct rows


def test_except_is_an_anti_join_and_except_all_keeps_duplicates() -> None:
    distinct = plan_of("SELECT o_custkey FROM orders EXCEPT SELECT c_custkey FROM customer")
    assert isinstance(distinct, Join)
    assert distinct.kind == "anti"
    assert isinstance(distinct.left, Aggregate)
    every = plan_of("SELECT o_custkey FROM orders EXCEPT ALL SELECT c_custkey FROM customer")
    assert isinstance(every, Join)
    assert not isinstance(every.left, Aggregate)


def test_intersect_and_except_are_planned_and_explained() -> None:
    sql = (
        "SELECT c_name FROM customer WHERE c_acctbal > 0 "
        "INTERSECT SELECT c_name FROM customer WHERE c_nationkey = 3 "
        "EXCEPT SELECT s_name FROM supplier"
    )
    document = explain(None, sql, source=SOURCE)
    # (A INTERSECT B) EXCEPT C: an anti join of the distinct rows of a semi join of A's
    # distinct rows with B, against C, each on the one column the sides have
    assert _outline(document["plan"]) == (
        "join: anti c_name = s_name",
        [
            (
                "aggregate: group by c_name",
                [
                    (
                        "join: semi c_name = c_name",
                        [
                            (
                                "aggregate: group by c_name",
                                [_scan_of("customer", "c_name", "c_acctbal > 0")],
                            ),
                            _scan_of("customer", "c_name", "c_nationkey = 3"),
                        ],
                    )
                ],
            ),
            ("project: s_name", [("scan: supplier", [])]),
        ],
    )
    anti = document["plan"]
    distinct = anti["children"][0]
    semi = distinct["children"][0]
    left = semi["children"][0]
    assert left["rows"] == 1000  # the customers' 1,000 names
    assert 0 < semi["rows"] <= left["rows"]  # bounded by the left side's distinct rows
    assert distinct["rows"] <= semi["rows"]
    assert 0 <= anti["rows"] <= distinct["rows"]
    assert anti["rows"] == pytest.approx(rows_of(sql))  # the estimate the plan explains


Outline = tuple[str, list["Outline"]]


def _outline(node: dict) -> Outline:  # type: ignore[type-arg]
    """An explained plan as (op: detail, [children]), without the planner's aliases."""
    detail = re.sub(r"\b_\w+\.", "", node["detail"])
    return f"{node['op']}: {detail}", [_outline(child) for child in node.get("children", [])]


def _scan_of(table: str, column: str, condition: str) -> Outline:
    return (
        f"project: {column}",
        [(f"filter: {table}.{condition}", [(f"scan: {table}", [])])],
    )


def test_set_operations_need_as_many_columns_on_both_sides() -> None:
    from optimizer.sql_to_plan import InvalidQuery

    with pytest.raises(InvalidQuery, match="same number of columns"):
        plan_of("SELECT c_custkey, c_name FROM customer INTERSECT SELECT o_custkey FROM orders")


# ------------------------------------------------------------------- sample-based rules


def _sample(columns: dict[str, np.ndarray], weights: list[float] | None = None) -> Sample:
    size = len(next(iter(columns.values())))
    return Sample(columns, np.asarray(weights or [1.0] * size, dtype=np.float64), 1)


def test_a_partition_key_joins_the_sampled_rows_its_listing_holds() -> None:
    # the fact side: 100 rows in partitions 1 (50), 2 (30) and 3 (20)
    listed = ((1, 0.5), (2, 0.3), (3, 0.2))
    sample = _sample({"k": np.array([1.0, 2.0, 4.0, 5.0, 1.0])})
    passed = np.array([True, True, True, False, False])  # the other side's filter
    found = listed_key_join(listed, 100.0, ScanSample("d", lambda: sample, passed), "k", 3.0)
    assert found is not None
    assert found.rows == pytest.approx(50 + 30)  # key 4 has no partition, row 4 and 5 failed
    assert found.matched.tolist() == [True, True, False, False, False]


def test_a_sampled_row_stands_for_its_share_of_the_other_sides_rows() -> None:
    listed = ((1, 1.0),)
    sample = _sample({"k": np.array([1.0, 2.0])}, weights=[10.0, 10.0])
    found = listed_key_join(listed, 7.0, ScanSample("d", lambda: sample), "k", 20.0)
    assert found is not None
    assert found.rows == pytest.approx(7.0 * 10.0)


def test_correlated_grouping_columns_share_their_combinations() -> None:
    category = np.array(["a", "a", "b", "b", "c", "c"], dtype=object)
    category_id = np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    color = np.array([1.0, 2.0, 1.0, 2.0, 1.0, 2.0])
    sample = _sample({"category": category, "category_id": category_id, "color": color})
    side = ScanSample("i", lambda: sample)
    assert distinct_tuple_share(side, ("category", "category_id")) == pytest.approx(3 / 9)
    assert distinct_tuple_share(side, ("category", "color")) == pytest.approx(1.0)
    assert distinct_tuple_share(side, ("category", "missing")) is None


def test_a_grouping_of_correlated_columns_counts_them_as_one_key() -> None:
    from optimizer.estimate.operators.aggregate import _correlated_group_ndvs

    category = np.array(["a", "a", "b", "b"], dtype=object)
    category_id = np.array([1.0, 1.0, 2.0, 2.0])
    side = ScanSample("i", lambda: _sample({"category": category, "category_id": category_id}))
    keys = [
        ColumnEstimate("string", Estimate(2.0, EXACT, "test"), origin=(side, "category")),
        ColumnEstimate("bigint", Estimate(2.0, EXACT, "test"), origin=(side, "category_id")),
        ColumnEstimate("bigint", Estimate(5.0, EXACT, "test")),
    ]
    assert _correlated_group_ndvs(keys, [2.0, 2.0, 5.0]) == [2.0, 1.0, 5.0]


def test_a_column_pair_is_a_key_when_the_sample_repeats_no_combination() -> None:
    ticket = np.array([1.0, 1.0, 2.0, 2.0, np.nan])
    item = np.array([5.0, 6.0, 5.0, 6.0, 5.0])
    side = ScanSample("s", lambda: _sample({"ticket": ticket, "item": item}))
    assert key_in_sample(side, ("ticket", "item")) is True
    assert key_in_sample(side, ("ticket",)) is False
    assert key_in_sample(side, ("ticket", "missing")) is None


def test_when_both_sides_are_composite_keys_the_smaller_chance_wins() -> None:
    # a sale's (ticket, item) and its return's: 12 items per sold ticket, 1.7 per returned
    sales = (2_880_000.0, [240_000.0, 18_000.0])
    returns = (288_000.0, [170_000.0, 18_000.0])
    assert composite_key_completion([sales, returns], [True, True]) == pytest.approx(1 / 12)
    # lineitem's (part, supplier) repeats in its sample; partsupp's is its key
    lineitem = (6_000_000.0, [200_000.0, 10_000.0])
    partsupp = (800_000.0, [200_000.0, 10_000.0])
    assert composite_key_completion([lineitem, partsupp], [False, True]) == pytest.approx(1 / 4)
    assert composite_key_completion([lineitem, partsupp]) == pytest.approx(1 / 4)


def test_a_ticket_determines_its_date_in_the_sample() -> None:
    tickets = np.repeat(np.arange(30.0), 2)
    dates = np.repeat(np.arange(30.0) % 7, 2)  # each ticket's two rows share a date
    items = np.tile([1.0, 2.0], 30)
    side = ScanSample("s", lambda: _sample({"t": tickets, "d": dates, "i": items}))
    assert determines(side, "t", "d")
    assert not determines(side, "t", "i")
    few = ScanSample("s", lambda: _sample({"t": tickets[:10], "d": dates[:10]}))
    assert not determines(few, "t", "d")  # five repeated tickets prove nothing


def test_grouping_by_a_column_and_what_it_determines_counts_the_column() -> None:
    from optimizer.estimate.operators.aggregate import _correlated_group_ndvs

    tickets = np.arange(40.0)
    customers = np.arange(40.0) % 8  # a ticket has one customer
    side = ScanSample("s", lambda: _sample({"t": tickets, "c": customers}))
    keys = [
        ColumnEstimate("bigint", Estimate(600.0, EXACT, "test"), origin=(side, "t")),
        ColumnEstimate("bigint", Estimate(7000.0, EXACT, "test"), origin=(side, "c")),
    ]
    assert _correlated_group_ndvs(keys, [600.0, 7000.0]) == [600.0, 1.0]


def test_count_per_group_follows_a_truncated_poisson_law() -> None:
    from optimizer.estimate.group_sizes import group_size_points

    assert group_size_points(1.0) is None  # a row per group: the count is 1
    points = group_size_points(2.0)
    assert points is not None
    counts, cumulative = points
    assert counts[0] == 1.0
    mean = sum(c * (p - q) for c, p, q in zip(counts, cumulative, (0.0, *cumulative), strict=False))
    assert mean == pytest.approx(2.0, rel=1e-3)
    assert cumulative[-1] == 1.0


def test_having_count_above_the_mean_keeps_few_groups() -> None:
    # orders: 1,500,000 rows, o_custkey 1,000 distinct values: 1,500 orders per customer
    grouped = "SELECT o_custkey, COUNT(*) AS n FROM orders GROUP BY o_custkey"
    few = rows_of(grouped + " HAVING COUNT(*) > 1700")
    most = rows_of(grouped + " HAVING COUNT(*) > 1300")
    assert few < 0.01 * 1000 < 0.99 * 1000 < most


def test_a_constant_of_each_union_input_is_filtered_by_its_share() -> None:
    sql = (
        "SELECT * FROM (SELECT 's' AS channel, o_custkey AS k FROM orders "
        "UNION ALL SELECT 'w' AS channel, c_custkey AS k FROM customer) u WHERE channel = 's'"
    )
    assert rows_of(sql) == pytest.approx(ROWS["orders"])


def test_the_unmatched_rows_of_a_left_join_are_null_on_the_right() -> None:
    # 150,000 customers, 25 nations; a customer key meets a nation key 1/1,000 of the time
    sql = "SELECT c_custkey, n_name FROM customer LEFT JOIN nation ON c_custkey = n_nationkey"
    join = plan_of(sql).children[0]
    assert isinstance(join, Join)
    stats = StatsQuery(SOURCE)
    inner = stats.of(Join(join.left, join.right, "inner", join.keys)).rows.value
    rows = stats.of(join).rows.value
    assert rows > inner  # unmatched customers are kept, padded with NULLs
    padded = stats.of(join).columns[("nation", "n_name")].null_fraction
    assert padded == pytest.approx((rows - inner) / rows)


def test_coalesce_with_a_failing_default_is_its_column() -> None:
    plain = rows_of("SELECT * FROM orders WHERE o_shippriority = 5")
    coalesced = rows_of("SELECT * FROM orders WHERE COALESCE(o_shippriority, 0) = 5")
    assert coalesced == pytest.approx(plain)
    assert coalesced == pytest.approx(ROWS["orders"] / 1000)


def test_a_key_unique_on_one_side_drops_the_composite_floor() -> None:
    # nation's key is unique: each supplier meets one nation, the second key only filters
    sql = (
        "SELECT * FROM supplier, nation WHERE s_nationkey = n_nationkey AND s_suppkey = n_regionkey"
    )
    assert rows_of(sql) < 25  # 10,000 x 25 / 25 / 1,000, not the floor's 25


def test_groups_joined_on_their_grouping_keys_meet_as_combinations() -> None:
    grouped = "SELECT n_regionkey AS r, n_nationkey AS k, COUNT(*) AS c FROM nation GROUP BY 1, 2"
    sql = f"SELECT * FROM ({grouped}) a JOIN ({grouped}) b ON a.r = b.r AND a.k = b.k"
    assert rows_of(sql) < 25  # 25 x 25 / 25 / 25, not the floor's 25


def test_a_sample_holds_every_row_only_when_no_row_stands_for_others() -> None:
    assert holds_every_row(_sample({"k": np.array([1.0, 2.0])}))
    assert not holds_every_row(_sample({"k": np.array([1.0, 2.0])}, weights=[1.0, 3.0]))


def _find(node: dict, op: str) -> dict | None:  # type: ignore[type-arg]
    if node.get("op") == op:
        return node
    for child in node.get("children", []):
        found = _find(child, op)
        if found is not None:
            return found
    return None


def test_an_inner_join_dropping_rows_thins_the_other_columns_at_random() -> None:
    # orders: 1,500,000 rows, o_clerk 1,000 values (1,500 rows each); the join keeps 1,500
    # of them: 1,000 (1 - (1 - 1/1,000)^1,500) = 777 clerks (Cardenas), not all 1,000
    on = "orders {} nation ON o_custkey = n_nationkey WHERE n_name = 'A'"
    sql = "SELECT o_clerk FROM " + on
    stats = StatsQuery(SOURCE)
    inner = next(n for n in walk(plan_of(sql.format("JOIN"))) if isinstance(n, Join))
    kept = stats.of(inner)
    assert kept.rows.value == pytest.approx(1500.0)
    expected = 1000.0 * (1.0 - (1.0 - 1500.0 / 1_500_000) ** 1500)
    assert kept.columns[("orders", "o_clerk")].ndv.value == pytest.approx(expected, rel=1e-6)
    # a LEFT JOIN keeps every order: its columns keep their values
    outer = next(n for n in walk(plan_of(sql.format("LEFT JOIN"))) if isinstance(n, Join))
    assert stats.of(outer).columns[("orders", "o_clerk")].ndv.value == pytest.approx(1000.0)


def test_drawn_distinct_inverts_cardenas() -> None:
    from optimizer.estimate.selectivity import drawn_distinct

    seen = 1000 * (1 - (1 - 1 / 1000) ** 3000)  # 1000 values, 3000 draws: 950 seen
    assert drawn_distinct(seen, 3000.0, 1e9) == pytest.approx(1000.0, rel=1e-4)
    assert drawn_distinct(3000.0, 3000.0, 5e5) == 5e5  # every draw differed: only the bound
    assert drawn_distinct(900.0, 3000.0, 800.0) == 800.0  # never beyond the bound


def _independent_keys(weight: float) -> tuple[list[ColumnEstimate], list[float]]:
    """3,000 sampled rows of two independent uniform columns (500 and 2,000 values), each
    standing for `weight` rows."""
    rng = np.random.default_rng(7)
    items = rng.integers(0, 500, 3000).astype(np.float64)
    customers = rng.integers(0, 2000, 3000).astype(np.float64)
    sample = _sample({"item": items, "customer": customers}, weights=[weight] * 3000)
    side = ScanSample("s", lambda: sample)
    keys = [
        ColumnEstimate("bigint", Estimate(500.0, EXACT, "test"), origin=(side, "item")),
        ColumnEstimate("bigint", Estimate(2000.0, EXACT, "test"), origin=(side, "customer")),
    ]
    return keys, [500.0, 2000.0]


def test_a_sparse_sample_of_independent_columns_implies_their_combinations() -> None:
    # 300,000 rows over 1,000,000 combinations fill 259,000 of them; the sample's 3,000 rows
    # nearly all differ, so their share of the product (0.4%) is sparseness, not correlation
    from optimizer.estimate.operators.aggregate import _correlated_group_ndvs
    from optimizer.estimate.selectivity import occupied_groups

    keys, ndvs = _independent_keys(weight=100.0)
    combined = _correlated_group_ndvs(keys, ndvs)
    assert combined[1] == 1.0
    groups = occupied_groups([combined[0]], 300_000.0)
    truth = occupied_groups([500.0, 2000.0], 300_000.0)  # 259,000
    assert truth / 2 < groups < truth * 2


def test_a_complete_sample_counts_its_combinations() -> None:
    from optimizer.estimate.operators.aggregate import _correlated_group_ndvs
    from optimizer.estimate.sample_distinct import distinct_tuples

    keys, ndvs = _independent_keys(weight=1.0)  # the sample is the table
    side = keys[0].origin[0]  # type: ignore[index]
    counted = distinct_tuples(side, ("item", "customer"))
    assert counted is not None
    combined = _correlated_group_ndvs(keys, ndvs)
    assert combined[0] < 2 * counted[0]  # the share of the product, not the implied 1e6
