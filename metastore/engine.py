"""Engines for the two supported databases and translation of their errors.

SQLite is the embedded default (like Spark's Derby metastore); PostgreSQL is production.
SQLite is put in pysqlite's manual transaction mode so that DDL and DML of one write are
one transaction, as they are on PostgreSQL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from metastore.errors import MetastoreUnavailable, StatlasError

DEFAULT_DB_URL = "sqlite:///statlas.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000


def make_engine(url: str) -> Engine:
    """An Engine for `url` (sqlite:///FILE or postgresql+psycopg2://...)."""
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError:
        raise StatlasError(f"invalid database URL {url!r}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        engine = create_engine(parsed)
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        connect_args: dict[str, Any] = {"connect_timeout": 5}
        return create_engine(parsed, pool_pre_ping=True, connect_args=connect_args)
    raise StatlasError(f"unsupported database {backend!r}: use sqlite:/// or postgresql://")


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


@contextlib.contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """One all-or-nothing write. On SQLite it takes the write lock up front (BEGIN
    IMMEDIATE), so two writers queue instead of failing on a lock upgrade."""
    with translate_errors(engine), engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            conn = conn.execution_options(sqlite_begin="IMMEDIATE")
        with conn.begin():
            yield conn


@contextlib.contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """A consistent read (one transaction, rolled back at the end)."""
    with translate_errors(engine), engine.connect() as conn, conn.begin():
        yield conn


def describe(engine: Engine) -> str:
    """The engine's URL with its password hidden."""
    return engine.url.render_as_string(hide_password=True)


@contextlib.contextmanager
def translate_errors(engine: Engine) -> Iterator[None]:
    """Turn a lost or refused database connection into MetastoreUnavailable."""
    try:
        yield
    except (sa_exc.OperationalError, sa_exc.InterfaceError) as error:
        if isinstance(error, sa_exc.DBAPIError) and (
            error.connection_invalidated or _is_connection_error(error)
        ):
            raise MetastoreUnavailable(
                f"cannot reach the metastore at {describe(engine)}: {_first_line(error.orig)}"
            ) from error
        raise StatlasError(f"database error: {_first_line(error.orig)}") from error


def _is_connection_error(error: sa_exc.DBAPIError) -> bool:
    text = str(error.orig).lower()
    markers = (
        "could not connect",
        "connection refused",
        "server closed the connection",
        "terminating connection",
        "connection to server",
        "unable to open database",
        "the database system is",
        "ssl syscall",
        "connection already closed",
    )
    return any(marker in text for marker in markers)


def _first_line(error: object) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
