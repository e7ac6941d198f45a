"""Each table's partitions, kept in a table of their own with one typed column per key.

`partitions_<table id>` has the partition name (its relative path, exactly as found on
disk), one column per partition key (k0, k1, ...) of the key's SQL type, the location,
and the fingerprint (file count, bytes, newest modification time). It is indexed on all
keys in order and on each later key alone, so an IN-list lookup is a plain index scan:
the same plan as a hand-tuned table. These tables are created and dropped with the table
they belong to, inside the same transaction as the catalog rows.

Value lists travel as ONE bound parameter whatever their length: a PostgreSQL array
literal (`k0 = ANY(CAST(:p AS date[]))`) or an SQLite JSON array (`k0 IN (SELECT value
FROM json_each(:p))`). No OR chains, no parameter-count limit.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ColumnElement,
    Connection,
    Date,
    DateTime,
    Index,
    Integer,
    MetaData,
    Numeric,
    Table,
    Text,
    TypeDecorator,
    and_,
    any_,
    bindparam,
    cast,
    func,
    or_,
    select,
    tuple_,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.schema import CreateTable
from sqlalchemy.types import NullType, TypeEngine

from metastore.errors import RegistrationError
from metastore.models import PARTITION_TABLE_PREFIX
from metastore.types import KeyType, KeyValue

SQLITE_MAX_DECIMAL_PRECISION = 18
SQLITE_ANALYSIS_LIMIT = 2000
SQLITE_TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"


class ScaledDecimal(TypeDecorator[Decimal]):
    """An exact decimal on SQLite: the value times 10**scale, as a 64-bit integer."""

    impl = BigInteger
    cache_ok = True

    def __init__(self, scale: int) -> None:
        super().__init__()
        self.scale = scale

    def process_bind_param(self, value: Decimal | None, dialect: Any) -> int | None:
        return None if value is None else int(Decimal(value).scaleb(self.scale))

    def process_result_value(self, value: Any, dialect: Any) -> Decimal | None:
        return None if value is None else Decimal(int(value)).scaleb(-self.scale)


class SQLiteDate(TypeDecorator[dt.date]):
    """A date on SQLite as ISO text in a TEXT column. SQLite gives a DATE column NUMERIC
    affinity, and with it the planner stops using the key index for IN lists of JSON
    values; TEXT affinity compares them as they are."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: dt.date | None, dialect: Any) -> str | None:
        return None if value is None else value.isoformat()

    def process_result_value(self, value: Any, dialect: Any) -> dt.date | None:
        return None if value is None else dt.date.fromisoformat(value)


class SQLiteTimestamp(TypeDecorator[dt.datetime]):
    """A timestamp on SQLite as fixed-width text (microseconds always), TEXT affinity."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> str | None:
        return None if value is None else value.strftime(SQLITE_TIMESTAMP_FORMAT)

    def process_result_value(self, value: Any, dialect: Any) -> dt.datetime | None:
        return None if value is None else dt.datetime.fromisoformat(value)


class SQLiteBoolean(TypeDecorator[bool]):
    """A boolean on SQLite as 0/1 in an INTEGER column (BOOLEAN has NUMERIC affinity)."""

    impl = Integer
    cache_ok = True

    def process_bind_param(self, value: bool | None, dialect: Any) -> int | None:
        return None if value is None else int(value)

    def process_result_value(self, value: Any, dialect: Any) -> bool | None:
        return None if value is None else bool(value)


def sql_type(key_type: KeyType) -> TypeEngine[Any]:
    """The SQL column type of a partition key type, on both databases."""
    if key_type.name == "decimal":
        return Numeric(key_type.precision, key_type.scale).with_variant(
            ScaledDecimal(key_type.scale), "sqlite"
        )
    simple: dict[str, TypeEngine[Any]] = {
        "int": Integer(),
        "bigint": BigInteger(),
        "date": Date().with_variant(SQLiteDate(), "sqlite"),
        "timestamp": DateTime().with_variant(SQLiteTimestamp(), "sqlite"),
        # byte order, as Spark and Hive compare strings, whatever the database's locale
        "string": Text().with_variant(Text(collation="C"), "postgresql"),
        "boolean": Boolean().with_variant(SQLiteBoolean(), "sqlite"),
    }
    return simple[key_type.name]


@dataclass(frozen=True)
class PartitionRow:
    """What is written for one partition."""

    name: str
    values: tuple[KeyValue, ...]
    location: str
    file_count: int
    total_bytes: int
    modified_ns: int


@dataclass(frozen=True)
class PartitionStore:
    """The partitions table of one catalog table, with its typed key columns."""

    table: Table
    key_names: tuple[str, ...]
    key_types: tuple[KeyType, ...]

    @property
    def key_columns(self) -> list[Column[Any]]:
        return [self.table.c[f"k{i}"] for i in range(len(self.key_types))]

    def column_of(self, key: str) -> tuple[Column[Any], KeyType]:
        position = self.key_names.index(key)
        return self.table.c[f"k{position}"], self.key_types[position]


def partition_store(
    table_id: int, key_names: Sequence[str], key_types: Sequence[KeyType]
) -> PartitionStore:
    """Describe (not create) the partitions table of catalog table `table_id`."""
    metadata = MetaData()
    key_columns = [Column(f"k{i}", sql_type(t)) for i, t in enumerate(key_types)]
    name = f"{PARTITION_TABLE_PREFIX}{table_id}"
    table = Table(
        name,
        metadata,
        Column("id", BigInteger().with_variant(Integer(), "sqlite"), primary_key=True),
        Column("name", Text, nullable=False),
        *key_columns,
        Column("location", Text, nullable=False),
        Column("file_count", Integer, nullable=False),
        Column("total_bytes", BigInteger, nullable=False),
        Column("modified_ns", BigInteger, nullable=False),
    )
    Index(f"uq_{name}_name", table.c.name, unique=True)
    if key_columns:
        Index(f"ix_{name}_keys", *key_columns)
    for column in key_columns[1:]:
        Index(f"ix_{name}_{column.name}", column)
    return PartitionStore(table, tuple(key_names), tuple(key_types))


def create(conn: Connection, store: PartitionStore) -> None:
    """Create the partitions table without its secondary indexes (see create_indexes)."""
    if conn.dialect.name == "sqlite":
        for key_type in store.key_types:
            if key_type.name == "decimal" and key_type.precision > SQLITE_MAX_DECIMAL_PRECISION:
                raise RegistrationError(
                    f"{key_type} partition keys need PostgreSQL: SQLite keeps decimals of at "
                    f"most {SQLITE_MAX_DECIMAL_PRECISION} digits exactly"
                )
    conn.execute(CreateTable(store.table))


def create_indexes(conn: Connection, store: PartitionStore) -> None:
    for index in store.table.indexes:
        index.create(conn)


def analyze(conn: Connection, store: PartitionStore) -> None:
    """Refresh the planner's statistics of the partitions table after a bulk change, so that
    tuple lookups probe the key index instead of scanning (both databases plan IN-lists
    from these figures). SQLite samples at most SQLITE_ANALYSIS_LIMIT rows per index."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"PRAGMA analysis_limit = {SQLITE_ANALYSIS_LIMIT}")
    conn.exec_driver_sql(f"ANALYZE {store.table.name}")


def drop(conn: Connection, table_id: int) -> None:
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS {PARTITION_TABLE_PREFIX}{table_id}")


def insert_rows(conn: Connection, store: PartitionStore, rows: Sequence[PartitionRow]) -> None:
    """Bulk insert: COPY on PostgreSQL, executemany on SQLite; inside the caller's transaction."""
    if not rows:
        return
    columns = ["name", *[c.name for c in store.key_columns]]
    columns += ["location", "file_count", "total_bytes", "modified_ns"]
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None
    cursor = dbapi.cursor()
    try:
        if conn.dialect.name == "postgresql":
            buffer = io.StringIO()
            for row in rows:
                fields = [
                    row.name,
                    *map(_pg_copy_value, row.values),
                    row.location,
                    row.file_count,
                    row.total_bytes,
                    row.modified_ns,
                ]
                buffer.write("\t".join(_copy_field(f) for f in fields))
                buffer.write("\n")
            buffer.seek(0)
            cursor.copy_expert(f"COPY {store.table.name} ({', '.join(columns)}) FROM STDIN", buffer)
        else:
            placeholders = ", ".join("?" * len(columns))
            cursor.executemany(
                f"INSERT INTO {store.table.name} ({', '.join(columns)}) VALUES ({placeholders})",
                [
                    (
                        row.name,
                        *(
                            _sqlite_value(v, t)
                            for v, t in zip(row.values, store.key_types, strict=True)
                        ),
                        row.location,
                        row.file_count,
                        row.total_bytes,
                        row.modified_ns,
                    )
                    for row in rows
                ],
            )
    finally:
        cursor.close()


def delete_ids(conn: Connection, store: PartitionStore, ids: Sequence[int]) -> None:
    if ids:
        conn.execute(store.table.delete().where(id_in(conn, store.table.c.id, ids)))


def fingerprints(conn: Connection, store: PartitionStore) -> list[Any]:
    """Every partition's (id, name, location, file count, bytes, newest change)."""
    table = store.table
    return list(
        conn.execute(
            select(
                table.c.id,
                table.c.name,
                table.c.location,
                table.c.file_count,
                table.c.total_bytes,
                table.c.modified_ns,
            )
        ).all()
    )


def update_fingerprints(
    conn: Connection, store: PartitionStore, rows: Iterable[tuple[int, PartitionRow]]
) -> None:
    params = [
        {
            "pid": pid,
            "location": r.location,
            "file_count": r.file_count,
            "total_bytes": r.total_bytes,
            "modified_ns": r.modified_ns,
        }
        for pid, r in rows
    ]
    if params:
        table = store.table
        conn.execute(
            table.update()
            .where(table.c.id == bindparam("pid"))
            .values(
                location=bindparam("location"),
                file_count=bindparam("file_count"),
                total_bytes=bindparam("total_bytes"),
                modified_ns=bindparam("modified_ns"),
            ),
            params,
        )


def id_in(conn: Connection, column: Column[Any], ids: Sequence[int]) -> ColumnElement[bool]:
    return value_in(conn.dialect.name, column, KeyType("bigint"), ids)


def value_in(
    dialect: str, column: Column[Any], key_type: KeyType, values: Sequence[KeyValue]
) -> ColumnElement[bool]:
    """`column IN values` as one bound parameter; a None in values matches NULL."""
    present = [v for v in values if v is not None]
    clauses: list[ColumnElement[bool]] = []
    if present:
        if dialect == "postgresql":
            literal = _pg_array_literal(present, key_type)
            clauses.append(
                column == any_(cast(bindparam(None, literal, Text), _pg_array(key_type)))
            )
        else:
            document = json.dumps(_sqlite_values(present, key_type))
            each = func.json_each(bindparam(None, document, Text)).table_valued("value")
            clauses.append(column.in_(select(each.c.value)))
    if len(present) < len(values):
        clauses.append(column.is_(None))
    return or_(*clauses) if len(clauses) > 1 else clauses[0]


def tuples_in(
    dialect: str,
    columns: Sequence[Column[Any]],
    key_types: Sequence[KeyType],
    rows: Sequence[tuple[KeyValue, ...]],
) -> ColumnElement[bool]:
    """`(c1, c2, ...) IN rows` exactly (no cross product), rows grouped by where they hold
    NULL so that every group is one row-value IN over one bound parameter per column."""
    groups: dict[tuple[bool, ...], list[tuple[KeyValue, ...]]] = {}
    if not any(None in row for row in rows):
        groups[(False,) * len(columns)] = list(rows)
    else:
        for row in rows:
            groups.setdefault(tuple(v is None for v in row), []).append(row)
    clauses: list[ColumnElement[bool]] = []
    for nulls, group in groups.items():
        positions = [i for i, is_null in enumerate(nulls) if not is_null]
        parts: list[ColumnElement[bool]] = [columns[i].is_(None) for i, n in enumerate(nulls) if n]
        if len(positions) == 1:
            i = positions[0]
            parts.append(value_in(dialect, columns[i], key_types[i], [r[i] for r in group]))
        elif positions:
            parts.append(_row_values_in(dialect, columns, key_types, positions, group))
        clauses.append(and_(*parts))
    return or_(*clauses) if len(clauses) > 1 else clauses[0]


def _row_values_in(
    dialect: str,
    columns: Sequence[Column[Any]],
    key_types: Sequence[KeyType],
    positions: list[int],
    rows: list[tuple[KeyValue, ...]],
) -> ColumnElement[bool]:
    target = tuple_(*[columns[i] for i in positions])
    if dialect == "postgresql":
        arrays = [
            cast(
                bindparam(None, _pg_array_literal([r[i] for r in rows], key_types[i]), Text),
                _pg_array(key_types[i]),
            )
            for i in positions
        ]
        names = [f"c{i}" for i in positions]
        unnested = func.unnest(*arrays).table_valued(*names).render_derived()
        return target.in_(select(*[unnested.c[n] for n in names]))
    encoded = [_sqlite_values([r[i] for r in rows], key_types[i]) for i in positions]
    document = json.dumps(list(zip(*encoded, strict=True)))
    each = func.json_each(bindparam(None, document, Text)).table_valued("value")
    extracted = [func.json_extract(each.c.value, f"$[{j}]") for j in range(len(positions))]
    return target.in_(select(*extracted))


def _pg_array(key_type: KeyType) -> ARRAY[Any]:
    base = Text() if key_type.name == "string" else sql_type(key_type)
    return ARRAY(base)


def _pg_array_literal(values: Sequence[KeyValue], key_type: KeyType) -> str:
    """An array literal for CAST(... AS type[]); NULLs are never passed here."""
    if key_type.name in ("int", "bigint", "date", "decimal"):
        return "{" + ",".join(map(str, values)) + "}"  # no character that needs quoting
    if key_type.name == "boolean":
        return "{" + ",".join("t" if v else "f" for v in values) + "}"
    if key_type.name == "timestamp":
        return '{"' + '","'.join(map(str, values)) + '"}'
    return "{" + ",".join(_pg_array_element(v) for v in values) + "}"


_ARRAY_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"'})


def _pg_array_element(value: KeyValue) -> str:
    """A quoted element of an array literal (strings: backslash and quote escaped)."""
    return '"' + str(value).translate(_ARRAY_ESCAPES) + '"'


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def _copy_field(value: Any) -> str:
    """One field of COPY's text format: \\N for NULL, backslash escapes otherwise."""
    if value is None:
        return "\\N"
    return str(value).translate(_COPY_ESCAPES)


def _pg_copy_value(value: KeyValue) -> Any:
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date | Decimal):
        return str(value)
    return value


def raw_column(dialect: str, column: Column[Any], key_type: KeyType) -> ColumnElement[Any]:
    """The column as the driver returns it, skipping SQLAlchemy's per-row conversion where
    it is not free (SQLite's text dates and scaled decimals); see raw_decoder."""
    if raw_decoder(dialect, key_type) is None:
        return column
    return type_coerce(column, NullType()).label(column.name)


def raw_decoder(dialect: str, key_type: KeyType) -> Callable[[Any], KeyValue] | None:
    """How to turn a value selected by raw_column into a typed value (None: it already is)."""
    if dialect != "sqlite":
        return None
    if key_type.name == "date":
        return dt.date.fromisoformat
    if key_type.name == "timestamp":
        return dt.datetime.fromisoformat
    if key_type.name == "boolean":
        return bool
    if key_type.name == "decimal":
        scale = key_type.scale
        return lambda raw: Decimal(int(raw)).scaleb(-scale)
    return None


def _sqlite_values(values: Sequence[KeyValue], key_type: KeyType) -> list[Any]:
    """_sqlite_value over a list of non-NULL values, in bulk where the type allows."""
    if key_type.name in ("int", "bigint", "string"):
        return list(values)
    if key_type.name == "date":
        return list(map(str, values))
    return [_sqlite_value(v, key_type) for v in values]


def _sqlite_value(value: KeyValue, key_type: KeyType) -> Any:
    """A typed value as SQLAlchemy stores it on SQLite (and as json_each yields it)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dt.datetime):
        return value.strftime(SQLITE_TIMESTAMP_FORMAT)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value.scaleb(key_type.scale))
    return value
