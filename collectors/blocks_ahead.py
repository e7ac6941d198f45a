"""A full collection's pre-merged blocks (metastore.statistics.rollups), built while its scan still
runs: each level-1 block as soon as the scan has returned every partition in its range,
and each block above as soon as its children are built, on one thread beside the driver's
wait for the scan's jobs. The write then stores them as they are (refresh_blocks checks
that each merges exactly the partitions with statistics in its range) instead of merging
every partition's sketches after the scan, on one core while the executors' cores idle,
and reading the blocks of each level back to build the next (docs/design.md#roll-ups)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace

from metastore.partitions.block_tree import FANOUT, levels_for
from metastore.statistics.rollups import BuiltBlock, LeafMerge, PartitionPiece, upper_block


class BlocksAhead:
    """Takes the scan's partitions one by one (`add`) and builds each level-1 block whose
    partitions have all arrived, then each block above whose children are all built;
    `built()` waits for them. Partitions the scan returns no row for never arrive: their
    blocks, and the blocks above them, are left to the write."""

    def __init__(
        self, table_id: int, ids: Mapping[Hashable, int], column_types: dict[str, str]
    ) -> None:
        self._table_id, self._types, self._ids = table_id, column_types, ids
        self._waiting: dict[int, set[int]] = {}  # level-1 block number -> ids not returned
        for pid in ids.values():
            self._waiting.setdefault(pid // FANOUT, set()).add(pid)
        # (only the builder's thread reads and writes these): level-1 block number -> its
        # partitions that arrived, merged
        self._arrived: dict[int, LeafMerge] = {}
        # the blocks above level 1 (only the builder's thread reads and writes these):
        # (level, number) -> its children's numbers, and those not yet built
        self._top = levels_for(max(ids.values(), default=0))
        self._children: dict[tuple[int, int], list[int]] = {}
        numbers = sorted(self._waiting)
        for level in range(2, self._top + 1):
            for number in numbers:
                self._children.setdefault((level, number // FANOUT), []).append(number)
            numbers = sorted({number // FANOUT for number in numbers})
        self._unbuilt = {key: set(numbers) for key, numbers in self._children.items()}
        self._built: dict[tuple[int, int], BuiltBlock] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="statlas-blocks")
        self._futures: list[Future[None]] = []

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
        self._futures.append(self._pool.submit(self._arrive, number, pid, piece))
        if not waiting:
            self._futures.append(self._pool.submit(self._build, number))

    def _arrive(self, number: int, pid: int, piece: PartitionPiece) -> None:
        """On the builder's thread: the partition merged into its block now (partitions
        arrive in the order of the scan's tasks, not of their blocks: most blocks' last
        partition comes late in the scan, and only their results are left then)."""
        merge = self._arrived.get(number)
        if merge is None:
            merge = self._arrived[number] = LeafMerge(self._types, len(self._ids))
        merge.add(pid, piece)

    def _build(self, number: int) -> None:
        """On the builder's thread: the level-1 block `number`, then each block above it
        whose children are now all built."""
        self._built[(1, number)] = self._arrived.pop(number).block(self._table_id)
        for level in range(2, self._top + 1):
            parent = (level, number // FANOUT)
            unbuilt = self._unbuilt[parent]
            unbuilt.discard(number)
            if unbuilt:
                return
            keys = [(level - 1, child) for child in self._children[parent]]
            children = [self._built[key] for key in keys]
            self._built[parent] = upper_block(
                self._table_id, level, children, self._types, len(self._ids)
            )
            for key, child in zip(keys, children, strict=True):  # their merged forms freed
                self._built[key] = replace(child, child=None)
            number = parent[1]

    def built(self) -> dict[tuple[int, int], BuiltBlock]:
        """The blocks built, by (level, number) (their errors raised here)."""
        for future in self._futures:
            future.result()
        return dict(self._built)

    def close(self) -> None:
        """Stop: blocks not started are dropped."""
        self._pool.shutdown(wait=True, cancel_futures=True)
