"""The daemons of a metastore (metastore.daemons), on SQLite and PostgreSQL: a heartbeat
lists a daemon as serving (leading or not), a missed one as silent (its leadership no longer
believed), a clean stop as stopped; a day's silence is forgotten."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from metastore import Metastore, daemons
from metastore.daemons import FORGET_AFTER, HEARTBEAT, SILENT_AFTER, DaemonIdentity
from metastore.engine import run_read, run_write
from metastore.models import DaemonPresence

T0 = dt.datetime(2026, 11, 29, 12, 0, 0, tzinfo=dt.UTC)


def identity(node: str, started: dt.datetime = T0) -> DaemonIdentity:
    host, pid = node.split(":")
    return DaemonIdentity(
        node=node,
        host=host,
        pid=int(pid),
        http_url=f"http://{host}:8080",
        thrift_port=9083,
        version="1.2.3",
        started_at=started,
    )


def beat(ms: Metastore, who: DaemonIdentity, at: dt.datetime, since: dt.datetime | None) -> None:
    run_write(ms.ready(), lambda conn: daemons.beat(conn, who, since, now=at))


def seen(ms: Metastore, at: dt.datetime) -> list[daemons.DaemonSeen]:
    return run_read(ms.ready(), lambda conn: daemons.daemons(conn, now=at))


def states(ms: Metastore, at: dt.datetime) -> list[tuple[str, str, bool]]:
    return [(d.identity.node, d.state, d.leading) for d in seen(ms, at)]


def test_heartbeats_say_who_serves_and_who_leads(metastore: Metastore) -> None:
    leader, standby = identity("a:1"), identity("b:2", T0 + dt.timedelta(seconds=1))
    beat(metastore, leader, T0, since=T0)
    beat(metastore, standby, T0 + dt.timedelta(seconds=1), since=None)
    now = T0 + dt.timedelta(seconds=2)
    # serving, the newest start first
    assert states(metastore, now) == [("b:2", "serving", False), ("a:1", "serving", True)]
    listing = daemons.listing_json(seen(metastore, now))
    assert listing["leader"] == "a:1"
    a = listing["daemons"][1]
    assert a == {
        "node": "a:1",
        "host": "a",
        "pid": 1,
        "url": "http://a:8080",
        "thrift_port": 9083,
        "version": "1.2.3",
        "started": "2026-11-29T12:00:00Z",
        "heartbeat": "2026-11-29T12:00:00Z",
        "state": "serving",
        "leader": True,
        "leader_since": "2026-11-29T12:00:00Z",
        "stopped": None,
    }

    # the leader misses its beats: silent, and no longer believed to lead
    late = T0 + SILENT_AFTER + dt.timedelta(seconds=2)
    beat(metastore, standby, late - dt.timedelta(seconds=1), since=None)
    assert states(metastore, late) == [("b:2", "serving", False), ("a:1", "silent", False)]
    assert daemons.listing_json(seen(metastore, late))["leader"] is None

    # the standby takes over; the old leader's row keeps its start, its heartbeat moves
    beat(metastore, standby, late, since=late)
    assert states(metastore, late) == [("b:2", "serving", True), ("a:1", "silent", False)]
    again = T0 + dt.timedelta(minutes=5)
    beat(metastore, leader, again, since=None)
    back = {d.identity.node: d for d in seen(metastore, again)}["a:1"]
    assert (back.state, back.identity.started_at, back.heartbeat_at) == ("serving", T0, again)


def test_a_clean_stop_and_a_days_silence(metastore: Metastore) -> None:
    first, second = identity("a:1"), identity("b:2")
    beat(metastore, first, T0, since=T0)
    beat(metastore, second, T0, since=None)
    stop = T0 + HEARTBEAT
    run_write(metastore.ready(), lambda conn: daemons.stopped(conn, "a:1", now=stop))
    listed = {d.identity.node: d for d in seen(metastore, stop)}
    assert (listed["a:1"].state, listed["a:1"].leading, listed["a:1"].stopped_at) == (
        "stopped",
        False,
        stop,
    )
    assert listed["a:1"].leader_since is None

    # a day later, the stopped one is forgotten by the next heartbeat of any daemon
    later = stop + FORGET_AFTER + dt.timedelta(seconds=1)
    assert [d.identity.node for d in seen(metastore, later)] == []  # neither heard from
    beat(metastore, second, later, since=later)
    assert states(metastore, later) == [("b:2", "serving", True)]
    assert run_read(
        metastore.ready(),
        lambda conn: conn.execute(select(DaemonPresence.node)).scalars().all(),
    ) == ["b:2"]
