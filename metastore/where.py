"""`--where` expressions over partition keys: SQL text -> a predicate on typed key columns.

Parsed with sqlglot (Spark dialect). Supported: =, <>, !=, <, <=, >, >=, BETWEEN, IN,
IS [NOT] NULL, AND, OR, NOT and parentheses, comparing a partition key with a literal
(`'2024-01-01'`, `DATE '2024-01-01'`, 42, -1.5, true, NULL). Literals are coerced to the
key's type, so `dt >= '2024-1-5'` is an error, not a string comparison. SQL's three-valued
logic holds: `dt = NULL` matches nothing; use `dt IS NULL` for the default partition.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import sqlglot
from sqlalchemy import BindParameter, Column, ColumnElement, and_, bindparam, false, not_, or_
from sqlglot import exp
from sqlglot.errors import SqlglotError

from metastore.errors import InvalidLookup, StatlasError, UnknownColumn
from metastore.partition_store import PartitionStore, value_in
from metastore.types import KeyType, KeyValue

_COMPARISONS: dict[type[exp.Expression], Callable[[Any, Any], Any]] = {
    exp.EQ: operator.eq,
    exp.NEQ: operator.ne,
    exp.GT: operator.gt,
    exp.GTE: operator.ge,
    exp.LT: operator.lt,
    exp.LTE: operator.le,
}
_FLIPPED: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.EQ: exp.EQ,
    exp.NEQ: exp.NEQ,
    exp.GT: exp.LT,
    exp.GTE: exp.LTE,
    exp.LT: exp.GT,
    exp.LTE: exp.GTE,
}


def parse_where(text: str) -> exp.Expression:
    if not text.strip():
        raise InvalidLookup("--where is empty")
    try:
        parsed = sqlglot.condition(text, dialect="spark")
    except SqlglotError as error:
        first = str(error).splitlines()[0] if str(error) else "syntax error"
        raise InvalidLookup(f"cannot parse --where {text!r}: {first}") from None
    assert isinstance(parsed, exp.Expression)
    return parsed


def where_predicate(
    text: str, store: PartitionStore, dialect: str, data_columns: frozenset[str] = frozenset()
) -> ColumnElement[bool]:
    """Translate `text` into a predicate over `store`'s key columns."""
    return _Translator(store, dialect, data_columns, text).visit(parse_where(text))


def _bind(column: Column[Any], value: KeyValue) -> BindParameter[Any]:
    """A bound value of the column's type (booleans included, which SQLAlchemy would
    otherwise only allow with = and IS)."""
    return bindparam(None, value, column.type)


class _Translator:
    def __init__(
        self, store: PartitionStore, dialect: str, data_columns: frozenset[str], text: str
    ) -> None:
        self.store = store
        self.dialect = dialect
        self.data_columns = data_columns
        self.text = text

    def visit(self, node: exp.Expression) -> ColumnElement[bool]:
        if isinstance(node, exp.Paren):
            return self.visit(node.this)
        if isinstance(node, exp.And):
            return and_(self.visit(node.this), self.visit(node.expression))
        if isinstance(node, exp.Or):
            return or_(self.visit(node.this), self.visit(node.expression))
        if isinstance(node, exp.Not):
            inner = node.this
            if isinstance(inner, exp.Is):
                column, _ = self.key(inner.this)
                self.null_literal(inner.expression)
                return column.is_not(None)
            return not_(self.visit(inner))
        if isinstance(node, exp.Is):
            column, _ = self.key(node.this)
            self.null_literal(node.expression)
            return column.is_(None)
        if type(node) in _COMPARISONS:
            kind: type[exp.Expression] = type(node)
            left, right = node.this, node.expression
            if not isinstance(left, exp.Column) and isinstance(right, exp.Column):
                left, right, kind = right, left, _FLIPPED[kind]
            column, key_type = self.key(left)
            value = self.literal(right, key_type)
            if value is None:
                return false()  # comparing with NULL is never true
            result: ColumnElement[bool] = _COMPARISONS[kind](column, _bind(column, value))
            return result
        if isinstance(node, exp.Between):
            column, key_type = self.key(node.this)
            low = self.literal(node.args["low"], key_type)
            high = self.literal(node.args["high"], key_type)
            if low is None or high is None:
                return false()
            return and_(column >= _bind(column, low), column <= _bind(column, high))
        if isinstance(node, exp.In):
            if node.args.get("query") is not None:
                raise self.unsupported(node)
            column, key_type = self.key(node.this)
            values = [self.literal(v, key_type) for v in node.expressions]
            present = [v for v in values if v is not None]
            if not present:
                return false()
            return value_in(self.dialect, column, key_type, present)
        raise self.unsupported(node)

    def key(self, node: exp.Expression) -> tuple[Column[Any], KeyType]:
        if not isinstance(node, exp.Column):
            raise self.unsupported(node)
        name = node.name.lower()
        if name not in self.store.key_names:
            if name in self.data_columns:
                raise InvalidLookup(
                    f"{name} is a data column, not a partition key "
                    f"(keys: {', '.join(self.store.key_names) or 'none'})"
                )
            raise UnknownColumn(
                f"unknown partition key {name!r} in --where "
                f"(keys: {', '.join(self.store.key_names) or 'none'})"
            )
        return self.store.column_of(name)

    def literal(self, node: exp.Expression, key_type: KeyType) -> KeyValue:
        if isinstance(node, exp.Null):
            return None
        if isinstance(node, exp.Boolean):
            return key_type.coerce(bool(node.this))
        if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal):
            return key_type.parse(str(node.this.this))
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
            return key_type.parse("-" + str(node.this.this))
        if isinstance(node, exp.Literal):
            return key_type.parse(str(node.this))
        raise self.unsupported(node)

    def null_literal(self, node: exp.Expression) -> None:
        if not isinstance(node, exp.Null):
            raise self.unsupported(node)

    def unsupported(self, node: exp.Expression) -> StatlasError:
        return InvalidLookup(
            f"unsupported in --where: {node.sql(dialect='spark')!r} (compare partition keys "
            "with literals using =, <>, <, <=, >, >=, BETWEEN, IN, IS NULL, AND, OR, NOT)"
        )
