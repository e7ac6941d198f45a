"""Where a partition's row sample is kept (docs/design.md#row-samples): the blocks of some
levels keep their partitions' samples pooled (`samples_kept`), each such level the whole
table's sample again. A partition's own sample is kept once: in its partition_stats row until
the block of HOLDING_LEVEL over it pools it, then in that block alone, whose rows carry the
partition's id and each row's weight (the partition's row keeps its sample size and leaves
its sample empty).

- `read_samples`: partitions' samples wherever they are kept;
- `release`: after blocks of HOLDING_LEVEL that pool every row of their partitions are
  stored, their partitions' own copies are dropped;
- `spill`: before such blocks are dropped, the samples only they keep go back to their
  partitions' rows (`stored_form`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import pyarrow as pa
from sqlalchemy import ColumnElement, Connection, and_, bindparam, or_, select, update

from metastore.engine import note_read
from metastore.models import PartitionStats, RollupBlock
from metastore.partitions.block_tree import FANOUT, SAMPLE_HOLDING_LEVEL
from metastore.statistics.samples import (
    FORCED,
    PARTITION_ID,
    WEIGHT,
    encode_table,
    partition_weights,
    sample_table,
)


def samples_kept(level: int) -> bool:
    """Whether the blocks of `level` keep their pooled sample: levels 2, 5, 8, ...
    (docs/design.md#roll-ups). Each level that keeps them holds the whole table's sample
    again; a block of another level is read as its blocks of the nearest level below that
    keeps them (sampled_level), a block of level 1 as its eight partitions."""
    return level % 3 == 2


HOLDING_LEVEL = SAMPLE_HOLDING_LEVEL
"""The lowest level whose blocks keep pooled samples: the one that keeps its partitions'
(a block of it dropped by forget_blocks stays, as their holder, until built again)."""


def sampled_level(level: int) -> int:
    """The nearest level at or below `level` (1 and up) whose blocks keep their pooled sample
    (samples_kept), 0 for the partitions themselves: a block of `level` is read as its
    FANOUT ** (level - that) blocks, or partitions, there."""
    kept = level
    while kept > 0 and not samples_kept(kept):
        kept -= 1
    return kept


def partition_sample(pid: int, rows: int, size: int | None, blob: bytes | None) -> pa.Table | None:
    """One partition's stored sample with its id and the weight of its rows (the partition's
    rows per sampled row) as columns; None without a sample."""
    if blob is None or not size:
        return None
    return with_partition_columns(sample_table(bytes(blob)), pid, rows)


def with_partition_columns(table: pa.Table, pid: int, rows: int) -> pa.Table:
    """A partition of `rows` rows' sampled rows with its id and each row's weight (the rows
    it stands for: samples.partition_weights) as columns; a forced row's mark is dropped."""
    weights = partition_weights(table, rows)
    if FORCED in table.column_names:
        table = table.drop_columns([FORCED])
    return table.append_column(PARTITION_ID, pa.array(np.full(table.num_rows, pid))).append_column(
        WEIGHT, pa.array(weights)
    )


def stored_form(table: pa.Table) -> pa.Table:
    """A partition's rows as a pooled sample holds them (with PARTITION_ID and WEIGHT) in
    the form its own row stores them: where their weights differ, the rows of weight one
    marked FORCED (a forced row stands for itself; the drawn rows share the rest), which
    with_partition_columns weighs back alike."""
    weights = np.asarray(table.column(WEIGHT).to_numpy(zero_copy_only=False))
    table = table.drop_columns([PARTITION_ID, WEIGHT])
    if weights.size and (weights != weights[0]).any():
        table = table.append_column(FORCED, pa.array((weights == 1.0).astype(np.float64)))
    return table


def _holding(numbers: Iterable[int]) -> ColumnElement[bool]:
    """The blocks of HOLDING_LEVEL numbered `numbers`."""
    return and_(RollupBlock.level == HOLDING_LEVEL, RollupBlock.block.in_(sorted(set(numbers))))


def held_samples(conn: Connection, table_id: int, ids: Sequence[int]) -> dict[int, pa.Table]:
    """The samples (with PARTITION_ID and WEIGHT) of the partitions `ids`, whose rows only
    their blocks of HOLDING_LEVEL keep, by id."""
    if not len(ids):
        return {}
    span = FANOUT**HOLDING_LEVEL
    wanted = np.unique(np.asarray(ids, dtype=np.int64))
    b = RollupBlock.__table__.c
    found: dict[int, pa.Table] = {}
    numbers = np.unique(wanted // span).tolist()
    for start in range(0, len(numbers), 500):
        rows = conn.execute(
            select(b.sample).where(
                b.table_id == table_id,
                _holding(numbers[start : start + 500]),
                b.sample.is_not(None),
            )
        )
        for (blob,) in rows:
            note_read(conn, len(blob))
            found.update(split(sample_table(bytes(blob)), wanted))
    return found


def split(pooled: pa.Table, ids: np.ndarray) -> dict[int, pa.Table]:
    """The rows of each of the partitions `ids` that a pooled sample holds, by id."""
    pids = np.asarray(pooled.column(PARTITION_ID).to_numpy(zero_copy_only=False))
    return {
        int(pid): pooled.filter(pa.array(pids == pid))
        for pid in np.intersect1d(np.unique(pids), ids).tolist()
    }


def read_samples(
    conn: Connection, table_id: int, where: ColumnElement[bool]
) -> dict[int, pa.Table]:
    """The samples (with PARTITION_ID and WEIGHT) of the table's partitions that `where`
    (over partition_stats) selects and that have one, by id: their own, or their block's."""
    p = PartitionStats.__table__.c
    rows = conn.execute(
        select(p.partition_id, p.row_count, p.sample_size, p.sample).where(
            p.table_id == table_id, where, p.sample_size > 0
        )
    )
    samples: dict[int, pa.Table] = {}
    held = []
    for pid, count, size, blob in rows:
        if blob is None:
            held.append(int(pid))
            continue
        note_read(conn, len(blob))
        table = partition_sample(int(pid), int(count), size, blob)
        if table is not None:
            samples[int(pid)] = table
    samples.update(held_samples(conn, table_id, held))
    return samples


def _in_blocks(numbers: Sequence[int]) -> ColumnElement[bool]:
    """partition_stats rows under the blocks of HOLDING_LEVEL numbered `numbers`."""
    span = FANOUT**HOLDING_LEVEL
    p = PartitionStats.__table__.c
    return or_(
        *(and_(p.partition_id >= n * span, p.partition_id < (n + 1) * span) for n in numbers)
    )


def release(
    conn: Connection,
    table_id: int,
    *,
    numbers: Sequence[int] = (),
    ids: Sequence[int] = (),
) -> None:
    """Drop the partitions' own samples that just stored blocks of HOLDING_LEVEL pool as
    they are: those of every partition under the blocks `numbers`, and of the partitions
    `ids`."""
    p = PartitionStats.__table__.c
    conditions = [_in_blocks(numbers[start : start + 100]) for start in range(0, len(numbers), 100)]
    conditions += [
        p.partition_id.in_(list(ids[start : start + 500])) for start in range(0, len(ids), 500)
    ]
    for condition in conditions:
        conn.execute(
            update(PartitionStats)
            .where(p.table_id == table_id, condition, p.sample.is_not(None), p.sample_size > 0)
            .values(sample=None)
        )


def spill(
    conn: Connection,
    table_id: int,
    pairs: Iterable[tuple[int, int]],
    going: AbstractSet[int] = frozenset(),
) -> None:
    """Before the blocks `pairs` (level, number) are dropped: the samples that only those of
    HOLDING_LEVEL keep written back to their partitions' rows (but to those of `going`,
    whose statistics go too)."""
    numbers = sorted({n for level, n in pairs if level == HOLDING_LEVEL})
    if not numbers:
        return
    p = PartitionStats.__table__.c
    held: list[int] = []
    for start in range(0, len(numbers), 100):
        held += [
            int(pid)
            for (pid,) in conn.execute(
                select(p.partition_id).where(
                    p.table_id == table_id,
                    _in_blocks(numbers[start : start + 100]),
                    p.sample.is_(None),
                    p.sample_size > 0,
                )
            )
            if int(pid) not in going
        ]
    samples = held_samples(conn, table_id, held)
    if not samples:
        return
    rows: list[dict[str, Any]] = [
        {"t": table_id, "pid": pid, "blob": encode_table(stored_form(table))}
        for pid, table in samples.items()
    ]
    conn.execute(
        update(PartitionStats)
        .where(p.table_id == bindparam("t"), p.partition_id == bindparam("pid"))
        .values(sample=bindparam("blob")),
        rows,
    )


def restore(conn: Connection, table_id: int, samples: Mapping[int, bytes]) -> None:
    """Write the stored samples `samples` (by partition id) into their partitions' rows,
    written without them on the expectation that their block would hold them (a
    collection's, where the block could not: release)."""
    if not samples:
        return
    p = PartitionStats.__table__.c
    conn.execute(
        update(PartitionStats)
        .where(p.table_id == bindparam("t"), p.partition_id == bindparam("pid"))
        .values(sample=bindparam("blob")),
        [{"t": table_id, "pid": pid, "blob": blob} for pid, blob in samples.items()],
    )
