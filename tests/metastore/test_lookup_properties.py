"""Property: every lookup equals a brute-force filter over the registered partitions, for
random key types, values, NULLs (default partitions), list sizes, tuples and ranges."""

from __future__ import annotations

import datetime as dt
import itertools
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from metastore import Metastore, TupleList
from metastore.catalog.discovery import Column, DiscoveredDataset, DiscoveredPartition
from metastore.partitions.names import partition_name
from metastore.types import KeyType, KeyValue, format_value, parse_key_type

TYPES = ["int", "bigint", "decimal(6,2)", "date", "timestamp", "string", "boolean"]


def values_of(type_name: str) -> st.SearchStrategy[Any]:
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "int": st.integers(-(2**31), 2**31 - 1),
        "bigint": st.integers(-(2**63), 2**63 - 1),
        "decimal(6,2)": st.decimals(
            min_value=-9999, max_value=9999, places=2, allow_nan=False, allow_infinity=False
        ),
        "date": st.dates(dt.date(1900, 1, 1), dt.date(2100, 1, 1)),
        "timestamp": st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2100, 1, 1)),
        "string": st.text(
            st.characters(codec="utf-8", exclude_characters="\x00"), max_size=6
        ).filter(lambda s: s != "__HIVE_DEFAULT_PARTITION__"),
        "boolean": st.booleans(),
    }
    return st.one_of(st.none(), strategies[type_name])


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[KeyType], list[tuple[KeyValue, ...]]]:
    type_names = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=3))
    types = [parse_key_type(t) for t in type_names]
    rows = draw(
        st.lists(
            st.tuples(*[values_of(t) for t in type_names]), min_size=1, max_size=25, unique=True
        )
    )
    return types, [tuple(t.coerce(v) for t, v in zip(types, row, strict=True)) for row in rows]


def register(
    ms: Metastore, name: str, types: list[KeyType], rows: list[tuple[KeyValue, ...]]
) -> None:
    from metastore.catalog.tables import register_listing

    keys = [f"k{i}x" for i in range(len(types))]
    partitions = []
    for row in rows:
        part = partition_name(keys, [format_value(v) for v in row])
        partitions.append(
            DiscoveredPartition(
                part, tuple(format_value(v) for v in row), f"/data/{name}/{part}", 1, 10, 1
            )
        )
    dataset = DiscoveredDataset(
        f"/data/{name}", "parquet", keys, partitions, "x", [Column("id", "bigint")]
    )
    register_listing(ms.engine, name, dataset, dict(zip(keys, types, strict=True)))


def same(a: KeyValue, b: KeyValue) -> bool:
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return a is not None and b is not None and Decimal(a) == Decimal(b)  # type: ignore[arg-type]
    return type(a) is type(b) and a == b


counter = itertools.count()
HYPOTHESIS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


def fresh_table(
    ms: Metastore, prefix: str, types: list[KeyType], rows: list[tuple[KeyValue, ...]]
) -> tuple[str, list[str]]:
    """Register the example as a table of its own; returns its name and key names."""
    name = f"{prefix}{next(counter)}"
    register(ms, name, types, rows)
    return name, [f"k{i}x" for i in range(len(types))]


@settings(max_examples=40, **HYPOTHESIS)
@given(table=tables(), data=st.data())
def test_lookups_equal_brute_force(metastore: Metastore, table: Any, data: st.DataObject) -> None:
    types, rows = table
    name, keys = fresh_table(metastore, "p", types, rows)

    # per-key IN lists: some registered values, some random (mostly absent) ones, maybe NULL
    chosen_keys = data.draw(st.lists(st.sampled_from(range(len(keys))), unique=True, max_size=3))
    in_lists: dict[str, list[KeyValue]] = {}
    for i in chosen_keys:
        present = [r[i] for r in rows]
        values = data.draw(
            st.lists(
                st.one_of(st.sampled_from(present), values_of(str(types[i]))),
                min_size=1,
                max_size=8,
            )
        )
        in_lists[keys[i]] = [types[i].coerce(v) for v in values]
    tuples: list[TupleList] = []
    if data.draw(st.booleans()):
        width = data.draw(st.integers(1, len(keys)))
        picked = [
            rows[j]
            for j in data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1, max_size=6))
        ]
        tuples.append(TupleList(tuple(keys[:width]), [list(r[:width]) for r in picked]))

    result = metastore.partitions(name, in_lists, tuples)
    expected = [
        row
        for row in rows
        if all(any(same(row[keys.index(k)], v) for v in vs) for k, vs in in_lists.items())
        and all(
            any(
                all(same(row[keys.index(k)], v) for k, v in zip(t.keys, tup, strict=True))
                for tup in t.rows
            )
            for t in tuples
        )
    ]
    got = [tuple(p.values[k] for k in keys) for p in result]
    assert len(got) == len(expected)
    for row in expected:
        assert any(all(same(a, b) for a, b in zip(row, g, strict=True)) for g in got)


@settings(max_examples=30, **HYPOTHESIS)
@given(table=tables(), data=st.data())
def test_ranges_equal_brute_force(metastore: Metastore, table: Any, data: st.DataObject) -> None:
    types, rows = table
    name, keys = fresh_table(metastore, "r", types, rows)
    i = data.draw(st.integers(0, len(keys) - 1))
    key_type = types[i]
    if key_type.name == "string":
        # stay within ASCII so that the databases' collations agree with Python's ordering
        bound = data.draw(st.text(st.characters(min_codepoint=48, max_codepoint=122), max_size=3))
    else:
        bound = data.draw(values_of(str(key_type)).filter(lambda v: v is not None))
    op = data.draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">=", "IS NULL", "IS NOT NULL"]))
    literal = _literal(key_type.coerce(bound))
    where = f"{keys[i]} {op}" if op.startswith("IS") else f"{keys[i]} {op} {literal}"
    if key_type.name == "string" and op not in ("=", "<>", "IS NULL", "IS NOT NULL"):
        # an order of non-ASCII text is the database's collation's, not Python's
        assume(all(r[i] is None or str(r[i]).isascii() for r in rows))
    result = metastore.partitions(name, where=where)
    value = key_type.coerce(bound)
    compare = {
        "=": lambda a: a == value,
        "<>": lambda a: a != value,
        "<": lambda a: a < value,
        "<=": lambda a: a <= value,
        ">": lambda a: a > value,
        ">=": lambda a: a >= value,
        "IS NULL": None,
        "IS NOT NULL": None,
    }[op]
    if op == "IS NULL":
        expected = [r for r in rows if r[i] is None]
    elif op == "IS NOT NULL":
        expected = [r for r in rows if r[i] is not None]
    else:
        assert compare is not None
        expected = [r for r in rows if r[i] is not None and compare(r[i])]
    got = sorted(canonical(tuple(p.values[k] for k in keys)) for p in result)
    assert got == sorted(canonical(row) for row in expected), where


def canonical(row: tuple[KeyValue, ...]) -> tuple[tuple[str, str], ...]:
    """A partition's key values, comparable and sortable, equal where the values are: each
    value's type and its text (a decimal's normalised, 1.50 as 1.5 and -0.00 as 0; a time's
    ISO text, which leaves out `fold` as == does)."""
    return tuple((type(v).__name__, _text(v)) for v in row)


def _text(value: KeyValue) -> str:
    if isinstance(value, Decimal):
        return str((value + 0).normalize())
    if isinstance(value, dt.date):  # datetimes too
        return value.isoformat()
    return repr(value)


def _literal(value: KeyValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Decimal):
        return str(value)
    text = format_value(value)
    assert text is not None
    # Spark SQL string literals escape with a backslash
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
