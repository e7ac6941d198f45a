"""The life cycle of a collection run (metastore.models.CollectionRun), written once for
`statlas collect` (collectors.collect) and the daemon's scheduled refreshes
(pruner.daemon.scheduler).

A run is `start`ed as RUNNING (refused while another run of the table is running, unless
that one is older than STALE_RUN: it is then recorded as FAILED, abandoned); it ends
`succeed`ed, in the transaction that writes its statistics, or `fail`ed with why. Runs of
a daemon that died or lost leadership are `abandon`ed by the next leader.
"""

from __future__ import annotations

import datetime as dt
from typing import Protocol

from sqlalchemy import Connection, insert, select, update

from metastore.errors import StatlasError
from metastore.models import CollectionRun, utcnow

RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"

STALE_RUN = dt.timedelta(hours=6)
"""A run still RUNNING after this long is taken for dead: it no longer blocks a new one."""

ABANDONED_STALE = "abandoned: no end recorded"
ABANDONED_BY_DAEMON = "abandoned: the daemon running it died or lost leadership"


class CollectionRunning(StatlasError):
    """A collection of the table is running already."""


class RunCounts(Protocol):
    """What a run records of its collection (collectors.collect.CollectionReport)."""

    @property
    def partitions_scanned(self) -> int: ...

    @property
    def partitions_skipped(self) -> int: ...

    @property
    def partitions_removed(self) -> int: ...

    @property
    def rows(self) -> int: ...


_runs = CollectionRun.__table__.c


def start(conn: Connection, table_id: int, table: str) -> int:
    """A new RUNNING run of the table (`table`: its name, for the error); its id.
    CollectionRunning when a run of the table started less than STALE_RUN ago is still
    running; older ones are recorded as FAILED first."""
    running = conn.execute(
        select(_runs.id, _runs.started_at).where(
            _runs.table_id == table_id, _runs.status == RUNNING
        )
    ).all()
    now = utcnow()
    for run_id, started in running:
        started = started if started.tzinfo else started.replace(tzinfo=dt.UTC)
        if now - started < STALE_RUN:
            raise CollectionRunning(
                f"a collection of {table} is already running (run {run_id}, started "
                f"{started:%Y-%m-%d %H:%M:%S} UTC)"
            )
        conn.execute(
            update(CollectionRun)
            .where(_runs.id == run_id)
            .values(status=FAILED, finished_at=now, error=ABANDONED_STALE)
        )
    result = conn.execute(
        insert(CollectionRun).values(
            table_id=table_id,
            started_at=now,
            status=RUNNING,
            partitions_scanned=0,
            partitions_skipped=0,
            partitions_removed=0,
            rows=0,
        )
    )
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])


def succeed(conn: Connection, run_id: int, counts: RunCounts) -> None:
    """Record the run as SUCCEEDED with what it collected."""
    _end(conn, run_id, SUCCEEDED, counts, None)


def fail(conn: Connection, run_id: int, counts: RunCounts, error: str) -> None:
    """Record the run as FAILED, with what it got through and `error`."""
    _end(conn, run_id, FAILED, counts, error)


def abandon(conn: Connection, table_id: int, started_before: dt.datetime) -> int:
    """Record the table's runs still RUNNING that started before `started_before` (when
    this daemon began to lead) as FAILED: their daemon died or lost leadership. How many."""
    result = conn.execute(
        update(CollectionRun)
        .where(
            _runs.table_id == table_id,
            _runs.status == RUNNING,
            _runs.started_at < started_before,
        )
        .values(status=FAILED, finished_at=utcnow(), error=ABANDONED_BY_DAEMON)
    )
    return int(result.rowcount or 0)


def _end(conn: Connection, run_id: int, status: str, counts: RunCounts, error: str | None) -> None:
    conn.execute(
        update(CollectionRun)
        .where(_runs.id == run_id)
        .values(
            status=status,
            finished_at=utcnow(),
            partitions_scanned=counts.partitions_scanned,
            partitions_skipped=counts.partitions_skipped,
            partitions_removed=counts.partitions_removed,
            rows=counts.rows,
            error=error,
        )
    )
