"""The daemon's one SparkSession for /prune, started on first use."""

from __future__ import annotations

import threading
from typing import Any


class LazySpark:
    """The daemon's one SparkSession, started on first use (the first /prune that gets as
    far as collecting values), never at import or startup. Attribute access is passed on
    to the session, so it can stand wherever pruner.prune wants a session."""

    def __init__(self, master: str | None) -> None:
        self._master = master
        self._session: Any = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self._session is not None

    def session(self) -> Any:
        with self._lock:
            if self._session is None:
                from collectors.spark_session import spark_session

                self._session = spark_session(self._master)
            return self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session(), name)
