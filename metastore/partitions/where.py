"""`--where` expressions over partition keys: SQL text (or a parsed sqlglot expression, as
the optimizer's partition-key conjuncts are) -> a partition filter
(metastore.partitions.filters), compiled by metastore.partitions.filter_sql.

Parsed with sqlglot (Spark dialect). Supported: =, <>, !=, <, <=, >, >=, BETWEEN, IN,
IS [NOT] NULL, AND, OR, NOT and parentheses, comparing a partition key with a literal
(`'2024-01-01'`, `DATE '2024-01-01'`, 42, -1.5, true, NULL). Literals are coerced to the
key's type, so `dt >= '2024-1-5'` is an error, not a string comparison. SQL's three-valued
logic holds: `dt = NULL` matches nothing, and neither does `NOT (dt = NULL)`; use
`dt IS NULL` for the default partition.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from metastore.errors import InvalidLookup, StatlasError, UnknownColumn
from metastore.partitions.filters import (
    FLIPPED,
    Compare,
    InList,
    IsNull,
    NullComparison,
    Operator,
    PartitionFilter,
    all_of,
    any_of,
    negation,
)
from metastore.partitions.store import PartitionStore
from metastore.types import KeyType, KeyValue

_OPERATORS: dict[type[exp.Expr], Operator] = {
    exp.EQ: "=",
    exp.NEQ: "!=",
    exp.GT: ">",
    exp.GTE: ">=",
    exp.LT: "<",
    exp.LTE: "<=",
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


def where_filter(
    text: str, store: PartitionStore, data_columns: frozenset[str] = frozenset()
) -> PartitionFilter:
    """`text` as a filter on `store`'s keys (`data_columns` only name what is not a key)."""
    return _Translator(store, data_columns).visit(parse_where(text))


def expression_filter(
    node: exp.Expr, store: PartitionStore, data_columns: frozenset[str] = frozenset()
) -> PartitionFilter:
    """A parsed expression (columns by name, any qualifier ignored) as a filter on `store`'s
    keys; raises InvalidLookup for what --where does not accept."""
    return _Translator(store, data_columns).visit(node)


class _Translator:
    def __init__(self, store: PartitionStore, data_columns: frozenset[str]) -> None:
        self.store = store
        self.data_columns = data_columns

    def visit(self, node: exp.Expr) -> PartitionFilter:
        if isinstance(node, exp.Paren):
            return self.visit(node.this)
        if isinstance(node, exp.And):
            return all_of((self.visit(node.this), self.visit(node.expression)))
        if isinstance(node, exp.Or):
            return any_of((self.visit(node.this), self.visit(node.expression)))
        if isinstance(node, exp.Not):
            return negation(self.visit(node.this))
        if isinstance(node, exp.Is):
            name, _ = self.key(node.this)
            self.null_literal(node.expression)
            return IsNull(name)
        if type(node) in _OPERATORS:
            op = _OPERATORS[type(node)]
            left, right = node.this, node.expression
            if not isinstance(left, exp.Column) and isinstance(right, exp.Column):
                left, right, op = right, left, FLIPPED[op]
            name, key_type = self.key(left)
            value = self.literal(right, key_type)
            if value is None:
                return NullComparison()
            return Compare(name, op, value)
        if isinstance(node, exp.Between):
            name, key_type = self.key(node.this)
            low = self.literal(node.args["low"], key_type)
            high = self.literal(node.args["high"], key_type)
            return all_of(
                (
                    NullComparison() if low is None else Compare(name, ">=", low),
                    NullComparison() if high is None else Compare(name, "<=", high),
                )
            )
        if isinstance(node, exp.In):
            if node.args.get("query") is not None:
                raise self.unsupported(node)
            name, key_type = self.key(node.this)
            values = [self.literal(v, key_type) for v in node.expressions]
            present = tuple(dict.fromkeys(v for v in values if v is not None))
            listed: PartitionFilter = InList(name, present)
            if None in values:  # `k IN (.., NULL)`: unknown where not true
                return any_of((listed, NullComparison())) if present else NullComparison()
            return listed
        raise self.unsupported(node)

    def key(self, node: exp.Expr) -> tuple[str, KeyType]:
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
        return name, self.store.key_types[self.store.key_names.index(name)]

    def literal(self, node: exp.Expr, key_type: KeyType) -> KeyValue:
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

    def null_literal(self, node: exp.Expr) -> None:
        if not isinstance(node, exp.Null):
            raise self.unsupported(node)

    def unsupported(self, node: exp.Expr) -> StatlasError:
        return InvalidLookup(
            f"unsupported in --where: {node.sql(dialect='spark')!r} (compare partition keys "
            "with literals using =, <>, <, <=, >, >=, BETWEEN, IN, IS NULL, AND, OR, NOT)"
        )
