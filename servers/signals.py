"""SIGTERM and SIGINT in the daemon: the first stops the server, a second hurries."""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

log = logging.getLogger("statlas.daemon")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Stoppable(Protocol):
    should_exit: bool  # uvicorn.Server's: stop taking requests, finish those under way


@contextmanager
def stop_on_signals(server: Stoppable, hurry: Callable[[], None]) -> Iterator[None]:
    """While inside: SIGTERM or SIGINT asks `server` to exit; a second such signal also
    calls `hurry` (the running jobs are abandoned at once). The previous handlers are put
    back on the way out."""
    stopping = False

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            log.warning("second %s: abandoning running jobs now", signal.Signals(signum).name)
            hurry()
        stopping = True
        server.should_exit = True

    # uvicorn takes SIGTERM and SIGINT over while it serves and, once it has stopped, hands
    # the signal it got back to these handlers (instead of dying of it)
    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
