"""Many rows into one table, inside the caller's transaction, as fast as the database takes
them: PostgreSQL through psycopg2 gets binary COPY, in streams of about 64 MB (no bytea
hex text to build or parse: a collection writes hundreds of MB of sketches), any other
database a batched INSERT (SQLite through its own driver, for rows of integers, text and
bytes: the driver's executemany on plain tuples, without SQLAlchemy's per-value bind
processing, about 0.9 s of a full collection's 7 s write of TPC-H lineitem). All write the
same values; a failure rolls back with the caller's transaction.
"""

from __future__ import annotations

import contextlib
import io
import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from sqlalchemy import Boolean, Connection, Enum, Integer, LargeBinary, String, Table, insert, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import DeclarativeBase

# PostgreSQL's binary COPY format (the COPY command's "Binary Format" section)
COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
COPY_TRAILER = struct.pack("!h", -1)
NULL_FIELD = struct.pack("!i", -1)
COPY_BATCH_BYTES = 64 * 1024 * 1024


def _int(fmt: str) -> Callable[[Any], bytes]:
    size = struct.calcsize(fmt)
    header = struct.pack("!i", size)
    return lambda value: header + struct.pack(fmt, int(value))


def _text(value: Any) -> bytes:
    data = str(value).encode("utf-8")
    return struct.pack("!i", len(data)) + data


def _boolean(value: Any) -> bytes:
    return struct.pack("!i?", 1, bool(value))


def _bytea(value: Any) -> bytes:
    data = bytes(value)
    return struct.pack("!i", len(data)) + data


# the binary send format of the column types the statistics tables use
ENCODERS: dict[str, Callable[[Any], bytes]] = {
    "smallint": _int("!h"),
    "integer": _int("!i"),
    "bigint": _int("!q"),
    "text": _text,
    "character varying": _text,
    "bytea": _bytea,
    "boolean": _boolean,
}


def bulk_insert(
    conn: Connection, model: type[DeclarativeBase], rows: Sequence[Mapping[str, Any]]
) -> None:
    """Insert `rows` (dicts by column name, all with the same keys) into `model`'s table."""
    if not rows:
        return
    table = cast(Table, model.__table__)
    columns = list(rows[0])
    if _plain_sqlite(conn, table, columns):
        quote = conn.dialect.identifier_preparer.quote
        statement = (
            f"INSERT INTO {conn.dialect.identifier_preparer.format_table(table)} "
            f"({', '.join(quote(c) for c in columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        _on_cursor(conn, statement, lambda c: c.executemany(statement, _tuples(rows, columns)))
        return
    encoders = _copy_encoders(conn, table, columns)
    if encoders is None:
        conn.execute(insert(table), list(rows))
        return
    statement = (
        f"COPY {conn.dialect.identifier_preparer.format_table(table)} "
        f"({', '.join(conn.dialect.identifier_preparer.quote(c) for c in columns)}) "
        "FROM STDIN WITH (FORMAT binary)"
    )

    def copy(cursor: Any) -> None:
        for chunk in _copy_chunks(rows, columns, encoders):
            cursor.copy_expert(statement, io.BytesIO(chunk))

    _on_cursor(conn, statement, copy)


def _tuples(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    for row in rows:
        yield tuple(row[c] for c in columns)


def _plain_sqlite(conn: Connection, table: Table, columns: Sequence[str]) -> bool:
    """Whether the rows go to SQLite's own driver as they are: every column given is an
    integer, boolean, text or bytes one (no bind processing to apply), and no column left out has a
    default SQLAlchemy would fill in."""
    if conn.dialect.name != "sqlite" or conn.dialect.driver != "pysqlite":
        return False
    given = set(columns)
    for column in table.columns:
        if column.name in given:
            plain = isinstance(column.type, Integer | String | LargeBinary | Boolean)
            if not plain or isinstance(column.type, Enum):  # an Enum converts its values
                return False
        elif column.default is not None:
            return False
    return given <= set(table.columns.keys())


def _on_cursor(conn: Connection, statement: str, work: Callable[[Any], None]) -> None:
    """Run `work` on a cursor of the connection's DBAPI connection, its errors raised as
    SQLAlchemy's execute raises them (a lost connection invalidated)."""
    dialect, connection = conn.dialect, conn.connection.dbapi_connection
    cursor = connection.cursor()  # type: ignore[union-attr]
    try:
        work(cursor)
    except dialect.loaded_dbapi.Error as error:  # as SQLAlchemy's execute raises it
        gone = dialect.is_disconnect(error, connection, cursor)
        if gone:
            conn.invalidate()  # the pool must not hand this connection out again
        raise DBAPIError.instance(
            statement,
            None,
            error,
            dialect.loaded_dbapi.Error,
            connection_invalidated=gone,
            dialect=dialect,
        ) from error
    finally:
        with contextlib.suppress(Exception):
            cursor.close()


def _copy_chunks(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    encoders: Sequence[Callable[[Any], bytes]],
) -> Iterator[bytes]:
    """Binary COPY streams of about COPY_BATCH_BYTES each (whole rows; `rows` not empty),
    one at a time."""
    count = struct.pack("!h", len(columns))
    parts, size = [COPY_SIGNATURE], 0
    pairs = list(zip(columns, encoders, strict=True))
    for row in rows:
        fields = [count]
        for name, encode in pairs:
            value = row[name]
            fields.append(NULL_FIELD if value is None else encode(value))
        tuple_bytes = b"".join(fields)
        parts.append(tuple_bytes)
        size += len(tuple_bytes)
        if size >= COPY_BATCH_BYTES:
            yield b"".join([*parts, COPY_TRAILER])
            parts, size = [COPY_SIGNATURE], 0
    if len(parts) > 1:
        yield b"".join([*parts, COPY_TRAILER])


def _copy_encoders(
    conn: Connection, table: Table, columns: Sequence[str]
) -> list[Callable[[Any], bytes]] | None:
    """Binary encoders for `columns` as the database declares them, or None when COPY does
    not apply (not PostgreSQL through psycopg2, or a column type without an encoder)."""
    if conn.dialect.name != "postgresql" or conn.dialect.driver != "psycopg2":
        return None
    declared: dict[str, str] = dict(
        conn.execute(
            text(
                "SELECT attname, format_type(atttypid, NULL) FROM pg_attribute "
                "WHERE attrelid = CAST(:table AS regclass) AND attnum > 0 AND NOT attisdropped"
            ),
            {"table": conn.dialect.identifier_preparer.format_table(table)},
        ).all()
    )
    encoders = []
    for column in columns:
        encode = ENCODERS.get(declared.get(column, ""))
        if encode is None:
            return None
        encoders.append(encode)
    return encoders
