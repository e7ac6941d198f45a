"""Connected sub-plans of the q-error workload's join queries (benchmarks/qerror.py
--subplans): every estimator is judged on the intermediate joins a plan builds, not only on
the final count.

For a query whose tables are all inner-joined (no subqueries, no outer joins, each table
once), each connected subset of two or more of its tables, fewer than all, becomes
`SELECT COUNT(*) FROM t1, t2, ... WHERE <the conjuncts that read only those tables>`;
tables are connected by key joins only: equalities between two tables that cover one side's
primary key (o_orderkey, ps_partkey with ps_suppkey, ...), the joins a plan is built from.
A subset held together by a foreign key to foreign key equality alone (c_nationkey =
s_nationkey) is a near cross product no optimizer builds, of billions of rows: left out.
Columns are TPC-H's, whose prefixes name their table (l_ lineitem, o_ orders, ...).
Identical sub-plans of different queries are counted once.
"""

from __future__ import annotations

from itertools import combinations

import sqlglot
from qerror_workload import Query
from sqlglot import exp

PREFIXES = {
    "l": "lineitem",
    "o": "orders",
    "c": "customer",
    "p": "part",
    "s": "supplier",
    "ps": "partsupp",
    "n": "nation",
    "r": "region",
}


PRIMARY_KEYS = {
    "lineitem": {"l_orderkey", "l_linenumber"},
    "orders": {"o_orderkey"},
    "customer": {"c_custkey"},
    "part": {"p_partkey"},
    "supplier": {"s_suppkey"},
    "partsupp": {"ps_partkey", "ps_suppkey"},
    "nation": {"n_nationkey"},
    "region": {"r_regionkey"},
}


def _table_of(column: exp.Column) -> str | None:
    return PREFIXES.get(column.name.split("_", 1)[0].lower())


def subplans(name: str, sql: str) -> list[Query]:
    """The connected proper sub-joins of one rendered query (none where it is not a plain
    inner join of distinct TPC-H tables)."""
    statement = sqlglot.parse_one(sql)
    if not isinstance(statement, exp.Select) or statement.find(exp.Subquery, exp.Exists):
        return []
    tables = [t.name.lower() for t in statement.find_all(exp.Table)]
    if (
        len(tables) < 3
        or len(set(tables)) != len(tables)
        or any(t.alias for t in statement.find_all(exp.Table))
    ):
        return []
    conjuncts: list[exp.Expr] = []
    for join in statement.args.get("joins") or ():
        if (join.side or join.kind or "").lower() not in ("", "inner"):
            return []
        on = join.args.get("on")
        conjuncts += list(on.flatten()) if isinstance(on, exp.And) else ([on] if on else [])
    where = statement.args.get("where")
    if where is not None:
        body = where.this
        conjuncts += list(body.flatten()) if isinstance(body, exp.And) else [body]
    owners: list[frozenset[str]] = []
    for conjunct in conjuncts:
        found = {_table_of(c) for c in conjunct.find_all(exp.Column)}
        if None in found or not found <= set(tables):
            return []
        owners.append(frozenset(t for t in found if t))
    edges = _key_edges(conjuncts, owners)
    result = []
    for size in range(2, len(tables)):
        for subset in combinations(tables, size):
            chosen = set(subset)
            if not _connected(chosen, edges):
                continue
            kept = [c.sql() for c, o in zip(conjuncts, owners, strict=True) if o <= chosen]
            text = f"SELECT COUNT(*) FROM {', '.join(subset)}"
            if kept:
                text += " WHERE " + " AND ".join(kept)
            result.append(Query(f"{name}~{'+'.join(subset)}", size - 1, "subplan", text))
    return result


def _key_edges(conjuncts: list[exp.Expr], owners: list[frozenset[str]]) -> list[frozenset[str]]:
    """Pairs of tables joined on the whole primary key of one of them."""
    columns: dict[frozenset[str], set[str]] = {}
    for conjunct, owner in zip(conjuncts, owners, strict=True):
        if len(owner) == 2 and isinstance(conjunct, exp.EQ):
            names = {c.name.lower() for c in conjunct.find_all(exp.Column)}
            columns.setdefault(owner, set()).update(names)
    return [
        pair
        for pair, names in columns.items()
        if any(PRIMARY_KEYS.get(table, {""}) <= names for table in pair)
    ]


def _connected(chosen: set[str], edges: list[frozenset[str]]) -> bool:
    start = next(iter(chosen))
    seen, frontier = {start}, [start]
    while frontier:
        table = frontier.pop()
        for edge in edges:
            if table in edge and edge <= chosen:
                for other in edge - seen:
                    seen.add(other)
                    frontier.append(other)
    return seen == chosen


def workload_subplans(queries: list[Query], params: dict[str, str]) -> list[Query]:
    """Every distinct sub-plan of the workload's queries for one variant (SQL rendered)."""
    found: dict[str, Query] = {}
    for query in queries:
        for sub in subplans(query.name, query.render(params)):
            found.setdefault(sub.sql, sub)
    return [
        Query(q.name, q.joins, q.kind, q.sql.replace("{", "{{").replace("}", "}}"))
        for q in found.values()
    ]
