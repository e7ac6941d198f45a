"""A partition filter (metastore.partitions.filters) compiled to a predicate on the typed
partition index: the one compiler of every front end's filters
(docs/design.md#partition-filters).

What the index cannot express (an Unknown, LIKE on a key that is not a string) is true
for every partition to the predicate: `unknown AND p` is `p`; `unknown OR p` and NOT of an
inexact part are unknown, as is anything nested deeper than MAX_DEPTH (MAX_SQLITE_DEPTH on
SQLite). The predicate is then a superset of the filter (`exact` False, `reasons` says
why), and the front end that made the filter keeps, of the partitions it selects, those
the whole filter holds for (Hive's filters: servers/hive_metastore/filters.py), or
refuses the filter (a lookup: metastore.catalog.lookup).

Equalities on one key joined by OR become one IN over one bound parameter, as an IN list
does (partition_store.value_in).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BindParameter,
    Boolean,
    Column,
    ColumnElement,
    Text,
    and_,
    bindparam,
    cast,
    false,
    not_,
    null,
    or_,
    true,
)

from metastore.partitions.filters import (
    And,
    Compare,
    InList,
    IsNull,
    Like,
    Not,
    NullComparison,
    Or,
    PartitionFilter,
    TupleIn,
    Unknown,
    Wildcard,
)
from metastore.partitions.store import PartitionStore, tuples_in, value_in
from metastore.types import KeyType, KeyValue

MAX_DEPTH = 100
"""A part nested deeper (alternating AND, OR and NOT; chains of one operator are flat) is
unknown to the predicate rather than compiled."""
MAX_SQLITE_DEPTH = 24
"""MAX_DEPTH on SQLite, whose parser gives up ("parser stack overflow") on SQL nested some
33 deep (alternating AND and OR over IN sub-selects)."""

_LIKE_ESCAPES = {"%": "\\%", "_": "\\_", "\\": "\\\\"}
_GLOB_ESCAPES = {"*": "[*]", "?": "[?]", "[": "[[]"}


@dataclass(frozen=True)
class FilterSql:
    """A filter compiled against one table's partition keys."""

    predicate: ColumnElement[bool] | None  # None: every partition
    exact: bool  # True: the predicate is exactly the filter
    reasons: tuple[str, ...] = ()  # why not exact, each once, in the order found


def max_depth(dialect: str) -> int:
    return MAX_SQLITE_DEPTH if dialect == "sqlite" else MAX_DEPTH


def filter_sql(f: PartitionFilter, store: PartitionStore, dialect: str) -> FilterSql:
    """`f` as a predicate over `store`'s key columns (keys the front end has checked)."""
    result = _Compiler(store, dialect).compile(f, 0)
    predicate = result.predicate
    if predicate is None and result.exact and result.never:
        predicate = false()
    return FilterSql(predicate, result.exact, tuple(dict.fromkeys(result.reasons)))


def bind(column: Column[Any], value: KeyValue) -> BindParameter[Any]:
    """A bound value of the column's type (booleans included, which SQLAlchemy would
    otherwise only allow with = and IS)."""
    return bindparam(None, value, column.type)


@dataclass(frozen=True)
class _Result:
    predicate: ColumnElement[bool] | None  # None: true for every partition (or `never`)
    exact: bool
    reasons: tuple[str, ...] = ()
    equals: tuple[str, KeyValue] | None = None  # `key = value`, for OR chains
    never: bool = False  # exactly false (an OR of nothing)


def _unknown(*reasons: str) -> _Result:
    return _Result(None, False, reasons)


class _Compiler:
    def __init__(self, store: PartitionStore, dialect: str) -> None:
        self.store = store
        self.dialect = dialect
        self.max_depth = max_depth(dialect)

    def compile(self, node: PartitionFilter, depth: int) -> _Result:
        if depth > self.max_depth:
            return _unknown(f"nested deeper than {self.max_depth}")
        if isinstance(node, And):
            return self.conjunction([self.compile(p, depth + 1) for p in node.parts])
        if isinstance(node, Or):
            return self.disjunction([self.compile(p, depth + 1) for p in node.parts])
        if isinstance(node, Not):
            inner = self.compile(node.part, depth + 1)
            if not inner.exact:
                return _unknown(*inner.reasons, "NOT over an inexact expression")
            if inner.never:
                return _Result(true(), True)
            if inner.predicate is None:
                return _Result(false(), True)
            return _Result(not_(inner.predicate), True)
        if isinstance(node, Unknown):
            return _unknown(node.reason)
        return self.atom(node)

    def atom(self, node: Compare | InList | TupleIn | IsNull | Like | NullComparison) -> _Result:
        if isinstance(node, NullComparison):
            return _Result(cast(null(), Boolean), True)
        if isinstance(node, TupleIn):
            if not node.rows:
                return _Result(false(), True)
            columns_types = [self.store.column_of(k) for k in node.keys]
            predicate = tuples_in(
                self.dialect,
                [c for c, _ in columns_types],
                [t for _, t in columns_types],
                list(node.rows),
            )
            return _Result(predicate, True)
        column, key_type = self.store.column_of(node.key)
        if isinstance(node, Compare):
            predicate = _COMPARE[node.op](column, bind(column, node.value))
            equals = (node.key, node.value) if node.op == "=" else None
            return _Result(predicate, True, equals=equals)
        if isinstance(node, InList):
            if not node.values:
                return _Result(false(), True)
            return _Result(value_in(self.dialect, column, key_type, list(node.values)), True)
        if isinstance(node, IsNull):
            return _Result(column.is_(None), True)
        return self.like(node, column, key_type)

    def like(self, node: Like, column: Column[Any], key_type: KeyType) -> _Result:
        if key_type.name != "string":
            return _unknown(f"LIKE on the {key_type} key {node.key}")
        pieces = node.pieces
        if all(isinstance(p, str) for p in pieces):
            value = "".join(p for p in pieces if isinstance(p, str))
            return _Result(column == bind(column, value), True, equals=(node.key, value))
        if self.dialect == "sqlite":
            glob = "".join(_glob_text(p) for p in pieces)
            return _Result(column.bool_op("GLOB")(bindparam(None, glob, Text())), True)
        pattern = "".join(_like_text(p) for p in pieces)
        return _Result(column.like(bindparam(None, pattern, Text()), escape="\\"), True)

    def conjunction(self, parts: Sequence[_Result]) -> _Result:
        if any(p.never for p in parts):
            return _Result(None, True, never=True)  # false AND anything is false
        reasons = tuple(r for p in parts for r in p.reasons)
        exact = all(p.exact for p in parts)
        known = [p.predicate for p in parts if p.predicate is not None]
        if not known:
            return _Result(None, exact, reasons)
        return _Result(and_(*known) if len(known) > 1 else known[0], exact, reasons)

    def disjunction(self, parts: Sequence[_Result]) -> _Result:
        reasons = tuple(r for p in parts for r in p.reasons)
        parts = [p for p in parts if not p.never]
        if not parts:
            return _Result(None, True, reasons, never=True)
        if any(p.predicate is None and p.exact for p in parts):
            return _Result(None, True)  # true OR anything is true
        if any(p.predicate is None for p in parts):
            return _unknown(*reasons, "OR with an unknown side")
        by_key: dict[str, list[KeyValue]] = {}
        clauses: list[ColumnElement[bool]] = []
        for part in parts:
            if part.equals is not None:
                by_key.setdefault(part.equals[0], []).append(part.equals[1])
            else:
                assert part.predicate is not None
                clauses.append(part.predicate)
        for key, values in by_key.items():
            column, key_type = self.store.column_of(key)
            if len(values) == 1:
                clauses.append(column == bind(column, values[0]))
            else:
                clauses.append(value_in(self.dialect, column, key_type, values))
        exact = all(p.exact for p in parts)
        return _Result(or_(*clauses) if len(clauses) > 1 else clauses[0], exact, reasons)


def _glob_text(piece: str | Wildcard) -> str:
    return _GLOB_ESCAPES.get(piece, piece) if isinstance(piece, str) else piece.glob


def _like_text(piece: str | Wildcard) -> str:
    return _LIKE_ESCAPES.get(piece, piece) if isinstance(piece, str) else piece.like


_COMPARE: dict[str, Any] = {
    "=": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}
