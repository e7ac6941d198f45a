"""The 22 TPC-H queries through the planner: decorrelation shapes on small schemas, every
query planned and estimated over made-up statistics (no Spark), and over statistics Spark
collects from TPC-H SF 0.01 (tpchgen-cli), where every query also runs."""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlglot import exp

from benchmarks.tpch_queries import QUERIES
from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.tables import TableInfo
from metastore.errors import UnknownTable
from metastore.statistics.summaries import ColumnSummary, PartitionRows, TableSummary
from optimizer.estimate.predicates import LEVELS
from optimizer.estimate.sources import StatisticsSource
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Aggregate, Filter, Join, Node, Scan, columns_in, walk
from optimizer.sql_to_plan import build_plan, build_qualified_plan
from tests.support.tpch import MadeUpStatistics, info, tpch_lookup
from tests.support.tpch_lake import Lake

# Join nodes of each query's plan: FROM-list joins, IN/EXISTS semi and anti joins, and
# one join per decorrelated scalar subquery (plus the joins of the subquery's own FROM)
EXPECTED_JOINS = {
    "q1": 0,
    "q2": 8,  # 4 + the subquery's 3 + its decorrelation
    "q3": 2,
    "q4": 1,
    "q5": 5,
    "q6": 0,
    "q7": 5,
    "q8": 7,
    "q9": 5,
    "q10": 3,
    "q11": 5,  # 2 + the HAVING subquery's 2 + its one-row join
    "q12": 1,
    "q13": 1,
    "q14": 1,
    "q15": 2,
    "q16": 2,
    "q17": 2,
    "q18": 3,
    "q19": 1,
    "q20": 4,
    "q21": 5,
    "q22": 2,
}


def joins(node: Node) -> list[Join]:
    return [n for n in walk(node) if isinstance(n, Join)]


def assert_estimable(plan: Node, stats: StatsQuery) -> None:
    for node in walk(plan):
        rows = stats.of(node).rows.value
        assert math.isfinite(rows), (node.op, rows)
        assert rows >= 0, (node.op, rows)


# --- every query, planned and estimated over made-up statistics ---------------------------


@pytest.mark.parametrize("name", list(QUERIES))
def test_every_query_plans_and_estimates_without_spark(name: str) -> None:
    plan = build_plan(QUERIES[name], tpch_lookup)
    assert len(joins(plan)) == EXPECTED_JOINS[name]
    for node in walk(plan):  # no subquery is left inside a predicate
        condition = node.condition if isinstance(node, Filter) else None
        if isinstance(node, Join):
            condition = node.residual
        assert condition is None or condition.find(exp.Query) is None, condition
    for level in LEVELS:
        assert_estimable(plan, StatsQuery(MadeUpStatistics(), level))


@pytest.mark.parametrize("name", list(QUERIES))
def test_every_from_list_join_has_its_select(name: str) -> None:
    qualified = build_qualified_plan(QUERIES[name], tpch_lookup)
    selects = list(qualified.statement.find_all(exp.Select))
    for join in joins(qualified.plan):
        origin = join.select
        if origin is None:  # only subqueries' joins have none
            assert join.kind in ("semi", "anti") or join.right.output()[0][0].startswith("_sq")
        else:
            assert any(origin is s for s in selects)
            aliases = {a for a, _ in join.right.output()}
            assert aliases & _scope_of(origin), (name, aliases)
    # one per JOIN or comma of every SELECT (each is planned once in TPC-H)
    from_list_joins = [j for j in joins(qualified.plan) if j.select is not None]
    assert len(from_list_joins) == sum(len(s.args.get("joins") or ()) for s in selects)


def _scope_of(select: exp.Select) -> set[str]:
    sources = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or ()]
    return {s.alias_or_name.lower() for s in sources}


def test_interval_arithmetic_folds_into_partition_filters() -> None:
    plan = build_plan(QUERIES["q1"], tpch_lookup)
    [scan] = [n for n in walk(plan) if isinstance(n, Scan)]
    assert [p.sql() for p in scan.partition_filter] == [
        "lineitem.l_shipdate <= CAST('1998-09-02' AS DATE)"
    ]
    plan = build_plan(QUERIES["q6"], tpch_lookup)
    [scan] = [n for n in walk(plan) if isinstance(n, Scan)]
    assert [p.sql() for p in scan.partition_filter][1] == (
        "lineitem.l_shipdate < CAST('1995-01-01' AS DATE)"
    )
    [where] = [n for n in walk(plan) if isinstance(n, Filter)]
    assert "BETWEEN 0.05 AND 0.07" in where.condition.sql()
    month_end = build_plan(
        "SELECT * FROM orders WHERE o_orderdate < DATE '1996-01-31' + INTERVAL '1' MONTH",
        tpch_lookup,
    )
    [scan] = [n for n in walk(month_end) if isinstance(n, Scan)]
    assert scan.partition_filter[0].sql() == "orders.o_orderdate < CAST('1996-02-29' AS DATE)"


def test_common_conjuncts_of_an_or_become_join_keys() -> None:
    [join] = joins(build_plan(QUERIES["q19"], tpch_lookup))
    assert join.keys == ((("lineitem", "l_partkey"), ("part", "p_partkey")),)
    assert isinstance(join.residual, exp.Or) or " OR " in join.residual.sql()  # type: ignore[union-attr]
    assert isinstance(join.left, Filter)  # the ship mode and instruction: every branch's
    assert "l_shipinstruct" in join.left.condition.sql()


# --- decorrelation shapes on a small schema ------------------------------------------------

TABLES = {
    "sales": info("sales", {"id": "bigint", "cust": "bigint", "amount": "double"}, {"dt": "date"}),
    "customers": info("customers", {"id": "bigint", "name": "string", "nation": "int"}),
}


def lookup(name: str) -> TableInfo:
    if name not in TABLES:
        raise UnknownTable(f"unknown table {name}")
    return TABLES[name]


def test_uncorrelated_scalar_subquery_joins_a_one_row_side() -> None:
    plan = build_plan(
        "SELECT s.id FROM sales s WHERE s.amount > (SELECT AVG(t.amount) FROM sales t) "
        "AND s.cust = 3",
        lookup,
    )
    [join] = joins(plan)
    assert (join.kind, join.keys) == ("inner", ())
    assert isinstance(join.right, Aggregate)
    assert join.right.group_by == ()
    [value] = join.right.output()
    assert join.residual is not None
    assert join.residual.sql() == f"s.amount > {value[0]}.{value[1]}"
    assert isinstance(join.left, Filter)
    assert join.left.condition.sql() == "s.cust = 3"


def test_scalar_subquery_in_having_reads_the_aggregate_output() -> None:
    plan = build_plan(
        "SELECT s.cust, SUM(s.amount) AS total FROM sales s GROUP BY s.cust "
        "HAVING SUM(s.amount) > (SELECT SUM(t.amount) * 0.01 FROM sales t) AND COUNT(*) > 2",
        lookup,
    )
    [join] = joins(plan)
    assert isinstance(join.left, Filter)
    assert isinstance(join.left.child, Aggregate)
    assert join.left.condition.sql() == "COUNT(*) > 2"
    value = join.right.output()[0]
    assert join.residual is not None
    assert join.residual.sql() == f"_q.total > {value[0]}.{value[1]}"


def test_correlated_scalar_subquery_becomes_a_grouped_aggregate() -> None:
    # the inner relation has the outer one's name: only the aggregate's alias is visible
    plan = build_plan(
        "SELECT c.name FROM customers c, sales WHERE sales.cust = c.id AND sales.amount < "
        "(SELECT 0.2 * AVG(sales.amount) FROM sales WHERE sales.cust = c.id AND sales.id > 5)",
        lookup,
    )
    first, decorrelated = joins(plan)
    assert decorrelated.left is first
    assert decorrelated.kind == "inner"
    aggregate = decorrelated.right
    assert isinstance(aggregate, Aggregate)
    assert [g.sql() for g in aggregate.group_by] == ["sales.cust"]
    alias = aggregate.output()[0][0]
    assert aggregate.output() == ((alias, "cust"), (alias, "_col_0"))
    assert decorrelated.keys == ((("c", "id"), (alias, "cust")),)
    assert decorrelated.residual is not None
    assert decorrelated.residual.sql() == f"sales.amount < {alias}._col_0"
    assert isinstance(aggregate.child, Filter)  # the uncorrelated conjunct stays inside
    assert aggregate.child.condition.sql() == "sales.id > 5"
    for level in LEVELS:
        assert_estimable(plan, StatsQuery(SmallStatistics(), level))


def test_two_correlation_keys_and_a_nested_subquery() -> None:
    plan = build_plan(
        "SELECT c.name FROM customers c WHERE c.id IN (SELECT s.cust FROM sales s WHERE "
        "s.amount > (SELECT SUM(t.amount) FROM sales t WHERE t.cust = s.cust AND t.id = s.id))",
        lookup,
    )
    semi, decorrelated = sorted(joins(plan), key=lambda j: j.kind)[::-1]
    assert semi.kind == "semi"
    assert decorrelated.kind == "inner"
    alias = decorrelated.right.output()[0][0]
    assert decorrelated.keys == (
        (("s", "cust"), (alias, "cust")),
        (("s", "id"), (alias, "id")),
    )


def test_exists_with_non_equalities_keeps_them_as_residual() -> None:
    plan = build_plan(
        "SELECT s.id FROM sales s WHERE EXISTS (SELECT 1 FROM sales t WHERE t.cust = s.cust "
        "AND t.id <> s.id) AND NOT EXISTS (SELECT 1 FROM sales u WHERE u.cust = s.cust AND "
        "u.id <> s.id AND u.amount > 10)",
        lookup,
    )
    semi, anti = joins(plan)
    assert (semi.kind, semi.keys) == ("semi", ((("s", "cust"), ("t", "cust")),))
    assert semi.residual is not None
    assert semi.residual.sql() == "t.id <> s.id"
    assert (anti.kind, anti.keys) == ("anti", ((("s", "cust"), ("u", "cust")),))
    assert anti.residual is not None
    assert anti.residual.sql() == "u.id <> s.id"
    assert isinstance(anti.right, Filter)
    assert anti.right.condition.sql() == "u.amount > 10"
    for level in LEVELS:
        assert_estimable(plan, StatsQuery(SmallStatistics(), level))


def test_a_scalar_subquery_correlated_by_an_inequality_stays_a_predicate() -> None:
    plan = build_plan(
        "SELECT s.id FROM sales s WHERE s.amount > (SELECT MAX(t.amount) FROM sales t "
        "WHERE t.id < s.id)",
        lookup,
    )
    assert not joins(plan)
    [where] = [n for n in walk(plan) if isinstance(n, Filter)]
    assert where.condition.find(exp.Subquery) is not None


def test_a_correlated_subquery_in_having_stays_a_filter() -> None:
    plan = build_plan(
        "SELECT s.cust, SUM(s.amount) FROM sales s GROUP BY s.cust HAVING SUM(s.amount) > "
        "(SELECT MAX(t.amount) FROM sales t WHERE t.cust = s.cust)",
        lookup,
    )
    assert not joins(plan)
    assert isinstance(plan, Filter)
    assert plan.condition.find(exp.Subquery) is not None


def test_qualified_plan_maps_every_from_list_join_to_its_select() -> None:
    sql = (
        "SELECT x.name FROM (SELECT c.name, c.id FROM customers c JOIN sales s "
        "ON s.cust = c.id) x JOIN sales t ON t.cust = x.id "
        "WHERE t.amount > (SELECT AVG(u.amount) FROM sales u, customers v WHERE u.cust = v.id)"
    )
    qualified = build_qualified_plan(sql, lookup)
    assert build_plan(sql, lookup) is not qualified.plan  # a new plan each time
    selects = list(qualified.statement.find_all(exp.Select))
    outer, inner = selects[0], next(s for s in selects if s.find(exp.Join) and s is not selects[0])
    all_joins = joins(qualified.plan)
    assert len(all_joins) == 4  # derived table's, outer FROM's, subquery's, decorrelation
    mapped = [j for j in all_joins if j.select is not None]
    assert len(mapped) == 3  # not the decorrelation join
    for join in mapped:
        assert any(join.select is s for s in selects)
    top = next(j for j in mapped if j.keys and j.keys[0][1] == ("t", "cust"))
    assert top.select is outer
    derived = next(j for j in mapped if j.keys and j.keys[0][1] == ("s", "cust"))
    assert derived.select is inner
    assert "s.cust = c.id" in inner.sql()  # the statement is the qualified AST


class SmallStatistics(StatisticsSource):
    def table(self, name: str) -> TableInfo:
        return lookup(name)

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        info_ = lookup(name)
        columns = {
            c.name: ColumnSummary(
                c.name, c.type, 0, None, None, 50.0, "hll", 8.0, 8, [], None, None, None
            )
            for c in info_.columns
        }
        return TableSummary(name, 1, 1000, columns)

    def partitions(self, name: str, query: PartitionQuery) -> list[PartitionRows]:
        return []


# --- TPC-H SF 0.01 with statistics collected by Spark ----------------------------------------


@pytest.fixture(scope="module")
def tpch_views(spark: Any, tpch_lake: Lake) -> Iterator[None]:
    """TPC-H's tables as temporary views of the tests' Spark, on 2 shuffle partitions."""
    from benchmarks.data import TABLES as TPCH_TABLES
    from collectors.spark_session import session_settings

    with session_settings(spark, {"spark.sql.shuffle.partitions": "2"}):
        for table in TPCH_TABLES:
            spark.read.parquet(str(tpch_lake.root / table)).createOrReplaceTempView(table)
        yield
        for table in TPCH_TABLES:
            spark.catalog.dropTempView(table)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_every_query_estimates_over_collected_statistics(tpch_lake: Lake) -> None:
    from optimizer.estimate.sources import MetastoreSource

    source = MetastoreSource(tpch_lake.metastore.engine, memo=True)
    for name, sql in QUERIES.items():
        plan = build_plan(sql, source.table)
        assert len(joins(plan)) == EXPECTED_JOINS[name], name
        for level in LEVELS:
            assert_estimable(plan, StatsQuery(source, level))
        # the estimate of the whole query is at least plausible for a tiny scale
        assert StatsQuery(source).of(plan).rows.value <= 1e9, name


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.usefixtures("tpch_views")
def test_every_query_runs_on_spark(spark: Any, name: str) -> None:
    assert spark.sql(QUERIES[name]).collect(), name  # every answer has rows at SF 0.01


def _rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    def key(value: Any) -> Any:
        return float(f"{float(value):.9g}") if isinstance(value, float | Decimal) else value

    return sorted((tuple(key(v) for v in row) for row in spark.sql(sql).collect()), key=repr)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.usefixtures("tpch_views")
def test_emitted_spark_sql_returns_the_query_rows(tpch_lake: Lake, spark: Any, name: str) -> None:
    """`statlas explain --emit spark` (join order and hints) never changes a result: with the
    default map-join threshold (every dimension broadcast at this scale, join results too,
    as derived tables `_jN`), with none, and with relations only hashed."""
    from optimizer.estimate.sources import MetastoreSource
    from optimizer.physical.api import emit, explain_json, plan_query

    source = MetastoreSource(tpch_lake.metastore.engine, memo=True)
    expected = _rows(spark, QUERIES[name])
    for config in ({}, {"map_join_threshold": "0"}, {"broadcast_join_results": "0"}):
        plan = plan_query(None, QUERIES[name], config=config, source=source)
        assert _rows(spark, emit(plan)) == expected, (name, config, emit(plan))
        data = explain_json(plan)
        for figure in ("jobs", "shuffles", "scans"):
            assert 0 <= data[figure]["after"] <= data[figure]["before"], (name, figure)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.usefixtures("tpch_views")
def test_a_written_out_scalar_subquery_returns_the_query_rows(tpch_lake: Lake, spark: Any) -> None:
    """Most parts have no supplier with more than 9,000 available: their subquery is NULL,
    and the join written out for it has no group for them; both drop them."""
    from optimizer.estimate.sources import MetastoreSource
    from optimizer.physical.api import emit, plan_query

    sql = (
        "SELECT p_partkey, p_retailprice FROM part WHERE p_retailprice < (SELECT 100 * "
        "MIN(ps_supplycost) FROM partsupp WHERE ps_partkey = p_partkey AND ps_availqty > 9000)"
    )
    emitted = emit(plan_query(None, sql, source=MetastoreSource(tpch_lake.metastore.engine)))
    assert "AS _sq1 ON" in emitted, emitted
    assert "BROADCAST(_sq1)" in emitted, emitted
    expected = _rows(spark, sql)
    groups = spark.sql("SELECT COUNT(DISTINCT ps_partkey) FROM partsupp WHERE ps_availqty > 9000")
    assert 0 < len(expected) < groups.first()[0] < spark.table("part").count()
    assert _rows(spark, emitted) == expected


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.usefixtures("tpch_views")
def test_keys_transferred_into_a_subquery_keep_the_query_rows(tpch_lake: Lake, spark: Any) -> None:
    """The small parts' keys filter the subquery's partsupp before it groups: the groups of
    every other part go, and with them nothing the query returns (key_transfer off: the
    same rows, no semi join)."""
    from optimizer.estimate.sources import MetastoreSource
    from optimizer.physical.api import emit, plan_query

    sql = (
        "SELECT p_partkey, p_retailprice FROM part WHERE p_size < 6 AND p_brand <> 'Brand#11' "
        "AND p_retailprice < (SELECT 100 * MIN(ps_supplycost) FROM partsupp "
        "WHERE ps_partkey = p_partkey AND ps_availqty > 2000)"
    )
    source = MetastoreSource(tpch_lake.metastore.engine)
    transferred = emit(plan_query(None, sql, source=source))
    assert "LEFT SEMI JOIN (SELECT _kt1.p_partkey FROM part AS _kt1 WHERE" in transferred
    plain = emit(plan_query(None, sql, config={"key_transfer": "0"}, source=source))
    assert "SEMI" not in plain
    assert "_sq1" in plain
    expected = _rows(spark, sql)
    assert 0 < len(expected) < spark.table("part").count() / 5
    assert _rows(spark, transferred) == expected
    assert _rows(spark, plain) == expected


SEMI_TRANSFERS = {
    "exists": (
        "SELECT o_orderpriority, COUNT(*) AS n FROM orders WHERE o_clerk = 'Clerk#000000001' "
        "AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey "
        "AND l_commitdate < l_receiptdate) GROUP BY o_orderpriority"
    ),
    "in": (
        "SELECT o_orderkey, o_totalprice FROM orders WHERE o_clerk = 'Clerk#000000001' "
        "AND o_orderkey IN (SELECT l_orderkey FROM lineitem WHERE l_quantity > 10)"
    ),
    "not exists": (
        "SELECT c_custkey, c_name FROM customer WHERE c_nationkey = 7 AND NOT EXISTS "
        "(SELECT * FROM orders WHERE o_custkey = c_custkey AND o_totalprice > 1000)"
    ),
}


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("shape", list(SEMI_TRANSFERS))
@pytest.mark.usefixtures("tpch_views")
def test_keys_transferred_into_exists_and_in_keep_the_query_rows(
    tpch_lake: Lake, spark: Any, shape: str
) -> None:
    """The filtered outer relation's keys filter the subquery's table (a broadcast LEFT SEMI
    JOIN inside it): the same rows as the query, and as without the transfer. At SF 0.01
    every subquery fits 10 MB, and a hashed subquery has nothing to gain: the threshold is
    100 kB."""
    from optimizer.estimate.sources import MetastoreSource
    from optimizer.physical.api import emit, plan_query

    sql = SEMI_TRANSFERS[shape]
    source = MetastoreSource(tpch_lake.metastore.engine)
    small = {"map_join_threshold": "100000"}
    transferred = emit(plan_query(None, sql, config=small, source=source))
    assert "LEFT SEMI JOIN (SELECT _kt1." in transferred
    assert "BROADCAST(_kt1)" in transferred
    plain = emit(plan_query(None, sql, config={**small, "key_transfer": "0"}, source=source))
    assert "SEMI" not in plain
    expected = _rows(spark, sql)
    assert len(expected) > 0
    assert _rows(spark, transferred) == expected
    assert _rows(spark, plain) == expected


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.usefixtures("tpch_views")
def test_a_join_on_an_implied_condition_keeps_the_query_rows(tpch_lake: Lake, spark: Any) -> None:
    """part joins partsupp on the part key equality the query only implies (through
    lineitem's), and returns the query's rows, as the plan over the written conditions does
    (optimizer.physical.equivalence)."""
    from optimizer.estimate.sources import MetastoreSource
    from optimizer.physical.api import emit, plan_query

    sql = (
        "SELECT ps_suppkey, SUM(l_quantity * ps_supplycost) AS cost FROM lineitem, part, partsupp "
        "WHERE p_partkey = l_partkey AND ps_partkey = l_partkey AND ps_suppkey = l_suppkey "
        "AND p_name LIKE '%green%' GROUP BY ps_suppkey"
    )
    source = MetastoreSource(tpch_lake.metastore.engine)
    # at this scale every relation is broadcast and no order saves much: any saving counts
    implied = emit(plan_query(None, sql, config={"implied_join_gain": "0"}, source=source))
    assert "(partsupp.ps_partkey = part.p_partkey)" in implied, implied
    written = emit(plan_query(None, sql, config={"transitive_joins": "0"}, source=source))
    assert "(partsupp.ps_partkey = part.p_partkey)" not in written, written
    expected = _rows(spark, sql)
    assert len(expected) > 0
    assert _rows(spark, implied) == expected
    assert _rows(spark, written) == expected


@pytest.mark.parametrize("name", list(QUERIES))
def test_columns_in_finds_what_find_all_finds(name: str) -> None:
    """columns_in walks an expression's arguments itself: for every node of every qualified
    TPC-H statement, the qualified columns sqlglot's find_all finds."""
    statement = build_qualified_plan(QUERIES[name], tpch_lookup).statement
    for node in statement.walk():
        expected = {(c.table.lower(), c.name.lower()) for c in node.find_all(exp.Column) if c.table}
        assert columns_in(node) == expected
