"""A daemon's heartbeat in the metastore (metastore/daemons.py): a thread that writes, every
HEARTBEAT, that this daemon serves and whether it leads, and marks it stopped at a clean
stop. A database that cannot be reached costs a missed beat (logged once per outage), never
the daemon: the next beat tries again."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable

from sqlalchemy import Engine

from metastore import daemons
from metastore.daemons import HEARTBEAT, DaemonIdentity
from metastore.engine import run_write

log = logging.getLogger("statlas.presence")


class Presence:
    """Reports `identity` on `engine` every `every` seconds; `leader_since()` says since
    when this daemon leads (None: it does not)."""

    def __init__(
        self,
        engine: Engine,
        identity: DaemonIdentity,
        leader_since: Callable[[], dt.datetime | None],
        *,
        every: float = HEARTBEAT.total_seconds(),
    ) -> None:
        self.engine, self.identity, self.leader_since = engine, identity, leader_since
        self.every = every
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._failing = False
        self._thread = threading.Thread(target=self._run, name="presence", daemon=True)

    def start(self) -> Presence:
        self.beat()  # listed before the daemon answers its first request
        self._thread.start()
        return self

    def wakeup(self) -> None:
        """Beat now (leadership changed), not at the next period."""
        self._wake.set()

    def beat(self) -> None:
        try:
            run_write(
                self.engine,
                lambda conn: daemons.beat(conn, self.identity, self.leader_since()),
            )
        except Exception as error:
            if not self._failing:
                log.warning("cannot record the heartbeat: %s", str(error).splitlines()[0])
            self._failing = True
            return
        if self._failing:
            log.info("heartbeat recorded again")
        self._failing = False

    def stop(self) -> None:
        """Stop beating and record the clean stop."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(10)
        try:
            run_write(self.engine, lambda conn: daemons.stopped(conn, self.identity.node))
        except Exception as error:
            log.warning("cannot record the stop: %s", str(error).splitlines()[0])

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.every)
            self._wake.clear()
            if not self._stop.is_set():
                self.beat()
