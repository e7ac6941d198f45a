"""get_partitions_by_filter answers exactly (servers.hive_metastore.filters): the typed index query,
then CompiledFilter.matches over the partitions it returns, selects exactly what a
brute-force evaluation of the filter selects. The evaluation here is written from the
module's documented semantics (not by calling its evaluator), over one table of date,
string, int, decimal, timestamp and boolean keys with NULL (default) partitions, on SQLite
and PostgreSQL. Filters naming anything but partition keys, and strings that do not
parse, raise InvalidFilter with Hive's messages."""

from __future__ import annotations

import datetime as dt
import itertools
import operator
import random
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, select

from metastore.errors import InvalidValue, StatlasError
from metastore.partitions import store as ps
from metastore.partitions.store import PartitionRow, PartitionStore
from metastore.types import KeyType, KeyValue
from servers.hive_metastore.filters import MAX_DEPTH, CompiledFilter, InvalidFilter, compile_filter
from tests.support.filter_strategies import Expr, Row, Truth, conjoin, filters, negate

KEYS = ["d", "s", "i", "m", "t", "f"]
TYPES = [
    KeyType("date"),
    KeyType("string"),
    KeyType("int"),
    KeyType("decimal", 6, 2),
    KeyType("timestamp"),
    KeyType("boolean"),
]
D, S, INT, M, T, F = range(len(KEYS))

# --- the table -------------------------------------------------------------------------

POOLS: list[list[KeyValue]] = [
    [dt.date(2024, 1, day) for day in (1, 2, 3, 5, 10, 31)] + [dt.date(2023, 12, 31)],
    [
        *("eu", "us", "EU", "u.k", "e%u", "e_u", "eXu", "a\\b", 'say "hi"', "it's"),
        *("5", "10", "-2.5", "true", "2024-01-03", "", "a*", "é", "z\nz", "zz"),
    ],
    [-3, 0, 1, 2, 5, 7, 10, 100, 2**31 - 1],
    [Decimal(v) for v in ("-1.50", "0.00", "0.25", "1.50", "2.00", "10.00")],
    [
        dt.datetime(2024, 1, 1),
        dt.datetime(2024, 1, 1, 0, 30),
        dt.datetime(2024, 1, 1, 0, 0, 0, 5),
        dt.datetime(2024, 1, 2),
        dt.datetime(2023, 12, 31, 23, 59, 59),
    ],
    [True, False],
]


def make_rows() -> list[Row]:
    """Every value of every pool at least once, the default partition of every key alone
    and of all keys at once, then random rows with a NULL a fifth of the time."""
    rng = random.Random(20240101)
    longest = max(map(len, POOLS))
    rows: list[Row] = [tuple(pool[j % len(pool)] for pool in POOLS) for j in range(longest)]
    rows.append(tuple(None for _ in KEYS))
    for k in range(len(KEYS)):
        rows.append(tuple(None if j == k else POOLS[j][k % len(POOLS[j])] for j in range(6)))
    for _ in range(40):
        rows.append(tuple(None if rng.random() < 0.2 else rng.choice(pool) for pool in POOLS))
    return rows


ROWS = make_rows()
_table_ids = itertools.count(1)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = create_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def table(engine: Engine) -> PartitionStore:
    """The partitions table as catalog registration creates it; partition i is p<i>."""
    store = ps.partition_store(next(_table_ids), KEYS, TYPES)
    with engine.begin() as conn:
        ps.create(conn, store)
        ps.create_indexes(conn, store)
        ps.insert_rows(
            conn,
            store,
            [PartitionRow(f"p{i}", row, f"/d/p{i}", 1, 1, 1) for i, row in enumerate(ROWS)],
        )
    return store


def raw_text(value: KeyValue) -> str | None:
    """A value as a partition name spells it (StoredPartition.values)."""
    if value is None or isinstance(value, str):
        return value
    return text_of(value)


def answer(engine: Engine, store: PartitionStore, compiled: CompiledFilter) -> set[int]:
    """What get_partitions_by_filter returns: the index query, then `matches` over the
    typed values it reads back (checked to agree with the raw text of the values)."""
    assert (compiled.matches is None) is compiled.exact
    query = select(store.table.c.name, *store.key_columns)
    if compiled.predicate is not None:
        query = query.where(compiled.predicate)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    chosen = set()
    for name, *values in rows:
        if compiled.matches is not None:
            typed = compiled.matches(values)
            assert compiled.matches([raw_text(v) for v in values]) is typed, (name, values)
            if not typed:
                continue
        chosen.add(int(name[1:]))
    return chosen


# --- the semantics, written independently -------------------------------------------


def text_of(value: KeyValue) -> str:
    """A non-NULL typed value's canonical text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


HIVE_DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def reading(key_type: KeyType, text: str) -> tuple[str, Any]:
    """How a literal's text compares with a key: ("value", typed), ("number", Decimal) or
    ("text", str)."""
    if key_type.name == "string":
        return "value", text
    try:
        return "value", key_type.parse(text)
    except InvalidValue:
        pass
    if key_type.name == "timestamp":
        try:
            return "value", dt.datetime.combine(KeyType("date").parse(text), dt.time())
        except InvalidValue:
            pass
    if key_type.name == "date":
        match = HIVE_DATE.match(text)
        if match:
            try:
                return "value", dt.date(*map(int, match.groups()))
            except ValueError:
                pass
    if key_type.is_numeric and NUMBER.fullmatch(text.strip()):
        return "number", Decimal(text.strip())
    return "text", text


OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
FLIP = {"=": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def compare(position: int, op: str, literal: str, row: Row) -> Truth:
    value = row[position]
    if value is None:
        return None
    how, read = reading(TYPES[position], literal_text(literal))
    if how == "number":
        return OPS[op](Decimal(value), read)  # type: ignore[arg-type]
    if how == "text":
        return OPS[op](text_of(value), read)
    return OPS[op](value, read)


REGEX_METACHARACTERS = set("\\^$.|?*+()[]{}")


def like(pattern: str, value: str) -> bool:
    """Hive's LIKE: a regex over the whole value when the pattern holds a regex
    metacharacter (`.` matching any character, classes such as \\w ASCII as Java's), SQL's
    % and _ when it holds those, else equality."""
    if REGEX_METACHARACTERS & set(pattern):
        return re.fullmatch(pattern, value, re.DOTALL | re.ASCII) is not None
    if "%" in pattern or "_" in pattern:
        regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
        return re.fullmatch(regex, value, re.DOTALL) is not None
    return pattern == value


def like_key(position: int, pattern: str, row: Row) -> Truth:
    value = row[position]
    return None if value is None else like(pattern, text_of(value))


def literal_text(source: str) -> str:
    """The text of a literal as written in a filter: a quoted body verbatim (escapes
    kept), the body of DATE "..." / TIMESTAMP "...", true/false in lower case, a number as
    written."""
    if source[:1] in "\"'":
        return source[1:-1]
    word, _, rest = source.partition(" ")
    if word.lower() in ("date", "timestamp") and rest:
        return rest.strip()[1:-1]
    if source.lower() in ("true", "false"):
        return source.lower()
    return source


# --- filters ---------------------------------------------------------------------------

# literals for each key, as written in a filter: typed values, values Hive reads loosely,
# and values the typed index cannot compare (text, numbers out of the key's type)
LITERALS: list[list[str]] = [
    [
        '"2024-01-03"',
        "'2024-01-05'",
        'date "2024-01-02"',
        '"2024-1-5"',
        '"2024-01-03 10:00:00"',
        'timestamp "2024-01-01 00:00:00"',
        '"2024-02-30"',
        '"x"',
        "20240103",
        "true",
        '"2024-01-0\\1"',
        '"2024-01-10\\n"',
    ],
    [
        '"eu"',
        "'EU'",
        "5",
        "10",
        "-2.5",
        "true",
        'date "2024-01-03"',
        '"a\\b"',
        "'say \"hi\"'",
        '"say \\"hi\\""',
        '"it\'s"',
        '""',
        '"é"',
        '"u.k"',
        '"e%u"',
        '"z\nz"',
    ],
    ["5", '"5"', "' 7 '", "2.5", '"2.5"', "3000000000", "-3", '"x"', "true", "007", '"0x10"'],
    ["1.5", "1.50", '"0.25"', "1.234", "100000", '"abc"', "-2", "0", "-1.5"],
    [
        '"2024-01-01 00:30:00"',
        'timestamp "2024-01-01 00:00:00"',
        '"2024-01-01"',
        'date "2024-01-02"',
        '"2024-01-01T00:30:00"',
        "2024",
        '"x"',
        '"2024-01-01 00:00:00.000005"',
        "'2024-1-1'",
    ],
    ["true", "FALSE", '"true"', "1", '"yes"', "0"],
]

# LIKE patterns for each key: SQL forms, regexes SQL can express, regexes it cannot
PATTERNS: list[list[str]] = [
    ['"2024-01-0%"', '"2024-01-0.*"', "'2023.*'", '"[0-9-]+"'],
    [
        '"e%"',
        "'%u'",
        '"e_u"',
        '"u.*"',
        '"e\\..*"',
        '"^E.$"',
        '"[eu]+"',
        '"e|u"',
        '".*[0-9]"',
        '"eu"',
        '"a\\\\b"',
        '"a\\\\.*"',
        '"z.z"',
        '"z_z"',
        '"%"',
        '"(e|u).*"',
        '"\\w+"',
        "5",
        "true",
        "'say \"%'",
        '"e\\%u"',
    ],
    ['"1%"', '"-.*"', '"[0-9]"', "5", '"1_"'],
    ['"%.50"', '"1.5%"', '"-?1\\..*"'],
    ['"2024-01-01 00:%"', '".*00:00"', '"2024-01-01 00:00:00"'],
    ['"tr.*"', '"f%"', "true"],
]


def key_name(draw: st.DrawFn, position: int) -> str:
    name = KEYS[position]
    return draw(st.sampled_from([name, name.upper(), f"`{name}`", f"({name})"]))


@st.composite
def comparisons(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    op = draw(st.sampled_from(list(OPS)))
    literal = draw(st.sampled_from(LITERALS[position]))
    key = key_name(draw, position)
    flipped = draw(st.booleans())
    text = f"{literal} {FLIP[op]} {key}" if flipped else f"{key} {op} {literal}"
    return Expr(text, lambda row: compare(position, op, literal, row))


@st.composite
def memberships(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    literals = draw(st.lists(st.sampled_from(LITERALS[position]), min_size=1, max_size=4))
    negated = draw(st.booleans())
    text = f"{key_name(draw, position)} {'not in' if negated else 'in'} ({', '.join(literals)})"

    def truth(row: Row) -> Truth:
        if row[position] is None:
            return None
        return any(compare(position, "=", lit, row) for lit in literals) != negated

    return Expr(text, truth)


@st.composite
def betweens(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    low = draw(st.sampled_from(LITERALS[position]))
    high = draw(st.sampled_from(LITERALS[position]))
    negated = draw(st.booleans())
    text = f"{key_name(draw, position)} {'not ' if negated else ''}between {low} and {high}"

    def truth(row: Row) -> Truth:
        if row[position] is None:
            return None
        inside = compare(position, ">=", low, row) and compare(position, "<=", high, row)
        return bool(inside) != negated

    return Expr(text, truth)


@st.composite
def likes(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    pattern = draw(st.sampled_from(PATTERNS[position]))
    negated = draw(st.booleans())
    text = f"{key_name(draw, position)} {'not ' if negated else ''}like {pattern}"

    def truth(row: Row) -> Truth:
        value = row[position]
        if value is None:
            return None
        return like(literal_text(pattern), text_of(value)) != negated

    return Expr(text, truth)


@st.composite
def or_chains(draw: st.DrawFn) -> Expr:
    """Older Spark's IN list: equalities on one key joined by OR."""
    position = draw(st.integers(0, len(KEYS) - 1))
    literals = draw(st.lists(st.sampled_from(LITERALS[position]), min_size=2, max_size=4))
    key = KEYS[position]
    parts = [
        Expr(f"{key} = {lit}", lambda row, lit=lit: compare(position, "=", lit, row))
        for lit in literals
    ]
    return conjoin("or", parts)


def atoms() -> st.SearchStrategy[Expr]:
    return st.one_of(comparisons(), memberships(), betweens(), likes(), or_chains())


def wanted(expr: Expr) -> set[int]:
    return {i for i, row in enumerate(ROWS) if expr.truth(row) is True}


# --- the property ----------------------------------------------------------------------


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(expr=filters(atoms()))
def test_answer_is_exact(engine: Engine, table: PartitionStore, expr: Expr) -> None:
    compiled = compile_filter(expr.text, table, engine.dialect.name)
    expected = wanted(expr)
    event(f"exact: {compiled.exact}")
    event(
        "selects " + ("none" if not expected else "all" if len(expected) == len(ROWS) else "some")
    )
    assert answer(engine, table, compiled) == expected, (expr.text, compiled.reason)


@pytest.mark.parametrize(
    "leaf",
    [
        Expr('i = "x"', lambda row: compare(INT, "=", '"x"', row)),
        Expr("i < 2.5", lambda row: compare(INT, "<", "2.5", row)),
        Expr("m >= 1.234", lambda row: compare(M, ">=", "1.234", row)),
        Expr("f < 1", lambda row: compare(F, "<", "1", row)),
        Expr("t > 2024", lambda row: compare(T, ">", "2024", row)),
        Expr("d like '2024-01-0%'", lambda row: like_key(D, "2024-01-0%", row)),
        Expr("s like '[eu]+'", lambda row: like_key(S, "[eu]+", row)),
    ],
    ids=lambda e: e.text,
)
def test_inexact_pieces_deeply_nested(engine: Engine, table: PartitionStore, leaf: Expr) -> None:
    """AND, OR and NOT alternating deeper than the index query follows (MAX_DEPTH) around a
    piece only Python can evaluate: still exact, and evaluated without recursion."""
    expr = leaf
    for level in range(3 * MAX_DEPTH):
        other = [
            Expr("s != 'zz'", lambda row: compare(S, "!=", "'zz'", row)),
            Expr(f"i != {level}", lambda row, level=level: compare(INT, "!=", str(level), row)),
            Expr("d <= '2024-01-10'", lambda row: compare(D, "<=", "'2024-01-10'", row)),
        ][level % 3]
        expr = conjoin("and" if level % 2 else "or", [other, expr])
        if level % 7 == 0:
            expr = negate(negate(expr))
    compiled = compile_filter(expr.text, table, engine.dialect.name)
    assert not compiled.exact
    assert compiled.matches is not None
    assert answer(engine, table, compiled) == wanted(expr)


@pytest.mark.parametrize(
    ("text", "selects"),
    [
        # a literal that does not parse as the key's type
        ('i = "x"', lambda v: False),
        ('i != "x"', lambda v: True),
        ('i < "x"', lambda v: True),  # text: digits and '-' sort before 'x'
        ("i = 2.5", lambda v: False),
        ("i < 2.5", lambda v: v <= 2),
        ("i > 3000000000", lambda v: False),
        ("i <= 3000000000", lambda v: True),
        ("m = 1.234", lambda v: False),
        ("m < 1.234", lambda v: v <= Decimal("0.25")),
        ('i in (1, "x", 2.0)', lambda v: v in (1, 2)),
        ('i not in (1, "x")', lambda v: v != 1),
        ("f = 1", lambda v: False),
        ("t < 2024", lambda v: v.year < 2024),  # text: "2024-..." sorts after "2024"
        ("d = 20240103", lambda v: False),
        ('d > "x"', lambda v: False),
        # loosely read literals: Hive's date reading; a date on a timestamp key
        ('d < "2024-1-5"', lambda v: v < dt.date(2024, 1, 5)),
        ('d = "2024-01-03 10:00:00"', lambda v: v == dt.date(2024, 1, 3)),
        ('t = "2024-01-01"', lambda v: v == dt.datetime(2024, 1, 1)),
        ('t > date "2024-01-01"', lambda v: v > dt.datetime(2024, 1, 1)),
        # a bare number compared with a string key: its text
        ("s = 5", lambda v: v == "5"),
        ("s in (10, -2.5)", lambda v: v in ("10", "-2.5")),
        ("s >= true", lambda v: v >= "true"),
        # a quoted literal with a backslash: verbatim, as Hive reads it
        ('s = "a\\b"', lambda v: v == "a\\b"),
        ('s = "say \\"hi\\""', lambda v: False),
        # LIKE on a non-string key: its canonical text
        ("i like '1%'", lambda v: str(v).startswith("1")),
        ("i not like '1%'", lambda v: not str(v).startswith("1")),
        ("f like 'tr%'", lambda v: v is True),
        ("m like '%5_'", lambda v: str(v).endswith("50")),
        ("m like '.*\\.50'", lambda v: str(v).endswith(".50")),  # `.`: a regex
        ("t like '% 00:00:00'", lambda v: v.time() == dt.time()),
        # a regex with no SQL LIKE form
        ("s like '[eu]+'", lambda v: v == "eu"),
        ("s like 'e|u'", lambda v: False),
        ("s like '.*[0-9]'", lambda v: v in ("5", "10", "-2.5", "2024-01-03")),
        ("s like '(e|u).*'", lambda v: v[:1] in ("e", "u")),
        ("s like '\\w+'", lambda v: v in ("eu", "us", "EU", "e_u", "eXu", "5", "10", "true", "zz")),
        ("s like 'z.z'", lambda v: v == "z\nz"),
    ],
)
def test_inexact_pieces(
    engine: Engine, table: PartitionStore, text: str, selects: Callable[[Any], bool]
) -> None:
    """Each piece alone against a hand-written expectation over the non-NULL values."""
    position = KEYS.index(re.split(r"\W", text)[0])
    compiled = compile_filter(text, table, engine.dialect.name)
    expected = {
        i for i, row in enumerate(ROWS) if row[position] is not None and selects(row[position])
    }
    assert answer(engine, table, compiled) == expected


# --- what raises -----------------------------------------------------------------------

NOT_KEYS = [
    ('colour = "red"', "colour"),
    ('d = "2024-01-01" and colour = "red"', "colour"),
    ('d = "2024-01-01" or not (COLOUR like "r%")', "COLOUR"),
    ('"x" < colour', "colour"),
    ("(colour) in (1, 2)", "colour"),
    ("colour not between 1 and 2", "colour"),
    ("i = colour", "colour"),
    ("colour = i", "colour"),
    ("`col our` = 1", "col our"),
    ("s like 'a%' and (i = 1 or (f = true and (x = 1)))", "x"),
    (" or ".join(f"i = {n}" for n in range(500)) + " or dt = 1", "dt"),
]


@pytest.mark.parametrize(("text", "name"), NOT_KEYS)
def test_a_name_not_a_key_raises(
    engine: Engine, table: PartitionStore, text: str, name: str
) -> None:
    with pytest.raises(InvalidFilter) as raised:
        compile_filter(text, table, engine.dialect.name)
    assert str(raised.value) == f"Specified key <{name}> is not a partitioning key for the table"
    assert isinstance(raised.value, StatlasError)


def test_a_name_deeper_than_the_index_query_raises() -> None:
    store = ps.partition_store(1, KEYS, TYPES)
    text = "colour = 1"
    for level in range(3 * MAX_DEPTH):
        text = f"(i = {level} {'and' if level % 2 else 'or'} {text})"
    with pytest.raises(InvalidFilter, match=r"^Specified key <colour> is not a partitioning"):
        compile_filter(text, store, "sqlite")


UNPARSEABLE = [
    '(d = "2024-01-01"',
    'd = "2024-01-01")',
    'd = "2024-01-01',
    "i ==  1",
    "i =",
    "= 1",
    "and",
    'd = "a" and',
    "i in ()",
    "i in (1,)",
    "i between 1",
    "i not = 1",
    "i = 1; drop table x",
    "i = 1e5",
    "i = 1 i = 2",
    "not",
    's = "a\\"',
    "i = ½",
    "(" * 3000 + "i = 1" + ")" * 2999,
    "i = m",  # two keys: Hive's grammar compares a key with a literal
    "1 = 1",
    '"a" in ("a", "b")',
    "s like i",
    "s like '\\p{Alpha}+'",  # a Java regex Python cannot compile
    "s like '[a-'",
    "s like 'a{4294967296}'",  # too many for Python's re
    "s like '" + "(" * 2000 + "a" + ")" * 2000 + "'",
]


@pytest.mark.parametrize("text", UNPARSEABLE)
def test_unparseable_raises(engine: Engine, table: PartitionStore, text: str) -> None:
    with pytest.raises(InvalidFilter) as raised:
        compile_filter(text, table, engine.dialect.name)
    message = str(raised.value)
    assert message.startswith("Error parsing partition filter : ")
    assert "\n" not in message
    assert len(message) < 400


def test_literal_left_of_like_raises() -> None:
    store = ps.partition_store(1, KEYS, TYPES)
    with pytest.raises(InvalidFilter) as raised:
        compile_filter("'eu' like s", store, "postgresql")
    assert str(raised.value) == "Value should be on the RHS for LIKE operator : Key <s>"


def test_names_match_without_case(engine: Engine, table: PartitionStore) -> None:
    store = ps.partition_store(1, ["Region", "DT"], [KeyType("string"), KeyType("date")])
    compiled = compile_filter(
        'region = "eu" and dt = "2024-01-01" and REGION != "x"', store, "sqlite"
    )
    assert compiled.exact
    compiled = compile_filter('D = "2024-01-01" AND `S` = "eu"', table, engine.dialect.name)
    assert compiled.exact
    expected = {i for i, row in enumerate(ROWS) if row[D] == dt.date(2024, 1, 1) and row[S] == "eu"}
    assert answer(engine, table, compiled) == expected
