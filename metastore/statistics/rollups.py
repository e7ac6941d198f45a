"""Pre-merged statistics: each table's partition statistics merged ahead of time in blocks
of a tree over partition ids, so that the statistics of any selection of partitions are
merged from O(log n) stored pieces per run of adjacent partitions instead of from every
partition (docs: the latency issue's design; the idea of a segment tree over the sorted
partitions).

A block (level L >= 1, number b) covers partition ids [b x 8**L, (b + 1) x 8**L): it holds
the statistics of the partitions with statistics in that range, merged (RollupBlock: their
count, rows and pooled sample; RollupColumn: each column's counts, min/max and sketches).
Partition ids are handed out in listing order, so the partitions of a key range (a month
of days) are mostly adjacent ids, and new partitions get new, higher ids.

A selection is covered greedily from the top level down: a block whose partitions are all
selected (its stored partition count equals the selected ids in its range) is taken
whole; the ids left are read as partitions (`cover`). Blocks are kept exact in the same
transaction as the statistics they merge: `forget_blocks` drops the blocks over partitions
whose statistics are dropped or replaced, and `refresh_blocks` (re)builds every block
whose count differs from the partitions' or that is missing, bottom-up, each from its up to
8 children.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    delete,
    select,
    tuple_,
)

from metastore.bulk_insert import bulk_insert
from metastore.engine import note_read
from metastore.models import ColumnStats, PartitionStats, RollupBlock, RollupColumn
from metastore.partitions.block_tree import FANOUT, levels_for, stored_blocks
from metastore.statistics.column_pieces import (
    ColumnPiece,
    PieceMerger,
    merge_pieces,
    piece_of_block,
    piece_of_partition,
    stored_figures,
)
from metastore.statistics.histograms import partition_kll_k, partition_theta_lg_k, text_forms
from metastore.statistics.partition_samples import (
    HOLDING_LEVEL,
    partition_sample,
    read_samples,
    release,
    sampled_level,
    samples_kept,
    spill,
    with_partition_columns,
)
from metastore.statistics.samples import appended, encode_table, sample_table

CHILD_RANGE_IDS = 256  # partition ids whose records one read of a rebuild fetches at most


def refresh_blocks(
    conn: Connection,
    table_id: int,
    column_types: dict[str, str],
    fresh: Mapping[int, PartitionPiece] | None = None,
    built_ahead: Mapping[tuple[int, int], BuiltBlock] | None = None,
    added: AbstractSet[int] = frozenset(),
    holding: set[int] | None = None,
) -> int:
    """Build every block that is missing or whose partition count differs from the
    partitions' with statistics, bottom-up, and drop blocks over no partition; returns how
    many blocks were built. `fresh`: statistics the caller has just written, by partition
    id, taken as they are instead of read back; `built_ahead`: blocks by (level, number)
    built from them (leaf_block, upper_block), stored as they are where they merge exactly
    the partitions with statistics in their range; `added`: those of `fresh` that had no
    statistics before, so a stored block over them merges the others (`_extended`: the
    block and the added partitions merged, where they come after its partitions);
    `holding`, if given, gets the numbers of the blocks of HOLDING_LEVEL stored that hold
    their partitions' samples whole (partition_samples.release). Runs in the caller's
    transaction."""
    holding = set() if holding is None else holding
    p = PartitionStats.__table__.c
    ids = np.fromiter(
        (i for (i,) in conn.execute(select(p.partition_id).where(p.table_id == table_id))),
        dtype=np.int64,
    )
    ids.sort()
    stored = stored_blocks(conn, table_id)
    top = levels_for(int(ids[-1])) if ids.size > 1 else 0  # one partition: nothing to merge
    stale = [key for key in stored if key[0] > top]
    built = 0
    for level in range(1, top + 1):
        numbers, counts = np.unique(ids // FANOUT**level, return_counts=True)
        expected = dict(zip(numbers.tolist(), counts.tolist(), strict=True))
        stale += [k for k in stored if k[0] == level and k[1] not in expected]
        dirty = sorted(b for b, c in expected.items() if stored.get((level, b)) != c)
        if added and fresh:
            extended = _extended(
                conn, table_id, level, dirty, ids, stored, added, fresh, column_types
            )
            built += len(extended)
            dirty = [b for b in dirty if b not in extended]
        _delete(conn, table_id, [(level, b) for b in dirty], going=set(fresh or ()))
        if built_ahead:
            taken = _store_built(conn, table_id, level, ids, dirty, built_ahead, holding)
            built += len(taken)
            dirty = [b for b in dirty if b not in taken]
        for run in _runs(dirty, max(1, CHILD_RANGE_IDS // FANOUT**level)):
            _build(conn, table_id, level, run, column_types, ids, fresh or {}, holding)
        built += len(dirty)
    _delete(conn, table_id, stale, going=set(fresh or ()))
    return built


def _extended(
    conn: Connection,
    table_id: int,
    level: int,
    dirty: list[int],
    ids: np.ndarray,
    stored: Mapping[tuple[int, int], int],
    added: AbstractSet[int],
    fresh: Mapping[int, PartitionPiece],
    types: dict[str, str],
) -> set[int]:
    """The stored blocks of `level` among `dirty` that lack exactly partitions of `added`
    (their count plus those in their range is the partitions' with statistics there), all
    after the block's own: each merged with them, as a child, and stored again (one
    partition appended to a table's tree merges one block per level, not each block's
    eight children). The numbers of those so stored."""
    span = FANOUT**level
    done: set[int] = set()
    for number in dirty:
        count = stored.get((level, number))
        if not count:
            continue  # none, or a holder of samples (block_tree.forget_blocks)
        low, high = np.searchsorted(ids, [number * span, (number + 1) * span])
        members = ids[low:high].tolist()
        new = [pid for pid in members if pid in added]
        old = [pid for pid in members if pid not in added]
        if not new or count != len(old) or (old and max(old) > min(new)):
            continue
        appending = [fresh[pid].child(pid) for pid in new]
        encoded = _appended_sample(conn, table_id, level, number, appending)
        (block,) = _children(
            conn,
            table_id,
            level,
            number * span,
            (number + 1) * span,
            samples=samples_kept(level) and encoded is None,
        )
        if samples_kept(level) and encoded is None and block.sample is None:
            continue  # no pooled sample stored (statistics of an earlier form): rebuilt
        children = [block, *_top_k_as_text(appending)]
        built = _merged_block(table_id, level, number, children, types, len(ids), encoded)
        _delete(conn, table_id, [(level, number)], spilled=False)
        bulk_insert(conn, RollupBlock, [built.block])
        bulk_insert(conn, RollupColumn, built.columns)
        if level == HOLDING_LEVEL and encoded is not None:  # their rows appended as they are
            release(conn, table_id, ids=new)
        elif built.holds:
            release(conn, table_id, numbers=[number])
        done.add(number)
    return done


def _appended_sample(
    conn: Connection, table_id: int, level: int, number: int, appending: list[BlockChild]
) -> tuple[int, bytes] | None:
    """The stored pooled sample of block `number` of `level` with the `appending`
    partitions' sampled rows after its own (samples.appended: its rows not compressed
    again), as (rows, bytes); None where the level keeps no sample, or it is to be pooled
    again from the block's children."""
    if not samples_kept(level):
        return None
    b = RollupBlock.__table__.c
    found = conn.execute(
        select(b.sample_size, b.sample).where(
            b.table_id == table_id, b.level == level, b.block == number
        )
    ).one_or_none()
    if found is None or found.sample is None:
        return None
    note_read(conn, len(found.sample))
    rows = _concatenated([c.sample for c in appending if c.sample is not None])
    if rows is None:
        return int(found.sample_size), bytes(found.sample)
    blob = appended(bytes(found.sample), rows)
    return None if blob is None else (int(found.sample_size) + rows.num_rows, blob)


def _store_built(
    conn: Connection,
    table_id: int,
    level: int,
    ids: np.ndarray,
    dirty: list[int],
    built_ahead: Mapping[tuple[int, int], BuiltBlock],
    holding: set[int],
) -> set[int]:
    """Insert the blocks of `level` built ahead whose members are exactly the partitions
    with statistics (`ids`, sorted) in their range; the numbers of those stored."""
    span = FANOUT**level
    taken: set[int] = set()
    block_rows, column_rows = [], []
    for number in dirty:
        built = built_ahead.get((level, number))
        if built is None:
            continue
        low, high = np.searchsorted(ids, [number * span, (number + 1) * span])
        if not np.array_equal(ids[low:high], built.members):
            continue
        taken.add(number)
        block_rows.append(built.block)
        column_rows += built.columns
    bulk_insert(conn, RollupBlock, block_rows)
    bulk_insert(conn, RollupColumn, column_rows)
    held = [n for n in taken if built_ahead[(level, n)].holds]
    release(conn, table_id, numbers=held)
    holding.update(held)
    return taken


def _runs(numbers: list[int], longest: int) -> Iterator[list[int]]:
    """Sorted numbers in runs of adjacent ones, each at most `longest` long."""
    run: list[int] = []
    for number in numbers:
        if run and (number != run[-1] + 1 or len(run) >= longest):
            yield run
            run = []
        run.append(number)
    if run:
        yield run


def _delete(
    conn: Connection,
    table_id: int,
    pairs: list[tuple[int, int]],
    *,
    spilled: bool = True,
    going: AbstractSet[int] = frozenset(),
) -> None:
    """Drop the blocks `pairs`; with `spilled`, the samples only they keep written back to
    their partitions first (partition_samples.spill), but to those of `going` (statistics
    just written: their samples are theirs, not the block's)."""
    if spilled:
        spill(conn, table_id, pairs, going)
    for model in (RollupColumn, RollupBlock):
        for start in range(0, len(pairs), 500):
            conn.execute(
                delete(model).where(
                    model.table_id == table_id,
                    tuple_(model.level, model.block).in_(pairs[start : start + 500]),
                )
            )


@dataclass
class BlockChild:
    """A block's child: a partition (level 0) or a block of the level below."""

    start: int  # its first partition id
    rows: int
    partitions: int
    sample: pa.Table | None  # with PARTITION_ID and WEIGHT columns
    columns: dict[str, ColumnPiece]
    # whether `sample` holds every sampled row of its partitions with all their columns
    # (a pool of samples whose columns differ keeps only those all of them have)
    whole: bool = True


def stored_sample(piece: PartitionPiece) -> bytes:
    """A partition piece's sample as stored (encoded now where its bytes were left)."""
    if piece.sample is None:
        raise ValueError("a partition without a sample has no stored sample")
    blob = piece.sample[1]
    if blob is not None:
        return blob
    if piece.table is None:
        raise ValueError("a partition's sample with neither its bytes nor its rows")
    return encode_table(piece.table)


@dataclass(frozen=True)
class PartitionPiece:
    """One partition's statistics as a collection has just written them: its rows, its
    sample (sampled rows, stored bytes) and its column records (anything with
    column_stats's fields, as piece_of_partition reads them)."""

    rows: int
    # (sampled rows, stored bytes: None where not encoded, as a held sample: then `table`)
    sample: tuple[int, bytes | None] | None
    records: Sequence[Any]
    table: pa.Table | None = None  # the sample's rows as the bytes encode them, if at hand

    def sample_table(self, pid: int) -> pa.Table | None:
        """The sample with PARTITION_ID and WEIGHT columns (None without one)."""
        if self.sample is None:
            return None
        if self.table is not None:  # not decoded again
            return with_partition_columns(self.table, pid, self.rows)
        return partition_sample(pid, self.rows, self.sample[0], stored_sample(self))

    def child(self, pid: int) -> BlockChild:
        columns = {record.name: piece_of_partition(record) for record in self.records}
        return BlockChild(pid, self.rows, 1, self.sample_table(pid), columns)

    def as_child(self, pid: int) -> BlockChild:
        """The partition as its level-1 block merges it (leaf_block): its columns as
        pieces, heavy hitters in text form, its sample with its id and weight; made as each
        partition arrives, so that a block's merge is all that is left once its last does."""
        return _top_k_as_text([self.child(pid)])[0]


def _build(
    conn: Connection,
    table_id: int,
    level: int,
    numbers: list[int],
    types: dict[str, str],
    ids: np.ndarray,
    fresh: Mapping[int, PartitionPiece],
    holding: set[int],
) -> None:
    """Build the blocks `numbers` (adjacent) of `level` from their children (those of
    HOLDING_LEVEL that hold their partitions' samples added to `holding`)."""
    span = FANOUT**level
    low, high = numbers[0] * span, (numbers[-1] + 1) * span
    if level == 1:
        children = _leaves(conn, table_id, ids[(ids >= low) & (ids < high)], fresh)
    else:
        children = _children(
            conn, table_id, level - 1, low, high, samples=samples_kept(level), fresh=fresh
        )
    by_block: dict[int, list[BlockChild]] = {}
    for child in children:
        by_block.setdefault(child.start // span, []).append(child)
    block_rows, column_rows, held = [], [], []
    for number, members in sorted(by_block.items()):
        built = _merged_block(table_id, level, number, members, types, len(ids))
        block_rows.append(built.block)
        column_rows += built.columns
        if built.holds:
            held.append(number)
    bulk_insert(conn, RollupBlock, block_rows)
    bulk_insert(conn, RollupColumn, column_rows)
    release(conn, table_id, numbers=held)
    holding.update(held)


@dataclass(frozen=True)
class BuiltBlock:
    """A block's records as built from its children (rollup_blocks' row, rollup_columns'
    rows); where built ahead from fresh partitions, the ids of the partitions it merges
    and, until its parent is built, the block as a child of it (not decoded again)."""

    block: dict[str, Any]
    columns: list[dict[str, Any]]
    members: tuple[int, ...] = ()
    child: BlockChild | None = field(default=None, compare=False, repr=False)
    # a block of HOLDING_LEVEL whose stored sample holds its partitions' whole
    # (partition_samples.release)
    holds: bool = False


def block_theta_lg_k(partitions: int, level: int) -> int:
    """lgK of the Theta union a block of `level` keeps in a table of `partitions`
    partitions (docs/design.md#sizes): as a partition's (histograms.partition_theta_lg_k)
    of a table of its blocks, so that a sixteenth of the table still unions to THETA_LG_K's
    hashes whatever blocks cover it; a selection of fewer sees the block's own error
    (1/sqrt(2**lgK): 6.25% at lgK 8, lineitem's level-1 blocks of 8 partitions)."""
    return partition_theta_lg_k(max(1, partitions // FANOUT**level))


def block_kll_k(partitions: int, level: int) -> int:
    """k of the KLL sketch a block of `level` keeps in a table of `partitions` partitions
    (docs/design.md#sizes): as a partition's (histograms.partition_kll_k) of a table of its
    blocks, so that a sixteenth of the table or more still merges about as accurately as
    one sketch of KLL_K; a selection of fewer sees the blocks' own error (about 5% at k
    64, lineitem's level-1 blocks), shrinking as 1/sqrt(blocks merged)."""
    return partition_kll_k(max(1, partitions // FANOUT**level))


def _merged_block(
    table_id: int,
    level: int,
    number: int,
    members: list[BlockChild],
    types: dict[str, str],
    partitions_in_table: int,
    encoded: tuple[int, bytes] | None = None,
    merged: dict[str, ColumnPiece] | None = None,
) -> BuiltBlock:
    """The block `number` of `level` merged from its children (in id order), in a table
    of `partitions_in_table` partitions with statistics (its Theta and KLL sketches sized to
    them: `block_theta_lg_k`, `block_kll_k`); its pooled sample `encoded` (rows, bytes) where given
    (`_appended_sample`: then it is not pooled in memory for a parent); its columns `merged`
    where they were as its children arrived (LeafMerge)."""
    sampled = [c for c in members if c.sample is not None]
    sample = None if encoded else _concatenated([c.sample for c in sampled])
    shapes = {tuple(c.sample.column_names) for c in sampled if c.sample is not None}
    whole = all(c.whole for c in sampled) and len(shapes) <= 1
    rows, partitions = sum(c.rows for c in members), sum(c.partitions for c in members)
    kept = sample if samples_kept(level) else None  # pooled in memory for the parent either way
    if encoded is None and kept is not None:
        encoded = (kept.num_rows, encode_table(kept))
    block = {
        "table_id": table_id,
        "level": level,
        "block": number,
        "partitions": partitions,
        "row_count": rows,
        "sample_size": None if encoded is None else encoded[0],
        "sample": None if encoded is None else encoded[1],
    }
    if merged is None:
        lg_k = block_theta_lg_k(partitions_in_table, level)
        kll_k = block_kll_k(partitions_in_table, level)
        names = dict.fromkeys(name for c in members for name in c.columns)
        merged = {
            name: merge_pieces(
                types.get(name, "string"),
                [c.columns[name] for c in members if name in c.columns],
                lg_k,
                kll_k,
            )
            for name in names
        }
    columns = [
        {
            "table_id": table_id,
            "level": level,
            "block": number,
            "column_name": name,
            **stored_figures({k: v for k, v in piece.__dict__.items() if k != "top_k_text"}),
        }
        for name, piece in merged.items()
    ]
    start = number * FANOUT**level
    child = BlockChild(start, rows, partitions, sample, dict(merged), whole)
    holds = level == HOLDING_LEVEL and whole and sample is not None and kept is not None
    return BuiltBlock(block, columns, child=child, holds=holds)


class LeafMerge:
    """A level-1 block merged from its partitions as they arrive (`add`: fresh statistics,
    in any order), built ahead of the write that stores it: a collection builds its blocks
    while its scan still runs (refresh_blocks takes them where the partitions with statistics
    in the block's range are these). Its columns' sketches are unioned as each partition
    comes (column_pieces.PieceMerger), so once its last has, only the result is left."""

    def __init__(self, types: dict[str, str], partitions_in_table: int) -> None:
        self._types, self._partitions = types, partitions_in_table
        self._lg_k = block_theta_lg_k(partitions_in_table, 1)
        self._kll_k = block_kll_k(partitions_in_table, 1)
        self._children: dict[int, BlockChild] = {}
        self._columns: dict[str, PieceMerger] = {}

    def add(self, pid: int, piece: PartitionPiece) -> None:
        child = piece.as_child(pid)
        for name, column in child.columns.items():
            merger = self._columns.get(name)
            if merger is None:
                merger = PieceMerger(self._types.get(name, "string"), self._lg_k, self._kll_k)
                self._columns[name] = merger
            merger.add(column, pid)
        self._children[pid] = replace(child, columns={})  # merged: only its sample is kept

    def block(self, table_id: int) -> BuiltBlock:
        """The block, its partitions all added (ends the merge)."""
        ids = sorted(self._children)
        members = [self._children[pid] for pid in ids]
        merged = {name: merger.result() for name, merger in self._columns.items()}
        built = _merged_block(
            table_id, 1, ids[0] // FANOUT, members, self._types, self._partitions, merged=merged
        )
        return replace(built, members=tuple(ids))


def upper_block(
    table_id: int,
    level: int,
    children: Sequence[BuiltBlock],
    types: dict[str, str],
    partitions: int,
) -> BuiltBlock:
    """The block of `level` (2 and up) over exactly the blocks `children` of the level
    below (built ahead, in number order, all in its range), merged from them as they are
    in memory: a full collection builds its whole tree while its scan still runs."""
    forms = [c.child for c in children if c.child is not None]
    if len(forms) != len(children):
        raise ValueError("a block built ahead was already merged into its parent")
    number = children[0].block["block"] // FANOUT
    built = _merged_block(table_id, level, number, forms, types, partitions)
    return replace(built, members=tuple(pid for c in children for pid in c.members))


def _leaves(
    conn: Connection, table_id: int, ids: np.ndarray, fresh: Mapping[int, PartitionPiece]
) -> list[BlockChild]:
    """The partitions `ids` (sorted), in id order: those in `fresh` as given, the others read;
    their heavy hitters in text form, converted together."""
    missing = [pid for pid in ids.tolist() if pid not in fresh]
    read = {child.start: child for child in _partitions(conn, table_id, missing)}
    children = [read[pid] if pid in read else fresh[pid].child(pid) for pid in ids.tolist()]
    return _top_k_as_text(children)


def _top_k_as_text(children: list[BlockChild]) -> list[BlockChild]:
    """The children with every column's heavy hitters in text form (histograms.text_forms:
    one conversion per kind of item for all of them)."""
    by_items: dict[str | None, list[tuple[dict[str, ColumnPiece], str, bytes]]] = {}
    for child in children:
        for name, piece in child.columns.items():
            if piece.top_k is not None and not piece.top_k_text:
                place = (child.columns, name, piece.top_k)
                by_items.setdefault(piece.top_k_items, []).append(place)
    for items, places in by_items.items():
        texts = text_forms([blob for _, _, blob in places], items)
        for (columns, name, _), text in zip(places, texts, strict=True):
            columns[name] = replace(columns[name], top_k=text, top_k_text=True)
    return children


def _pooled_samples(
    conn: Connection,
    table_id: int,
    level: int,
    first: int,
    end: int,
    fresh: Mapping[int, PartitionPiece],
) -> dict[int, tuple[pa.Table, bool]]:
    """The pooled samples of the blocks [first, end) of `level` (1 and up) by number, each
    with whether it is whole (BlockChild.whole): as stored where the level keeps them, else
    pooled from the blocks of sampled_level, or from the partitions (those in `fresh` as
    given)."""
    b = RollupBlock.__table__.c
    kept = sampled_level(level)
    if kept != level:
        span = FANOUT ** (level - kept)
        found: dict[int, list[tuple[pa.Table, bool]]] = {}
        if kept == 0:
            below = {
                pid: (table, True)
                for pid, table in _partition_samples(
                    conn, table_id, first * span, end * span, fresh
                ).items()
            }
        else:
            below = _pooled_samples(conn, table_id, kept, first * span, end * span, fresh)
        for number, pooled in sorted(below.items()):
            found.setdefault(number // span, []).append(pooled)
        result = {}
        for number, parts in found.items():
            table = _concatenated([t for t, _ in parts])
            if table is not None:
                shapes = {tuple(t.column_names) for t, _ in parts}
                result[number] = (table, all(w for _, w in parts) and len(shapes) == 1)
        return result
    rows = conn.execute(
        select(b.block, b.sample).where(
            b.table_id == table_id,
            b.level == level,
            b.block >= first,
            b.block < end,
            b.sample.is_not(None),
        )
    )
    samples = {}
    for number, blob in rows:
        note_read(conn, len(blob))
        samples[int(number)] = (sample_table(bytes(blob)), True)
    return samples


def _partition_samples(
    conn: Connection, table_id: int, low: int, high: int, fresh: Mapping[int, PartitionPiece]
) -> dict[int, pa.Table]:
    """The samples of the partitions with ids in [low, high), by id (with PARTITION_ID and
    WEIGHT columns): those of `fresh` as given, the others wherever they are kept."""
    p = PartitionStats.__table__.c
    ids = [pid for pid in fresh if low <= pid < high]
    where = and_(p.partition_id >= low, p.partition_id < high)
    if ids:
        where = and_(where, p.partition_id.not_in(ids))
    samples = read_samples(conn, table_id, where)
    for pid in ids:
        if (table := fresh[pid].sample_table(pid)) is not None:
            samples[pid] = table
    return dict(sorted(samples.items()))


def _children(
    conn: Connection,
    table_id: int,
    level: int,
    low: int,
    high: int,
    *,
    samples: bool = True,
    fresh: Mapping[int, PartitionPiece] | None = None,
) -> list[BlockChild]:
    """The blocks of `level` (1 and up) over ids [low, high), in id order; with `samples`,
    their pooled samples too (a parent that keeps none needs none), those of partitions in
    `fresh` as given."""
    span = FANOUT**level
    b = RollupBlock.__table__.c
    first, end = low // span, -(-high // span)  # the blocks of `level` over [low, high)

    def in_range(model: type[RollupBlock] | type[RollupColumn]) -> ColumnElement[bool]:
        return and_(
            model.table_id == table_id,
            model.level == level,
            model.block >= first,
            model.block < end,
        )

    columns: dict[int, dict[str, ColumnPiece]] = {}
    for row in conn.execute(select(RollupColumn).where(in_range(RollupColumn))):
        columns.setdefault(int(row.block), {})[row.column_name] = piece_of_block(row)
    pooled = _pooled_samples(conn, table_id, level, first, end, fresh or {}) if samples else {}
    blocks = conn.execute(
        select(b.block, b.row_count, b.partitions).where(in_range(RollupBlock)).order_by(b.block)
    )
    children = []
    for number, rows, partitions in blocks:
        sample, whole = pooled.get(int(number), (None, True))
        children.append(
            BlockChild(
                int(number) * span,
                int(rows),
                int(partitions),
                sample,
                columns.get(int(number), {}),
                whole,
            )
        )
    return children


def _partitions(conn: Connection, table_id: int, ids: list[int]) -> list[BlockChild]:
    """The partitions `ids` as read from column_stats and partition_stats (their samples
    wherever they are kept: partition_samples.read_samples)."""
    p, c = PartitionStats.__table__.c, ColumnStats.__table__.c
    columns: dict[int, dict[str, ColumnPiece]] = {}
    children = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for row in conn.execute(
            select(ColumnStats).where(c.table_id == table_id, c.partition_id.in_(chunk))
        ):
            columns.setdefault(int(row.partition_id), {})[row.column_name] = piece_of_partition(row)
        samples = read_samples(conn, table_id, p.partition_id.in_(chunk))
        selected = select(p.partition_id, p.row_count).where(
            p.table_id == table_id, p.partition_id.in_(chunk)
        )
        children += [
            BlockChild(int(pid), int(rows), 1, samples.get(int(pid)), columns.get(int(pid), {}))
            for pid, rows in conn.execute(selected)
        ]
    return children


def _concatenated(tables: Iterable[pa.Table]) -> pa.Table | None:
    """The tables' rows one after the other, on the columns all of them have (a column some
    partitions lack, added later, is left out, as when they are pooled)."""
    tables = list(tables)
    if not tables:
        return None
    common = set(tables[0].column_names).intersection(*(t.column_names for t in tables[1:]))
    names = [n for n in tables[0].column_names if n in common]
    return pa.concat_tables([t.select(names) for t in tables])
