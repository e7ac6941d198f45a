"""The daemon's heartbeat thread (pruner.daemon.presence) on SQLite and PostgreSQL: it lists
the daemon at start, records a change of leadership when woken, beats on, and records a
clean stop."""

from __future__ import annotations

import datetime as dt
import time

from metastore import Metastore
from metastore.models import utcnow
from pruner.daemon.presence import Presence
from tests.metastore.test_daemons import identity, seen, states


def test_presence_beats_and_records_its_stop(metastore: Metastore) -> None:
    leading: list[dt.datetime | None] = [None]
    me = identity("host:42", utcnow())
    presence = Presence(metastore.ready(), me, lambda: leading[0], every=0.05).start()
    try:
        assert states(metastore, utcnow()) == [("host:42", "serving", False)]
        leading[0] = utcnow()
        presence.wakeup()
        deadline = utcnow() + dt.timedelta(seconds=10)
        while not seen(metastore, utcnow())[0].leading:
            assert utcnow() < deadline, "the leadership was never recorded"
            time.sleep(0.01)
        first = seen(metastore, utcnow())[0].heartbeat_at
        while seen(metastore, utcnow())[0].heartbeat_at == first:
            assert utcnow() < deadline, "no second heartbeat"
            time.sleep(0.01)
    finally:
        presence.stop()
    assert states(metastore, utcnow()) == [("host:42", "stopped", False)]
