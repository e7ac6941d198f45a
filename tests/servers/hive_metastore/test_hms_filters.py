"""Hive Metastore filter strings compiled against real partitions tables, on SQLite and
PostgreSQL: Spark's observed forms, quoting, flipped operands, LIKE in both forms,
malformed strings, and a property test against a brute-force evaluation written here. The
answer is the index query's partitions that CompiledFilter.matches keeps (all of them when
the query is exact); test_filter_semantics.py covers the inexact pieces in depth."""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, create_engine, select

from metastore.partitions import store as ps
from metastore.partitions.store import PartitionRow, PartitionStore
from metastore.types import KeyType, KeyValue
from servers.hive_metastore.filters import (
    MAX_SQLITE_DEPTH,
    CompiledFilter,
    InvalidFilter,
    compile_filter,
)
from tests.support.filter_strategies import Expr, Truth, conjoin, filters

_table_ids = itertools.count(1)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = create_engine(db_url)
    yield engine
    engine.dispose()


def make_store(engine: Engine, keys: Sequence[str], types: Sequence[KeyType]) -> PartitionStore:
    """A partitions table created as catalog registration creates it."""
    store = ps.partition_store(next(_table_ids), keys, types)
    with engine.begin() as conn:
        ps.create(conn, store)
        ps.create_indexes(conn, store)
    return store


def fill(engine: Engine, store: PartitionStore, rows: Sequence[tuple[KeyValue, ...]]) -> None:
    """Replace the table's partitions with rows; partition i is named p<i>."""
    with engine.begin() as conn:
        conn.execute(store.table.delete())
        ps.insert_rows(
            conn,
            store,
            [PartitionRow(f"p{i}", row, f"/d/p{i}", 1, 1, 1) for i, row in enumerate(rows)],
        )


def selected(engine: Engine, store: PartitionStore, compiled: CompiledFilter) -> set[int]:
    """The partitions the index query selects, then those `matches` keeps."""
    assert (compiled.matches is None) is compiled.exact
    query = select(store.table.c.name, *store.key_columns)
    if compiled.predicate is not None:
        query = query.where(compiled.predicate)
    with engine.connect() as conn:
        rows = conn.execute(query).all()
    return {
        int(name[1:])
        for name, *values in rows
        if compiled.matches is None or compiled.matches(values)
    }


# --- the forms, on a fixed table ------------------------------------------------------

Row = tuple[Any, Any, Any]
D1, D2, D3, D4 = (dt.date(2024, 1, day) for day in (1, 2, 3, 4))
REGIONS = ["eu", "us", "ap", "EU", "u.k", "e%u", "e_u", "eXu", 'say "hi"', "it's", "a\\b"]
REGIONS += ["a*", "a?", "a[", "a]"]
ROWS: list[Row] = [
    *[
        (day, region, (i + j) % 6)
        for i, day in enumerate((D1, D2, D3, D4))
        for j, region in enumerate(REGIONS[:5])
    ],
    *[(D1, region, 7) for region in REGIONS[5:]],
    (None, "eu", 3),
    (D1, None, None),
    (None, None, None),
]


def _gt(a: Any, b: Any) -> bool:
    return a is not None and a > b


# (filter, which rows it matches, exact?)
CASES: list[tuple[str, Callable[[Row], bool], bool]] = [
    ('dt = "2024-01-01"', lambda r: r[0] == D1, True),
    (
        '(dt) in ("2024-01-01", "2024-01-02") and region = "eu"',
        lambda r: r[0] in (D1, D2) and r[1] == "eu",
        True,
    ),
    (
        '(dt >= "2024-01-03" or region like "u.*")',
        lambda r: _gt(r[0], D2) or (r[1] or "").startswith("u"),
        True,
    ),
    (
        '(region) not in ("ap", "us") and dt != "2024-01-03"',
        lambda r: r[1] is not None and r[1] not in ("ap", "us") and r[0] not in (None, D3),
        True,
    ),
    ("h > 2 and h != 4", lambda r: _gt(r[2], 2) and r[2] != 4, True),
    ('"2024-01-01" <= dt', lambda r: r[0] is not None and r[0] >= D1, True),
    ('"2024-01-02" > dt', lambda r: r[0] is not None and r[0] < D2, True),
    ('"2024-01-03" < dt', lambda r: _gt(r[0], D3), True),
    ('"2024-01-03" >= dt', lambda r: r[0] is not None and r[0] <= D3, True),
    ("3 <= h", lambda r: _gt(r[2], 2), True),
    ("not (h = 3)", lambda r: r[2] is not None and r[2] != 3, True),
    ("not h = 3", lambda r: r[2] is not None and r[2] != 3, True),
    ('region like "eu%"', lambda r: r[1] == "eu", True),  # not EU: case-sensitive
    ('region like "E.*"', lambda r: r[1] == "EU", True),
    ('region like "e_u"', lambda r: r[1] in ("e%u", "e_u", "eXu"), True),
    (r'region like "e\_u"', lambda r: r[1] == "e_u", True),
    (r'region like "e\%u"', lambda r: r[1] == "e%u", True),
    (r'region like "e\_.*"', lambda r: r[1] == "e_u", True),
    (r'region like "e\%.*"', lambda r: r[1] == "e%u", True),
    (r'region like "a\*.*"', lambda r: r[1] == "a*", True),
    (r'region like "a\?."', lambda r: False, True),
    (r'region like "a\?.*"', lambda r: r[1] == "a?", True),
    (r'region like "a\[.*"', lambda r: r[1] == "a[", True),
    (r'region like "a\].*"', lambda r: r[1] == "a]", True),
    (r'region like "a\\.*"', lambda r: r[1] == "a\\b", True),
    ('region like "e.u"', lambda r: r[1] in ("e%u", "e_u", "eXu"), True),
    (r'region like "u\.k"', lambda r: r[1] == "u.k", True),
    ('region like "^u.+$"', lambda r: r[1] in ("us", "u.k"), True),
    ('region like "eu"', lambda r: r[1] == "eu", True),
    (r'region like "a\\b"', lambda r: r[1] == "a\\b", True),
    (r'region like "a\\.*" or region like "[*]"', lambda r: r[1] == "a\\b", False),
    ("region like 'say \"%'", lambda r: r[1] == 'say "hi"', True),
    ("region = 'say \"hi\"'", lambda r: r[1] == 'say "hi"', True),
    ('region = "it\'s"', lambda r: r[1] == "it's", True),
    ('h = "5"', lambda r: r[2] == 5, True),  # quoted, coerced to the int key
    ('h in (1, "2")', lambda r: r[2] in (1, 2), True),
    ("h = 1 or h = 2 or h = 3", lambda r: r[2] in (1, 2, 3), True),
    ("h not in (1, 2)", lambda r: r[2] is not None and r[2] not in (1, 2), True),
    ("h between 2 and 3", lambda r: r[2] in (2, 3), True),
    ("h not between 2 and 3", lambda r: r[2] is not None and r[2] not in (2, 3), True),
    (
        'DT = "2024-01-02" AND Region <> "eu"',
        lambda r: r[0] == D2 and r[1] not in (None, "eu"),
        True,
    ),
    ('`dt` = date "2024-01-04"', lambda r: r[0] == D4, True),
    ("h = -1", lambda r: False, True),
    # pieces the index cannot express: a superset, which `matches` narrows
    ('h = "x" and dt = "2024-01-01"', lambda r: False, False),
    ('h != "x" and dt = "2024-01-01"', lambda r: r[0] == D1 and r[2] is not None, False),
    ("h = 2.5 or h = 1", lambda r: r[2] == 1, False),
    ("h < 2.5 and h > 0", lambda r: r[2] in (1, 2), False),
    ('not (h = "x" or h = 1)', lambda r: r[2] is not None and r[2] != 1, False),
    (
        'region like "[eu].*" and h = 0',
        lambda r: (r[1] or "")[:1] in ("e", "u") and r[2] == 0,
        False,
    ),
    ('region like "e|u" and h = 0', lambda r: False, False),
    ('region like "eu+" and h = 0', lambda r: r[1] == "eu" and r[2] == 0, False),
    ('h like "1%" and h = 1', lambda r: r[2] == 1, False),
    ('h like "1%" or h like "[23]"', lambda r: r[2] in (1, 2, 3), False),
    ('h in (1, "x")', lambda r: r[2] == 1, False),
    ('h in (1, "x") or region = "eu"', lambda r: r[2] == 1 or r[1] == "eu", False),
    # read as Hive reads them: exact
    ('dt < "2024-1-3" and h = 2', lambda r: r[0] in (D1, D2) and r[2] == 2, True),
    ("region = 5 and h = 0", lambda r: False, True),
    ('region = "a\\b"', lambda r: r[1] == "a\\b", True),
]


@pytest.fixture
def forms_table(engine: Engine) -> PartitionStore:
    store = make_store(
        engine, ["dt", "region", "h"], [KeyType("date"), KeyType("string"), KeyType("int")]
    )
    fill(engine, store, ROWS)
    return store


@pytest.mark.parametrize(("text", "matches", "exact"), CASES, ids=[c[0] for c in CASES])
def test_forms(
    engine: Engine,
    forms_table: PartitionStore,
    text: str,
    matches: Callable[[Row], bool],
    exact: bool,
) -> None:
    dialect = engine.dialect.name
    compiled = compile_filter(text, forms_table, dialect)
    wanted = {i for i, row in enumerate(ROWS) if matches(row)}
    assert compiled.exact is exact, compiled.reason
    assert (compiled.reason is None) is exact
    assert compiled.predicate is not None or not exact
    assert selected(engine, forms_table, compiled) == wanted


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_or_chain_is_one_in_list(dialect: str) -> None:
    store = ps.partition_store(1, ["h"], [KeyType("int")])
    chain = " or ".join(f"h = {i}" for i in range(2000))
    compiled = compile_filter(chain, store, dialect)
    assert compiled.exact
    assert compiled.predicate is not None
    assert " OR " not in str(compiled.predicate)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_deep_nesting(dialect: str) -> None:
    store = ps.partition_store(1, ["h", "r"], [KeyType("int"), KeyType("string")])
    # Spark writes a user's OR chain as nested pairs: ((h = 0 or h = 1) or h = 2) ...
    spark_chain = "h = 0"
    for i in range(1, 3000):
        spark_chain = f"({spark_chain} or h = {i})"
    for text in (spark_chain, "(" * 3000 + "h = 1" + ")" * 3000, "not " * 3000 + "h = 1"):
        compiled = compile_filter(text, store, dialect)
        assert compiled.exact, compiled.reason
        assert compiled.predicate is not None and " OR " not in str(compiled.predicate)
    # alternating AND/OR nested past MAX_DEPTH: the deep part is unknown to the index
    # query, `matches` evaluates it all (without recursion)
    alternating = 'r = "x"'
    for i in range(3000):
        alternating = f"(h = {i} {'and' if i % 2 else 'or'} {alternating})"
    compiled = compile_filter(alternating, store, dialect)
    assert not compiled.exact and "nested deeper than" in str(compiled.reason)
    assert compiled.matches is not None
    if compiled.predicate is not None:
        str(compiled.predicate)
    for h, r in itertools.product((0, 1, 2, 2998, 2999, 5000, None), ("x", "y", None)):
        truth: bool | None = None if r is None else r == "x"
        for i in range(3000):
            truth = _and_or("and" if i % 2 else "or", None if h is None else h == i, truth)
        assert compiled.matches([h, r]) is (truth is True), (h, r)


def _and_or(kind: str, a: bool | None, b: bool | None) -> bool | None:
    """SQL's AND or OR of two truths."""
    decisive = kind == "or"
    if decisive in (a, b):
        return decisive
    return None if None in (a, b) else not decisive


@pytest.mark.parametrize("depth", [MAX_SQLITE_DEPTH, 40, 60])
def test_deep_predicates_run(engine: Engine, depth: int) -> None:
    """SQLite's parser gives up on SQL nested some 33 deep ("parser stack overflow"): its
    index query stops at MAX_SQLITE_DEPTH and `matches` answers the rest (alternating
    AND/OR over IN lists: the shape that nests deepest per level)."""
    rows: list[tuple[Any, ...]] = [(h, r) for h in (0, 1, 2, 3, None) for r in ("x", "y", None)]
    store = make_store(engine, ["h", "r"], [KeyType("int"), KeyType("string")])
    fill(engine, store, rows)
    text = 'r = "x"'
    for i in range(depth):
        text = f"(h in (1, 2, {i % 4}) {'and' if i % 2 else 'or'} {text})"
    compiled = compile_filter(text, store, engine.dialect.name)
    assert compiled.exact is (engine.dialect.name == "postgresql" or depth <= MAX_SQLITE_DEPTH)
    wanted = set()
    for index, (h, r) in enumerate(rows):
        truth: bool | None = None if r is None else r == "x"
        for i in range(depth):
            member = None if h is None else h in (1, 2, i % 4)
            truth = _and_or("and" if i % 2 else "or", member, truth)
        if truth is True:
            wanted.add(index)
    assert selected(engine, store, compiled) == wanted


def test_reasons_name_the_inexact_piece() -> None:
    store = ps.partition_store(
        1, ["dt", "h", "r"], [KeyType("date"), KeyType("int"), KeyType("string")]
    )
    assert "has no SQL LIKE form" in str(compile_filter('r like "[0-9]+"', store, "sqlite").reason)
    assert compile_filter('dt like "2%"', store, "sqlite").reason == "LIKE on the date key dt"
    assert compile_filter("h = 2.5", store, "sqlite").reason == (
        "'2.5' is no int (key h): compared as a number"
    )
    assert compile_filter("", store, "sqlite") == CompiledFilter(None, True, None)
    many = " or ".join(f"h = '{i}x'" for i in range(1000))
    reason = str(compile_filter(many, store, "sqlite").reason)
    assert reason.startswith("'0x' is no int (key h): compared as text; ")
    assert reason.endswith("; and 996 more")


def test_errors_are_hive_messages() -> None:
    store = ps.partition_store(
        1, ["dt", "h", "r"], [KeyType("date"), KeyType("int"), KeyType("string")]
    )
    with pytest.raises(InvalidFilter) as raised:
        compile_filter('h = 1 or colour = "x"', store, "sqlite")
    assert str(raised.value) == "Specified key <colour> is not a partitioning key for the table"
    many = " or ".join(f"c{i} = 1" for i in range(1000))
    with pytest.raises(InvalidFilter, match=r"^Specified key <c0> is not a partitioning key"):
        compile_filter(many, store, "sqlite")
    with pytest.raises(InvalidFilter) as raised:
        compile_filter("h = 1 and " * 1000 + "(", store, "sqlite")
    message = str(raised.value)
    assert message.startswith("Error parsing partition filter : expected a key or a literal ")
    assert "in 'h = 1 and h = 1 and" in message
    assert len(message) < 300
    with pytest.raises(InvalidFilter, match=r"^Error parsing partition filter : h compared with"):
        compile_filter("h = dt and h = 1", store, "sqlite")


def test_docstring_examples() -> None:
    import doctest

    from servers.hive_metastore import filter_evaluation, filters

    for module, examples in ((filters, 8), (filter_evaluation, 3)):
        outcome = doctest.testmod(module)
        assert outcome.attempted >= examples and outcome.failed == 0, module.__name__


MALFORMED = [
    '(dt = "2024-01-01"',
    'dt = "2024-01-01")',
    'dt = "2024-01-01',
    "dt ==  1",
    "dt =",
    "= 1",
    "and",
    'dt = "a" and',
    'dt = "a" or or h = 1',
    "((((",
    "h in ()",
    "h in (1,)",
    "h in 1, 2",
    "h between 1",
    "h not = 1",
    "h = 1; drop table x",
    "h = 1e5",
    "h = 0x10",
    "h = 1 h = 2",
    "not",
    "() = 1",
    "h = 1 and (",
    'region = "a\\"',
    "h = 1 and \x00",
    "h = ½",
    "(" * 3000 + "h = 1" + ")" * 2999,
    "h = 1)" + " or h = 2)" * 10,
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_raises(text: str) -> None:
    store = ps.partition_store(
        1, ["dt", "region", "h"], [KeyType("date"), KeyType("string"), KeyType("int")]
    )
    with pytest.raises(InvalidFilter, match=r"^Error parsing partition filter : "):
        compile_filter(text, store, "sqlite")


FUZZ_TOKENS = [
    "dt", "h", "region", "x", "(", ")", ",", "=", "!=", "<>", "<", ">=", "and", "or", "not",
    "in", "like", "between", '"eu"', "'2024-01-01'", "3", "-2.5", '"u.*"', '"', "\\", "true",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40), st.lists(st.sampled_from(FUZZ_TOKENS), max_size=12).map(" ".join)
    )
)
def test_raises_only_invalid_filter(text: str) -> None:
    store = ps.partition_store(
        1, ["dt", "region", "h"], [KeyType("date"), KeyType("string"), KeyType("int")]
    )
    messages = []
    for dialect in ("sqlite", "postgresql"):
        try:
            compiled = compile_filter(text, store, dialect)
        except InvalidFilter as error:
            messages.append(str(error))
            continue
        assert compiled.exact or compiled.reason
        assert not (compiled.reason or "").startswith("cannot compile")
        if compiled.predicate is not None:
            str(compiled.predicate)
        if compiled.matches is not None:
            for values in ([None, None, None], [D1, "eu", 3], ["2024-01-01", "u.k", "-2"]):
                compiled.matches(values)
    assert all("\n" not in message for message in messages)


# --- property: exactly a brute-force evaluation -----------------------------------------

KEYS = ["i", "b", "s", "d", "m", "f", "t"]
TYPES = [
    KeyType("int"),
    KeyType("bigint"),
    KeyType("string"),
    KeyType("date"),
    KeyType("decimal", 6, 2),
    KeyType("boolean"),
    KeyType("timestamp"),
]
STRING_ALPHABET = "ab.%_\\\"' A"
COMMON_STRINGS = ["a", "ab", "b.", "a%", "a_b", "A", "", "'", '"a', "a\\b"]


def typed_values(position: int) -> st.SearchStrategy[Any]:
    return [
        st.integers(-3, 5),
        st.sampled_from([-(2**40), -1, 0, 1, 7, 2**40]),
        st.one_of(st.sampled_from(COMMON_STRINGS), st.text(STRING_ALPHABET, max_size=3)),
        st.dates(dt.date(2024, 1, 1), dt.date(2024, 1, 6)),
        st.sampled_from([Decimal(v) for v in ("-1.50", "0.00", "0.25", "1.50", "2.00")]),
        st.booleans(),
        st.sampled_from([dt.datetime(2024, 1, 1, h, 30, 0, us) for h in (0, 1) for us in (0, 5)]),
    ][position]


Evaluate = Callable[[tuple[KeyValue, ...]], Truth]


def render(value: KeyValue, position: int, quoted: bool) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    if TYPES[position].name in ("string", "date", "timestamp") or quoted:
        return f'"{text}"' if '"' not in text else f"'{text}'"
    return text


def key_name(draw: st.DrawFn, position: int) -> str:
    return draw(st.sampled_from([KEYS[position], KEYS[position].upper()]))


def compare(op: str, a: Any, b: Any) -> Truth:
    if a is None:
        return None
    results: dict[str, bool] = {
        "=": a == b,
        "!=": a != b,
        "<>": a != b,
        "<": a < b,
        "<=": a <= b,
        ">": a > b,
        ">=": a >= b,
    }
    return results[op]


FLIP = {"=": "=", "!=": "!=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def literal_value(draw: st.DrawFn, position: int) -> tuple[KeyValue, str, bool]:
    """A typed value, its text and whether the compiler can take it exactly (always: a
    backslash is kept verbatim, as Hive keeps it)."""
    value = draw(typed_values(position))
    if isinstance(value, str) and '"' in value and "'" in value:
        value = value.replace("'", "a")
    if isinstance(value, str) and value.endswith("\\"):
        value += "."  # a backslash before the closing quote would escape it
    text = render(value, position, draw(st.booleans()))
    return value, text, True


@st.composite
def comparisons(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    op = draw(st.sampled_from(list(FLIP)))
    value, text, exact = literal_value(draw, position)
    key = key_name(draw, position)
    phrase = f"{text} {FLIP[op]} {key}" if draw(st.booleans()) else f"{key} {op} {text}"
    return Expr(phrase, lambda row: compare(op, row[position], value), exact)


@st.composite
def memberships(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    drawn = [literal_value(draw, position) for _ in range(draw(st.integers(1, 4)))]
    values = [v for v, _, _ in drawn]
    negated = draw(st.booleans())
    key = key_name(draw, position)
    subject = f"({key})" if draw(st.booleans()) else key
    phrase = f"{subject} {'not in' if negated else 'in'} ({', '.join(t for _, t, _ in drawn)})"

    def truth(row: tuple[KeyValue, ...]) -> Truth:
        if row[position] is None:
            return None
        return (row[position] in values) != negated

    return Expr(phrase, truth, all(e for _, _, e in drawn))


@st.composite
def or_chains(draw: st.DrawFn) -> Expr:
    """Older Spark's IN list: equalities on one key joined by OR."""
    position = draw(st.integers(0, len(KEYS) - 1))
    drawn = [literal_value(draw, position) for _ in range(draw(st.integers(2, 4)))]
    key = key_name(draw, position)

    def equality(value: KeyValue, text: str, exact: bool) -> Expr:
        return Expr(f"{key} = {text}", lambda row: compare("=", row[position], value), exact)

    return conjoin("or", [equality(*piece) for piece in drawn])


@st.composite
def betweens(draw: st.DrawFn) -> Expr:
    position = draw(st.integers(0, len(KEYS) - 1))
    low, low_text, low_exact = literal_value(draw, position)
    high, high_text, high_exact = literal_value(draw, position)
    negated = draw(st.booleans())
    phrase = (
        f"{key_name(draw, position)} {'not ' if negated else ''}between {low_text} and {high_text}"
    )

    def truth(row: tuple[KeyValue, ...]) -> Truth:
        value: Any = row[position]
        if value is None:
            return None
        return bool(low <= value <= high) != negated

    return Expr(phrase, truth, low_exact and high_exact)


_REGEX_METACHARACTERS = set("\\^$.|?*+()[]{}")


def like_matches(pattern: str, value: str) -> bool:
    """Hive's LIKE as specified: SQL form when the pattern has % or _ and no regex
    metacharacter, else a regex over the whole value (a pattern of neither is equality)."""
    if _REGEX_METACHARACTERS & set(pattern):
        return re.fullmatch(pattern, value, re.DOTALL | re.ASCII) is not None
    if "%" in pattern or "_" in pattern:
        regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
        return re.fullmatch(regex, value, re.DOTALL) is not None
    return pattern == value


UNTRANSLATABLE = ["[ab].*", "a|b", "a+", ".*b?", r"\w.*", "(a).*", "a{2}", ".*?", "[^a]"]


@st.composite
def like_patterns(draw: st.DrawFn) -> tuple[str, bool]:
    """A LIKE pattern in SQL form, as a translatable regex or as an untranslatable one, and
    whether the compiler is expected to take it exactly."""
    pieces = draw(
        st.lists(st.sampled_from(["a", "b", "A", " ", ".", "%", "_", "ANY", "ONE"]), max_size=4)
    )
    form = draw(st.sampled_from(["sql", "regex", "untranslatable"]))
    if form == "sql":
        wild = {"ANY": "%", "ONE": "_", ".": "a", "%": "b", "_": "A"}
        return "".join(wild.get(p, p) for p in pieces), True
    if form == "regex":
        wild = {"ANY": ".*", "ONE": ".", ".": "\\.", "%": "\\%", "_": "\\_"}
        pattern = "".join(wild.get(p, p) for p in pieces)
        return ("^" + pattern + "$" if draw(st.booleans()) else pattern), True
    return draw(st.sampled_from(UNTRANSLATABLE)), False


@st.composite
def likes(draw: st.DrawFn) -> Expr:
    key = key_name(draw, 2)
    pattern, exact = draw(like_patterns())
    quoted = f'"{pattern}"' if draw(st.booleans()) else f"'{pattern}'"

    def truth(row: tuple[KeyValue, ...]) -> Truth:
        value = row[2]
        return None if value is None else like_matches(pattern, str(value))

    return Expr(f"{key} like {quoted}", truth, exact)


def on(position: int, holds: Callable[[Any], bool]) -> Evaluate:
    return lambda row: None if row[position] is None else holds(row[position])


# pieces of a literal the typed index cannot compare with (so exact False) and pieces
# read as Hive reads them (exact), each with its truth (servers.hive_metastore.filters' docstring)
PIECES: list[tuple[str, Evaluate, bool]] = [
    ('i = "x"', on(0, lambda v: False), False),
    ('i < "x"', on(0, lambda v: True), False),  # text: "-3".."5" sort before "x"
    ("m = 1.234", on(4, lambda v: False), False),
    ("m < 1.234", on(4, lambda v: v < Decimal("1.234")), False),
    ("f = 3", on(5, lambda v: False), False),
    ("i = 2.5", on(0, lambda v: False), False),
    ("i >= 2.5", on(0, lambda v: v >= 3), False),
    ("b < 30000000000000000000", on(1, lambda v: True), False),
    ("i like '1%'", on(0, lambda v: str(v).startswith("1")), False),
    ("t < 2024", on(6, lambda v: False), False),
    ("i in (1, 'one')", on(0, lambda v: v == 1), False),
    ("d like '2024-01-0_'", on(3, lambda v: True), False),
    ("s = 5", on(2, lambda v: v == "5"), True),
    ('d < "2024-1-5"', on(3, lambda v: v < dt.date(2024, 1, 5)), True),
    ('d = timestamp "2024-01-01 00:00:00"', on(3, lambda v: v == dt.date(2024, 1, 1)), True),
    ('t = date "2024-01-01"', on(6, lambda v: v == dt.datetime(2024, 1, 1)), True),
    ('t >= "2024-01-01"', on(6, lambda v: v >= dt.datetime(2024, 1, 1)), True),
]


@st.composite
def pieces(draw: st.DrawFn) -> Expr:
    text, truth, exact = draw(st.sampled_from(PIECES))
    return Expr(text, truth, exact)


def atoms() -> st.SearchStrategy[Expr]:
    return st.one_of(comparisons(), memberships(), or_chains(), betweens(), likes(), pieces())


@pytest.fixture
def property_table(engine: Engine) -> PartitionStore:
    """One table per database, reused by every example (its rows replaced each time)."""
    return make_store(engine, KEYS, TYPES)


rows_strategy = st.lists(
    # a NULL (the default partition) a quarter of the time
    st.tuples(*[st.one_of(*[typed_values(i)] * 3, st.none()) for i in range(len(KEYS))]),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=rows_strategy, expr=filters(atoms()))
def test_property_exact(
    engine: Engine, property_table: PartitionStore, rows: list[tuple[KeyValue, ...]], expr: Expr
) -> None:
    store = property_table
    fill(engine, store, rows)
    compiled = compile_filter(expr.text, store, engine.dialect.name)
    wanted = {i for i, row in enumerate(rows) if expr.truth(row) is True}
    got = selected(engine, store, compiled)
    event(f"exact: {compiled.exact}")
    event("selects " + ("none" if not wanted else "all" if len(wanted) == len(rows) else "some"))
    assert compiled.exact is expr.exact, (expr.text, compiled.reason)
    assert got == wanted, expr.text


@pytest.fixture
def like_table(engine: Engine) -> PartitionStore:
    return make_store(engine, ["s"], [KeyType("string")])


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    values=st.lists(st.one_of(st.none(), st.text("ab%_.A", max_size=4)), min_size=1, max_size=12),
    patterns=st.lists(like_patterns(), min_size=1, max_size=6),
)
def test_property_like(
    engine: Engine,
    like_table: PartitionStore,
    values: list[str | None],
    patterns: list[tuple[str, bool]],
) -> None:
    """LIKE alone, many patterns over short strings of the wildcard characters."""
    fill(engine, like_table, [(v,) for v in values])
    for pattern, exact in patterns:
        compiled = compile_filter(f"s like '{pattern}'", like_table, engine.dialect.name)
        wanted = {i for i, v in enumerate(values) if v is not None and like_matches(pattern, v)}
        got = selected(engine, like_table, compiled)
        event(
            "selects " + ("none" if not wanted else "all" if len(wanted) == len(values) else "some")
        )
        assert compiled.exact is exact, pattern
        assert got == wanted, pattern
