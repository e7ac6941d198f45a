"""Hive Metastore partition filters: `get_partitions_by_filter`'s string -> a predicate on
the typed partition index, the same index query as `statlas partitions --where`.

    >>> from metastore.partition_store import partition_store
    >>> store = partition_store(1, ["dt", "region"], [KeyType("date"), KeyType("string")])
    >>> compiled = compile_filter('(dt) in ("2024-01-01") and region = "eu"', store, "sqlite")
    >>> compiled.exact, compiled.reason
    (True, None)
    >>> compile_filter('region = "eu" and colour = "red"', store, "sqlite").reason
    "unknown partition key 'colour'"

Grammar (keywords case-insensitive, `not` binds tighter than `and`, `and` than `or`):

    expr    := expr OR expr | expr AND expr | NOT expr | '(' expr ')' | atom
    atom    := operand op operand                op: = != <> < <= > >= like | not like
             | operand [NOT] IN '(' operand, ... ')'
             | operand [NOT] BETWEEN operand AND operand
    operand := key | '(' key ')' | "string" | 'string' | [-]digits[.digits] | true | false
             | DATE "..." | TIMESTAMP "..."

Literals are coerced to the key's type with KeyType.parse: `h = "5"` compares an int key
with 5. SQL's three-valued logic holds (as Spark's own re-evaluation of the filter): a
comparison with a NULL key (the default partition) is never true, nor is `!=`, `not in` or
`not (...)` over it.

The result never loses a partition the filter matches; where it cannot be exact it is a
superset (the client applies the filter again) and says why in `reason`:

- A comparison it cannot compile is *unknown* (true for every partition): an unknown key or
  a data column, a key compared with another name, a literal that does not parse as the
  key's type, a bare number compared with a string key (Hive's string-or-number comparison
  is not the typed one), a quoted literal holding a backslash (Hive keeps escapes
  verbatim, other clients may not), LIKE on a non-string key or with a regex that has no
  SQL LIKE form. `unknown AND p` is `p`; `unknown OR p` and `NOT` of an inexact
  sub-expression are unknown.
- A string it cannot parse is unknown as a whole: predicate None, never an exception.

LIKE: a pattern holding `%` or `_` and no regex metacharacter is SQL LIKE (Hive 4);
otherwise it is a Java regular expression matched against the whole value (Hive 2.3's
client). Regexes of literal characters, `\\`-escaped punctuation, `.`, `.*`, `.+` and an
optional leading `^`/trailing `$` compile exactly (`.` is taken to match any character;
Java's does not match line terminators, so this is at worst a superset); anything else is
unknown. Patterns run case-sensitively as in Hive: LIKE with `\\` escapes on PostgreSQL
(the key columns have collation "C"), GLOB on SQLite (whose LIKE ignores ASCII case).

Equalities on one key joined by OR (older Spark's form of an IN list) become one IN over
one bound parameter, as `(key) in (...)` does (partition_store.value_in).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import BindParameter, Column, ColumnElement, Text, and_, bindparam, not_, or_

from metastore.errors import InvalidValue
from metastore.partition_store import PartitionStore, value_in
from metastore.types import KeyType, KeyValue

__all__ = ["CompiledFilter", "compile_filter"]

MAX_SHOWN = 200
"""A reason quotes at most this many characters of the filter."""
MAX_REASONS = 5
"""A reason names at most this many unknown pieces."""
MAX_DEPTH = 100
"""A sub-expression nested deeper (alternating AND, OR and NOT; chains of one operator are
flat) is unknown rather than recursed into."""


@dataclass(frozen=True)
class CompiledFilter:
    """A filter string compiled against one table's partition keys."""

    predicate: ColumnElement[bool] | None  # None: every partition
    exact: bool  # True: the predicate is exactly the filter
    reason: str | None  # why not exact (for the daemon's log), else None


def compile_filter(text: str, store: PartitionStore, dialect: str) -> CompiledFilter:
    """Compile a Hive Metastore filter string into a predicate on `store`'s key columns;
    never raises (a filter it cannot read selects every partition)."""
    if not text.strip():
        return CompiledFilter(None, True, None)
    shown = text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "..."
    try:
        tree = _Parser(_tokens(text)).parse()
    except _Malformed as error:
        return CompiledFilter(None, False, f"cannot parse filter {shown!r}: {error}")
    try:
        result = _Compiler(store, dialect).compile(tree)
    except Exception as error:  # the contract: a superset rather than a failed query
        return CompiledFilter(None, False, f"cannot compile filter {shown!r}: {error!r}")
    if result.exact:
        return CompiledFilter(result.predicate, True, None)
    reasons = list(dict.fromkeys(result.reasons))
    reason = "; ".join(reasons[:MAX_REASONS])
    if len(reasons) > MAX_REASONS:
        reason += f"; and {len(reasons) - MAX_REASONS} more"
    return CompiledFilter(result.predicate, False, reason)


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
class _Result:
    predicate: ColumnElement[bool] | None  # None: true for every partition
    exact: bool
    reasons: tuple[str, ...] = ()
    equals: tuple[str, KeyValue] | None = field(default=None)  # `key = value`, for OR chains


def _unknown(reason: str) -> _Result:
    return _Result(None, False, (reason,))


class _Unknown(Exception):
    """A comparison that cannot be compiled; its message is the reason."""


_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _Compiler:
    def __init__(self, store: PartitionStore, dialect: str) -> None:
        self.store = store
        self.dialect = dialect
        self.keys = {name.lower(): name for name in store.key_names}

    def compile(self, node: _Node, depth: int = 0) -> _Result:
        if depth > MAX_DEPTH:
            return _unknown(f"nested deeper than {MAX_DEPTH}")
        if isinstance(node, _Junction):
            parts = [self.compile(part, depth + 1) for part in node.parts]
            return self.conjunction(parts) if node.kind == "and" else self.disjunction(parts)
        if isinstance(node, _Not):
            inner = self.compile(node.inner, depth + 1)
            if not inner.exact or inner.predicate is None:
                return _Result(None, False, (*inner.reasons, "NOT over an inexact expression"))
            return _Result(not_(inner.predicate), True)
        try:
            if isinstance(node, _Compare):
                return self.comparison(node)
            if isinstance(node, _In):
                return self.membership(node)
            return self.between(node)
        except _Unknown as error:
            return _unknown(str(error))

    def conjunction(self, parts: list[_Result]) -> _Result:
        known = [p.predicate for p in parts if p.predicate is not None]
        reasons = tuple(r for p in parts for r in p.reasons)
        exact = all(p.exact for p in parts)
        if not known:
            return _Result(None, exact, reasons)
        return _Result(and_(*known) if len(known) > 1 else known[0], exact, reasons)

    def disjunction(self, parts: list[_Result]) -> _Result:
        reasons = tuple(r for p in parts for r in p.reasons)
        if any(p.predicate is None for p in parts):
            return _Result(None, False, (*reasons, "OR with an unknown side"))
        by_key: dict[str, list[KeyValue]] = {}
        clauses: list[ColumnElement[bool]] = []
        for part in parts:
            if part.equals is not None:
                by_key.setdefault(part.equals[0], []).append(part.equals[1])
            else:
                assert part.predicate is not None
                clauses.append(part.predicate)
        for key, values in by_key.items():
            if len(values) == 1:
                column, _ = self.store.column_of(key)
                clauses.append(column == _bind(column, values[0]))
            else:
                column, key_type = self.store.column_of(key)
                clauses.append(value_in(self.dialect, column, key_type, values))
        exact = all(p.exact for p in parts)
        return _Result(or_(*clauses) if len(clauses) > 1 else clauses[0], exact, reasons)

    def key(self, operand: _Operand) -> tuple[str, Column[Any], KeyType]:
        name = self.keys.get(operand.text.lower())
        if name is None:
            raise _Unknown(f"unknown partition key {operand.text!r}")
        column, key_type = self.store.column_of(name)
        return name, column, key_type

    def literal(self, operand: _Operand, key: str, key_type: KeyType) -> KeyValue:
        kind = operand.kind
        if kind == "key":
            raise _Unknown(f"{key} compared with the name {operand.text!r}, not a literal")
        if kind == "number" and key_type.name == "string":
            raise _Unknown(f"string key {key} compared with the number {operand.text}")
        if kind == "boolean" and key_type.name != "boolean":
            raise _Unknown(f"{key_type} key {key} compared with {operand.text}")
        if kind in ("date", "timestamp") and key_type.name != kind:
            raise _Unknown(f"{key_type} key {key} compared with a {kind} literal")
        if kind != "number" and "\\" in operand.text:
            raise _Unknown(f"the literal {operand.text!r} holds a backslash")
        try:
            value = key_type.parse(operand.text)
        except InvalidValue as error:
            raise _Unknown(f"{error} (key {key})") from None
        if value is None:  # pragma: no cover - parse never answers NULL
            raise _Unknown(f"NULL literal for {key}")
        return value

    def subject(self, operand: _Operand) -> tuple[str, Column[Any], KeyType]:
        if operand.kind != "key":
            raise _Unknown(f"a literal {operand.text!r} where a partition key is expected")
        return self.key(operand)

    def comparison(self, node: _Compare) -> _Result:
        left, op, right = node.left, node.op, node.right
        if op == "like":
            return self.like(node)
        if left.kind != "key" and right.kind == "key":
            left, right, op = right, left, _FLIPPED[op]
        name, column, key_type = self.subject(left)
        value = self.literal(right, name, key_type)
        bound = _bind(column, value)
        predicates: dict[str, ColumnElement[bool]] = {
            "=": column == bound,
            "!=": column != bound,
            "<": column < bound,
            "<=": column <= bound,
            ">": column > bound,
            ">=": column >= bound,
        }
        return _Result(predicates[op], True, equals=(name, value) if op == "=" else None)

    def membership(self, node: _In) -> _Result:
        name, column, key_type = self.subject(node.subject)
        values = [self.literal(v, name, key_type) for v in node.values]
        return _Result(value_in(self.dialect, column, key_type, values), True)

    def between(self, node: _Between) -> _Result:
        name, column, key_type = self.subject(node.subject)
        low = self.literal(node.low, name, key_type)
        high = self.literal(node.high, name, key_type)
        return _Result(and_(column >= _bind(column, low), column <= _bind(column, high)), True)

    def like(self, node: _Compare) -> _Result:
        if node.left.kind != "key":
            raise _Unknown(f"LIKE with a literal {node.left.text!r} on its left")
        name, column, key_type = self.key(node.left)
        if key_type.name != "string":
            raise _Unknown(f"LIKE on the {key_type} key {name}")
        if node.right.kind != "string":
            raise _Unknown(f"LIKE on {name} with {node.right.text!r}, not a pattern")
        pieces = like_pieces(node.right.text)
        if pieces is None:
            raise _Unknown(f"the regex {node.right.text!r} has no SQL LIKE form")
        if all(isinstance(p, str) for p in pieces):
            value = "".join(p for p in pieces if isinstance(p, str))
            return _Result(column == _bind(column, value), True, equals=(name, value))
        if self.dialect == "sqlite":
            glob = "".join(
                _GLOB_ESCAPES.get(p, p) if isinstance(p, str) else p.glob for p in pieces
            )
            return _Result(column.bool_op("GLOB")(bindparam(None, glob, Text())), True)
        pattern = "".join(_LIKE_ESCAPES.get(p, p) if isinstance(p, str) else p.like for p in pieces)
        return _Result(column.like(bindparam(None, pattern, Text()), escape="\\"), True)


def _bind(column: Column[Any], value: KeyValue) -> BindParameter[Any]:
    """A bound value of the column's type, booleans included (the same as metastore/where.py's
    private helper, which this module may not import)."""
    return bindparam(None, value, column.type)


# --- LIKE patterns --------------------------------------------------------------------


@dataclass(frozen=True)
class _Wildcard:
    like: str
    glob: str


ANY_CHARACTER = _Wildcard("_", "?")
ANY_SEQUENCE = _Wildcard("%", "*")

_REGEX_METACHARACTERS = frozenset("\\^$.|?*+()[]{}")
_LIKE_ESCAPES = {"%": "\\%", "_": "\\_", "\\": "\\\\"}
_GLOB_ESCAPES = {"*": "[*]", "?": "[?]", "[": "[[]"}


def like_pieces(pattern: str) -> list[str | _Wildcard] | None:
    """A Hive LIKE pattern as literal characters and wildcards, or None when it is a regex
    with no SQL LIKE form.

    >>> like_pieces("eu%") == ["e", "u", ANY_SEQUENCE]
    True
    >>> like_pieces(r"u\\..*") == ["u", ".", ANY_SEQUENCE]
    True
    >>> like_pieces("[a-z]+") is None
    True
    """
    if not _REGEX_METACHARACTERS.intersection(pattern):
        return [ANY_SEQUENCE if c == "%" else ANY_CHARACTER if c == "_" else c for c in pattern]
    return _regex_pieces(pattern)


def _regex_pieces(regex: str) -> list[str | _Wildcard] | None:
    body = regex[1:] if regex.startswith("^") else regex
    if body.endswith("$") and not _escaped_at(body, len(body) - 1):
        body = body[:-1]
    pieces: list[str | _Wildcard] = []
    i = 0
    while i < len(body):
        char = body[i]
        following = body[i + 1] if i + 1 < len(body) else ""
        if char == "\\":
            if not following or following.isalnum() or following.isspace():
                return None  # \d, \w, \Q, ... or a dangling backslash
            pieces.append(following)
            i += 2
            if i < len(body) and body[i] in "?*+{":
                return None  # a quantified literal
        elif char == ".":
            if following == "*":
                pieces.append(ANY_SEQUENCE)
                i += 2
            elif following == "+":
                pieces.extend((ANY_CHARACTER, ANY_SEQUENCE))
                i += 2
            else:
                pieces.append(ANY_CHARACTER)
                i += 1
            if i < len(body) and body[i] in "?+*{":
                return None  # lazy, possessive or repeated quantifiers
        elif char in _REGEX_METACHARACTERS:
            return None
        else:
            if following and following in "?*+{":
                return None  # a quantified literal
            pieces.append(char)
            i += 1
    return pieces


def _escaped_at(text: str, index: int) -> bool:
    backslashes = len(text[:index]) - len(text[:index].rstrip("\\"))
    return backslashes % 2 == 1
