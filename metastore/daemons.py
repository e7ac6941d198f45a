"""The daemons of a metastore as they report themselves (metastore.models.DaemonPresence).

Every `statlas daemon` writes its row at start and a heartbeat every HEARTBEAT seconds
(pruner/daemon/presence.py), saying whether it leads; a clean stop marks the row stopped.
A daemon whose heartbeat is older than SILENT_AFTER is listed `silent`: it died, hangs, or
cannot reach the database, and whatever it claimed (leadership) is no longer believed. Rows
silent or stopped for FORGET_AFTER are deleted by the next heartbeat of any daemon.

Leadership itself is decided by the leader lock (pruner/daemon/leader.py), never by these
rows: they are how the lock's holder is seen from outside it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from metastore.models import DaemonPresence, utcnow
from metastore.times import aware, utc_text

HEARTBEAT = dt.timedelta(seconds=5)
SILENT_AFTER = 3 * HEARTBEAT
FORGET_AFTER = dt.timedelta(days=1)

SERVING = "serving"
SILENT = "silent"
STOPPED = "stopped"

_daemons = DaemonPresence.__table__.c


@dataclass(frozen=True)
class DaemonIdentity:
    """What a daemon says of itself once, at start."""

    node: str  # "host:pid", unique among the daemons of a metastore
    host: str
    pid: int
    http_url: str
    thrift_port: int | None
    version: str
    started_at: dt.datetime


@dataclass(frozen=True)
class DaemonSeen:
    """A daemon as listed: its identity, last heartbeat and what it is believed to be."""

    identity: DaemonIdentity
    heartbeat_at: dt.datetime
    leader_since: dt.datetime | None
    stopped_at: dt.datetime | None
    state: str  # SERVING, SILENT or STOPPED

    @property
    def leading(self) -> bool:
        """Whether this daemon leads: it says so and its heartbeat is recent."""
        return self.state == SERVING and self.leader_since is not None

    def as_json(self) -> dict[str, Any]:
        identity = self.identity
        return {
            "node": identity.node,
            "host": identity.host,
            "pid": identity.pid,
            "url": identity.http_url,
            "thrift_port": identity.thrift_port,
            "version": identity.version,
            "started": utc_text(identity.started_at),
            "heartbeat": utc_text(self.heartbeat_at),
            "state": self.state,
            "leader": self.leading,
            "leader_since": None if self.leader_since is None else utc_text(self.leader_since),
            "stopped": None if self.stopped_at is None else utc_text(self.stopped_at),
        }


def beat(
    conn: Connection,
    identity: DaemonIdentity,
    leader_since: dt.datetime | None,
    now: dt.datetime | None = None,
) -> None:
    """Record that `identity` is serving at `now` (leading since `leader_since`, or not),
    and forget daemons silent or stopped for FORGET_AFTER."""
    now = now or utcnow()
    figures = {"heartbeat_at": now, "leader_since": leader_since, "stopped_at": None}
    updated = conn.execute(
        update(DaemonPresence).where(_daemons.node == identity.node).values(**figures)
    )
    if updated.rowcount == 0:
        conn.execute(
            insert(DaemonPresence).values(
                node=identity.node,
                host=identity.host,
                pid=identity.pid,
                http_url=identity.http_url,
                thrift_port=identity.thrift_port,
                version=identity.version,
                started_at=identity.started_at,
                **figures,
            )
        )
    conn.execute(delete(DaemonPresence).where(_daemons.heartbeat_at < now - FORGET_AFTER))


def stopped(conn: Connection, node: str, now: dt.datetime | None = None) -> None:
    """Record that `node` stopped cleanly (it leads no more)."""
    now = now or utcnow()
    conn.execute(
        update(DaemonPresence)
        .where(_daemons.node == node)
        .values(stopped_at=now, heartbeat_at=now, leader_since=None)
    )


def daemons(conn: Connection, now: dt.datetime | None = None) -> list[DaemonSeen]:
    """Every daemon heard from within FORGET_AFTER: the serving ones first, then the silent,
    then the stopped; each group by start, newest first."""
    now = now or utcnow()
    rows = conn.execute(
        select(DaemonPresence.__table__).where(_daemons.heartbeat_at >= now - FORGET_AFTER)
    ).all()
    seen = [_seen(row, now) for row in rows]
    order = {SERVING: 0, SILENT: 1, STOPPED: 2}
    return sorted(
        seen, key=lambda d: (order[d.state], -d.identity.started_at.timestamp(), d.identity.node)
    )


def listing_json(seen: list[DaemonSeen]) -> dict[str, Any]:
    """`seen` as GET /daemons and `statlas daemons --json` give it."""
    return {
        "heartbeat_seconds": HEARTBEAT.total_seconds(),
        "silent_after_seconds": SILENT_AFTER.total_seconds(),
        "leader": next((d.identity.node for d in seen if d.leading), None),
        "daemons": [d.as_json() for d in seen],
    }


def _seen(row: Any, now: dt.datetime) -> DaemonSeen:
    heartbeat = aware(row.heartbeat_at)
    stopped_at = None if row.stopped_at is None else aware(row.stopped_at)
    if stopped_at is not None:
        state = STOPPED
    elif now - heartbeat > SILENT_AFTER:
        state = SILENT
    else:
        state = SERVING
    return DaemonSeen(
        identity=DaemonIdentity(
            node=row.node,
            host=row.host,
            pid=row.pid,
            http_url=row.http_url,
            thrift_port=row.thrift_port,
            version=row.version,
            started_at=aware(row.started_at),
        ),
        heartbeat_at=heartbeat,
        leader_since=None if row.leader_since is None else aware(row.leader_since),
        stopped_at=stopped_at,
        state=state,
    )
