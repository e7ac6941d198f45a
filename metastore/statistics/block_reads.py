"""A selection of partitions' statistics read through the pre-merged blocks
(metastore.statistics.rollups builds them): the partitions a predicate selects, covered by
the stored blocks wholly selected (`select_partitions`); the columns' pieces and the pooled
samples of blocks and partitions over that selection, each in one statement
(`column_pieces`, `sample_pieces`); a selection's pooled sample (`table_sample`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Engine,
    Integer,
    LargeBinary,
    and_,
    cast,
    false,
    literal,
    null,
    or_,
    select,
    union_all,
)

from metastore.catalog.lookup import PartitionQuery, build_predicate
from metastore.catalog.tables import get_table
from metastore.engine import note_read, run_read
from metastore.models import ColumnStats, PartitionStats, RollupBlock, RollupColumn
from metastore.partitions.block_tree import FANOUT, cover
from metastore.partitions.store import PartitionStore
from metastore.statistics.column_pieces import ColumnPiece, piece_of_block, piece_of_partition
from metastore.statistics.forced_keys import read_forced_keys
from metastore.statistics.partition_samples import (
    HOLDING_LEVEL,
    partition_sample,
    sampled_level,
    split,
)
from metastore.statistics.samples import Sample, pool, sample_table


def block_condition(
    model: type[RollupBlock] | type[RollupColumn], blocks: list[tuple[int, int]]
) -> ColumnElement[bool]:
    """`(level, block) IN blocks`, grouped by level."""
    by_level: dict[int, list[int]] = {}
    for level, number in blocks:
        by_level.setdefault(level, []).append(number)
    return or_(
        false(),
        *(
            and_(model.level == level, model.block.in_(numbers))
            for level, numbers in sorted(by_level.items())
        ),
    )


@dataclass(frozen=True)
class Selection:
    """Selected partitions with statistics, as the blocks and partitions to read."""

    ids: np.ndarray  # sorted
    rows: int  # their rows, all told
    blocks: list[tuple[int, int]]
    leaves: np.ndarray  # ids no block covers
    keys: tuple[np.ndarray, list[list[Any]]]  # ids and each key's values (with keys=True)
    row_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def select_partitions(
    conn: Connection,
    table_id: int,
    store: PartitionStore,
    predicate: ColumnElement[bool] | None,
    *,
    keys: bool = False,
) -> Selection:
    """The partitions with statistics that `predicate` (on the table's partition store)
    selects, covered by stored blocks where whole ones are selected; with `keys`, their
    partition key values too. One statement: the selected partitions (level 0) and the
    table's stored blocks with their partition counts, UNION ALL."""
    p, b = PartitionStats.__table__.c, RollupBlock.__table__.c
    key_columns = store.key_columns if keys else []
    partitions = select(
        literal(0, Integer).label("level"),
        p.partition_id.label("number"),
        p.row_count.label("amount"),
        *key_columns,
    ).where(p.table_id == table_id)
    if predicate is not None or key_columns:
        partitions = partitions.join(store.table, store.table.c.id == p.partition_id)
    if predicate is not None:
        partitions = partitions.where(predicate)
    blocks = select(
        b.level, b.block, b.partitions, *(cast(null(), k.type).label(k.name) for k in key_columns)
    ).where(b.table_id == table_id)
    found = conn.execute(union_all(partitions, blocks)).all()
    stored = {(int(r[0]), int(r[1])): int(r[2]) for r in found if r[0]}
    selected = [r for r in found if not r[0]]
    ids = np.fromiter((r[1] for r in selected), dtype=np.int64, count=len(selected))
    counts = np.fromiter((r[2] for r in selected), dtype=np.int64, count=len(selected))
    order = np.argsort(ids, kind="stable")
    ids, counts = ids[order], counts[order]
    values = [[selected[j][3 + i] for j in order.tolist()] for i in range(len(key_columns))]
    if ids.size <= 1:
        stored = {}  # one partition: read as it is
    top = max((level for level, _ in stored), default=0)
    covered, leaves = cover(ids, stored, top)
    return Selection(ids, int(counts.sum()), covered, leaves, (ids, values), counts)


def column_pieces(
    conn: Connection, table_id: int, selection: Selection, names: list[str], top_k: bool
) -> dict[str, list[ColumnPiece]]:
    """Each named column's pieces over the selection: its blocks' merged records, then its
    partitions' records, in id order; blocks and partitions read in one statement (UNION
    ALL; more only past LEAVES_PER_STATEMENT partitions no block covers)."""
    c, s = RollupColumn.__table__.c, ColumnStats.__table__.c
    blob = LargeBinary()

    def top(column: Any) -> Any:
        return column if top_k else cast(null(), blob).label("top_k")

    zero = literal(0, Integer)
    counts = ("partitions", "with_hll", "with_theta", "with_sketch")
    figures = ("null_count", "min_value", "max_value", "total_len", "max_len", "hll", "kll")
    blocks = select(
        c.level,
        c.block,
        c.column_name,
        *(c[name] for name in counts + figures),
        c.theta,
        top(c.top_k),
        c.top_k_items,
        c.distinct_sum,
        c.absent,
    ).where(
        c.table_id == table_id,
        c.column_name.in_(names),
        block_condition(RollupColumn, selection.blocks),
    )

    def leaves(chunk: list[int]) -> Any:
        return select(
            zero.label("level"),
            s.partition_id.label("block"),
            s.column_name,
            *(zero.label(name) for name in counts),  # counted from the blobs
            *(s[name] for name in figures),
            s.theta,
            s.top_k,  # read whatever `top_k`: a partition's may stand for its KLL or Theta
            s.top_k_items,
            cast(null(), BigInteger).label("distinct_sum"),  # counted from the blobs
            cast(s.absent, Integer).label("absent"),
        ).where(s.table_id == table_id, s.column_name.in_(names), s.partition_id.in_(chunk))

    by_column: dict[str, list[tuple[int, ColumnPiece]]] = {n: [] for n in names}
    for row in _read_union(conn, blocks if selection.blocks else None, leaves, selection.leaves):
        level = int(row.level)
        if level:
            piece = piece_of_block(row)
            if not top_k:
                piece = replace(piece, top_k=None)
            by_column[row.column_name].append((int(row.block) * FANOUT**level, piece))
        else:
            piece = piece_of_partition(row)  # (from_top_k: sketches its heavy hitters stand for)
            if not top_k:
                piece = replace(piece, top_k=None, top_k_items=None)
            by_column[row.column_name].append((int(row.block), piece))
    return {
        name: [piece for _, piece in sorted(found, key=_first)] for name, found in by_column.items()
    }


def _first(item: tuple[int, Any]) -> int:
    return item[0]


def sample_pieces(conn: Connection, table_id: int, selection: Selection) -> list[pa.Table]:
    """The pooled samples over the selection, in id order: its blocks' and its partitions'
    (with PARTITION_ID and WEIGHT columns), read in one statement (UNION ALL); a partition
    whose rows only its block of HOLDING_LEVEL keeps (partition_samples), from that block,
    read in the same statement."""
    b, p = RollupBlock.__table__.c, PartitionStats.__table__.c
    none = cast(null(), BigInteger)
    sampled_leaves = _sampled_leaves(selection)
    pieces = []
    if any(sampled_level(level) for level, _ in selection.blocks):
        pieces.append(
            select(
                b.level, b.block, none.label("row_count"), none.label("sample_size"), b.sample
            ).where(
                b.table_id == table_id,
                b.sample.is_not(None),
                _sampled_cover(selection.blocks),
            )
        )
    holding = np.unique(sampled_leaves // FANOUT**HOLDING_LEVEL).tolist()
    if holding:  # marked by a negative level
        pieces.append(
            select(
                literal(-HOLDING_LEVEL, Integer).label("level"),
                b.block,
                none.label("row_count"),
                none.label("sample_size"),
                b.sample,
            ).where(
                b.table_id == table_id,
                b.level == HOLDING_LEVEL,
                b.block.in_(holding),
                b.sample.is_not(None),
            )
        )

    def leaves(chunk: list[int]) -> Any:
        return select(
            literal(0, Integer).label("level"),
            p.partition_id.label("block"),
            p.row_count,
            p.sample_size,
            p.sample,
        ).where(p.table_id == table_id, p.partition_id.in_(chunk), p.sample_size > 0)

    found: list[tuple[int, pa.Table]] = []
    held: list[int] = []  # partitions whose rows only their block keeps
    holders: list[pa.Table] = []
    for level, number, row_count, size, blob in _read_union(conn, pieces, leaves, sampled_leaves):
        if blob is None:
            held.append(int(number))
            continue
        note_read(conn, len(blob))
        if level < 0:
            holders.append(sample_table(bytes(blob)))
        elif level:
            found.append((int(number) * FANOUT ** int(level), sample_table(bytes(blob))))
        else:
            table = partition_sample(int(number), int(row_count), size, blob)
            if table is not None:
                found.append((int(number), table))
    wanted = np.asarray(held, dtype=np.int64)
    for pooled in holders:
        found += split(pooled, wanted).items()
    return [table for _, table in sorted(found, key=_first)]


def _sampled_leaves(selection: Selection) -> np.ndarray:
    """The partitions whose own samples a selection's sample reads: its leaves and the
    partitions of its blocks read as partitions (sampled_level 0), in id order."""
    ids = [selection.leaves]
    for level, number in selection.blocks:
        if sampled_level(level) == 0:
            span = FANOUT**level
            low, high = np.searchsorted(selection.ids, [number * span, (number + 1) * span])
            ids.append(selection.ids[low:high])
    return np.sort(np.concatenate(ids)) if len(ids) > 1 else selection.leaves


def _sampled_cover(blocks: list[tuple[int, int]]) -> ColumnElement[bool]:
    """The blocks that keep samples over the partitions of `blocks` (wholly selected): a
    block of a level that keeps none as its blocks of sampled_level (a level 0: its
    partitions, `_sampled_leaves`)."""
    kept = [(level, number) for level, number in blocks if sampled_level(level) == level]
    ranges = []
    for level, number in blocks:
        below = sampled_level(level)
        if 0 < below != level:
            span = FANOUT ** (level - below)
            ranges.append(
                and_(
                    RollupBlock.level == below,
                    RollupBlock.block >= number * span,
                    RollupBlock.block < (number + 1) * span,
                )
            )
    return or_(block_condition(RollupBlock, kept), *ranges)


LEAVES_PER_STATEMENT = 10_000  # partition ids one statement lists at most


def _read_union(
    conn: Connection,
    blocks: Any | None,
    leaves: Callable[[list[int]], Any],
    ids: np.ndarray,
) -> Iterator[Any]:
    """The rows of `blocks` (a select, or a list of them) and of `leaves` over `ids`: the
    blocks and the first LEAVES_PER_STATEMENT ids in one statement, any further ids in one
    statement each."""
    chunks = [
        ids[start : start + LEAVES_PER_STATEMENT].tolist()
        for start in range(0, int(ids.size), LEAVES_PER_STATEMENT)
    ]
    statements = [leaves(chunk) for chunk in chunks]
    firsts: list[Any] = []
    if isinstance(blocks, list):
        firsts = blocks
    elif blocks is not None:
        firsts = [blocks]
    if firsts:
        together: list[Any] = [*firsts, *statements[:1]]
        first: Any = union_all(*together) if len(together) > 1 else together[0]
        statements = [first, *statements[1:]]
    for statement in statements:
        yield from conn.execute(statement)


def table_sample(engine: Engine, table: str, query: PartitionQuery | None = None) -> Sample | None:
    """The pooled sample of the partitions `query` selects (None: no partition has one),
    read from the table's pre-merged blocks where whole ones are selected
    (metastore.statistics.rollups). Partition key columns are filled in from each partition's key
    values."""

    def read(conn: Connection) -> Sample | None:
        info = get_table(conn, table)
        store = info.store()
        predicate = build_predicate(conn.dialect.name, info, query or PartitionQuery())
        selection = select_partitions(conn, info.id, store, predicate, keys=True)
        pieces = sample_pieces(conn, info.id, selection)
        return pool(info, pieces, selection.keys, forced=read_forced_keys(conn, info.id))

    return run_read(engine, read)
