"""Hive's lock manager over the metastore database (docs/hive-metastore.md#locks).

A lock is a list of components, each a database, a table of it or a partition of the table,
with a type: SHARED_READ, SHARED_WRITE, EXCL_WRITE or EXCLUSIVE. A lock is granted whole or
waits whole. It waits while any lock asked for before it, granted or waiting, covers an
object one of its components covers with a type that conflicts (`CONFLICTS`): first come,
first served, so a stream of readers cannot starve a writer. Two components cover a common
object when they name the same database and, where both name a table, the same table, and,
where both name a partition, the same partition (a database lock covers its tables, a table
lock its partitions).

Every decision runs in one write transaction, serialised among all daemons on the database
(PostgreSQL: a transaction-level advisory lock; SQLite: its single writer), so a granted lock
is never granted twice. Time is the database's clock, one clock for every daemon. A lock not
heartbeaten (by `lock`, `check_lock` or `heartbeat`) for `timeout` seconds expires, granted or
waiting, as Hive's hive.txn.timeout (300 s by default): a killed client's locks go away.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, text, update

from metastore.errors import StatlasError
from metastore.models import HiveLock, HiveLockComponent

DEFAULT_TIMEOUT = 300.0
"""Seconds a lock lives without a heartbeat: Hive's hive.txn.timeout default."""

LOCK_TYPES = ("SHARED_READ", "SHARED_WRITE", "EXCLUSIVE", "EXCL_WRITE")
LEVELS = ("DB", "TABLE", "PARTITION")

CONFLICTS: dict[str, frozenset[str]] = {
    "SHARED_READ": frozenset({"EXCLUSIVE"}),
    "SHARED_WRITE": frozenset({"EXCL_WRITE", "EXCLUSIVE"}),
    "EXCL_WRITE": frozenset({"SHARED_WRITE", "EXCL_WRITE", "EXCLUSIVE"}),
    "EXCLUSIVE": frozenset(LOCK_TYPES),
}
"""The types a lock asked for (key) waits behind on a common object, as Hive 4's lock
manager decides (CheckLockFunction): reads pass writes, shared writes pass each other,
an exclusive write passes reads only, an exclusive lock nothing. One exception, Hive's
too: a database-level SHARED_READ and a table's EXCLUSIVE lock do not conflict (a reader of
a database does not hold its tables)."""

ACQUIRED, WAITING = "acquired", "waiting"

_LOCK = HiveLock.__table__
_COMPONENT = HiveLockComponent.__table__

_WRITE_LOCK = text(
    """
    WITH written AS (
        INSERT INTO hms_locks (state, user_name, host_name, agent_info, created_at,
                               last_heartbeat, acquired_at)
        VALUES (:state, :user_name, :host_name, :agent_info, :now, :now, :acquired_at)
        RETURNING id
    )
    INSERT INTO hms_lock_components (lock_id, position, database_name, table_name,
                                     partition_name, lock_type)
    SELECT written.id, c.position, c.database_name, c.table_name, c.partition_name,
           c.lock_type
    FROM written CROSS JOIN unnest(
        CAST(:positions AS integer[]), CAST(:databases AS varchar[]),
        CAST(:tables AS varchar[]), CAST(:partitions AS text[]), CAST(:types AS varchar[])
    ) AS c(position, database_name, table_name, partition_name, lock_type)
    RETURNING lock_id
    """
)
"""A lock and its components, written by one statement (PostgreSQL)."""

EXPIRY_INTERVAL = 10.0
"""Seconds between a process's deletions of expired locks."""
_next_expiry = 0.0

_SERIAL_KEY = 0x5747_4C4B  # PostgreSQL advisory lock key of lock-manager decisions ("SGLK")


class NoSuchLock(StatlasError):
    """A lock id that was never given, was released, or expired."""


class InvalidLockRequest(StatlasError):
    """A lock request Hive would refuse: no components, a partition without a table, ..."""


@dataclass(frozen=True)
class LockComponentRequest:
    """One object a lock asks for."""

    lock_type: str  # one of LOCK_TYPES
    database: str
    table: str | None = None
    partition: str | None = None


@dataclass(frozen=True)
class LockStatus:
    lock_id: int
    state: str  # ACQUIRED or WAITING


@dataclass(frozen=True)
class ShownLock:
    """A row of show_locks: one component of a lock."""

    lock_id: int
    position: int
    database: str
    table: str | None
    partition: str | None
    lock_type: str
    state: str
    last_heartbeat: float
    acquired_at: float | None
    user: str
    host: str
    agent_info: str | None
    blocked_by: int | None


def database_now(conn: Connection) -> float:
    """Seconds since the epoch by the database's clock (SQLite: this process's, as an
    embedded database has no other)."""
    if conn.dialect.name == "postgresql":
        return float(
            conn.execute(text("SELECT extract(epoch FROM clock_timestamp())")).scalar_one()
        )
    return time.time()


def serialise(conn: Connection) -> float:
    """Make this transaction the only lock-manager decision under way on the database until it
    ends (SQLite: run_write's BEGIN IMMEDIATE already does); the database's time, from the
    same statement."""
    if conn.dialect.name == "postgresql":
        return float(
            conn.execute(
                text(
                    "SELECT extract(epoch FROM clock_timestamp()) "
                    "FROM (SELECT pg_advisory_xact_lock(:key)) AS held"
                ),
                {"key": _SERIAL_KEY},
            ).scalar_one()
        )
    return time.time()


def covers_common_object(a: LockComponentRequest, b: LockComponentRequest) -> bool:
    """Whether two components lock an object in common (docs/hive-metastore.md#locks)."""
    if a.database != b.database:
        return False
    if a.table is None or b.table is None:
        return True
    if a.table != b.table:
        return False
    return a.partition is None or b.partition is None or a.partition == b.partition


def conflicts(asked: LockComponentRequest, held: LockComponentRequest) -> bool:
    if held.lock_type not in CONFLICTS[asked.lock_type] or not covers_common_object(asked, held):
        return False
    database_read = {asked.lock_type, held.lock_type} == {"SHARED_READ", "EXCLUSIVE"} and (
        (asked.lock_type == "SHARED_READ" and asked.table is None and held.table is not None)
        or (held.lock_type == "SHARED_READ" and held.table is None and asked.table is not None)
    )
    return not database_read


def normalised(component: LockComponentRequest) -> LockComponentRequest:
    """Names as Hive keeps them (database and table in lower case); a checked type."""
    if component.lock_type not in LOCK_TYPES:
        raise InvalidLockRequest(f"unknown lock type {component.lock_type!r}")
    if not component.database:
        raise InvalidLockRequest("a lock component needs a database name")
    if component.partition is not None and component.table is None:
        raise InvalidLockRequest("a partition lock component needs a table name")
    return LockComponentRequest(
        component.lock_type,
        component.database.lower(),
        component.table.lower() if component.table else None,
        component.partition or None,
    )


def expire(conn: Connection, now: float, timeout: float) -> int:
    """Delete locks not heartbeaten for `timeout` seconds (their components go with them);
    returns how many. Decisions ignore such locks whether deleted yet or not, so this is
    housekeeping, run at most every EXPIRY_INTERVAL seconds by a process (as Hive's
    housekeeping service does)."""
    global _next_expiry
    if now < _next_expiry:
        return 0
    _next_expiry = now + min(EXPIRY_INTERVAL, timeout)
    return int(
        conn.execute(delete(HiveLock).where(HiveLock.last_heartbeat < now - timeout)).rowcount or 0
    )


def request_lock(
    conn: Connection,
    components: Sequence[LockComponentRequest],
    user: str,
    host: str,
    agent_info: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> LockStatus:
    """Ask for a lock: granted now (ACQUIRED) or queued (WAITING, ask again by check_lock).
    Every live lock was asked for before this one (decisions are serialised), so the lock is
    decided before it is written, and written once."""
    if not components:
        raise InvalidLockRequest("a lock request needs at least one component")
    asked = [normalised(c) for c in components]
    now = serialise(conn)
    expire(conn, now, timeout)
    state = WAITING if _blocked(conn, asked, None, now - timeout) else ACQUIRED
    rows = [
        (position, c.database, c.table, c.partition, c.lock_type)
        for position, c in enumerate(asked)
    ]
    names = ["position", "database_name", "table_name", "partition_name", "lock_type"]
    if conn.dialect.name == "postgresql":  # the lock and its components in one statement
        lock_id = int(
            conn.execute(
                _WRITE_LOCK,
                {
                    "state": state,
                    "user_name": (user or "")[:256],
                    "host_name": (host or "")[:256],
                    "agent_info": (agent_info or None) and agent_info[:1024],
                    "now": now,
                    "acquired_at": now if state == ACQUIRED else None,
                    "positions": [row[0] for row in rows],
                    "databases": [row[1] for row in rows],
                    "tables": [row[2] for row in rows],
                    "partitions": [row[3] for row in rows],
                    "types": [row[4] for row in rows],
                },
            )
            .scalars()
            .first()
            or 0
        )
    else:
        lock = insert(HiveLock).values(
            state=state,
            user_name=(user or "")[:256],
            host_name=(host or "")[:256],
            agent_info=(agent_info or None) and agent_info[:1024],
            created_at=now,
            last_heartbeat=now,
            acquired_at=now if state == ACQUIRED else None,
        )
        lock_id = int(conn.execute(lock.returning(HiveLock.id)).scalar_one())
        conn.execute(
            insert(HiveLockComponent),
            [{"lock_id": lock_id, **dict(zip(names, row, strict=True))} for row in rows],
        )
    return LockStatus(lock_id, state)


def check_lock(conn: Connection, lock_id: int, timeout: float = DEFAULT_TIMEOUT) -> LockStatus:
    """A lock's state now, granting it if nothing asked for before it conflicts; a heartbeat
    too. An expired lock is gone."""
    now = serialise(conn)
    expire(conn, now, timeout)
    state = conn.execute(
        select(HiveLock.state).where(
            HiveLock.id == lock_id, HiveLock.last_heartbeat >= now - timeout
        )
    ).scalar()
    if state is None:
        raise NoSuchLock(f"No such lock lockid:{lock_id}")
    if state == WAITING and not _blocked(conn, _components(conn, lock_id), lock_id, now - timeout):
        state = ACQUIRED
        changed: dict[str, Any] = {"last_heartbeat": now, "state": state, "acquired_at": now}
    else:
        changed = {"last_heartbeat": now}
    conn.execute(update(HiveLock).where(HiveLock.id == lock_id).values(**changed))
    return LockStatus(lock_id, state)


def unlock(conn: Connection, lock_id: int) -> bool:
    """Release a lock, granted or waiting (its components go with it); whether there was
    one. Releasing a lock that is gone (released, expired) succeeds, as in Hive 4: a
    client's `finally: unlock` after a commit that took longer than the timeout must not
    turn the commit into a failure."""
    return bool(conn.execute(delete(HiveLock).where(HiveLock.id == lock_id)).rowcount)


def heartbeat(conn: Connection, lock_id: int, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Keep a lock alive, in one statement; an expired lock is gone and cannot be revived."""
    now: Any = (
        func.extract("epoch", func.clock_timestamp())
        if conn.dialect.name == "postgresql"
        else time.time()
    )
    refreshed = conn.execute(
        update(HiveLock)
        .where(HiveLock.id == lock_id, HiveLock.last_heartbeat >= now - timeout)
        .values(last_heartbeat=now)
    ).rowcount
    if refreshed == 0:
        raise NoSuchLock(f"No such lock: lockid:{lock_id}")


def show_locks(
    conn: Connection,
    database: str | None = None,
    table: str | None = None,
    partition: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> list[ShownLock]:
    """Every live lock's components, oldest first; only those on `database` (and `table`,
    `partition`) when given. A waiting component names the lock it waits behind."""
    now = database_now(conn)
    query = (
        select(*_LOCK.c, *_COMPONENT.c)
        .join_from(HiveLock, HiveLockComponent, HiveLockComponent.lock_id == HiveLock.id)
        .where(HiveLock.last_heartbeat >= now - timeout)
        .order_by(HiveLock.id, HiveLockComponent.position)
    )
    rows = conn.execute(query).all()
    everything = [(row.id, _component(row)) for row in rows]
    shown = []
    for row in rows:
        component = _component(row)
        if database and component.database != database.lower():
            continue
        if table and component.table != table.lower():
            continue
        if partition and component.partition != partition:
            continue
        blocker = None
        if row.state == WAITING:
            blocker = next(
                (
                    other_id
                    for other_id, other in everything
                    if other_id < row.id and conflicts(component, other)
                ),
                None,
            )
        shown.append(
            ShownLock(
                row.id,
                row.position,
                component.database,
                component.table,
                component.partition,
                component.lock_type,
                row.state,
                row.last_heartbeat,
                row.acquired_at,
                row.user_name,
                row.host_name,
                row.agent_info,
                blocker,
            )
        )
    return shown


def _component(row: Any) -> LockComponentRequest:
    return LockComponentRequest(
        row.lock_type, row.database_name, row.table_name, row.partition_name
    )


def _components(conn: Connection, lock_id: int) -> list[LockComponentRequest]:
    rows = conn.execute(
        select(*_COMPONENT.c)
        .where(HiveLockComponent.lock_id == lock_id)
        .order_by(HiveLockComponent.position)
    )
    return [_component(row) for row in rows]


def _blocked(
    conn: Connection,
    asked: Sequence[LockComponentRequest],
    lock_id: int | None,
    alive_since: float,
) -> bool:
    """Whether a live lock (heartbeaten since `alive_since`) asked for before `lock_id`
    (None: any) conflicts with one of the components `asked`."""
    databases = sorted({c.database for c in asked})
    query = (
        select(*_COMPONENT.c)
        .join_from(HiveLockComponent, HiveLock, HiveLock.id == HiveLockComponent.lock_id)
        .where(
            HiveLockComponent.database_name.in_(databases),
            HiveLock.last_heartbeat >= alive_since,
        )
    )
    if lock_id is not None:
        query = query.where(HiveLockComponent.lock_id < lock_id)
    for row in conn.execute(query):
        held = _component(row)
        if any(conflicts(component, held) for component in asked):
            return True
    return False
