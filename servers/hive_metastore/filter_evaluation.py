"""A Hive Metastore partition filter evaluated in Python over one partition's key values:
CompiledFilter.matches, for the filters the typed index query cannot answer exactly; and
the reading of literals and LIKE patterns that the index query and it share.

servers.hive_metastore.filters decides the semantics (see its docstring) and builds, from
the filter, a postfix program of key tests and connectives; this module runs it with SQL's
three-valued logic. A program, not nested closures: a filter nested thousands deep
evaluates without recursion.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import operator
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from metastore.errors import InvalidValue
from metastore.partitions.filters import ANY_CHARACTER, ANY_SEQUENCE, Wildcard
from metastore.types import KeyType, KeyValue, format_value

Test = Callable[[Any], bool]
"""One piece of a filter over a key's non-NULL typed value."""

OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

REGEX_FLAGS = re.DOTALL | re.ASCII
"""`.` matches any character, as the SQL forms of LIKE do (Java's `.` skips line
terminators); \\w, \\d, \\s and case folding are ASCII, as Java's are by default."""


@dataclass(frozen=True)
class Leaf:
    """A test of one key: unknown (None) on a NULL value, else the test's answer."""

    position: int
    test: Test


@dataclass(frozen=True)
class Connective:
    kind: str  # "and", "or", "not"
    arity: int  # how many operands it takes off the stack


Instruction = Leaf | Connective


def value_text(value: Any) -> str:
    """A non-NULL typed value as text: a string itself, else its canonical text."""
    return value if isinstance(value, str) else str(format_value(value))


def compared(op: str, literal: Any) -> Test:
    """The value compared with a literal of its own Python type."""
    compare = OPERATORS[op]
    return lambda value: compare(value, literal)


def compared_as_number(op: str, literal: Decimal) -> Test:
    """A numeric key's value compared numerically with a number outside its type."""
    compare = OPERATORS[op]
    return lambda value: compare(Decimal(value), literal)


def compared_as_text(op: str, literal: str) -> Test:
    """The value's text compared with a literal, in code point order."""
    compare = OPERATORS[op]
    return lambda value: compare(value_text(value), literal)


@dataclass(frozen=True)
class Reading:
    """A literal's text read against a key, by servers.hive_metastore.filters' rules: a value of the
    key's type ("typed", which the index compares), a Decimal ("number") or a str
    ("text")."""

    value: Any
    how: str

    def test(self, op: str) -> Test:
        if self.how == "typed":
            return compared(op, self.value)
        if self.how == "number":
            return compared_as_number(op, self.value)
        return compared_as_text(op, self.value)


_HIVE_DATE = re.compile(r"[ \t]*([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?![0-9])")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def read(text: str, key_type: KeyType) -> Reading:
    """A literal's text against a key of `key_type` (rules 1-6 of
    servers.hive_metastore.filters)."""
    if key_type.name == "string":
        return Reading(text, "typed")
    with contextlib.suppress(InvalidValue):
        return Reading(key_type.parse(text), "typed")
    if key_type.name == "timestamp":
        with contextlib.suppress(InvalidValue):
            day = KeyType("date").parse(text)
            assert isinstance(day, dt.date)
            return Reading(dt.datetime.combine(day, dt.time()), "typed")
    match = _HIVE_DATE.match(text) if key_type.name == "date" else None
    if match is not None:
        with contextlib.suppress(ValueError):  # not a day of the calendar
            return Reading(dt.date(*map(int, match.groups())), "typed")
    if key_type.is_numeric and _NUMBER.fullmatch(text.strip()):
        return Reading(Decimal(text.strip()), "number")
    return Reading(text, "text")


def one_of(values: Collection[Any]) -> Test:
    members = frozenset(values)
    return lambda value: value in members


def any_of(tests: Sequence[Test]) -> Test:
    return lambda value: any(test(value) for test in tests)


def all_of(tests: Sequence[Test]) -> Test:
    return lambda value: all(test(value) for test in tests)


def matching(regex: str) -> Test:
    """The value's text matched as a whole by a regex (re.error when it does not compile)."""
    compiled = re.compile(regex, REGEX_FLAGS)
    return lambda value: compiled.fullmatch(value_text(value)) is not None


def evaluator(
    program: Sequence[Instruction], key_types: Sequence[KeyType]
) -> Callable[[Sequence[KeyValue]], bool]:
    """The filter over one partition's key values in key order: typed values (None for
    NULL, the default partition) or the raw text a partition name holds (parsed with the
    key's type); True when the filter is true, False when it is false or unknown."""
    steps = tuple(program)
    used = sorted({step.position for step in steps if isinstance(step, Leaf)})
    parsers = [(p, key_types[p].parse) for p in used if key_types[p].name != "string"]

    def matches(values: Sequence[KeyValue]) -> bool:
        row: list[Any] = list(values)
        for position, parse in parsers:
            if isinstance(row[position], str):
                row[position] = parse(row[position])
        stack: list[bool | None] = []
        for step in steps:
            if isinstance(step, Leaf):
                value = row[step.position]
                stack.append(None if value is None else step.test(value))
            elif step.kind == "not":
                truth = stack[-1]
                stack[-1] = None if truth is None else not truth
            else:
                parts = stack[-step.arity :]
                del stack[-step.arity :]
                decisive = step.kind == "or"  # True decides an OR, False an AND
                if decisive in parts:
                    stack.append(decisive)
                else:
                    stack.append(None if None in parts else not decisive)
        assert len(stack) == 1
        return stack[0] is True

    return matches


# --- LIKE patterns ----------------------------------------------------------------------


_REGEX_METACHARACTERS = frozenset("\\^$.|?*+()[]{}")


def like_pieces(pattern: str) -> list[str | Wildcard] | None:
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


def _regex_pieces(regex: str) -> list[str | Wildcard] | None:
    body = regex[1:] if regex.startswith("^") else regex
    if body.endswith("$") and not _escaped_at(body, len(body) - 1):
        body = body[:-1]
    pieces: list[str | Wildcard] = []
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


def pieces_regex(pieces: Sequence[str | Wildcard]) -> str:
    """The regex (under REGEX_FLAGS) of a pattern's pieces."""
    return "".join(p.regex if isinstance(p, Wildcard) else re.escape(p) for p in pieces)
