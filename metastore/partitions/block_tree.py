"""The tree of pre-merged blocks over partition ids (metastore.statistics.rollups): which block
covers which ids, which stored blocks cover a selection, and dropping the blocks over partitions
whose statistics go (in the same transaction, so blocks stay exact). A block at level
L >= 1, number b, covers partition ids [b x 8**L, (b + 1) x 8**L)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import Connection, delete, select, true, tuple_, update

from metastore.models import RollupBlock, RollupColumn

FANOUT = 8
MAX_LEVEL = 20  # 8**20 ids: more than any table's partitions


def levels_for(max_id: int) -> int:
    """The top level of a table whose largest partition id is `max_id`: the lowest level
    whose block 0 covers every id (at least 1)."""
    level = 1
    while FANOUT**level <= max_id and level < MAX_LEVEL:
        level += 1
    return level


def cover(
    selected: np.ndarray, stored: dict[tuple[int, int], int], top: int
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """The blocks (level, number) whose partitions are all in `selected` (sorted ids of
    partitions with statistics), largest first, and the selected ids no block covers.
    `stored` maps each stored block to its partition count."""
    remaining = np.asarray(selected, dtype=np.int64)
    blocks: list[tuple[int, int]] = []
    for level in range(top, 0, -1):
        if remaining.size == 0:
            break
        numbers = remaining // FANOUT**level
        unique, counts = np.unique(numbers, return_counts=True)
        kept = np.array(
            [stored.get((level, int(b)), -1) == c for b, c in zip(unique, counts, strict=True)],
            dtype=bool,
        )
        if kept.any():
            blocks += [(level, int(b)) for b in unique[kept]]
            remaining = remaining[~np.isin(numbers, unique[kept])]
    return blocks, remaining


def stored_blocks(conn: Connection, table_id: int) -> dict[tuple[int, int], int]:
    """Every stored block of the table with its partition count."""
    b = RollupBlock.__table__.c
    rows = conn.execute(select(b.level, b.block, b.partitions).where(b.table_id == table_id))
    return {(int(level), int(block)): int(count) for level, block, count in rows}


SAMPLE_HOLDING_LEVEL = 2
"""The level whose blocks keep their partitions' row samples in place of the partitions
(metastore.statistics.partition_samples): a block of it over partitions whose statistics go
is kept as a holder of the others' samples, its partition count 0 (no selection reads it
as a block), until the blocks are built again."""


def forget_blocks(conn: Connection, table_id: int, partition_ids: Sequence[int]) -> None:
    """Drop the blocks over these partitions (their statistics are dropped or replaced):
    until they are built again, selections read those partitions one by one (a block of
    SAMPLE_HOLDING_LEVEL stays as a holder of samples)."""
    if not len(partition_ids):
        return
    ids = np.unique(np.asarray(partition_ids, dtype=np.int64))
    pairs = [
        (level, int(block))
        for level in range(1, levels_for(int(ids[-1])) + 1)
        for block in np.unique(ids // FANOUT**level)
    ]
    pairs += [(level, 0) for level in range(levels_for(int(ids[-1])) + 1, MAX_LEVEL + 1)]
    for start in range(0, len(pairs), 500):
        chunk = pairs[start : start + 500]
        for model in (RollupColumn, RollupBlock):
            conn.execute(
                delete(model).where(
                    model.table_id == table_id,
                    tuple_(model.level, model.block).in_(chunk),
                    model.level != SAMPLE_HOLDING_LEVEL if model is RollupBlock else true(),
                )
            )
        conn.execute(
            update(RollupBlock)
            .where(
                RollupBlock.table_id == table_id,
                tuple_(RollupBlock.level, RollupBlock.block).in_(chunk),
                RollupBlock.level == SAMPLE_HOLDING_LEVEL,
            )
            .values(partitions=0)
        )
