"""The statistics cache (metastore.statistics.cache): entries taken only under the table's current
stamp, a newer stamp (a collection or registration committed by any process) dropping the
older entries, a reader with an older stamp never caching, the byte bound, and on SQLite and
PostgreSQL a MetastoreSource that sees what another engine (another process) committed."""

from __future__ import annotations

import datetime as dt
import gc
import weakref
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import insert, select

from metastore import Metastore, PartitionQuery
from metastore.catalog.tables import TableInfo
from metastore.engine import make_engine, run_write
from metastore.errors import InvalidValue
from metastore.models import CatalogTable, CollectionRun
from metastore.statistics.cache import (
    StatisticsCache,
    TableStamp,
    approximate_size,
    cache_bytes_from_environment,
    cache_for,
    reserve_for_process,
    table_stamps,
)
from optimizer.estimate.sources import MetastoreSource, StatisticsChanged, consistently
from tests.support.partitions import write_partitions

CREATED = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)  # the creation time of the stamps' table


def test_entries_follow_the_stamp() -> None:
    cache = StatisticsCache(10_000_000)
    computed: list[str] = []

    def compute(value: str) -> str:
        computed.append(value)
        return value

    first, newer = TableStamp(1, 1, 5, CREATED), TableStamp(1, 1, 6, CREATED)
    assert cache.get_or_compute("t", first, "k", lambda: compute("a")) == "a"
    assert cache.get_or_compute("t", first, "k", lambda: compute("b")) == "a"  # a hit
    assert cache.get_or_compute("u", first, "k", lambda: compute("u")) == "u"  # other table
    assert cache.get_or_compute("t", newer, "k", lambda: compute("c")) == "c"  # a new run
    assert cache.get_or_compute("t", newer, "k", lambda: compute("d")) == "c"
    # a reader that read its stamp before the newer one committed computes, never caches
    assert cache.get_or_compute("t", first, "k", lambda: compute("e")) == "e"
    assert cache.get_or_compute("t", newer, "k", lambda: compute("f")) == "c"
    assert computed == ["a", "u", "c", "e"]
    assert (cache.hits, cache.misses) == (3, 4) and len(cache) == 2
    replaced = TableStamp(2, 1, 0, CREATED)  # dropped and registered again: a new table id
    assert cache.get_or_compute("t", replaced, "k", lambda: compute("g")) == "g"
    # ... or the same id (SQLite may give it again): another creation time, a later stamp
    again = TableStamp(2, 1, 0, CREATED + dt.timedelta(seconds=1))
    assert again.newer_than(replaced) and not replaced.newer_than(again)
    assert cache.get_or_compute("t", again, "k", lambda: compute("h")) == "h"
    assert cache.get_or_compute("t", again, "k", lambda: compute("i")) == "h"
    assert cache.get_or_compute("t", replaced, "k", lambda: compute("j")) == "j"  # not cached


def test_the_bound_drops_the_least_recently_used() -> None:
    stamp = TableStamp(1, 1, 1, CREATED)
    array = np.zeros(1000)  # 8,000 bytes and its header
    cache = StatisticsCache(3 * approximate_size(array))
    for key in ("a", "b", "c"):
        cache.get_or_compute("t", stamp, key, lambda: np.zeros(1000))
    cache.get_or_compute("t", stamp, "a", lambda: np.ones(1))  # a hit: most recent now
    cache.get_or_compute("t", stamp, "d", lambda: np.zeros(1000))
    assert cache.size <= cache.max_bytes and len(cache) == 3
    assert cache.get_or_compute("t", stamp, "b", lambda: "recomputed") == "recomputed"
    kept = cache.get_or_compute("t", stamp, "a", lambda: "recomputed")
    assert isinstance(kept, np.ndarray) and kept.shape == (1000,)  # kept: used recently
    too_big = StatisticsCache(100)
    too_big.get_or_compute("t", stamp, "a", lambda: np.zeros(1000))
    assert len(too_big) == 0 and too_big.size == 0


def test_sizes_count_buffers_and_boxes() -> None:
    assert approximate_size(np.zeros(1000)) >= 8000
    assert approximate_size(np.array(["x"] * 1000, dtype=object)) >= 1000 * 64
    assert approximate_size({"a": [np.zeros(100), np.zeros(100)]}) >= 1600


def test_a_cached_sample_growing_is_counted() -> None:
    from tests.support.samples import pooled_sample

    stamp = TableStamp(1, 1, 1, CREATED)
    sample = pooled_sample()
    cache = StatisticsCache(10_000_000)
    assert cache.get_or_compute("t", stamp, "sample", lambda: sample) is sample
    stored = cache.size
    assert stored == approximate_size(sample) and stored < 210_000  # Arrow: compact
    names = sample.columns["name"]
    grown = sample.columns.materialised_bytes("name")
    assert cache.size == stored + grown and approximate_size(sample) == cache.size
    assert sample.columns["name"] is names and cache.size == stored + grown  # once
    nulls = sample.nulls("id")
    assert cache.size > stored + grown + nulls.nbytes  # derived arrays are counted too
    assert approximate_size(sample) <= cache.size

    # growing past the bound drops the least recently used entries
    other = pooled_sample()
    small = StatisticsCache(stored + grown + approximate_size(np.zeros(1000)) - 1)
    small.get_or_compute("t", stamp, "other", lambda: np.zeros(1000))
    small.get_or_compute("t", stamp, "sample", lambda: other)
    assert len(small) == 2
    other.columns["name"]
    assert len(small) == 1 and small.size == stored + grown <= small.max_bytes
    assert small.get_or_compute("t", stamp, "other", lambda: "recomputed") == "recomputed"
    # a sample no longer cached grows uncounted
    evicted = StatisticsCache(1)
    evicted.get_or_compute("t", stamp, "sample", lambda: pooled_sample())
    assert evicted.size == 0


def test_a_dropped_sample_is_freed_at_once() -> None:
    """Nothing but the cache keeps a cached sample: once dropped it is freed by its reference
    count, not at the garbage collector's next full pass (a daemon's memory would grow)."""
    from tests.support.samples import pooled_sample

    stamp = TableStamp(1, 1, 1, CREATED)
    cache = StatisticsCache(10_000_000)
    gc.disable()
    try:
        sample = cache.get_or_compute("t", stamp, "sample", pooled_sample)
        kept = weakref.ref(sample)
        sample.columns["name"]
        del sample
        cache.get_or_compute("t", TableStamp(1, 1, 2, CREATED), "other", lambda: "a newer run")
        assert kept() is None
    finally:
        gc.enable()


def test_cache_size_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATLAS_CACHE_MB", "1.5")
    assert cache_bytes_from_environment() == 1572864
    monkeypatch.setenv("STATLAS_CACHE_MB", "lots")
    with pytest.raises(InvalidValue, match="STATLAS_CACHE_MB must be a number of megabytes"):
        cache_bytes_from_environment()


def test_a_source_sees_what_another_process_committed(
    metastore: Metastore, db_url: str, tmp_path: Path
) -> None:
    metastore.register_table("t", str(write_partitions(tmp_path / "t", ["k"], [["1"], ["2"]])))
    cache = cache_for(metastore.engine)
    cache.clear()
    before = MetastoreSource(metastore.engine).partitions("t", PartitionQuery())
    first = cache.misses  # the partitions, their selection and the table
    assert before == [] and first == 3
    assert MetastoreSource(metastore.engine).partitions("t", PartitionQuery()) == []
    assert cache.hits == 1 and cache.misses == first  # a new request, the same stamp

    other = make_engine(db_url)  # another process's connection to the same database
    try:

        def record_run(conn: object) -> None:
            table_id = conn.execute(  # type: ignore[attr-defined]
                select(CatalogTable.id).where(CatalogTable.name == "t")
            ).scalar_one()
            conn.execute(  # type: ignore[attr-defined]
                insert(CollectionRun).values(
                    table_id=table_id,
                    started_at=dt.datetime.now(dt.UTC),
                    status="succeeded",
                    partitions_scanned=0,
                    partitions_skipped=2,
                    partitions_removed=0,
                    rows=0,
                )
            )

        run_write(other, record_run)
        with other.connect() as conn:
            stamp = table_stamps(conn, ["t", "nope"])
        assert list(stamp) == ["t"] and stamp["t"].last_run > 0
    finally:
        other.dispose()
    MetastoreSource(metastore.engine).partitions("t", PartitionQuery())
    assert cache.misses == 2 * first  # the newer run's stamp: read again
    metastore.register_table("t", str(write_partitions(tmp_path / "t", ["k"], [["3"]])))
    MetastoreSource(metastore.engine).table("t")
    assert MetastoreSource(metastore.engine).table("t").partition_count == 3
    assert cache.misses == 2 * first + 1  # the registration's new version


def test_a_request_reads_one_committed_state_of_a_table(
    metastore: Metastore, db_url: str, tmp_path: Path
) -> None:
    """A registration committed by another process between two reads of one request makes
    the second read fail (StatisticsChanged), and `consistently` starts the request over on
    the new state: never the old table with the new partitions."""
    root = tmp_path / "t"
    metastore.register_table("t", str(write_partitions(root, ["k"], [["1"], ["2"]])))
    other = Metastore(db_url)  # another process's connection to the same database

    def commit_meanwhile() -> None:
        write_partitions(root, ["k"], [["3"]])
        other.register_table("t", str(root))

    try:
        source = MetastoreSource(metastore.engine)
        assert source.table("t").partition_count == 2
        commit_meanwhile()
        with pytest.raises(StatisticsChanged, match="'t' changed while read"):
            source.key_columns("t", PartitionQuery(), ("int",), 3.0)

        source, attempts = MetastoreSource(metastore.engine, memo=True), []

        def request() -> tuple[int, int]:
            attempts.append(source.table("t").partition_count)
            if len(attempts) == 1:
                write_partitions(root, ["k"], [["4"]])
                other.register_table("t", str(root))
            (key,) = source.key_columns("t", PartitionQuery(), ("int",), 4.0)
            return source.table("t").partition_count, len(key.mcv)

        assert consistently(source, request) == (4, 0)
        assert attempts == [3, 4]
    finally:
        other.dispose()


def test_one_snapshot_reads_one_state(metastore: Metastore, db_url: str, tmp_path: Path) -> None:
    """Reads in one `one_snapshot` block see the database as its first read did, on SQLite
    (WAL read transaction) and PostgreSQL (REPEATABLE READ); outside, the newest state."""
    from metastore.catalog.tables import describe_table
    from metastore.engine import one_snapshot

    root = tmp_path / "t"
    metastore.register_table("t", str(write_partitions(root, ["k"], [["1"]])))
    other = Metastore(db_url)
    try:

        def read_twice(_snapshot: object) -> tuple[int, int]:
            first = describe_table(metastore.engine, "t").partition_count
            write_partitions(root, ["k"], [["2"]])
            other.register_table("t", str(root))
            return first, describe_table(metastore.engine, "t").partition_count

        assert one_snapshot(metastore.engine, read_twice) == (1, 1)
        assert describe_table(metastore.engine, "t").partition_count == 2
    finally:
        other.dispose()


def test_planning_starts_over_when_a_table_changes_meanwhile(
    metastore: Metastore, db_url: str, tmp_path: Path
) -> None:
    """`plan_query` (explain, prune, the daemon's /explain) plans again, on the new state,
    when a registration commits between its first read of a table and the next."""
    from optimizer.physical.api import plan_query

    root = tmp_path / "t"
    metastore.register_table("t", str(write_partitions(root, ["k"], [["1"], ["2"]])))
    other = Metastore(db_url)
    counts: list[int] = []

    class CommitAfterFirstRead(MetastoreSource):
        def table(self, name: str) -> TableInfo:
            info = super().table(name)
            if not counts:
                write_partitions(root, ["k"], [["3"]])
                other.register_table("t", str(root))
            counts.append(info.partition_count)
            return info

    try:
        source = CommitAfterFirstRead(metastore.engine, memo=True)
        plan = plan_query(None, "SELECT id FROM t WHERE k > 1", source=source)
    finally:
        other.dispose()
    assert counts[0] == 2 and counts[-1] == 3  # planned again on the new registration
    assert plan.root is not None


def test_a_query_reads_its_tables_stamps_in_one_statement(
    metastore: Metastore, tmp_path: Path
) -> None:
    """Planning a query over three tables reads the tables' stamps in one statement
    (MetastoreSource.prepare), not one per table as each is first read; the plan is the
    one of a source that reads them one by one."""
    from optimizer.physical.api import explain_json, plan_query

    for name in ("a", "b", "c"):
        root = write_partitions(tmp_path / name, ["k"], [["1"], ["2"]])
        metastore.register_table(name, str(root))
    sql = "SELECT a.id FROM a JOIN b ON a.id = b.id JOIN c ON b.id = c.id WHERE a.k = 1"
    reads: list[list[str]] = []

    class Counted(MetastoreSource):
        def _current_stamps(self, names: list[str]) -> dict[str, TableStamp]:
            reads.append(sorted(names))
            return super()._current_stamps(names)

    class OneByOne(MetastoreSource):
        def prepare(self, names: list[str]) -> None:
            pass

    plan = plan_query(None, sql, source=Counted(metastore.engine, memo=True))
    assert reads == [["a", "b", "c"]]
    one_by_one = plan_query(None, sql, source=OneByOne(metastore.engine, memo=True))
    assert explain_json(plan) == explain_json(one_by_one)
    reads.clear()
    source = Counted(metastore.engine)
    source.prepare(["a", "nope"])  # an unknown name is left out (looking it up says so)
    source.prepare(["a", "b"])
    assert reads == [["a", "nope"], ["b"]]  # only the stamps not read yet


def test_a_process_keeps_part_of_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The daemon keeps part of STATLAS_CACHE_MB for its growth beside the cache (at most
    half of the bound); caches made afterwards hold the rest."""
    monkeypatch.setenv("STATLAS_CACHE_MB", "256")
    try:
        reserve_for_process(24 * 2**20)
        assert cache_bytes_from_environment() == 232 * 2**20
        monkeypatch.setenv("STATLAS_CACHE_MB", "10")
        assert cache_bytes_from_environment() == 5 * 2**20
        monkeypatch.setenv("STATLAS_CACHE_MB", "0")
        assert cache_bytes_from_environment() == 0
    finally:
        reserve_for_process(0)
    monkeypatch.setenv("STATLAS_CACHE_MB", "256")
    assert cache_bytes_from_environment() == 256 * 2**20
