"""The Hive Metastore's lock calls (lock, check_lock, unlock, heartbeat, show_locks) over
statlas's lock manager (metastore.hive.locks; docs/hive-metastore.md#locks): what Iceberg's
Hive catalog takes around every commit.

statlas keeps no Hive transactions: a lock request or heartbeat naming a transaction answers
NoSuchTxnException, as Hive does for a transaction it does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hive_metastore import ttypes as hms
from sqlalchemy import Connection, Engine

from metastore.engine import run_read, run_write, with_reconnect
from metastore.hive import locks as locks
from servers.hive_metastore.thrift_errors import thrift_errors

T = TypeVar("T")

_TYPE_NAMES = {getattr(hms.LockType, name): name for name in locks.LOCK_TYPES}
_TYPE_VALUES = {name: value for value, name in _TYPE_NAMES.items()}
_STATE_VALUES = {locks.ACQUIRED: hms.LockState.ACQUIRED, locks.WAITING: hms.LockState.WAITING}


def _no_transactions(txnid: int | None) -> None:
    if txnid:
        raise hms.NoSuchTxnException(message=f"No such transaction txnid:{txnid}")


def _component(component: hms.LockComponent) -> locks.LockComponentRequest:
    lock_type = _TYPE_NAMES.get(component.type)
    if lock_type is None:
        raise locks.InvalidLockRequest(f"unknown lock type {component.type}")
    level = component.level
    table = component.tablename if level != hms.LockLevel.DB else None
    partition = component.partitionname if level == hms.LockLevel.PARTITION else None
    return locks.LockComponentRequest(lock_type, component.dbname or "", table, partition)


def _response(status: locks.LockStatus) -> hms.LockResponse:
    return hms.LockResponse(lockid=status.lock_id, state=_STATE_VALUES[status.state])


def _millis(seconds: float | None) -> int:
    return 0 if seconds is None else int(seconds * 1000)


class LockCalls:
    """Mixed into the handler: needs `engine` and `lock_timeout` (seconds)."""

    engine: Engine
    autocommit: Engine  # PostgreSQL: connections in autocommit; SQLite: `engine`
    lock_timeout: float

    def _locked(self, work: Callable[[Connection], T]) -> T:
        return run_write(self.engine, work)

    def _one_statement(self, work: Callable[[Connection], T]) -> T:
        """A change of one statement, its own transaction (no BEGIN and COMMIT round trips
        on PostgreSQL)."""
        if self.autocommit is self.engine:
            return run_write(self.engine, work)

        def attempt() -> T:
            with self.autocommit.connect() as conn:
                return work(conn)

        return with_reconnect(self.autocommit, attempt)

    @thrift_errors
    def lock(self, rqst: hms.LockRequest) -> hms.LockResponse:
        _no_transactions(rqst.txnid)
        components = [_component(c) for c in rqst.component or []]
        status = self._locked(
            lambda conn: locks.request_lock(
                conn,
                components,
                rqst.user or "",
                rqst.hostname or "",
                rqst.agentInfo,
                self.lock_timeout,
            )
        )
        return _response(status)

    @thrift_errors
    def check_lock(self, rqst: hms.CheckLockRequest) -> hms.LockResponse:
        _no_transactions(rqst.txnid)
        lock_id = int(rqst.lockid or 0)
        status = self._locked(lambda conn: locks.check_lock(conn, lock_id, self.lock_timeout))
        return _response(status)

    @thrift_errors
    def unlock(self, rqst: hms.UnlockRequest) -> None:
        lock_id = int(rqst.lockid or 0)
        self._one_statement(lambda conn: locks.unlock(conn, lock_id))

    @thrift_errors
    def heartbeat(self, ids: hms.HeartbeatRequest) -> None:
        _no_transactions(ids.txnid)
        if ids.lockid:
            lock_id = int(ids.lockid)
            self._one_statement(lambda conn: locks.heartbeat(conn, lock_id, self.lock_timeout))

    @thrift_errors
    def show_locks(self, rqst: hms.ShowLocksRequest) -> hms.ShowLocksResponse:
        shown: list[locks.ShownLock] = run_read(
            self.engine,
            lambda conn: locks.show_locks(
                conn, rqst.dbname, rqst.tablename, rqst.partname, self.lock_timeout
            ),
        )
        return hms.ShowLocksResponse(locks=[_element(lock) for lock in shown])


def _element(lock: locks.ShownLock) -> Any:
    return hms.ShowLocksResponseElement(
        lockid=lock.lock_id,
        dbname=lock.database,
        tablename=lock.table,
        partname=lock.partition,
        state=_STATE_VALUES[lock.state],
        type=_TYPE_VALUES[lock.lock_type],
        txnid=0,
        lastheartbeat=_millis(lock.last_heartbeat),
        acquiredat=_millis(lock.acquired_at) if lock.acquired_at else None,
        user=lock.user,
        hostname=lock.host,
        heartbeatCount=0,
        agentInfo=lock.agent_info,
        blockedByExtId=lock.blocked_by,
        blockedByIntId=None,
        lockIdInternal=lock.position + 1,
    )
