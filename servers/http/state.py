"""What the routes of one app share: the metastore, Spark, and the threads lookups run in."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from sqlalchemy import Engine

from metastore import Metastore
from servers.http.spark import LazySpark

LOOKUP_THREADS = 8  # most lookups one server process runs at once (fewer with a smaller pool)


@dataclass
class Service:
    """What the routes share: the metastore (one engine), Spark, and the lock that runs one
    pruning at a time (its temporary views and settings belong to the one session)."""

    metastore: Metastore
    spark: LazySpark
    prune_lock: threading.Lock = field(default_factory=threading.Lock)
    _lookup_threads: ThreadPoolExecutor | None = None
    _threads_lock: threading.Lock = field(default_factory=threading.Lock)

    def lookup_threads(self) -> ThreadPoolExecutor:
        """The threads lookups run in: as many as the engine's pool keeps open (its
        pool_size, at most LOOKUP_THREADS), so that lookups never open a connection beyond
        the pool only to close it again after one statement, as FastAPI's thread pool of 40
        would."""
        with self._threads_lock:
            if self._lookup_threads is None:
                size = getattr(self.metastore.engine.pool, "size", lambda: LOOKUP_THREADS)()
                self._lookup_threads = ThreadPoolExecutor(
                    max(1, min(size, LOOKUP_THREADS)), thread_name_prefix="statlas-lookup"
                )
            return self._lookup_threads

    def close(self) -> None:
        """Stop the lookup threads and close the pool's connections (the server stops)."""
        with self._threads_lock:
            threads, self._lookup_threads = self._lookup_threads, None
        if threads is not None:
            threads.shutdown(wait=True)
        self.metastore.dispose()

    def engine(self) -> Engine:
        """The engine, once the schema is known to be at head (checked on first use, so a
        daemon may start before its database)."""
        return self.metastore.ready()
