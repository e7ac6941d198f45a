"""The workload of the correlated fan-out benchmark (issue 47): 100 COUNT(*) queries of one to
six tables over benchmarks/correlated_data.py's schema, and their exact counts by DuckDB.

Every query is `SELECT COUNT(*) FROM t1 a1 JOIN t2 a2 ON ... WHERE ...` in plain SQL that
runs unchanged on Spark, PostgreSQL, DuckDB and statlas (DATE literals, every column
qualified by its alias, ON conditions equalities between two aliases). Its join graph is a
tree over the aliases, so the exact count is computed without enumerating the join: each
subtree's rows are counted per join key (GROUP BY) and the counts multiplied up to the root
(`count_sql`), which DuckDB does in seconds where the join itself has up to 1e20 rows.

Shapes (tables = aliases, a self-join counts twice):

  single        12  one table: ranges on the day, score, creation date and key, equality
                    on region and kind
  fk             2  a table to the one it references (posts -> owners, comments -> posts)
  shared-key     2  two referencing tables on the owner key (posts-comments, votes-badges)
  self           1  posts p1 JOIN posts p2 ON p1.p_owner = p2.p_owner
  through-owner 6  two to five referencing tables joined through owners
                    (`a.owner = o.id AND b.owner = o.id`), one with a self-join
  star           2  three and four referencing tables on the shared key (A.k = B.k = C.k)
  chain          7  chains of 3-6 tables: votes -> posts -> owners <- comments -> posts ...,
                    the issue's worst shape (two tables through owners, then to a fourth)
  fanout         2  a post with its comments and its votes (both reference the post)

Each join shape comes in four filter modes: none, a filter on the first alias, one on the
last, one on every alias (ranges on days, scores and creation dates, equality on region and
vote kind), 22 x 4 = 88 join queries.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from correlated_data import PARTITION_KEYS, TABLES


@dataclass(frozen=True)
class Query:
    name: str
    family: str
    aliases: tuple[tuple[str, str], ...]  # (alias, table), in FROM order
    joins: tuple[tuple[str, str], ...]  # ("a.col", "b.col") equalities
    filters: tuple[str, ...] = ()  # "alias.column ..." predicates on one alias each

    @property
    def tables(self) -> int:
        return len(self.aliases)

    @property
    def sql(self) -> str:
        """SELECT COUNT(*) FROM ... JOIN ... ON ... WHERE ...: each alias joined on its
        equalities with the aliases before it."""
        (first, table), *rest = self.aliases
        text = f"SELECT COUNT(*) FROM {table} {first}"
        seen = {first}
        for alias, table in rest:
            on = [
                f"{left} = {right}"
                for left, right in self.joins
                if {_alias(left), _alias(right)} <= seen | {alias}
                and alias in (_alias(left), _alias(right))
            ]
            if not on:
                raise ValueError(f"{self.name}: {alias} joins no alias before it")
            text += f" JOIN {table} {alias} ON {' AND '.join(on)}"
            seen.add(alias)
        if self.filters:
            text += " WHERE " + " AND ".join(self.filters)
        return text


def _alias(column: str) -> str:
    return column.split(".", 1)[0]


def _column(column: str) -> str:
    return column.split(".", 1)[1]


# ---------------------------------------------------------------------------- exact counts


def count_sql(query: Query) -> str:
    """DuckDB SQL of the query's exact COUNT(*) by counting per join key up the join tree
    (rooted at the first alias): a leaf is GROUP BY its join column, an inner alias sums the
    product of its children's counts per its own join column."""
    neighbours: dict[str, list[tuple[str, str, str]]] = {a: [] for a, _ in query.aliases}
    for left, right in query.joins:
        neighbours[_alias(left)].append((_alias(right), _column(left), _column(right)))
        neighbours[_alias(right)].append((_alias(left), _column(right), _column(left)))
    if len(query.joins) != len(query.aliases) - 1:
        raise ValueError(f"{query.name}: the join graph is not a tree")
    tables = dict(query.aliases)

    def body(alias: str, parent: str | None) -> tuple[str, str]:
        """FROM ... WHERE ... of `alias` with its children's counts, and the expression of
        the rows each of its rows stands for."""
        text = f"{tables[alias]} {alias}"
        factors = []
        for other, mine, theirs in neighbours[alias]:
            if other == parent:
                continue
            name = f"m_{other}"
            text += f" JOIN ({message(other, alias, theirs)}) {name} ON {alias}.{mine} = {name}.k"
            factors.append(f"CAST({name}.n AS HUGEINT)")
        filters = [f for f in query.filters if _alias(f) == alias]
        if filters:
            text += " WHERE " + " AND ".join(filters)
        weight = "SUM(" + " * ".join(factors) + ")" if factors else "CAST(COUNT(*) AS HUGEINT)"
        return text, weight

    def message(alias: str, parent: str, column: str) -> str:
        text, weight = body(alias, parent)
        return f"SELECT {alias}.{column} AS k, {weight} AS n FROM {text} GROUP BY {alias}.{column}"

    root = query.aliases[0][0]
    text, weight = body(root, None)
    return f"SELECT COALESCE({weight}, 0) FROM {text}"


def duckdb_views(directory: Path) -> Any:
    """An in-memory DuckDB connection with the variant's tables as views over its Parquet."""
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET threads = 2")
    for table in TABLES:
        files = str(directory / table / "**" / "*.parquet").replace("'", "''")
        key = PARTITION_KEYS.get(table)
        options = f", hive_partitioning = true, hive_types = {{'{key}': DATE}}" if key else ""
        connection.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{files}'{options})")
    return connection


def exact_count(connection: Any, query: Query) -> int:
    return int(connection.execute(count_sql(query)).fetchone()[0])


def plain_count(connection: Any, query: Query) -> int:
    """COUNT(*) of the query as written (enumerates the join: small data only)."""
    return int(connection.execute(query.sql).fetchone()[0])


# ----------------------------------------------------------------------------- the workload

# filters per table, "{a}" for the alias
FILTERS = {
    "posts": (
        "{a}.p_day BETWEEN DATE '2025-01-05' AND DATE '2025-01-14'",
        "{a}.p_score >= 20",
        "{a}.p_day = DATE '2025-01-20'",
        "{a}.p_score < 3",
    ),
    "comments": (
        "{a}.c_day >= DATE '2025-02-01'",
        "{a}.c_day BETWEEN DATE '2025-01-10' AND DATE '2025-01-19'",
    ),
    "votes": ("{a}.v_kind = 2", "{a}.v_kind >= 3 AND {a}.v_day < DATE '2025-01-21'"),
    "owners": (
        "{a}.o_region = 'europe'",
        "{a}.o_created >= DATE '2023-01-01'",
        "{a}.o_region = 'oceania' AND {a}.o_created < DATE '2020-01-01'",
    ),
    "badges": ("{a}.b_day < DATE '2025-01-11'", "{a}.b_day >= DATE '2025-02-05'"),
}

SINGLE = [
    ("posts", "p", "p.p_day BETWEEN DATE '2025-01-05' AND DATE '2025-01-14'"),
    ("posts", "p", "p.p_score >= 20"),
    ("posts", "p", "p.p_score BETWEEN 5 AND 10 AND p.p_day >= DATE '2025-02-01'"),
    ("posts", "p", "p.p_owner BETWEEN 1 AND 2000"),
    ("comments", "c", "c.c_day < DATE '2025-01-08'"),
    ("comments", "c", "c.c_post BETWEEN 1 AND 3000"),
    ("votes", "v", "v.v_kind = 2"),
    ("votes", "v", "v.v_kind >= 3 AND v.v_day BETWEEN DATE '2025-01-10' AND DATE '2025-01-25'"),
    ("owners", "o", "o.o_region = 'europe'"),
    ("owners", "o", "o.o_created >= DATE '2023-01-01'"),
    ("owners", "o", "o.o_region = 'oceania' AND o.o_created < DATE '2017-01-01'"),
    ("badges", "b", "b.b_day >= DATE '2025-01-25'"),
]

_P, _C, _V, _B, _O = "posts", "comments", "votes", "badges", "owners"
# name -> (family, aliases, joins)
SHAPES: dict[str, tuple[str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]] = {
    # two tables
    "po": ("fk", (("p", _P), ("o", _O)), (("p.p_owner", "o.o_id"),)),
    "cp": ("fk", (("c", _C), ("p", _P)), (("c.c_post", "p.p_id"),)),
    "pc_owner": ("shared-key", (("p", _P), ("c", _C)), (("p.p_owner", "c.c_owner"),)),
    "vb_owner": ("shared-key", (("v", _V), ("b", _B)), (("v.v_owner", "b.b_owner"),)),
    "pp_self": ("self", (("p1", _P), ("p2", _P)), (("p1.p_owner", "p2.p_owner"),)),
    # three
    "p_o_c": (
        "through-owner",
        (("p", _P), ("o", _O), ("c", _C)),
        (("p.p_owner", "o.o_id"), ("c.c_owner", "o.o_id")),
    ),
    "v_o_b": (
        "through-owner",
        (("v", _V), ("o", _O), ("b", _B)),
        (("v.v_owner", "o.o_id"), ("b.b_owner", "o.o_id")),
    ),
    "p_o_p_self": (
        "through-owner",
        (("p1", _P), ("o", _O), ("p2", _P)),
        (("p1.p_owner", "o.o_id"), ("p2.p_owner", "o.o_id")),
    ),
    "pcv_star": (
        "star",
        (("p", _P), ("c", _C), ("v", _V)),
        (("p.p_owner", "c.c_owner"), ("c.c_owner", "v.v_owner")),
    ),
    "v_p_o": (
        "chain",
        (("v", _V), ("p", _P), ("o", _O)),
        (("v.v_post", "p.p_id"), ("p.p_owner", "o.o_id")),
    ),
    "p_c_v_fanout": (
        "fanout",
        (("p", _P), ("c", _C), ("v", _V)),
        (("c.c_post", "p.p_id"), ("v.v_post", "p.p_id")),
    ),
    # four
    "p_o_c_p2": (
        "chain",
        (("p", _P), ("o", _O), ("c", _C), ("p2", _P)),
        (("p.p_owner", "o.o_id"), ("c.c_owner", "o.o_id"), ("c.c_post", "p2.p_id")),
    ),
    "p_o_c_v": (
        "through-owner",
        (("p", _P), ("o", _O), ("c", _C), ("v", _V)),
        (("p.p_owner", "o.o_id"), ("c.c_owner", "o.o_id"), ("v.v_owner", "o.o_id")),
    ),
    "pcvb_star": (
        "star",
        (("p", _P), ("c", _C), ("v", _V), ("b", _B)),
        (("p.p_owner", "c.c_owner"), ("c.c_owner", "v.v_owner"), ("v.v_owner", "b.b_owner")),
    ),
    "v_p_o_c": (
        "chain",
        (("v", _V), ("p", _P), ("o", _O), ("c", _C)),
        (("v.v_post", "p.p_id"), ("p.p_owner", "o.o_id"), ("c.c_owner", "o.o_id")),
    ),
    "c_p_v_o_fanout": (
        "fanout",
        (("c", _C), ("p", _P), ("v", _V), ("o", _O)),
        (("c.c_post", "p.p_id"), ("v.v_post", "p.p_id"), ("p.p_owner", "o.o_id")),
    ),
    # five
    "v_p_o_c_p2": (
        "chain",
        (("v", _V), ("p", _P), ("o", _O), ("c", _C), ("p2", _P)),
        (
            ("v.v_post", "p.p_id"),
            ("p.p_owner", "o.o_id"),
            ("c.c_owner", "o.o_id"),
            ("c.c_post", "p2.p_id"),
        ),
    ),
    "p_o_c_v_b": (
        "through-owner",
        (("p", _P), ("o", _O), ("c", _C), ("v", _V), ("b", _B)),
        (
            ("p.p_owner", "o.o_id"),
            ("c.c_owner", "o.o_id"),
            ("v.v_owner", "o.o_id"),
            ("b.b_owner", "o.o_id"),
        ),
    ),
    "p1_p2_c_o_b_self": (
        "chain",
        (("p1", _P), ("p2", _P), ("c", _C), ("o", _O), ("b", _B)),
        (
            ("p1.p_owner", "p2.p_owner"),
            ("c.c_post", "p2.p_id"),
            ("o.o_id", "p1.p_owner"),
            ("b.b_owner", "o.o_id"),
        ),
    ),
    # six
    "v_p_o_c_p2_c2": (
        "chain",
        (("v", _V), ("p", _P), ("o", _O), ("c", _C), ("p2", _P), ("c2", _C)),
        (
            ("v.v_post", "p.p_id"),
            ("p.p_owner", "o.o_id"),
            ("c.c_owner", "o.o_id"),
            ("c.c_post", "p2.p_id"),
            ("c2.c_post", "p2.p_id"),
        ),
    ),
    "o_p_c_v_b_p2": (
        "chain",
        (("o", _O), ("p", _P), ("c", _C), ("v", _V), ("b", _B), ("p2", _P)),
        (
            ("p.p_owner", "o.o_id"),
            ("c.c_owner", "o.o_id"),
            ("v.v_owner", "o.o_id"),
            ("b.b_owner", "o.o_id"),
            ("c.c_post", "p2.p_id"),
        ),
    ),
    "o_p1_p2_c_v_b": (
        "through-owner",
        (("o", _O), ("p1", _P), ("p2", _P), ("c", _C), ("v", _V), ("b", _B)),
        (
            ("p1.p_owner", "o.o_id"),
            ("p2.p_owner", "o.o_id"),
            ("c.c_owner", "o.o_id"),
            ("v.v_owner", "o.o_id"),
            ("b.b_owner", "o.o_id"),
        ),
    ),
}
MODES = ("none", "first", "last", "all")


def _filter(table: str, alias: str, which: int) -> str:
    pool = FILTERS[table]
    return pool[which % len(pool)].format(a=alias)


def _filters(aliases: tuple[tuple[str, str], ...], mode: str) -> tuple[str, ...]:
    if mode == "none":
        return ()
    if mode == "first":
        return (_filter(aliases[0][1], aliases[0][0], 0),)
    if mode == "last":
        return (_filter(aliases[-1][1], aliases[-1][0], 1),)
    return tuple(_filter(table, alias, i) for i, (alias, table) in enumerate(aliases))


def workload() -> list[Query]:
    queries = [
        Query(f"single_{table}_{n}", "single", ((alias, table),), (), (where,))
        for n, (table, alias, where) in enumerate(SINGLE, 1)
    ]
    for shape, (family, aliases, joins) in SHAPES.items():
        for mode in MODES:
            queries.append(
                Query(f"{shape}_{mode}", family, aliases, joins, _filters(aliases, mode))
            )
    return queries


QUERIES = workload()


def summary(queries: list[Query] = QUERIES) -> str:
    tables = Counter(q.tables for q in queries)
    families = Counter(q.family for q in queries)
    return (
        ", ".join(f"{n} tables: {tables[n]}" for n in sorted(tables))
        + "; "
        + ", ".join(f"{f} {c}" for f, c in families.items())
    )
