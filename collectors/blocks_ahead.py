"""A full collection's level-1 pre-merged blocks (metastore.rollups), built while its scan
still runs: each block as soon as the scan has returned every partition in its range, on
one thread beside the driver's wait for the scan's jobs. The write then stores them as
they are (refresh_blocks checks that each merges exactly the partitions with statistics in
its range) instead of merging every partition's sketches after the scan, on one core
while the executors' cores idle (docs/design.md#roll-ups)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor

from metastore.rollups import FANOUT, BuiltBlock, PartitionPiece, leaf_block


class BlocksAhead:
    """Takes the scan's partitions one by one (`add`) and builds each level-1 block whose
    partitions have all arrived; `built()` waits for them. Partitions the scan returns no
    row for never arrive: their blocks are left to the write."""

    def __init__(
        self, table_id: int, ids: Mapping[Hashable, int], column_types: dict[str, str]
    ) -> None:
        self._table_id, self._types, self._ids = table_id, column_types, ids
        self._waiting: dict[int, set[int]] = {}  # block number -> ids not yet returned
        for pid in ids.values():
            self._waiting.setdefault(pid // FANOUT, set()).add(pid)
        self._pieces: dict[int, dict[int, PartitionPiece]] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statlas-blocks")
        self._futures: dict[int, Future[BuiltBlock]] = {}

    def add(self, values: Hashable, piece: PartitionPiece) -> None:
        """One partition the scan returned, by its key values."""
        pid = self._ids.get(values)
        if pid is None:
            return
        number = pid // FANOUT
        waiting = self._waiting.get(number)
        if waiting is None or pid not in waiting:
            return
        waiting.discard(pid)
        self._pieces.setdefault(number, {})[pid] = piece
        if not waiting:
            pieces = self._pieces.pop(number)
            self._futures[number] = self._pool.submit(
                leaf_block, self._table_id, pieces, self._types
            )

    def built(self) -> dict[int, BuiltBlock]:
        """The blocks built, by number (their errors raised here)."""
        return {number: future.result() for number, future in self._futures.items()}

    def close(self) -> None:
        """Stop: blocks not started are dropped."""
        self._pool.shutdown(wait=True, cancel_futures=True)
