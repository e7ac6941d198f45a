"""Pre-merged statistics (metastore.statistics.rollups): the cover of a selection by stored blocks,
and, on a table collected with a real Spark into SQLite and PostgreSQL, statistics and samples
of any selection equal to those merged partition by partition (counts, min/max, NDV and
heavy hitters exactly; quantiles within KLL's error), after a full collection and after
incremental ones that add, change and remove partitions."""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import delete, event, func, select, update

from metastore import Metastore, PartitionQuery
from metastore.engine import run_write
from metastore.models import RollupBlock, RollupColumn
from metastore.partitions.block_tree import FANOUT, cover, levels_for, stored_blocks
from metastore.statistics import partition_samples, rollups
from metastore.statistics.block_reads import table_sample
from metastore.statistics.cache import cache_for
from metastore.statistics.histograms import inflated, merge_hll
from metastore.statistics.rollups import refresh_blocks
from metastore.statistics.samples import Sample, sample_table
from metastore.statistics.summaries import TableSummary, partition_rows, table_statistics
from optimizer.estimate.sources import MetastoreSource

# ---- the cover of a selection (no database) -------------------------------------------


def blocks_of(ids: np.ndarray) -> dict[tuple[int, int], int]:
    """Every block over `ids` with its partition count, as refresh_blocks stores them."""
    stored: dict[tuple[int, int], int] = {}
    for level in range(1, levels_for(int(ids.max())) + 1):
        numbers, counts = np.unique(ids // FANOUT**level, return_counts=True)
        stored.update({(level, int(b)): int(c) for b, c in zip(numbers, counts, strict=True)})
    return stored


def test_levels() -> None:
    assert [levels_for(i) for i in (1, 7, 8, 63, 64, 512)] == [1, 1, 2, 2, 3, 4]


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.integers(1, 3000), min_size=1, max_size=400),
    st.lists(st.booleans(), min_size=400, max_size=400),
    st.booleans(),
)
def test_cover_is_exactly_the_selection(ids: set[int], picks: list[bool], drop: bool) -> None:
    existing = np.array(sorted(ids), dtype=np.int64)
    selected = existing[np.array(picks[: existing.size], dtype=bool)]
    stored = blocks_of(existing)
    if drop:  # some blocks missing (forgotten, not rebuilt yet): still exact
        stored = {k: v for i, (k, v) in enumerate(sorted(stored.items())) if i % 3}
    top = max(level for level, _ in stored) if stored else 0
    blocks, leaves = cover(selected, stored, top)
    covered = [
        i
        for level, number in blocks
        for i in existing
        if number * FANOUT**level <= i < (number + 1) * FANOUT**level
    ]
    assert sorted(covered + leaves.tolist()) == selected.tolist()  # each selected id once
    for level, number in blocks:  # a block is taken only when all of it is selected
        assert stored[(level, number)] == sum(1 for i in covered if i // FANOUT**level == number)


def test_whole_table_is_its_top_blocks() -> None:
    existing = np.arange(1, 2527, dtype=np.int64)  # 2,526 partitions, ids 1..2526
    blocks, leaves = cover(existing, blocks_of(existing), levels_for(2526))
    assert leaves.size == 0 and blocks == [(4, 0)]
    month = existing[100:130]  # ids 101..130: 3 blocks of 8, and 6 partitions
    blocks, leaves = cover(month, blocks_of(existing), levels_for(2526))
    assert blocks == [(1, 13), (1, 14), (1, 15)] and leaves.tolist() == [
        101,
        102,
        103,
        128,
        129,
        130,
    ]


# ---- against the per-partition merge, with a real Spark --------------------------------

START = dt.date(2024, 1, 1)


def day_values(day: int, rows: int = 4) -> dict[str, list[Any]]:
    """One partition's values by column: every kind of column, values a function of the day
    and the row."""
    values = range(day * rows, (day + 1) * rows)
    return {
        "id": [v * 3 for v in values],
        "hot": [v % 5 if v % 2 else None for v in values],
        "price": [v / 7 for v in values],
        "label": [f"l{v % 11}" if v % 3 else None for v in values],
    }


def write_day(root: Path, day: int, rows: int = 4) -> None:
    """One partition, of `day_values`."""
    values = day_values(day, rows)
    table = pa.table(
        {
            "id": pa.array(values["id"], pa.int64()),
            "hot": pa.array(values["hot"], pa.int32()),
            "price": pa.array(values["price"], pa.float64()),
            "label": values["label"],
        }
    )
    directory = root / f"day={START + dt.timedelta(days=day)}"
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / "part-00000.parquet")


def without_blocks(ms: Metastore, work: Any) -> Any:
    """`work()` with the table's blocks gone (every partition read one by one), then the
    blocks built again."""
    from metastore.catalog.tables import get_table

    def drop(conn: Any) -> None:
        # as a drop of the blocks does: the samples only they keep go back to the partitions
        table_id = get_table(conn, "facts").id
        partition_samples.spill(conn, table_id, stored_blocks(conn, table_id))
        for model in (RollupColumn, RollupBlock):
            conn.execute(delete(model))

    run_write(ms.engine, drop)
    try:
        return work()
    finally:
        info = ms.table("facts")
        types = {c.name: c.type for c in info.columns}
        run_write(ms.engine, lambda conn: refresh_blocks(conn, get_table(conn, "facts").id, types))


def stored_records(ms: Metastore) -> list[tuple[Any, ...]]:
    """Every block's records, sorted, each sketch as what it says whatever the order it was
    merged in: a KLL sketch as its count (its compactions are random), an HLL sketch as its
    estimate, heavy hitters as their items and counts; a pooled sample as its rows (one
    appended to is stored in frames, one built whole in one)."""
    from datasketches import frequent_items_error_type, frequent_strings_sketch, kll_doubles_sketch

    def said(key: str, value: Any) -> Any:
        if value is None or key not in ("kll", "hll", "top_k"):
            return value
        blob = bytes(value)
        if key == "kll":
            return kll_doubles_sketch.deserialize(inflated(blob)).n
        if key == "hll":
            return round(merge_hll([blob]).get_estimate(), 6)
        if key == "top_k":
            sketch = frequent_strings_sketch.deserialize(inflated(blob))
            return sorted(sketch.get_frequent_items(frequent_items_error_type.NO_FALSE_NEGATIVES))

    with ms.engine.connect() as conn:
        blocks = [
            tuple(
                repr(sample_table(bytes(value)).to_pylist())
                if key == "sample" and value is not None
                else value
                for key, value in row._mapping.items()
            )
            for row in conn.execute(select(*RollupBlock.__table__.c))
        ]
        columns = [
            tuple(said(key, value) for key, value in row._mapping.items())
            for row in conn.execute(select(*RollupColumn.__table__.c))
        ]
    return sorted(blocks, key=repr) + sorted(columns, key=repr)


def assert_same(with_blocks: TableSummary, merged_each: TableSummary) -> None:
    assert (with_blocks.partitions, with_blocks.row_count) == (
        merged_each.partitions,
        merged_each.row_count,
    )
    for name, column in merged_each.columns.items():
        got = with_blocks.columns[name]
        exact = ("null_count", "min", "max", "ndv", "ndv_source", "avg_len", "max_len", "mcv")
        exact += ("partition_distinct",)
        for field in exact:
            assert getattr(got, field) == getattr(column, field), (name, field)
        if column.kll is not None:
            assert got.kll.n == column.kll.n
            error = got.kll.normalized_rank_error(False) + column.kll.normalized_rank_error(False)
            for q in (0.1, 0.5, 0.9):  # got's q-quantile is column's within both errors
                value = got.kll.get_quantile(q)
                below, upto = column.kll.get_rank(value, False), column.kll.get_rank(value, True)
                assert below - error <= q <= upto + error, (name, q)


def sample_rows(ms: Metastore, query: PartitionQuery) -> list[tuple[Any, ...]]:
    sample = table_sample(ms.engine, "facts", query)
    assert sample is not None
    return rows_of(sample)


def rows_of(sample: Sample | None) -> list[tuple[Any, ...]]:
    assert sample is not None
    names = sorted(sample.columns)
    rows = zip(*(sample.columns[n].tolist() for n in names), sample.weights.tolist(), strict=True)
    return sorted(tuple(str(v) for v in row) for row in rows)


@contextlib.contextmanager
def counted_statements(ms: Metastore) -> Iterator[list[str]]:
    """The SQL statements run through the metastore's engine meanwhile (round trips)."""
    found: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith(("SELECT", "WITH")):
            found.append(statement)

    event.listen(ms.engine, "before_cursor_execute", seen)
    try:
        yield found
    finally:
        event.remove(ms.engine, "before_cursor_execute", seen)


SELECTIONS = [
    PartitionQuery(),
    PartitionQuery(where="day BETWEEN '2024-01-09' AND '2024-02-20'"),
    PartitionQuery(where="day IN ('2024-01-02', '2024-01-19', '2024-03-01')"),
    PartitionQuery(where="day = '2024-01-31'"),
    # level 2's block 0 whole (it keeps no sample: level 1's eight are read) and ids 64..66
    PartitionQuery(where="day BETWEEN '2024-01-01' AND '2024-03-06'"),
]


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_blocks_give_the_partitions_merge(
    metastore: Metastore, spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import collectors.collect
    from collectors.blocks_ahead import BlocksAhead
    from collectors.collect import collect

    ahead: list[dict[tuple[int, int], Any]] = []  # what the full collection built ahead

    class Kept(BlocksAhead):
        def built(self) -> dict[tuple[int, int], Any]:
            ahead.append(super().built())
            return ahead[-1]

    monkeypatch.setattr(collectors.collect, "BlocksAhead", Kept)
    leaves: list[int] = []  # level-1 blocks the write merged itself (of how many partitions)
    uppers: list[int] = []  # blocks above level 1 the write merged itself (their level)
    merge_leaves, read_children = rollups._leaves, rollups._children

    def counted(conn: Any, table_id: int, ids: Any, fresh: Any) -> Any:
        leaves.append(len(ids))
        return merge_leaves(conn, table_id, ids, fresh)

    def counted_children(
        conn: Any, table_id: int, level: int, low: int, high: int, **options: Any
    ) -> Any:
        uppers.append(level + 1)
        return read_children(conn, table_id, level, low, high, **options)

    monkeypatch.setattr(rollups, "_leaves", counted)
    monkeypatch.setattr(rollups, "_children", counted_children)
    root = tmp_path / "facts"
    for day in range(70):  # ids 1..70: blocks of levels 1 and 2, and level 3's block 0
        write_day(root, day)
    metastore.register_table("facts", str(root))
    collect(metastore.engine, "facts", spark=spark)
    with metastore.engine.connect() as conn:
        levels = conn.execute(select(RollupBlock.level, func.count()).group_by(RollupBlock.level))
        assert dict(levels.all()) == {1: 9, 2: 2, 3: 1}
        # every block was built during the scan and stored as built
        b = RollupBlock.__table__.c
        stored = conn.execute(select(b.level, b.block, b.partitions, b.row_count, b.sample))
        assert len(ahead) == 1
        assert (leaves, uppers) == ([], [])
        assert sorted(stored.all()) == sorted(
            (*key, x.block["partitions"], x.block["row_count"], x.block["sample"])
            for key, x in ahead[0].items()
        )
        c = RollupColumn.__table__.c
        stored_columns = conn.execute(select(c.level, c.block, c.column_name, c.theta, c.top_k))
        assert sorted(stored_columns.all()) == sorted(
            (x["level"], x["block"], x["column_name"], x["theta"], x["top_k"])
            for built in ahead[0].values()
            for x in built.columns
        )
    # and they are the blocks the write builds from the stored partitions (a KLL sketch's
    # compactions are random: its count only)
    built_ahead = stored_records(metastore)
    without_blocks(metastore, lambda: None)
    assert stored_records(metastore) == built_ahead
    leaves.clear()
    uppers.clear()

    def check() -> None:
        for query in SELECTIONS:
            fast = table_statistics(metastore.engine, "facts", query)
            fast_sample = sample_rows(metastore, query)
            slow = without_blocks(
                metastore, lambda q=query: table_statistics(metastore.engine, "facts", q)
            )
            slow_sample = without_blocks(metastore, lambda q=query: sample_rows(metastore, q))
            assert_same(fast, slow)
            assert fast_sample == slow_sample
            # an estimate's reads: the selection once, then one statement each for the
            # columns' pieces and the sample's
            cache_for(metastore.engine).clear()
            source = MetastoreSource(metastore.engine)
            with counted_statements(metastore) as statements:
                summary = source.summary("facts", query)
                sample = source.sample("facts", query)
                partitions = source.partitions("facts", query)
            slow_source = without_blocks(
                metastore,
                lambda q=query, limit=source.mcv_limit: table_statistics(
                    metastore.engine, "facts", q, mcv_limit=limit
                ),
            )
            assert_same(summary, slow_source)
            assert rows_of(sample) == slow_sample
            assert sorted(partitions, key=str) == sorted(
                partition_rows(metastore.engine, "facts", query), key=str
            )
            # the stamp; in one snapshot the stamp again (the figures must be of the state
            # it names), the table and its partition count, the selection (partitions and
            # blocks), the columns' pieces (blocks and partitions); then in a second snapshot
            # the stamp, the sample's pieces and the table's forced keys
            assert len(statements) == 9, [s[:70] for s in statements]

    check()
    # each column's distinct (partition, value) pairs: every day's own distinct values
    days = [day_values(d) for d in range(70)]
    for query, chosen in ((PartitionQuery(), range(70)), (SELECTIONS[1], range(8, 51))):
        summary = table_statistics(metastore.engine, "facts", query)
        for name, column in summary.columns.items():
            pairs = sum(len({v for v in days[d][name] if v is not None}) for d in chosen)
            assert column.partition_distinct == pairs, name
    # incremental: one partition added, one changed, one removed; the blocks follow
    write_day(root, 70)
    write_day(root, 30, rows=9)
    shutil.rmtree(root / f"day={START + dt.timedelta(days=5)}")
    leaves.clear()
    report = collect(metastore.engine, "facts", spark=spark)
    # an incremental collection merges its blocks at the write: from their partitions
    # where one was removed (ids 1..7 but 6) or changed (24..31); the block the new one
    # (id 71) joins is the stored block and it merged (64..70, then 71)
    assert leaves == [6, 8]
    assert uppers
    # ... and the blocks are those built again from every partition
    incremental = stored_records(metastore)
    without_blocks(metastore, lambda: None)
    assert stored_records(metastore) == incremental
    assert (report.partitions_added, report.partitions_removed) == (1, 1)
    assert report.partitions_scanned == 2
    whole = table_statistics(metastore.engine, "facts")
    assert (whole.partitions, whole.row_count) == (70, 69 * 4 + 9 - 4 + 4)
    check()
    # a stored block without its pooled sample (statistics of an earlier form) is built
    # again, not extended: its sample would hold the appended partition's rows alone
    run_write(
        metastore.engine,
        lambda conn: conn.execute(
            update(RollupBlock)
            .where(RollupBlock.level == 3, RollupBlock.block == 0)
            .values(sample=None, sample_size=None)
        ),
    )
    write_day(root, 71)
    collect(metastore.engine, "facts", spark=spark)
    appended = stored_records(metastore)
    without_blocks(metastore, lambda: None)
    assert stored_records(metastore) == appended
    # were only level 1 to keep samples, a block of level 3 is read (and a level-2 one
    # built) from its blocks of level 1
    monkeypatch.setattr(rollups, "samples_kept", lambda level: level == 1)
    monkeypatch.setattr(partition_samples, "samples_kept", lambda level: level == 1)
    without_blocks(metastore, lambda: None)
    with metastore.engine.connect() as conn:
        b = RollupBlock.__table__.c
        sampled = conn.execute(select(b.level).where(b.sample.is_not(None)).distinct())
        assert sampled.scalars().all() == [1]
    for query in SELECTIONS:
        slow_sample = without_blocks(metastore, lambda q=query: sample_rows(metastore, q))
        assert sample_rows(metastore, query) == slow_sample, query
