"""Connected key-join sub-plans of the 99 TPC-DS queries (issue 24): `benchmarks/qerror.py
--set tpcds --subplans` judges every estimator on the joins a plan builds inside a query, not
only on the rows the query returns.

From DuckDB's text of each query, every SELECT block (in CTEs, derived tables, UNION branches,
subqueries too) whose FROM list holds catalog tables joined by inner joins (commas or INNER
JOIN ... ON; a table may appear several times under different aliases) gives its relations:
a FROM item that is not a catalog table (a derived table, a CTE) and the right side of an
outer join are kept out, with every conjunct that reads them. Each connected subset of two or
more of those relations, up to all of them, becomes

    SELECT COUNT(*) FROM <the relations, with their aliases>
    WHERE <the block's WHERE and ON conjuncts that read only them and hold no subquery>

Relations are connected by key joins only: equalities between the columns of two relations
that cover one side's primary key (a dimension's surrogate key, its first column, as
d_date_sk or i_item_sk; a fact table's (ss_item_sk, ss_ticket_number), (cs_item_sk,
cs_order_number), (inv_date_sk, inv_item_sk, inv_warehouse_sk), ...). At most MAX_PER_BLOCK
sub-plans per block, the smallest subsets first; identical sub-plans (same relations, aliases
and conjuncts) are counted once, under the first query that has them.

Truth: DuckDB's COUNT(*) on the generated database, cached in
DATA/qerror-tpcds-subplans-truth-sf<scale>.json by a hash of the SQL (a count DuckDB does not
finish within TRUTH_TIMEOUT seconds is left out and said so). Estimates: statlas (sketch) on
the node the COUNT(*) counts, Spark's CBO and PostgreSQL's planner on the input of the top
Aggregate, each on the sub-plan rewritten by sqlglot into its dialect.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlglot
from qerror_statlas import count_input
from qerror_truth import PG_DSN, pg_plan, pg_serial_cursor, spark_plan_rows
from sqlglot import exp
from tpcds_queries import TABLES, duckdb_connection, duckdb_queries

from metastore.errors import StatlasError
from optimizer.estimate.predicates import SKETCH
from optimizer.estimate.sources import MetastoreSource
from optimizer.estimate.stats_query import StatsQuery
from optimizer.sql_to_plan import build_plan

MAX_PER_BLOCK = 60
TRUTH_TIMEOUT = 300.0

FACT_KEYS = {
    "store_sales": {"ss_item_sk", "ss_ticket_number"},
    "store_returns": {"sr_item_sk", "sr_ticket_number"},
    "catalog_sales": {"cs_item_sk", "cs_order_number"},
    "catalog_returns": {"cr_item_sk", "cr_order_number"},
    "web_sales": {"ws_item_sk", "ws_order_number"},
    "web_returns": {"wr_item_sk", "wr_order_number"},
    "inventory": {"inv_date_sk", "inv_item_sk", "inv_warehouse_sk"},
}


@dataclass(frozen=True)
class SubPlan:
    name: str  # "<query>~<alias>+<alias>+..."
    relations: int
    sql: str  # DuckDB's dialect

    @property
    def key(self) -> str:
        return sql_key(self.sql)


def sql_key(sql: str) -> str:
    return hashlib.sha256(" ".join(sql.split()).lower().encode()).hexdigest()[:16]


@functools.cache
def schema(database: str) -> dict[str, list[str]]:
    """{table: its columns in order} of the 24 tables, from the generated database."""
    connection = duckdb_connection(database, read_only=True)
    try:
        rows = connection.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "ORDER BY table_name, ordinal_position"
        ).fetchall()
    finally:
        connection.close()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        if table in TABLES:
            columns.setdefault(table, []).append(column.lower())
    return columns


def primary_keys(columns: dict[str, list[str]]) -> dict[str, set[str]]:
    keys = {table: {names[0]} for table, names in columns.items() if names[0].endswith("_sk")}
    keys.update(FACT_KEYS)
    return keys


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    inner = condition
    while isinstance(inner, exp.Paren):
        inner = inner.this
    if isinstance(inner, exp.And):
        return _conjuncts(inner.left) + _conjuncts(inner.right)
    return [inner]


def _text(conjunct: exp.Expression) -> str:
    """A conjunct in DuckDB's dialect, without the comments the query text carries."""
    copy = conjunct.copy()
    for node in copy.walk():
        node.comments = None
    if not isinstance(copy, (exp.Predicate, exp.Not, exp.Boolean, exp.Column)):
        copy = exp.Paren(this=copy)  # an OR, a CASE, ...: kept whole beside the ANDs
    return copy.sql(dialect="duckdb")


def _relation(item: exp.Expression, ctes: set[str]) -> tuple[str, str] | None:
    """(alias, table) of a FROM item that is a catalog table, else None."""
    if not isinstance(item, exp.Table) or item.args.get("db") or not item.name:
        return None
    table = item.name.lower()
    if table not in TABLES or table in ctes:
        return None
    return (item.alias_or_name.lower(), table)


def block_subplans(
    name: str,
    select: exp.Select,
    ctes: set[str],
    columns: dict[str, list[str]],
    keys: dict[str, set[str]],
) -> tuple[list[SubPlan], bool]:
    """The connected key-join sub-plans of one SELECT block (at most MAX_PER_BLOCK) and
    whether the cap cut some off."""
    source = select.args.get("from_") or select.args.get("from")
    if source is None:
        return [], False
    relations: dict[str, str] = {}  # alias -> table
    order: list[str] = []
    texts: dict[str, str] = {}
    conjuncts: list[exp.Expression] = []

    def add(item: exp.Expression) -> None:
        found = _relation(item, ctes)
        if found is None or found[0] in relations:
            return
        alias, table = found
        relations[alias] = table
        order.append(alias)
        texts[alias] = table if alias == table else f"{table} AS {alias}"

    add(source.this)
    for join in select.args.get("joins") or ():
        side = (join.side or "").upper()
        kind = (join.kind or "").upper()
        if side or kind not in ("", "INNER", "CROSS") or join.args.get("using"):
            continue  # an outer (semi, anti, ...) join's relation stays out, with its ON
        add(join.this)
        conjuncts += _conjuncts(join.args.get("on"))
    where = select.args.get("where")
    conjuncts += _conjuncts(where.this if where is not None else None)
    if len(relations) < 2:
        return [], False

    owner_of_column = {c: t for t, names in columns.items() for c in names}
    aliases_of: dict[str, list[str]] = {}
    for alias, table in relations.items():
        aliases_of.setdefault(table, []).append(alias)

    def owner(column: exp.Column) -> str | None:
        qualifier = column.table.lower()
        if qualifier:
            if qualifier in relations and column.name.lower() in columns[relations[qualifier]]:
                return qualifier
            return None
        table = owner_of_column.get(column.name.lower())
        candidates = aliases_of.get(table or "", [])
        return candidates[0] if len(candidates) == 1 else None

    kept: list[tuple[exp.Expression, frozenset[str]]] = []
    for conjunct in conjuncts:
        if conjunct.find(exp.Subquery, exp.Exists, exp.Select):
            continue
        readers = [owner(c) for c in conjunct.find_all(exp.Column)]
        if not readers or None in readers:
            continue  # a constant, or a column of an outer query, a CTE, a derived table
        kept.append((conjunct, frozenset(r for r in readers if r)))

    key_columns: dict[frozenset[str], dict[str, set[str]]] = {}
    for conjunct, readers in kept:
        if len(readers) == 2 and isinstance(conjunct, exp.EQ):
            left, right = conjunct.this, conjunct.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                sides = key_columns.setdefault(readers, {})
                for column in (left, right):
                    alias = owner(column)
                    if alias is not None:
                        sides.setdefault(alias, set()).add(column.name.lower())
    edges = [
        pair
        for pair, sides in key_columns.items()
        if any(keys.get(relations[a], {"?"}) <= sides.get(a, set()) for a in pair)
    ]
    neighbours: dict[str, set[str]] = {a: set() for a in relations}
    for pair in edges:
        a, b = tuple(pair)
        neighbours[a].add(b)
        neighbours[b].add(a)

    position = {alias: i for i, alias in enumerate(order)}
    subsets: list[frozenset[str]] = []
    level = set(edges)
    cut = False
    while level:
        ordered = sorted(level, key=lambda s: sorted(position[a] for a in s))
        room = MAX_PER_BLOCK - len(subsets)
        if len(ordered) > room:
            subsets += ordered[:room]
            cut = True
            break
        subsets += ordered
        level = {
            subset | {other}
            for subset in ordered
            for alias in subset
            for other in neighbours[alias] - subset
        }
    result = []
    for subset in subsets:
        chosen = sorted(subset, key=position.__getitem__)
        where_text = sorted({_text(c) for c, r in kept if r <= subset})
        text = "SELECT COUNT(*) FROM " + ", ".join(texts[a] for a in chosen)
        if where_text:
            text += " WHERE " + " AND ".join(where_text)
        result.append(SubPlan(f"{name}~{'+'.join(chosen)}", len(chosen), text))
    return result, cut


def subplans(names: list[str], database: str) -> tuple[list[SubPlan], dict[str, int], list[str]]:
    """The distinct sub-plans of the named queries, how many each query contributed before
    deduplication, and the blocks whose sub-plans the cap cut."""
    columns = schema(database)
    keys = primary_keys(columns)
    found: dict[str, SubPlan] = {}
    per_query: dict[str, int] = {}
    capped: list[str] = []
    for name in names:
        statement = sqlglot.parse_one(duckdb_queries()[name], read="duckdb")
        ctes = {cte.alias_or_name.lower() for cte in statement.find_all(exp.CTE)}
        count = 0
        for number, select in enumerate(statement.find_all(exp.Select)):
            plans, cut = block_subplans(name, select, ctes, columns, keys)
            if cut:
                capped.append(f"{name} block {number}")
            count += len(plans)
            for plan in plans:
                found.setdefault(plan.key, plan)
        per_query[name] = count
    return list(found.values()), per_query, capped


# ------------------------------------------------------------------------------ truth


def truth(
    root: Path, scale: str, plans: list[SubPlan], timeout: float = TRUTH_TIMEOUT
) -> dict[str, int | None]:
    """DuckDB's COUNT(*) of every sub-plan by its key (None: not done within `timeout`)."""
    cache_file = root / f"qerror-tpcds-subplans-truth-sf{scale}.json"
    cached: dict[str, Any] = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    missing = [p for p in plans if p.key not in cached]
    if missing:
        database = root / f"tpcds-sf{scale}" / "tpcds.duckdb"
        connection = duckdb_connection(database, read_only=True)
        connection.execute("SET enable_progress_bar = false")
        try:
            for number, plan in enumerate(missing, 1):
                timer = threading.Timer(timeout, connection.interrupt)
                timer.start()
                try:
                    (count,) = connection.execute(plan.sql).fetchone()
                    value: int | None = int(count)
                except Exception as error:  # interrupted: reported, not fatal
                    print(f"truth {plan.name}: {str(error).splitlines()[0][:200]}", flush=True)
                    value = None
                finally:
                    timer.cancel()
                cached[plan.key] = {"name": plan.name, "sql": plan.sql, "count": value}
                if number % 50 == 0 or number == len(missing):
                    print(f"  sub-plan truth {number}/{len(missing)}", flush=True)
                    tmp = cache_file.with_suffix(".tmp")
                    tmp.write_text(json.dumps(cached, indent=1, sort_keys=True))
                    tmp.replace(cache_file)
        finally:
            connection.close()
    return {p.key: cached[p.key]["count"] for p in plans}


# -------------------------------------------------------------------------- estimators


def spark_sql(plan: SubPlan) -> str:
    return sqlglot.transpile(plan.sql, read="duckdb", write="spark")[0]


def statlas_estimator(metastore: Any) -> Callable[[SubPlan], float | None]:
    """statlas at level sketch on the node the COUNT(*) counts."""
    source = MetastoreSource(metastore.engine, memo=True)

    def estimate(plan: SubPlan) -> float | None:
        try:
            node = count_input(build_plan(spark_sql(plan), source.table))
            return StatsQuery(source, SKETCH).of(node).rows.value
        except StatlasError as error:
            print(f"statlas {plan.name}: {str(error).splitlines()[0][:200]}", flush=True)
            return None

    return estimate


def spark_estimator(spark: Any, database: str) -> Callable[[SubPlan], float | None]:
    """Spark's CBO: rows of the top Aggregate's input, in the ANALYZEd catalog database."""

    def estimate(plan: SubPlan) -> float | None:
        spark.catalog.setCurrentDatabase(database)
        try:
            return spark_plan_rows(spark, spark_sql(plan))
        except Exception as error:  # a sub-plan Spark does not plan: reported, not fatal
            print(f"spark {plan.name}: {str(error).splitlines()[0][:200]}", flush=True)
            return None
        finally:
            spark.catalog.setCurrentDatabase("default")

    return estimate


def postgres_estimator(schema_name: str, dsn: str = PG_DSN) -> Callable[[SubPlan], float | None]:
    """PostgreSQL's 'Plan Rows' of the top Aggregate's input (serial plans)."""
    cursor = pg_serial_cursor(schema_name, dsn)

    def estimate(plan: SubPlan) -> float | None:
        text = sqlglot.transpile(plan.sql, read="duckdb", write="postgres")[0]
        node = pg_plan(cursor, text, plan.name)
        if node is None:
            return None
        while node["Node Type"] != "Aggregate":
            node = node["Plans"][0]
        return float(node["Plans"][0]["Plan Rows"])

    return estimate
