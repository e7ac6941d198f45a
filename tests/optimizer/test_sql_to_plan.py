"""SQL to plan: qualification against the catalog, where each WHERE conjunct goes, join
kinds and keys, subqueries, and one-line errors for what cannot be planned."""

from __future__ import annotations

import pytest
from sqlglot import exp
from sqlglot.expressions.core import POSITION_META_KEYS

from metastore.catalog.tables import TableInfo
from metastore.errors import UnknownColumn, UnknownTable
from optimizer.plan import Aggregate, Filter, Join, Limit, Project, Scan, Sort, Union, walk
from optimizer.sql_to_plan import InvalidQuery, build_plan, build_qualified_plan
from tests.support.tpch import info

TABLES = {
    "sales": info("sales", {"id": "bigint", "cust": "bigint", "amount": "double"}, {"dt": "date"}),
    "customers": info("customers", {"id": "bigint", "name": "string", "nation": "int"}),
    "db.nations": info("db.nations", {"id": "int", "name": "string"}),
}


def lookup(name: str) -> TableInfo:
    if name not in TABLES:
        raise UnknownTable(f"unknown table {name}")
    return TABLES[name]


def plan(sql: str):  # type: ignore[no-untyped-def]
    return build_plan(sql, lookup)


def nodes(sql: str, kind: type) -> list:  # type: ignore[type-arg]
    return [n for n in walk(plan(sql)) if isinstance(n, kind)]


def test_conjuncts_go_to_partitions_relations_and_joins() -> None:
    sql = (
        "SELECT c.name, SUM(s.amount) FROM sales s, customers c "
        "WHERE s.cust = c.id AND s.dt >= '2024-01-01' AND s.amount > 10 AND c.nation = 3 "
        "AND s.amount > c.nation GROUP BY c.name ORDER BY 2 LIMIT 5"
    )
    root = plan(sql)
    assert isinstance(root, Limit)
    assert isinstance(root.child, Sort)
    assert isinstance(root.child.child, Aggregate)
    [scan_s, _scan_c] = nodes(sql, Scan)
    assert [p.sql() for p in scan_s.partition_filter] == ["s.dt >= '2024-01-01'"]
    filters = [f.condition.sql() for f in nodes(sql, Filter)]
    assert filters == ["s.amount > 10", "c.nation = 3"]
    [join] = nodes(sql, Join)
    assert join.kind == "inner"
    assert join.keys == ((("s", "cust"), ("c", "id")),)
    assert join.residual is not None
    assert join.residual.sql() == "s.amount > c.nation"


def test_outer_joins_keep_filters_on_the_null_supplying_side_above_the_join() -> None:
    sql = (
        "SELECT * FROM sales s LEFT JOIN customers c ON s.cust = c.id AND c.nation = 1 "
        "WHERE c.name = 'x' AND s.amount > 1"
    )
    [join] = nodes(sql, Join)
    assert join.kind == "left"
    assert isinstance(join.right, Filter)
    assert join.right.condition.sql() == "c.nation = 1"
    assert isinstance(join.left, Filter)
    assert join.left.condition.sql() == "s.amount > 1"
    top = [f for f in nodes(sql, Filter) if isinstance(f.child, Join)]
    assert [f.condition.sql() for f in top] == ["c.name = 'x'"]
    full = nodes("SELECT * FROM sales s FULL JOIN customers c ON s.cust = c.id", Join)
    assert full[0].kind == "full"


def test_subqueries_become_semi_and_anti_joins() -> None:
    sql = (
        "SELECT s.id FROM sales s WHERE s.cust IN (SELECT c.id FROM customers c WHERE "
        "c.nation = 2) AND NOT EXISTS (SELECT 1 FROM customers k WHERE k.id = s.cust)"
    )
    kinds = [(j.kind, j.keys[0][0]) for j in nodes(sql, Join)]
    assert kinds == [("semi", ("s", "cust")), ("anti", ("s", "cust"))]


def test_derived_tables_ctes_unions_and_qualified_names() -> None:
    sql = (
        "WITH big AS (SELECT cust, amount FROM sales WHERE amount > 100) "
        "SELECT n.name, b.amount FROM big b JOIN customers c ON b.cust = c.id "
        "JOIN db.nations n ON c.nation = n.id"
    )
    joins = nodes(sql, Join)
    assert [j.keys for j in joins] == [
        ((("b", "cust"), ("c", "id")),),
        ((("c", "nation"), ("n", "id")),),
    ]
    assert any(isinstance(n, Project) for n in walk(joins[0].left))
    union = plan("SELECT id FROM sales UNION ALL SELECT id FROM customers")
    assert isinstance(union, Union)
    assert not union.distinct
    assert isinstance(plan("SELECT DISTINCT cust FROM sales"), Aggregate)


@pytest.mark.parametrize(
    ("sql", "error", "message"),
    [
        ("SELECT * FROM nope", UnknownTable, "unknown table nope"),
        ("SELECT s.nope FROM sales s", UnknownColumn, "nope"),
        ("SELECT * FROM sales WHERE", InvalidQuery, "malformed SQL"),
        ("SELEC 1", InvalidQuery, "malformed SQL"),
        ("", InvalidQuery, "empty"),
        ("INSERT INTO sales VALUES (1, 2, 3.0, DATE'2024-01-01')", InvalidQuery, "only queries"),
        ("SELECT 1; SELECT 2", InvalidQuery, "one statement"),
        ("SELECT 1", InvalidQuery, "without FROM"),
    ],
)
def test_errors_are_one_line(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as raised:
        plan(sql)
    assert "\n" not in str(raised.value)


def test_hive_dialect() -> None:
    """Backquoted names are read as Hive writes them; the condition on the partition key
    goes to the scan's partition filter, and no Filter is left above the scan."""
    root = build_plan("SELECT `s`.`id` FROM sales s WHERE s.dt = '2024-01-01'", lookup, "hive")
    assert isinstance(root, Project)
    [(ref, column)] = root.outputs
    assert ref == ("_q", "id")
    assert isinstance(column, exp.Column)
    assert (column.table, column.name) == ("s", "id")
    scan = root.child
    assert isinstance(scan, Scan)
    assert (scan.table, scan.alias, scan.partition_keys) == ("sales", "s", ("dt",))
    assert scan.columns == ("id", "cust", "amount")
    [condition] = scan.partition_filter
    assert isinstance(condition, exp.EQ)
    assert condition.sql() == "s.dt = '2024-01-01'"


def test_parenthesised_inner_joins_flatten_as_explain_emits_them() -> None:
    """`statlas explain --emit spark` writes bushy orders as `a JOIN (b JOIN c ON x) ON y`;
    planned again, they are the same inner joins with the same keys and filters."""
    sql = (
        "SELECT /*+ BROADCAST(n) */ c.name FROM sales s JOIN (customers c JOIN db.nations n "
        "ON c.nation = n.id) ON s.cust = c.id WHERE n.name = 'x'"
    )
    joins = nodes(sql, Join)
    assert {j.kind for j in joins} == {"inner"}
    keys = {pair for j in joins for pair in j.keys}
    assert keys == {(("s", "cust"), ("c", "id")), (("c", "nation"), ("n", "id"))}
    assert [f.condition.sql() for f in nodes(sql, Filter)] == ["n.name = 'x'"]
    with pytest.raises(InvalidQuery, match="parenthesised join"):
        plan(
            "SELECT * FROM sales s LEFT JOIN (customers c JOIN db.nations n "
            "ON c.nation = n.id) ON s.cust = c.id"
        )


def test_qualified_statement_keeps_no_source_positions() -> None:
    """The parser's positions serve qualify's errors only; dropped after it, copies of the
    statement's expressions (sqlglot copies one to print it) do not deep-copy them."""
    qualified = build_qualified_plan(
        "SELECT s.id, 'x' AS t FROM sales s JOIN customers c ON s.cust = c.id "
        "WHERE s.amount > 10 AND s.dt = '2024-01-01'",
        lookup,
    )
    positioned = [
        node
        for node in qualified.statement.walk()
        if any(node.meta_get(key) is not None for key in POSITION_META_KEYS)
    ]
    assert positioned == []


def test_unknown_column_error_names_its_position() -> None:
    with pytest.raises(UnknownColumn, match="Line: 1, Col: 11"):
        plan("SELECT nope FROM sales s")
