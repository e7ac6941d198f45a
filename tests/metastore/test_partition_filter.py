"""One partition filter from three front ends (metastore.partitions.filters): a `--where`
text (metastore.partitions.where), the optimizer's partition-key conjuncts
(optimizer.partition_predicates) and a Hive Metastore filter string
(servers.hive_metastore.filters) give the same typed filter for the same predicate, and
the partitions its one compilation (metastore.partitions.filter_sql) selects are those a brute-force
three-valued evaluation of the predicate keeps, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from metastore import Metastore
from metastore.catalog.discovery import Column, DiscoveredDataset, DiscoveredPartition
from metastore.catalog.lookup import PartitionQuery, query_filter
from metastore.catalog.tables import TableInfo, get_table, register_listing
from metastore.partitions.filters import InList, all_of
from metastore.partitions.names import partition_name
from metastore.types import KeyValue, format_value, parse_key_type
from optimizer.partition_predicates import selection_of
from servers.hive_metastore.filters import _Compiler, _Parser, _tokens, compile_filter

KEYS = ("dt", "region", "h")
TYPES = {"dt": "date", "region": "string", "h": "int"}
DATES = [dt.date(2024, 1, d) for d in (1, 2, 3)]
DOMAIN: dict[str, list[Any]] = {"dt": DATES, "region": ["eu", "us"], "h": [1, 2]}
LITERALS: dict[str, list[Any]] = {
    "dt": [*DATES, dt.date(2023, 12, 31), dt.date(2024, 1, 4)],
    "region": ["eu", "us", "apac", "e"],
    "h": [0, 1, 2, 3, -1],
}
ROWS = list(itertools.product(*[[*DOMAIN[k], None] for k in KEYS]))


@pytest.fixture
def table(metastore: Metastore) -> Iterator[tuple[Metastore, TableInfo]]:
    partitions = []
    for row in ROWS:
        texts = [format_value(v) for v in row]
        part = partition_name(list(KEYS), texts)
        partitions.append(DiscoveredPartition(part, tuple(texts), f"/d/t/{part}", 1, 10, 1))
    dataset = DiscoveredDataset(
        "/d/t", "parquet", list(KEYS), partitions, "x", [Column("id", "bigint")]
    )
    types = {k: parse_key_type(t) for k, t in TYPES.items()}
    register_listing(metastore.engine, "t", dataset, types)
    with metastore.engine.connect() as conn:
        info = get_table(conn, "t")
    return metastore, info


# --- predicates, their renderings and their truth ------------------------------------


@dataclass(frozen=True)
class P:
    kind: str  # cmp, in, between, isnull, cmpnull, and, or, not
    key: str = ""
    op: str = ""
    values: tuple[Any, ...] = ()
    parts: tuple[P, ...] = ()
    flipped: bool = False  # the literal written left of the key

    @property
    def hive(self) -> bool:
        """Hive's filter language has no IS NULL and no NULL literal."""
        if self.kind in ("isnull", "cmpnull"):
            return False
        return all(p.hive for p in self.parts)


OPS = ["=", "!=", "<", "<=", ">", ">="]
FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


@st.composite
def atoms(draw: st.DrawFn, nulls: bool) -> P:
    key = draw(st.sampled_from(KEYS))
    literal = st.sampled_from(LITERALS[key])
    kinds = ["cmp", "in", "between"] + (["isnull", "cmpnull"] if nulls else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "cmp":
        return P(
            "cmp", key, draw(st.sampled_from(OPS)), (draw(literal),), flipped=draw(st.booleans())
        )
    if kind == "in":
        return P("in", key, values=tuple(draw(st.lists(literal, min_size=1, max_size=4))))
    if kind == "between":
        return P("between", key, values=(draw(literal), draw(literal)))
    if kind == "isnull":
        return P("isnull", key)
    return P("cmpnull", key, draw(st.sampled_from(OPS)))


def predicates(nulls: bool) -> st.SearchStrategy[P]:
    return st.recursive(
        atoms(nulls),
        lambda inner: st.one_of(
            st.builds(
                lambda ps: P("and", parts=tuple(ps)), st.lists(inner, min_size=2, max_size=3)
            ),
            st.builds(lambda ps: P("or", parts=tuple(ps)), st.lists(inner, min_size=2, max_size=3)),
            st.builds(lambda p: P("not", parts=(p,)), inner),
        ),
        max_leaves=8,
    )


def spark_literal(value: Any) -> str:
    if isinstance(value, dt.date):
        return f"DATE '{value}'" if value.day % 2 else f"'{value}'"
    return f"'{value}'" if isinstance(value, str) else str(value)


def hive_literal(value: Any) -> str:
    return f'"{value}"' if isinstance(value, dt.date | str) else str(value)


def render(p: P, literal: Any, qualifier: str = "", hive: bool = False) -> str:
    key = qualifier + p.key
    if p.kind == "cmp":
        if p.flipped:
            return f"{literal(p.values[0])} {FLIP[p.op]} {key}"
        return f"{key} {p.op} {literal(p.values[0])}"
    if p.kind == "in":
        return f"{key} IN ({', '.join(literal(v) for v in p.values)})"
    if p.kind == "between":
        return f"{key} BETWEEN {literal(p.values[0])} AND {literal(p.values[1])}"
    if p.kind == "isnull":
        return f"{key} IS NULL"
    if p.kind == "cmpnull":
        return f"{key} {p.op} NULL"
    if p.kind == "not":
        return f"NOT ({render(p.parts[0], literal, qualifier, hive)})"
    joined = f" {p.kind.upper()} ".join(f"({render(q, literal, qualifier, hive)})" for q in p.parts)
    return joined


Truth = bool | None


def truth(p: P, row: dict[str, KeyValue]) -> Truth:
    """SQL's three-valued logic, written out."""
    if p.kind in ("and", "or"):
        values = [truth(q, row) for q in p.parts]
        if p.kind == "and":
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    if p.kind == "not":
        inner = truth(p.parts[0], row)
        return None if inner is None else not inner
    value = row[p.key]
    if p.kind == "isnull":
        return value is None
    if value is None or p.kind == "cmpnull":
        return None
    if p.kind == "cmp":
        literal = p.values[0]
        return {
            "=": value == literal,
            "!=": value != literal,
            "<": value < literal,
            "<=": value <= literal,
            ">": value > literal,
            ">=": value >= literal,
        }[p.op]
    if p.kind == "in":
        return value in p.values
    low, high = p.values
    return bool(low <= value <= high)


def expected(p: P) -> set[tuple[KeyValue, ...]]:
    return {row for row in ROWS if truth(p, dict(zip(KEYS, row, strict=True))) is True}


def selected_rows(ms: Metastore, query: PartitionQuery) -> set[tuple[KeyValue, ...]]:
    found = ms.lookup("t", query)
    return {tuple(part.values[k] for k in KEYS) for part in found}


HYPOTHESIS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@HYPOTHESIS
@given(p=predicates(nulls=True))
def test_where_and_the_optimizer_give_one_filter_and_the_brute_force_answer(
    table: tuple[Metastore, TableInfo], p: P
) -> None:
    ms, info = table
    where = render(p, spark_literal)
    by_where = query_filter(info, PartitionQuery(where=where))
    conjuncts = p.parts if p.kind == "and" else (p,)
    parsed = [sqlglot.condition(render(q, spark_literal, "t."), dialect="spark") for q in conjuncts]
    by_optimizer = selection_of(parsed, info).filter
    assert by_optimizer == by_where, where
    want = expected(p)
    assert selected_rows(ms, PartitionQuery(where=where)) == want, where
    assert selected_rows(ms, PartitionQuery(filter=by_optimizer)) == want, where


@HYPOTHESIS
@given(p=predicates(nulls=False))
def test_hive_filters_give_the_same_filter_and_answer(
    table: tuple[Metastore, TableInfo], p: P
) -> None:
    ms, info = table
    assert p.hive
    where = render(p, spark_literal)
    hive = render(p, hive_literal, hive=True)
    assert query_filter(info, PartitionQuery(where=where)) == _hive_filter(info, hive), hive
    compiled = compile_filter(hive, info.store(), ms.engine.dialect.name)
    assert compiled.exact, (hive, compiled.reason)
    store = info.store()
    statement = select(*store.key_columns)
    if compiled.predicate is not None:
        statement = statement.where(compiled.predicate)
    with ms.engine.connect() as conn:
        rows = {
            tuple(_typed(v, k) for v, k in zip(r, KEYS, strict=True))
            for r in conn.execute(statement)
        }
    assert rows == expected(p), hive


def _hive_filter(info: TableInfo, text: str) -> Any:
    compiler = _Compiler(info.store(), "postgresql")
    return compiler.filter(_Parser(_tokens(text)).parse())


def _typed(value: Any, key: str) -> KeyValue:
    if value is None:
        return None
    return parse_key_type(TYPES[key]).coerce(value)


@HYPOTHESIS
@given(
    lists=st.dictionaries(
        st.sampled_from(KEYS),
        st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=1, max_size=4),
        min_size=1,
    )
)
def test_in_lists_are_where_in_lists_with_null_matching_the_default_partition(
    table: tuple[Metastore, TableInfo], lists: dict[str, list[int | None]]
) -> None:
    ms, info = table
    in_lists = {k: [None if i is None else LITERALS[k][i] for i in v] for k, v in lists.items()}
    by_lists = query_filter(
        info, PartitionQuery.of({k: [_text(v) for v in vs] for k, vs in in_lists.items()})
    )
    wanted = [InList(k, tuple(dict.fromkeys(_typed_list(k, vs)))) for k, vs in in_lists.items()]
    assert by_lists == all_of(wanted)
    want = {
        row
        for row in ROWS
        if all(dict(zip(KEYS, row, strict=True))[k] in vs for k, vs in in_lists.items())
    }
    query = PartitionQuery.of({k: [_text(v) for v in vs] for k, vs in in_lists.items()})
    assert selected_rows(ms, query) == want


def _text(value: Any) -> str:
    return "__HIVE_DEFAULT_PARTITION__" if value is None else str(value)


def _typed_list(key: str, values: list[Any]) -> list[KeyValue]:
    return [_typed(v, key) for v in values]
