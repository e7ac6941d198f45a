"""Leader election among the daemons of one metastore: exactly one runs scheduled jobs.

On PostgreSQL the leader holds a session advisory lock on a connection of its own (the
lock's key names the database and the metastore's schema, so metastores sharing a database
do not compete). The server releases it the moment that session ends: the leader died,
or its connection broke. On SQLite an fcntl lock on a file next to the database plays the
same part among the daemons of one host.

Followers try to take the lock every `retry` seconds; the leader checks its lock every
`check` seconds and, when the lock connection broke (a database restart), steps down and
competes again.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Protocol

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from metastore.errors import StatlasError

log = logging.getLogger("statlas.leader")

RETRY_SECONDS = 10.0
CHECK_SECONDS = 5.0
LOCK_NAME = "statlas-scheduler"


class LeaderLock(Protocol):
    def acquire(self) -> bool:
        """Take the lock if it is free (never waits); True when this process holds it."""

    def held(self) -> bool:
        """Whether the lock is still ours (False once its connection broke)."""

    def release(self) -> None: ...


class PostgresLock:
    """A session-level advisory lock held on a dedicated connection."""

    def __init__(self, db_url: str) -> None:
        self.engine: Engine = create_engine(
            make_url(db_url),
            poolclass=NullPool,
            # a dead peer or network is noticed within ~25 s even with no query under way
            connect_args={
                "connect_timeout": 5,
                "keepalives": 1,
                "keepalives_idle": 10,
                "keepalives_interval": 5,
                "keepalives_count": 3,
            },
        )
        self._conn: Connection | None = None

    def acquire(self) -> bool:
        self.release()
        conn = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        try:
            got = conn.execute(
                text(
                    "SELECT pg_try_advisory_lock(hashtext(current_database() || '.' || "
                    "coalesce(current_schema(), '') || :name))"
                ),
                {"name": ":" + LOCK_NAME},
            ).scalar_one()
        except BaseException:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def held(self) -> bool:
        conn = self._conn
        if conn is None:
            return False
        try:
            conn.execute(text("SELECT 1")).scalar_one()
            return True
        except Exception as error:
            log.warning("leader lock connection broke: %s", str(error).splitlines()[0])
            self.release()
            return False

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:  # closing the session releases its advisory locks
            conn.close()
        except Exception as error:  # already broken: the server released the lock
            log.debug("closing the leader lock connection: %s", error)


class FileLock:
    """An exclusive fcntl lock on `path` (the kernel drops it when the process dies)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[bytes] | None = None

    def acquire(self) -> bool:
        if self._file is not None:
            return True
        handle = open(self.path, "a+b")  # kept open while the lock is held
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n".encode())
        handle.flush()
        self._file = handle
        return True

    def held(self) -> bool:
        return self._file is not None

    def release(self) -> None:
        handle, self._file = self._file, None
        if handle is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            handle.close()


def leader_lock(db_url: str) -> LeaderLock:
    """The lock the daemons of the metastore at `db_url` compete for."""
    url = make_url(db_url)
    backend = url.get_backend_name()
    if backend == "postgresql":
        return PostgresLock(db_url)
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise StatlasError("the daemon needs a metastore file or PostgreSQL, not memory")
        database = Path(url.database).resolve()
        return FileLock(database.with_name(database.name + ".scheduler.lock"))
    raise StatlasError(f"unsupported database {backend!r}: use sqlite:/// or postgresql://")


class LeaderElector:
    """A thread that wins, keeps and loses leadership. It calls `on_elected` when it wins,
    `on_tick` every `check` seconds while it leads, and `on_lost(grace)` when it loses the
    lock (grace 0: another daemon may lead already) or stops while leading (the grace
    `stop` was given); the lock is released only after `on_lost` returned."""

    def __init__(
        self,
        lock: LeaderLock,
        on_elected: Callable[[], None],
        on_lost: Callable[[float], None],
        on_tick: Callable[[], None] = lambda: None,
        *,
        retry: float = RETRY_SECONDS,
        check: float = CHECK_SECONDS,
    ) -> None:
        self.lock = lock
        self.on_elected, self.on_lost, self.on_tick = on_elected, on_lost, on_tick
        self.retry, self.check = retry, check
        self._leading = threading.Event()
        self._stop = threading.Event()
        self._grace = 0.0
        self._thread = threading.Thread(target=self._run, name="leader-elector", daemon=True)

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    def start(self) -> None:
        self._thread.start()

    def stop(self, grace: float = 0.0, timeout: float | None = None) -> None:
        """Stop competing; a leader steps down first (`on_lost(grace)`), then the lock is
        freed. Waits up to `timeout` seconds for all that."""
        self._grace = grace
        self._stop.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                wait = self._lead() if self.leading else self._compete()
                self._stop.wait(wait)
        finally:
            if self.leading:
                self._step_down("the daemon is stopping", self._grace)
            self.lock.release()

    def _compete(self) -> float:
        try:
            won = self.lock.acquire()
        except Exception as error:  # the database is unreachable: try again later
            log.warning("cannot compete for leadership: %s", str(error).splitlines()[0])
            return self.retry
        if not won:
            return self.retry
        if self._stop.is_set():
            return 0.0
        log.info("elected leader: this daemon runs the scheduled jobs")
        self._leading.set()
        try:
            self.on_elected()
        except Exception as error:
            log.warning("cannot start leading, stepping down: %s", error)
            self._step_down("starting the scheduler failed", 0.0)
            return self.retry
        return self.check

    def _lead(self) -> float:
        if not self.lock.held():
            self._step_down("the leader lock was lost", 0.0)
            return min(self.retry, 1.0)
        try:
            self.on_tick()
        except Exception as error:
            log.warning("scheduler tick failed: %s", error)
        return self.check

    def _step_down(self, why: str, grace: float) -> None:
        log.warning("stepping down as leader: %s", why)
        self._leading.clear()
        try:
            self.on_lost(grace)
        finally:
            self.lock.release()
