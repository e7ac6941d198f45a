"""Engines for the two supported databases and translation of their errors.

SQLite is the embedded default (like Spark's Derby metastore); PostgreSQL is production.
SQLite is put in pysqlite's manual transaction mode so that DDL and DML of one write are
one transaction, as they are on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import orjson
from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url

from metastore.errors import MetastoreUnavailable, StatlasError

T = TypeVar("T")

DEFAULT_DB_URL = "sqlite:///statlas.db"
SQLITE_BUSY_TIMEOUT_MS = 30_000
# the page size of a new SQLite metastore (an existing one keeps its own): rows of sketches
# (0.1 to 3 KB each) leave a fifth of 4 KB pages empty and 1.5% of 16 KB ones (lineitem's
# statistics: 79 MB in 4 KB pages, 70 MB in 16 KB ones; docs/design.md#sizes)
SQLITE_PAGE_SIZE = 16_384
# libpq keeps a connection's input buffer at the largest message it received (twice a 16 MB
# value: 34 MB, measured) for the connection's life; a pooled connection that read a value
# this large is closed when it returns to the pool, its buffer with it (note_read)
LARGE_READ_BYTES = 1 << 20
_LARGE_READ = "statlas_large_read"


def make_engine(url: str) -> Engine:
    """An Engine for `url` (sqlite:///FILE or postgresql+psycopg2://...)."""
    try:
        parsed = make_url(url)
    except sa_exc.ArgumentError:
        raise StatlasError(f"invalid database URL {url!r}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        engine = create_engine(parsed, json_deserializer=orjson.loads)
        _configure_sqlite(engine)
        return engine
    if backend == "postgresql":
        connect_args: dict[str, Any] = {"connect_timeout": 5}
        # no pre-ping round trip per checkout: run_read/run_write replace a dead connection
        # JSON documents (partition parameters, served by the hundred thousand) read by
        # orjson, about 4x json.loads
        engine = create_engine(parsed, connect_args=connect_args, json_deserializer=orjson.loads)
        event.listen(engine, "checkin", _close_after_large_read)
        return engine
    raise StatlasError(f"unsupported database {backend!r}: use sqlite:/// or postgresql://")


def note_read(conn: Connection, size: int) -> None:
    """Tell the pool that `conn` received a value of `size` bytes: from LARGE_READ_BYTES on,
    a PostgreSQL connection is closed when it returns to the pool (libpq would keep a buffer
    that large for as long as the connection lives); a later checkout connects again."""
    if size >= LARGE_READ_BYTES:
        conn.info[_LARGE_READ] = True


def _close_after_large_read(_dbapi_connection: Any, record: Any) -> None:
    if record.info.pop(_LARGE_READ, False):
        record.invalidate()


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves, below
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")  # before WAL, which fixes it
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "")
        conn.exec_driver_sql(f"BEGIN {mode}".strip())


def run_write(engine: Engine, work: Callable[[Connection], T]) -> T:
    """Run `work` as one all-or-nothing transaction. On SQLite the write lock is taken up
    front (BEGIN IMMEDIATE) so two writers queue instead of failing on a lock upgrade. A
    connection found dead (a database restart) is replaced and the work run again: the
    failed attempt was rolled back with its connection, so nothing is applied twice."""
    return _run(engine, work, write=True)


def run_read(engine: Engine, work: Callable[[Connection], T]) -> T:
    """Run read-only `work`; on PostgreSQL each statement runs on its own (autocommit), which
    saves the round trips of BEGIN and COMMIT on every lookup. Inside `one_snapshot` of
    `engine`, `work` reads that block's snapshot."""
    held = _SNAPSHOT.get()
    if held is not None and held.engine is engine:
        return work(held.connection())
    return _run(engine, work, write=False)


class Snapshot:
    """One read transaction, begun at the first read of a `one_snapshot` block: every read
    of the block sees the database as that first read did (PostgreSQL's REPEATABLE READ;
    SQLite's read transaction in WAL mode). `on_begin` callbacks run first, in it."""

    def __init__(self, engine: Engine, stack: ExitStack) -> None:
        self.engine, self._stack = engine, stack
        self._conn: Connection | None = None
        self.on_begin: list[Callable[[Connection], None]] = []
        self.checked: set[object] = set()  # what callers have checked this snapshot for

    def connection(self) -> Connection:
        if self._conn is None:
            conn = self._stack.enter_context(self.engine.connect())
            if self.engine.dialect.name == "postgresql":
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            self._stack.enter_context(conn.begin())
            self._conn = conn
            for callback in self.on_begin:
                callback(conn)
        return self._conn

    @property
    def begun(self) -> bool:
        return self._conn is not None


_SNAPSHOT: ContextVar[Snapshot | None] = ContextVar("statlas_snapshot", default=None)


def current_snapshot(engine: Engine) -> Snapshot | None:
    """The `one_snapshot` block of `engine` the caller runs in, if any."""
    held = _SNAPSHOT.get()
    return held if held is not None and held.engine is engine else None


@contextmanager
def _snapshot_block(engine: Engine) -> Iterator[Snapshot]:
    with ExitStack() as stack:
        snapshot = Snapshot(engine, stack)
        token = _SNAPSHOT.set(snapshot)
        try:
            yield snapshot
        finally:
            _SNAPSHOT.reset(token)


def one_snapshot(engine: Engine, work: Callable[[Snapshot], T]) -> T:
    """`work(snapshot)`, every `run_read` of `engine` in it reading one snapshot (nested
    calls join the outer one). The transaction begins at the first read, so a block that
    reads nothing costs nothing; a dead connection is replaced and the block run again."""
    held = current_snapshot(engine)
    if held is not None:
        return work(held)

    def attempt() -> T:
        with _snapshot_block(engine) as snapshot:
            return work(snapshot)

    return with_reconnect(engine, attempt)


def _run(engine: Engine, work: Callable[[Connection], T], *, write: bool) -> T:
    def attempt() -> T:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite" and write:
                conn = conn.execution_options(sqlite_begin="IMMEDIATE")
            elif engine.dialect.name == "postgresql" and not write:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            with conn.begin():
                return work(conn)

    return with_reconnect(engine, attempt)


def with_reconnect(engine: Engine, work: Callable[[], T]) -> T:
    """Run `work`; a connection found dead (a database restart) is replaced and `work` run
    once more, and database errors become the project's errors (MetastoreUnavailable...)."""
    for attempt in (1, 2):
        try:
            return work()
        except sa_exc.DBAPIError as error:
            if error.connection_invalidated and attempt == 1:
                continue
            translated = translate(engine, error)
            if translated is error:
                raise
            raise translated from error
    raise AssertionError("unreachable")


def describe(engine: Engine) -> str:
    """The engine's URL with its password hidden."""
    return engine.url.render_as_string(hide_password=True)


def translate(engine: Engine, error: sa_exc.DBAPIError) -> Exception:
    """The project's error for a database error: MetastoreUnavailable when the database
    cannot be reached; IntegrityError and the like are returned as they are."""
    if error.connection_invalidated or _is_connection_error(error):
        return MetastoreUnavailable(
            f"cannot reach the metastore at {describe(engine)}: {_first_line(error.orig)}"
        )
    if isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError):
        return StatlasError(f"database error: {_first_line(error.orig)}")
    return error


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
