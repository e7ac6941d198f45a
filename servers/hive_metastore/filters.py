"""Hive Metastore partition filters: `get_partitions_by_filter`'s string -> a predicate on
the typed partition index (the same index query as `statlas partitions --where`) and,
where that index cannot express the filter, a Python evaluation of the whole filter to
apply to each partition the predicate selects. Together they answer exactly, as Hive's
metastore does: raw clients (hmsclient, pymetastore) do not filter again.

    >>> import datetime
    >>> from metastore.partitions.store import partition_store
    >>> store = partition_store(1, ["dt", "region"], [KeyType("date"), KeyType("string")])
    >>> compiled = compile_filter('(dt) in ("2024-01-01") and region = "eu"', store, "sqlite")
    >>> compiled.exact, compiled.reason, compiled.matches
    (True, None, None)
    >>> compiled = compile_filter('dt like "2024-01-%" and region = "eu"', store, "sqlite")
    >>> compiled.exact, compiled.reason
    (False, 'LIKE on the date key dt')
    >>> compiled.matches([datetime.date(2024, 1, 5), "eu"]), compiled.matches(["2024-02-05", "eu"])
    (True, False)
    >>> compile_filter('region = "eu" and colour = "red"', store, "sqlite")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    servers.hive_metastore.filters.InvalidFilter: Specified key <colour> is not a partitioning ...

Grammar (keywords case-insensitive, `not` binds tighter than `and`, `and` than `or`):

    expr    := expr OR expr | expr AND expr | NOT expr | '(' expr ')' | atom
    atom    := operand op operand                op: = != <> < <= > >= like | not like
             | operand [NOT] IN '(' operand, ... ')'
             | operand [NOT] BETWEEN operand AND operand
    operand := key | '(' key ')' | "string" | 'string' | [-]digits[.digits] | true | false
             | DATE "..." | TIMESTAMP "..."

Every atom compares one partition key with literals. Names match keys case-insensitively
(Hive lowercases names). InvalidFilter (a StatlasError; Hive answers MetaException):

- a name that is not a partition key (a data column, an unknown name), wherever it is:
  `Specified key <colour> is not a partitioning key for the table`, Hive's ExpressionTree;
- `Error parsing partition filter : ...` for a string that does not parse, an atom with no
  key or comparing two keys (Hive's grammar compares a key with literals), a LIKE regex
  Python's re cannot compile;
- a literal left of LIKE: `Value should be on the RHS for LIKE operator : Key <k>`.

SQL's three-valued logic holds (as Spark's own re-evaluation of the filter): a comparison
with a NULL key (the default partition) is unknown, NOT of unknown is unknown, `unknown AND
false` is false, `unknown OR true` is true; a partition is selected when the filter is true.

A literal's text (a quoted body verbatim: Hive keeps backslash escapes, so `"a\\b"` is the
three characters a, \\, b; a number as written; true/false; the quoted text of DATE and
TIMESTAMP) is read against the key it is compared with, in this order:

1. a string key compares with the text itself (`region = 5` is region = '5');
2. the text parsed as the key's type with KeyType.parse (`h = "5"` is h = 5);
3. on a timestamp key, a date is its midnight (SQL's promotion of a date);
4. on a date key, text starting with year-month-day (month and day of one or two digits)
   is that date, the rest ignored: Hive's direct SQL reads dates with SimpleDateFormat
   "yyyy-MM-dd", which needs no more (`dt < "2024-1-5"` is dt < 2024-01-05);
5. on a numeric key, a number outside the key's type (2.5 or 3000000000 for an int,
   1.234 for a decimal(6,2)) compares numerically, as Hive's direct SQL compares cast
   values: `h < 2.5` is h <= 2, `h = 2.5` is false;
6. anything else compares as text: the key's canonical text (metastore.types.format_value)
   against the literal's, in code point order, as Hive's JDO path compares strings. Such
   an `=` never holds (a literal equal to a canonical text would have parsed): `h = "x"`
   is false, `h != "x"` true (for a non-NULL h), `dt < "x"` true.

LIKE: a pattern holding `%` or `_` and no regex metacharacter is SQL LIKE (Hive 4);
otherwise it is a Java regular expression matched against the whole value (Hive 2.3's
client); a pattern of neither is equality. The pattern is the literal's text; the value is
a string key's value or another key's canonical text (`h like "1%"`). `.` matches any
character, line terminators too, as SQL's `_` does (Java's `.` does not: this differs only
on values holding one). Patterns run case-sensitively as in Hive. Regexes of literal
characters, `\\`-escaped punctuation, `.`, `.*`, `.+` and an optional leading `^`/trailing
`$` on a string key compile to LIKE with `\\` escapes on PostgreSQL (the key columns have
collation "C") and GLOB on SQLite (whose LIKE ignores ASCII case); other regexes run as
Python's re.fullmatch with DOTALL and ASCII (\\w, \\d, \\s and case folding ASCII, as
Java's by default).

Rules 1-4, LIKE on a string key with a pattern of SQL form and everything built of them
compile to the index exactly: `exact` is True, `matches` None. The index cannot express
rules 5 and 6, LIKE on other keys or with other regexes: each such comparison is *unknown*
(true for every partition) to the predicate, `unknown AND p` is `p`, `unknown OR p` and NOT
of an inexact part are unknown, as is anything nested deeper than MAX_DEPTH
(MAX_SQLITE_DEPTH on SQLite). The predicate is then a superset, `exact` False, `reason`
says why (for the daemon's log), and `matches` is the whole filter over one partition's
key values in key order: typed values (None for the default partition) or the raw text
StoredPartition.values holds (parsed with the key's type). The answer is the partitions
the predicate selects for which `matches` is True.

Equalities on one key joined by OR (older Spark's form of an IN list) become one IN over
one bound parameter, as `(key) in (...)` does (partition_store.value_in).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement

from metastore.errors import StatlasError
from metastore.partitions.filter_sql import (
    MAX_DEPTH,
    MAX_SQLITE_DEPTH,
    FilterSql,
    filter_sql,
    max_depth,
)
from metastore.partitions.filters import (
    FLIPPED,
    And,
    Compare,
    InList,
    Like,
    PartitionFilter,
    Unknown,
    all_of,
    any_of,
    negation,
)
from metastore.partitions.store import PartitionStore
from metastore.types import KeyType, KeyValue
from servers.hive_metastore import filter_evaluation as ev

__all__ = ["MAX_DEPTH", "MAX_SQLITE_DEPTH", "CompiledFilter", "InvalidFilter", "compile_filter"]

MAX_SHOWN = 200
"""A message or reason quotes at most this many characters of the filter."""
MAX_REASONS = 5
"""A reason names at most this many unknown pieces."""


class InvalidFilter(StatlasError):
    """A filter Hive's metastore refuses, with Hive's message: a name that is not a
    partition key, or a string that does not parse."""


@dataclass(frozen=True)
class CompiledFilter:
    """A filter string compiled against one table's partition keys."""

    predicate: ColumnElement[bool] | None  # None: every partition
    exact: bool  # True: the predicate is exactly the filter
    reason: str | None  # why not exact (for the daemon's log), else None
    # None when exact; else the whole filter over one partition's key values (typed or raw
    # text, None for NULL), for each partition the predicate selects
    matches: Callable[[Sequence[KeyValue | None]], bool] | None = None


def compile_filter(text: str, store: PartitionStore, dialect: str) -> CompiledFilter:
    """Compile a Hive Metastore filter string against `store`'s keys; raises InvalidFilter
    for a filter Hive would refuse."""
    if not text.strip():
        return CompiledFilter(None, True, None)
    shown = text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."
    compiler = _Compiler(store, dialect)
    try:
        tree = _Parser(_tokens(text)).parse()
        program = compiler.program(tree)  # resolves every comparison
    except _Malformed as error:
        raise InvalidFilter(f"Error parsing partition filter : {error} in {shown!r}") from None
    try:
        result = filter_sql(compiler.filter(tree), store, dialect)
    except Exception as error:  # a bug: every partition, answered by `matches`
        result = FilterSql(None, False, (f"cannot compile filter {shown!r}: {error!r}",))
    if result.exact:
        return CompiledFilter(result.predicate, True, None)
    reasons = result.reasons
    reason = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        reason += f"; and {len(reasons) - MAX_REASONS} more"
    matches = ev.evaluator(program, store.key_types)
    return CompiledFilter(result.predicate, False, reason, matches)


# --- tokens ---------------------------------------------------------------------------


class _Malformed(Exception):
    pass


@dataclass(frozen=True)
class _Token:
    kind: str  # "(", ")", ",", "op", "string", "number", "word", "end"
    text: str  # operator, raw string body (quotes removed, escapes kept), number, word
    position: int


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<punct>[(),])
      | (?P<op><=|>=|<>|!=|=|<|>)
      | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<number>-?\d+(?:\.\d+)?(?![\w.]))
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*|`[^`]+`)
    )""",
    re.VERBOSE | re.DOTALL,
)


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    end = len(text.rstrip())
    while position < end:
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise _Malformed(f"unexpected {text[position:].strip()[:20]!r}")
        kind = match.lastgroup
        assert kind is not None
        value = match.group(kind)
        start = match.start(kind)
        if kind == "punct":
            tokens.append(_Token(value, value, start))
        elif kind == "string":
            tokens.append(_Token("string", value[1:-1], start))
        elif kind == "word" and value.startswith("`"):
            tokens.append(_Token("word", value[1:-1], start))
        else:
            tokens.append(_Token(kind, value, start))
        position = match.end()
    tokens.append(_Token("end", "", end))
    return tokens


# --- syntax tree ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Operand:
    kind: str  # "key" (a name), "string", "number", "boolean", "date", "timestamp"
    text: str


@dataclass(frozen=True)
class _Compare:
    left: _Operand
    op: str  # = != < <= > >= like
    right: _Operand


@dataclass(frozen=True)
class _In:
    subject: _Operand
    values: tuple[_Operand, ...]


@dataclass(frozen=True)
class _Between:
    subject: _Operand
    low: _Operand
    high: _Operand


@dataclass(frozen=True)
class _Not:
    inner: _Node


@dataclass(frozen=True)
class _Junction:
    kind: str  # "and", "or"
    parts: tuple[_Node, ...]


_Node = _Compare | _In | _Between | _Not | _Junction

_KEYWORDS = {"and", "or", "not", "in", "like", "between", "date", "timestamp", "true", "false"}


_PRECEDENCE = {"or": 1, "and": 2, "not": 3}


class _Parser:
    """Operator precedence over a stack, not recursion: Spark sends a user's OR chain as
    `((a or b) or c) ...`, nested as deep as the chain is long."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def parse(self) -> _Node:
        operands: list[_Node] = []
        operators: list[str] = []  # "(", "not", "and", "or"
        opened: list[_Token] = []
        while True:  # expecting an operand
            if self.is_word("not"):
                self.take()
                operators.append("not")
                continue
            if self.peek().kind == "(" and not self.parenthesised_key():
                opened.append(self.take())
                operators.append("(")
                continue
            operands.append(self.atom())
            while self.peek().kind == ")":  # expecting an operator
                if not opened:
                    raise self.error("unbalanced")
                self.take()
                opened.pop()
                while operators[-1] != "(":
                    _reduce(operators, operands)
                operators.pop()
            if self.is_word("and") or self.is_word("or"):
                word = self.take().text.lower()
                while operators and operators[-1] != "(":
                    if _PRECEDENCE[operators[-1]] < _PRECEDENCE[word]:
                        break
                    _reduce(operators, operands)
                operators.append(word)
                continue
            if self.peek().kind != "end":
                raise self.error("unexpected")
            if opened:
                raise _Malformed(f"unbalanced '(' at {opened[-1].position}")
            while operators:
                _reduce(operators, operands)
            assert len(operands) == 1
            return operands[0]

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.at + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.peek()
        self.at += 1
        return token

    def is_word(self, word: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == "word" and token.text.lower() == word

    def expect(self, kind: str) -> _Token:
        if self.peek().kind != kind:
            raise self.error(f"expected {kind!r} but found")
        return self.take()

    def error(self, what: str) -> _Malformed:
        token = self.peek()
        found = repr(token.text) if token.kind != "end" else "the end"
        return _Malformed(f"{what} {found} at {token.position}")

    def parenthesised_key(self) -> bool:
        """`(key)` as an operand, as in Spark's `(dt) in (...)`."""
        return (
            self.peek(1).kind == "word"
            and self.peek(1).text.lower() not in _KEYWORDS
            and self.peek(2).kind == ")"
        )

    def atom(self) -> _Node:
        left = self.operand()
        negated = False
        if self.is_word("not"):
            self.take()
            negated = True
        node: _Node
        token = self.peek()
        if token.kind == "op" and not negated:
            self.take()
            op = {"<>": "!=", "!=": "!="}.get(token.text, token.text)
            node = _Compare(left, op, self.operand())
        elif self.is_word("like"):
            self.take()
            node = _Compare(left, "like", self.operand())
        elif self.is_word("in"):
            self.take()
            self.expect("(")
            values = [self.operand()]
            while self.peek().kind == ",":
                self.take()
                values.append(self.operand())
            self.expect(")")
            node = _In(left, tuple(values))
        elif self.is_word("between"):
            self.take()
            low = self.operand()
            if not self.is_word("and"):
                raise self.error("expected 'and' but found")
            self.take()
            node = _Between(left, low, self.operand())
        else:
            raise self.error("expected a comparison but found")
        return _negation(node) if negated else node

    def operand(self) -> _Operand:
        token = self.take()
        if token.kind == "(":
            name = self.expect("word")
            self.expect(")")
            if name.text.lower() in _KEYWORDS:
                raise _Malformed(f"unexpected {name.text!r} at {name.position}")
            return _Operand("key", name.text)
        if token.kind in ("string", "number"):
            return _Operand(token.kind, token.text)
        if token.kind == "word":
            word = token.text.lower()
            if word in ("true", "false"):
                return _Operand("boolean", word)
            if word in ("date", "timestamp") and self.peek().kind == "string":
                return _Operand(word, self.take().text)
            if word not in _KEYWORDS:
                return _Operand("key", token.text)
        self.at -= 1
        raise self.error("expected a key or a literal but found")


def _reduce(operators: list[str], operands: list[_Node]) -> None:
    operator = operators.pop()
    if operator == "not":
        operands.append(_negation(operands.pop()))
    else:
        right, left = operands.pop(), operands.pop()
        operands.append(_junction(operator, left, right))


def _negation(node: _Node) -> _Node:
    """NOT NOT x is x in three-valued logic too."""
    return node.inner if isinstance(node, _Not) else _Not(node)


def _junction(kind: str, left: _Node, right: _Node) -> _Junction:
    """AND and OR are associative: (a or b) or c is one OR of three."""
    parts: list[_Node] = []
    for side in (left, right):
        if isinstance(side, _Junction) and side.kind == kind:
            parts.extend(side.parts)
        else:
            parts.append(side)
    return _Junction(kind, tuple(parts))


# --- compiling ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    """An atom resolved against the keys: its Python test of the key's non-NULL value and
    its partition filter (an Unknown, with why, where the index cannot express it)."""

    position: int
    test: ev.Test
    filter: PartitionFilter


class _Compiler:
    def __init__(self, store: PartitionStore, dialect: str) -> None:
        self.store = store
        self.max_depth = max_depth(dialect)
        self.keys = {name.lower(): i for i, name in enumerate(store.key_names)}
        self.pieces: dict[_Node, _Piece] = {}  # atoms hash by identity (eq=False)

    def program(self, tree: _Node) -> list[ev.Instruction]:
        """The filter in postfix for filter_evaluation, every atom resolved in the order
        written; iterative, as the tree may be nested thousands deep."""
        program: list[ev.Instruction] = []
        pending: list[tuple[_Node, bool]] = [(tree, False)]
        while pending:
            node, expanded = pending.pop()
            if isinstance(node, _Junction | _Not):
                children = node.parts if isinstance(node, _Junction) else (node.inner,)
                if expanded:
                    kind = node.kind if isinstance(node, _Junction) else "not"
                    program.append(ev.Connective(kind, len(children)))
                else:
                    pending.append((node, True))
                    pending.extend((child, False) for child in reversed(children))
            else:
                piece = self.piece(node)
                program.append(ev.Leaf(piece.position, piece.test))
        return program

    def filter(self, node: _Node, depth: int = 0) -> PartitionFilter:
        """The tree as a partition filter (metastore.partitions.filter_sql compiles it); a part
        nested deeper than the index takes is unknown, so that neither recurses further."""
        if depth > self.max_depth:
            return Unknown(f"nested deeper than {self.max_depth}")
        if isinstance(node, _Junction):
            parts = [self.filter(part, depth + 1) for part in node.parts]
            return all_of(parts) if node.kind == "and" else any_of(parts)
        if isinstance(node, _Not):
            return negation(self.filter(node.inner, depth + 1))
        return self.piece(node).filter

    # atoms

    def piece(self, node: _Compare | _In | _Between) -> _Piece:
        piece = self.pieces.get(node)
        if piece is None:
            if isinstance(node, _Compare):
                piece = self.like(node) if node.op == "like" else self.comparison(node)
            elif isinstance(node, _In):
                piece = self.membership(node)
            else:
                piece = self.between(node)
            self.pieces[node] = piece
        return piece

    def subject(self, subject: _Operand, *literals: _Operand) -> int:
        """The key an atom compares (its position) with literals, every name checked."""
        for operand in (subject, *literals):
            if operand.kind == "key" and operand.text.lower() not in self.keys:
                raise InvalidFilter(
                    f"Specified key <{operand.text}> is not a partitioning key for the table"
                )
        if subject.kind != "key":
            raise _Malformed(f"no partition key in a comparison with {subject.text!r}")
        for operand in literals:
            if operand.kind == "key":
                raise _Malformed(f"{subject.text} compared with the key {operand.text}")
        return self.keys[subject.text.lower()]

    def key(self, position: int) -> tuple[str, KeyType]:
        return self.store.key_names[position], self.store.key_types[position]

    def literal(self, operand: _Operand, position: int) -> tuple[ev.Reading, str | None]:
        """The literal read against the key, and why the index cannot compare with it."""
        name, key_type = self.key(position)
        reading = ev.read(operand.text, key_type)
        if reading.how == "typed":
            return reading, None
        compared = "a number" if reading.how == "number" else "text"
        return reading, f"{operand.text!r} is no {key_type} (key {name}): compared as {compared}"

    def comparison(self, node: _Compare) -> _Piece:
        left, op, right = node.left, node.op, node.right
        if left.kind != "key" and right.kind == "key":
            left, right, op = right, left, FLIPPED[op]  # type: ignore[index]
        position = self.subject(left, right)
        literal, reason = self.literal(right, position)
        test = literal.test(op)
        if reason is not None:
            return _Piece(position, test, Unknown(reason))
        name, _ = self.key(position)
        return _Piece(position, test, Compare(name, op, literal.value))  # type: ignore[arg-type]

    def membership(self, node: _In) -> _Piece:
        position = self.subject(node.subject, *node.values)
        read = [self.literal(v, position) for v in node.values]
        reasons = [reason for _, reason in read if reason is not None]
        if reasons:
            test = ev.any_of([literal.test("=") for literal, _ in read])
            return _Piece(position, test, Unknown(reasons[0]))
        values = [literal.value for literal, _ in read]
        name, _ = self.key(position)
        return _Piece(position, ev.one_of(values), InList(name, tuple(dict.fromkeys(values))))

    def between(self, node: _Between) -> _Piece:
        position = self.subject(node.subject, node.low, node.high)
        (low, low_reason), (high, high_reason) = (
            self.literal(node.low, position),
            self.literal(node.high, position),
        )
        test = ev.all_of([low.test(">="), high.test("<=")])
        if low_reason is not None or high_reason is not None:
            return _Piece(position, test, Unknown(low_reason or high_reason or ""))
        name, _ = self.key(position)
        between = And((Compare(name, ">=", low.value), Compare(name, "<=", high.value)))
        return _Piece(position, test, between)

    def like(self, node: _Compare) -> _Piece:
        if node.left.kind != "key" and node.right.kind == "key":
            self.subject(node.right)
            raise InvalidFilter(
                f"Value should be on the RHS for LIKE operator : Key <{node.right.text}>"
            )
        position = self.subject(node.left, node.right)
        name, _ = self.key(position)
        pattern = node.right.text
        pieces = ev.like_pieces(pattern)
        regex = pattern if pieces is None else ev.pieces_regex(pieces)
        try:
            test = ev.matching(regex)
        except (re.error, OverflowError, RecursionError, FutureWarning) as error:
            shown = pattern if len(pattern) <= 60 else pattern[:60] + "..."
            raise _Malformed(f"invalid regular expression {shown!r}: {error}") from None
        if pieces is None:
            key_type = self.store.key_types[position]
            if key_type.name != "string":
                return _Piece(position, test, Unknown(f"LIKE on the {key_type} key {name}"))
            return _Piece(position, test, Unknown(f"the regex {pattern!r} has no SQL LIKE form"))
        return _Piece(position, test, Like(name, tuple(pieces)))
