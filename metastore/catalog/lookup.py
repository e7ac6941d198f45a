"""The partition lookup of map-join partition pruning (docs/design.md#partition-lookup): all
partitions of R where x in (1,2,3) and y in (5,6,7), or (x, y) in ((1,5),(2,6)), or a --where
range.

Lists are matched exactly, NULL included: a None in a list (or `__HIVE_DEFAULT_PARTITION__`
in text) matches the default partition. `--where` follows SQL's three-valued logic instead.

On PostgreSQL (psycopg2) a lookup by IN lists alone, the API's common case, takes a fast
path: the table's catalog entry is cached per engine, and the lookup is one statement on a
driver connection kept in autocommit (no SQLAlchemy compilation, no BEGIN/ROLLBACK, no pool
checkout) that also checks that the cached entry is still current (same id, version and
creation time of the catalog row); a stale entry is dropped and the lookup answered by the
general path.
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import json
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, event, select
from sqlalchemy import exc as sa_exc

from metastore.catalog.tables import TableInfo, get_table, normalise_table_name
from metastore.engine import run_read, translate, with_reconnect
from metastore.errors import InvalidLookup, InvalidValue, StatlasError, UnknownColumn
from metastore.models import CatalogTable
from metastore.partitions.filter_sql import filter_sql
from metastore.partitions.filters import EVERY_PARTITION, InList, PartitionFilter, TupleIn, all_of
from metastore.partitions.names import DEFAULT_PARTITION_NAME
from metastore.partitions.store import _pg_array, _pg_array_literal, raw_column, raw_decoder
from metastore.types import KeyType, KeyValue, json_value


@dataclass(frozen=True)
class TupleList:
    """`(keys...) IN rows`: each row holds one value per key, in the order of `keys`."""

    keys: tuple[str, ...]
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True)
class PartitionQuery:
    """A conjunction of per-key IN lists, tuple lists, a typed partition filter (the
    optimizer's) and a --where expression (a user's text)."""

    in_lists: Sequence[tuple[str, Sequence[Any]]] = ()
    tuples: Sequence[TupleList] = ()
    where: str | None = None
    filter: PartitionFilter | None = None

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
    if _fast_path_applies(engine, query):
        found = _fast_lookup(engine, table, query)
        if found is not None:
            return found
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


# --- the fast path (PostgreSQL over psycopg2, IN lists only) -----------------------------


@dataclass(frozen=True)
class _CachedTable:
    """A table's catalog entry and what makes it current: its catalog row's creation time
    (a table dropped and registered again is another entry, even with the same id)."""

    info: TableInfo
    created_at: Any
    array_types: tuple[str, ...]  # the SQL array type of each key, e.g. DATE[]


class _FastPath:
    """The fast path's state for one engine: the cached catalog entries by table name, and
    idle driver connections kept in autocommit. Those are taken from the engine's pool and
    detached from it (the pool's own connections keep their transactions), so that a lookup
    neither checks a connection out and in nor switches autocommit on and off (each of
    which releases the GIL, and a busy server then waits to get it back)."""

    def __init__(self) -> None:
        self.tables: dict[str, _CachedTable] = {}
        self.idle: collections.deque[Any] = collections.deque()

    def take(self, engine: Engine) -> Any:
        try:
            return self.idle.pop()
        except IndexError:
            return with_reconnect(engine, lambda: _autocommit_connection(engine))

    def close(self, *_: Any) -> None:
        """Close the idle connections (the engine was disposed, or the database lost)."""
        while self.idle:
            try:
                connection = self.idle.pop()
            except IndexError:
                return
            with contextlib.suppress(Exception):
                connection.close()


_STATES: weakref.WeakKeyDictionary[Engine, _FastPath] = weakref.WeakKeyDictionary()
_STATES_LOCK = threading.Lock()


def _state(engine: Engine) -> _FastPath:
    state = _STATES.get(engine)
    if state is None:
        with _STATES_LOCK:
            state = _STATES.get(engine)
            if state is None:
                state = _STATES[engine] = _FastPath()
                event.listen(engine, "engine_disposed", state.close)
    return state


def _autocommit_connection(engine: Engine) -> Any:
    fairy = engine.raw_connection()
    connection = fairy.dbapi_connection
    fairy.detach()  # ours from now on; the pool opens another when it needs one
    assert connection is not None
    connection.autocommit = True
    return connection


def _fast_path_applies(engine: Engine, query: PartitionQuery) -> bool:
    dialect = engine.dialect
    return (
        dialect.name == "postgresql"
        and dialect.driver == "psycopg2"
        and not query.tuples
        and query.where is None
        and query.filter is None
    )


def _fast_lookup(engine: Engine, table: str, query: PartitionQuery) -> PartitionList | None:
    """The lookup in one statement from the cached catalog entry, or None when the general
    path must answer (an entry found stale, or a request the cached entry refuses: the
    general path then gives the error the current catalog calls for)."""
    name = normalise_table_name(table)
    state = _state(engine)
    cache = state.tables
    cached = cache.get(name)
    if cached is None:
        cached = run_read(engine, lambda conn: _load_cached(conn, table))
        cache[name] = cached
    info = cached.info
    try:
        sql, params = _fast_statement(cached, query)
    except StatlasError:
        return None
    rows = _fetch(engine, state, sql, params)
    if not rows:
        # no row at all: the catalog row is not the cached one (the table was refreshed,
        # dropped, or dropped and registered again), or the connection was lost (None):
        # the general path answers, from the catalog as it is now
        cache.pop(name, None)
        return None
    if len(rows) == 1 and rows[0][0] is None:  # the outer join's row: no partition matched
        rows = []
    return PartitionList(info.name, tuple(info.key_names), rows)


def _load_cached(conn: Connection, table: str) -> _CachedTable:
    info = get_table(conn, table)
    t = CatalogTable.__table__.c
    # None if the table went meanwhile: the entry then never checks as current
    created_at = conn.execute(select(t.created_at).where(t.id == info.id)).scalar()
    compile_type = conn.dialect.type_compiler_instance.process
    array_types = tuple(compile_type(_pg_array(k.type)) for k in info.partition_keys)
    return _CachedTable(info, created_at, array_types)


def _fast_statement(cached: _CachedTable, query: PartitionQuery) -> tuple[str, dict[str, Any]]:
    """The lookup as SQL for psycopg2 and its parameters. The catalog row is outer-joined
    with the partitions, so that the answer has no row at all when the cached entry is
    stale and one row of NULLs when it is current but no partition matches."""
    info = cached.info
    store = info.store()
    params: dict[str, Any] = {"id": info.id, "version": info.version, "created": cached.created_at}
    conditions = []
    for number, (key, values) in enumerate(query.in_lists):
        position = store.key_names.index(_key(info, key))
        key_type = store.key_types[position]
        literal, has_null = _iso_dates_literal(key_type, values), False
        if literal is None:
            distinct = _distinct_values(key_type, key, values)
            present = [v for v in distinct if v is not None]
            literal = _pg_array_literal(present, key_type) if present else None
            has_null = len(present) < len(distinct)
        column = f"p.k{position}"
        parts = []
        if literal is not None:
            params[f"v{number}"] = literal
            parts.append(f"{column} = ANY(CAST(%(v{number})s AS {cached.array_types[position]}))")
        if has_null:
            parts.append(f"{column} IS NULL")
        conditions.append(parts[0] if len(parts) == 1 else f"({' OR '.join(parts)})")
    keys = "".join(f"p.k{i}, " for i in range(len(store.key_types)))
    sql = (
        f"SELECT p.name, {keys}p.location FROM catalog_tables AS c "
        f"LEFT OUTER JOIN {store.table.name} AS p ON {' AND '.join(conditions) or 'true'} "
        "WHERE c.id = %(id)s AND c.version = %(version)s AND c.created_at = %(created)s"
    )
    return sql, params


_ISO_DATES = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:,[0-9]{4}-[0-9]{2}-[0-9]{2})*")


def _iso_dates_literal(key_type: KeyType, values: Sequence[Any]) -> str | None:
    """The array literal of a date key's list when every value is a date in its canonical
    text (YYYY-MM-DD), without coercing value by value: the text of each distinct value is
    then exactly what _pg_array_literal writes for its date. None for any other list (the
    general coercion then accepts it, or refuses it with its message)."""
    if key_type.name != "date" or not values or set(map(type, values)) != {str}:
        return None
    joined = ",".join(values)
    if len(joined) != 11 * len(values) - 1 or not _ISO_DATES.fullmatch(joined):
        return None
    distinct = list(dict.fromkeys(values))
    try:
        for _ in map(dt.date.fromisoformat, distinct):  # a real day of a year from 1 on
            pass
    except ValueError:
        return None
    return "{" + ",".join(distinct) + "}"


_UNDEFINED_TABLE = "42P01"  # PostgreSQL's SQLSTATE for a relation that does not exist


def _fetch(engine: Engine, state: _FastPath, sql: str, params: dict[str, Any]) -> list[Any] | None:
    """The rows of `sql` on one of the fast path's connections, or None when the general
    path must answer: the partitions table does not exist (the cached table was dropped),
    or the connection was found dead (every idle one is then closed, and the general path
    reconnects through the pool, or reports the database unavailable). Other database
    errors are raised as on the general path (see engine.with_reconnect)."""
    connection = state.take(engine)
    cursor = None
    try:
        cursor = connection.cursor()
        cursor.execute(sql, params)
        rows: list[Any] = cursor.fetchall()
        cursor.close()
    except engine.dialect.loaded_dbapi.Error as error:
        if engine.dialect.is_disconnect(error, connection, cursor):
            with contextlib.suppress(Exception):
                connection.close()
            state.close()
            return None
        state.idle.append(connection)  # in autocommit: no transaction was left open
        if getattr(error, "pgcode", None) == _UNDEFINED_TABLE:
            return None
        wrapped = sa_exc.DBAPIError.instance(
            sql,
            params,
            error,
            engine.dialect.loaded_dbapi.Error,
            hide_parameters=True,
            dialect=engine.dialect,
        )
        assert isinstance(wrapped, sa_exc.DBAPIError)
        raise translate(engine, wrapped) from error
    except Exception:
        state.idle.append(connection)  # refused before it was sent (a value psycopg2
        raise  # cannot adapt), or after the whole answer was read: still usable
    except BaseException:
        with contextlib.suppress(Exception):
            connection.close()  # interrupted midway: in an unknown state
        raise
    state.idle.append(connection)
    return rows


# --- predicates ---------------------------------------------------------------------------


def build_predicate(
    dialect: str, info: TableInfo, query: PartitionQuery
) -> ColumnElement[bool] | None:
    """Validate and coerce every value of `query`, and compile its filter."""
    selected = query_filter(info, query)
    if selected == EVERY_PARTITION:
        return None
    compiled = filter_sql(selected, info.store(), dialect)
    if not compiled.exact:
        reasons = "; ".join(compiled.reasons)
        raise InvalidLookup(f"cannot look up partitions by this selection: {reasons}")
    return compiled.predicate


def query_filter(info: TableInfo, query: PartitionQuery) -> PartitionFilter:
    """The partition filter of `query` on `info`'s keys: its IN lists, tuple lists, typed
    filter and --where text, ANDed."""
    store = info.store()
    parts: list[PartitionFilter] = []
    for key, values in query.in_lists:
        name = _key(info, key)
        key_type = store.key_types[store.key_names.index(name)]
        parts.append(InList(name, tuple(_distinct_values(key_type, key, values))))
    for tuple_list in query.tuples:
        keys = [_key(info, k) for k in tuple_list.keys]
        if len(set(keys)) != len(keys):
            raise InvalidLookup(f"tuple keys repeat a key: {', '.join(tuple_list.keys)}")
        if not tuple_list.rows:
            raise InvalidLookup(f"empty tuple list for keys {', '.join(keys)}")
        key_types = [store.key_types[store.key_names.index(k)] for k in keys]
        for number, row in enumerate(tuple_list.rows, start=1):
            if len(row) != len(keys):
                raise InvalidLookup(
                    f"tuple {number} has {len(row)} values, expected {len(keys)} "
                    f"({', '.join(keys)})"
                )
        # coerce column by column (one bulk pass per key), then back to distinct rows
        columns = [
            _coerce_many(key_type, key, [row[i] for row in tuple_list.rows])
            for i, (key_type, key) in enumerate(zip(key_types, keys, strict=True))
        ]
        parts.append(TupleIn(tuple(keys), tuple(dict.fromkeys(zip(*columns, strict=True)))))
    if query.filter is not None:
        parts.append(query.filter)
    if query.where is not None:
        from metastore.partitions.where import where_filter  # sqlglot loads only when needed

        parts.append(where_filter(query.where, store, frozenset(c.name for c in info.columns)))
    return all_of(parts)


def _distinct_values(key_type: KeyType, key: str, values: Sequence[Any]) -> list[KeyValue]:
    """The values of one IN list, coerced to the key's type, each once."""
    if not values:
        raise InvalidLookup(f"empty value list for key {key}")
    return list(dict.fromkeys(_coerce_many(key_type, key, values)))


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
