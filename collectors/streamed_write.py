"""A collection's write into PostgreSQL, streamed while its scan still runs: the write's
transaction is opened before the scan's results arrive, the partitions' old statistics
are dropped in it, and each batch of partitions the scan returns is copied in on one
thread (the server stores hundreds of MB of sketches while the executors still scan,
instead of after them). The rest of the write (partitions the scan returned no row for,
the pre-merged blocks, the run's record) then runs in the same transaction and commits:
still one all-or-nothing write (docs/design.md#collection).

Any failure while streaming (the connection lost, the database restarted) rolls the
transaction back and the caller writes everything again the ordinary way, from what the
scan returned, which it keeps: nothing is half-written and nothing is lost. A scan that
fails rolls it back too: the old statistics stay. PostgreSQL only: its row locks hold
back only writers of this table's statistics while the scan runs, where SQLite's one
write lock would hold back every writer of the metastore."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from sqlalchemy import Connection, Engine, RootTransaction

from metastore.bulk_insert import bulk_insert
from metastore.models import ColumnStats, PartitionStats

log = logging.getLogger(__name__)

BATCH_PARTITIONS = 64  # partitions whose rows one COPY takes


class StreamedWrite:
    """Opens the write's transaction (`begin(conn)` runs first in it: dropping the old
    statistics), copies the partitions handed to `add` in batches on one thread, and
    `finish`es the write in the same transaction. Which partitions went in: `written`."""

    def __init__(self, engine: Engine, begin: Callable[[Connection], None]) -> None:
        self._engine = engine
        self._conn: Connection | None = None
        self._transaction: RootTransaction | None = None
        self._failed = False
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statlas-write")
        self._futures: list[Future[None]] = [self._pool.submit(self._begin, begin)]
        self._partition_rows: list[Mapping[str, Any]] = []
        self._column_rows: list[Mapping[str, Any]] = []
        self._batch: list[int] = []
        self.written: set[int] = set()  # partition ids whose rows are in (once finished)

    def add(
        self, pid: int, partition_row: Mapping[str, Any], column_rows: Sequence[Mapping[str, Any]]
    ) -> None:
        """One partition's rows, copied in with its batch."""
        self._partition_rows.append(partition_row)
        self._column_rows += column_rows
        self._batch.append(pid)
        if len(self._batch) >= BATCH_PARTITIONS:
            self._send()

    def finish(self, rest: Callable[[Connection], None]) -> bool:
        """Copy the last batch, run `rest` in the transaction and commit; False (everything
        rolled back) when streaming or `rest` failed: the caller writes it all again."""
        self._send()
        for future in self._futures:
            future.result()
        if self._failed or self._conn is None or self._transaction is None:
            self.close()
            return False
        try:
            rest(self._conn)
            self._transaction.commit()
        except Exception as error:  # written again by the caller, which reports its errors
            log.warning("the streamed write failed, writing again: %s", error)
            self.close()
            return False
        self.close()
        return True

    def close(self) -> None:
        """Roll back what is not committed and let the connection go."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._conn is not None:
            self._conn.close()  # rolls back an open transaction
            self._conn = None

    def _send(self) -> None:
        if self._batch:
            batch = (self._batch, self._partition_rows, self._column_rows)
            self._futures.append(self._pool.submit(self._insert, *batch))
            self._batch, self._partition_rows, self._column_rows = [], [], []

    def _begin(self, begin: Callable[[Connection], None]) -> None:
        try:
            self._conn = self._engine.connect()
            self._transaction = self._conn.begin()
            begin(self._conn)
        except Exception as error:
            self._fail(error)

    def _insert(
        self,
        ids: list[int],
        partition_rows: list[Mapping[str, Any]],
        column_rows: list[Mapping[str, Any]],
    ) -> None:
        if self._failed or self._conn is None:
            return
        try:
            bulk_insert(self._conn, PartitionStats, partition_rows)
            bulk_insert(self._conn, ColumnStats, column_rows)
            self.written.update(ids)
        except Exception as error:
            self._fail(error)

    def _fail(self, error: Exception) -> None:
        log.warning("streaming the write failed, writing after the scan: %s", error)
        self._failed = True
