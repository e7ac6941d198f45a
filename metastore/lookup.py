"""The partition lookup of the seed "mapjoin-partition-pruning": all partitions of R where
x in (1,2,3) and y in (5,6,7), or (x, y) in ((1,5),(2,6)), or a --where range.

Lists are matched exactly, NULL included: a None in a list (or `__HIVE_DEFAULT_PARTITION__`
in text) matches the default partition. `--where` follows SQL's three-valued logic instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, and_, select

from metastore.catalog import TableInfo, get_table
from metastore.engine import run_read
from metastore.errors import InvalidLookup, InvalidValue, UnknownColumn
from metastore.hive_paths import DEFAULT_PARTITION_NAME
from metastore.partition_store import raw_column, raw_decoder, tuples_in, value_in
from metastore.types import KeyType, KeyValue, json_value


@dataclass(frozen=True)
class TupleList:
    """`(keys...) IN rows`: each row holds one value per key, in the order of `keys`."""

    keys: tuple[str, ...]
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True)
class PartitionQuery:
    """A conjunction of per-key IN lists, tuple lists and a --where expression."""

    in_lists: Sequence[tuple[str, Sequence[Any]]] = ()
    tuples: Sequence[TupleList] = ()
    where: str | None = None

    @staticmethod
    def of(
        in_lists: Mapping[str, Sequence[Any]] | None = None,
        tuples: Sequence[TupleList] = (),
        where: str | None = None,
    ) -> PartitionQuery:
        return PartitionQuery(
            tuple((k, v) for k, v in (in_lists or {}).items()), tuple(tuples), where
        )


@dataclass(frozen=True)
class Partition:
    name: str
    values: dict[str, KeyValue]
    location: str


@dataclass
class PartitionList:
    """The answer of a lookup: rows of (name, key values..., location) as the database
    returned them, decoded to typed values only when they are read."""

    table: str
    keys: tuple[str, ...]
    rows: Sequence[Any] = field(repr=False)
    decoders: tuple[Callable[[Any], KeyValue] | None, ...] = ()

    def __len__(self) -> int:
        return len(self.rows)

    def _values(self, row: Any) -> list[KeyValue]:
        raw = row[1 : 1 + len(self.keys)]
        if not self.decoders:
            return list(raw)
        return [
            v if d is None or v is None else d(v) for d, v in zip(self.decoders, raw, strict=True)
        ]

    def __iter__(self) -> Iterator[Partition]:
        for row in self.rows:
            yield Partition(row[0], dict(zip(self.keys, self._values(row), strict=True)), row[-1])

    def names(self) -> list[str]:
        return sorted(row[0] for row in self.rows)

    def as_json(self) -> dict[str, Any]:
        ordered = sorted(self.rows, key=lambda r: r[0])
        return {
            "table": self.table,
            "count": len(ordered),
            "partitions": [
                {
                    "values": {
                        k: json_value(v) for k, v in zip(self.keys, self._values(r), strict=True)
                    },
                    "location": r[-1],
                }
                for r in ordered
            ],
        }


def lookup_partitions(engine: Engine, table: str, query: PartitionQuery) -> PartitionList:
    """All partitions of `table` that satisfy `query` (all of them for an empty query)."""
    return run_read(engine, lambda conn: run_lookup(conn, get_table(conn, table), query))


def run_lookup(conn: Connection, info: TableInfo, query: PartitionQuery) -> PartitionList:
    store = info.store()
    predicate = build_predicate(conn.dialect.name, info, query)
    table = store.table
    dialect = conn.dialect.name
    keys = [
        raw_column(dialect, column, key_type)
        for column, key_type in zip(store.key_columns, store.key_types, strict=True)
    ]
    decoders = tuple(raw_decoder(dialect, t) for t in store.key_types)
    statement = select(table.c.name, *keys, table.c.location)
    if predicate is not None:
        statement = statement.where(predicate)
    result = conn.execute(statement)
    # every selected column comes back from the driver as it should be read (raw_column),
    # so take the driver's tuples rather than build a Row per partition
    rows = result.cursor.fetchall()
    result.close()
    if not any(decoders):
        decoders = ()
    return PartitionList(info.name, tuple(info.key_names), rows, decoders)


def build_predicate(
    dialect: str, info: TableInfo, query: PartitionQuery
) -> ColumnElement[bool] | None:
    """Validate and coerce every value of `query`, and build its predicate."""
    store = info.store()
    parts: list[ColumnElement[bool]] = []
    for key, values in query.in_lists:
        column, key_type = store.column_of(_key(info, key))
        if not values:
            raise InvalidLookup(f"empty value list for key {key}")
        coerced = _coerce_many(key_type, key, values)
        parts.append(value_in(dialect, column, key_type, list(dict.fromkeys(coerced))))
    for tuple_list in query.tuples:
        keys = [_key(info, k) for k in tuple_list.keys]
        if len(set(keys)) != len(keys):
            raise InvalidLookup(f"tuple keys repeat a key: {', '.join(tuple_list.keys)}")
        if not tuple_list.rows:
            raise InvalidLookup(f"empty tuple list for keys {', '.join(keys)}")
        columns_types = [store.column_of(k) for k in keys]
        for number, row in enumerate(tuple_list.rows, start=1):
            if len(row) != len(keys):
                raise InvalidLookup(
                    f"tuple {number} has {len(row)} values, expected {len(keys)} "
                    f"({', '.join(keys)})"
                )
        # coerce column by column (one bulk pass per key), then back to distinct rows
        columns = [
            _coerce_many(key_type, key, [row[i] for row in tuple_list.rows])
            for i, ((_, key_type), key) in enumerate(zip(columns_types, keys, strict=True))
        ]
        rows = dict.fromkeys(zip(*columns, strict=True))
        parts.append(
            tuples_in(
                dialect, [c for c, _ in columns_types], [t for _, t in columns_types], list(rows)
            )
        )
    if query.where is not None:
        from metastore.where import where_predicate  # sqlglot loads only when needed

        parts.append(
            where_predicate(query.where, store, dialect, frozenset(c.name for c in info.columns))
        )
    if not parts:
        return None
    return and_(*parts) if len(parts) > 1 else parts[0]


def _key(info: TableInfo, key: str) -> str:
    name = key.strip().lower()
    if name in info.key_names:
        return name
    if any(c.name == name for c in info.columns):
        raise InvalidLookup(
            f"{name} is a data column of {info.name}, not a partition key "
            f"(keys: {', '.join(info.key_names) or 'none'})"
        )
    raise UnknownColumn(
        f"unknown partition key {key!r} of table {info.name} "
        f"(keys: {', '.join(info.key_names) or 'none'})"
    )


def _coerce_many(key_type: KeyType, key: str, values: Sequence[Any]) -> list[KeyValue]:
    if DEFAULT_PARTITION_NAME in values:
        values = [None if v == DEFAULT_PARTITION_NAME else v for v in values]
    try:
        return key_type.coerce_many(values)
    except InvalidValue as error:
        raise InvalidValue(f"{error} for key {key}") from None


def read_value_file(path: str) -> list[str]:
    """One value per line (blank lines skipped); '-' reads standard input."""
    lines = _read_lines(path)
    return [line for line in lines if line.strip()]


def read_tuple_file(path: str) -> list[list[Any]]:
    """One JSON array per line, e.g. ["2024-01-01", "emea"]; blank lines skipped."""
    rows = []
    for number, line in enumerate(_read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidLookup(f"{path}:{number}: not a JSON array: {error.msg}") from None
        if not isinstance(row, list):
            raise InvalidLookup(f"{path}:{number}: expected a JSON array, got {line.strip()!r}")
        rows.append(row)
    return rows


def _read_lines(path: str) -> Iterable[str]:
    import sys

    if path == "-":
        return sys.stdin.read().splitlines()
    try:
        return Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise InvalidLookup(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidLookup(f"cannot read {path}: not UTF-8 text") from None
