"""A collection into PostgreSQL writes its partitions while the scan runs
(collectors.streamed_write), in the write's own transaction: the statistics equal the
ordinary write's; a connection lost while streaming is written again after the scan; a
scan that fails leaves the old statistics as they were."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import Connection, select

from metastore import Metastore
from metastore.models import ColumnStats, PartitionStats
from metastore.statistics.summaries import table_statistics

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DAYS = 150  # more than two batches of streamed partitions


def write_days(root: Path, rows: int) -> None:
    for day in range(DAYS):
        values = list(range(day, day + rows))
        table = pa.table(
            {"id": pa.array(values, pa.int64()), "label": [f"l{v % 7}" for v in values]}
        )
        directory = root / f"day={dt.date(2024, 1, 1) + dt.timedelta(days=day)}"
        directory.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, directory / "part-00000.parquet")


def registered(url: str, root: Path, rows: int = 3) -> Metastore:
    """A metastore at `url` with the table `facts` of DAYS days of `rows` rows registered."""
    write_days(root, rows)
    ms = Metastore(url)
    ms.upgrade()
    ms.register_table("facts", str(root))
    return ms


def stored(ms: Metastore) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The partitions' rows and the columns' exact figures, sorted."""
    p, c = PartitionStats.__table__.c, ColumnStats.__table__.c
    with ms.engine.connect() as conn:
        partitions = conn.execute(select(p.partition_id, p.row_count, p.sample_size)).all()
        columns = conn.execute(
            select(c.partition_id, c.column_name, c.null_count, c.min_value, c.max_value)
        ).all()
    return sorted(map(tuple, partitions)), sorted(map(tuple, columns))


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The StreamedWrites the collections make, kept with what finish() returned."""
    import collectors.collect
    from collectors.streamed_write import StreamedWrite

    made: list[Any] = []

    class Kept(StreamedWrite):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.finished: bool | None = None
            made.append(self)

        def finish(self, rest: Any) -> bool:
            self.finished = super().finish(rest)
            return self.finished

    monkeypatch.setattr(collectors.collect, "StreamedWrite", Kept)
    return made


def test_streamed_partitions_are_the_ordinary_writes(
    pg_url: str, spark: Any, tmp_path: Path, streams: list[Any]
) -> None:
    from collectors.collect import collect

    root = tmp_path / "facts"
    ordinary = registered(f"sqlite:///{tmp_path / 'ordinary.db'}", root)  # never streamed
    collect(ordinary.engine, "facts", spark=spark)
    assert streams == []
    ms = registered(pg_url, root)
    collect(ms.engine, "facts", spark=spark)
    # every partition went in while the scan ran, and the rest of the write committed
    assert len(streams) == 1
    assert streams[0].finished is True
    assert len(streams[0].written) == DAYS
    assert stored(ms) == stored(ordinary)
    write_days(root, 5)  # every partition changed: the old statistics dropped in the stream
    collect(ms.engine, "facts", spark=spark)
    collect(ordinary.engine, "facts", spark=spark)
    assert streams[1].finished is True
    assert stored(ms) == stored(ordinary)
    whole = table_statistics(ms.engine, "facts")
    assert (whole.partitions, whole.row_count) == (DAYS, DAYS * 5)
    ms.dispose()
    ordinary.dispose()


def test_a_connection_lost_while_streaming_is_written_after_the_scan(
    pg_url: str,
    spark: Any,
    tmp_path: Path,
    streams: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from collectors import streamed_write
    from collectors.collect import collect

    inserted = streamed_write.bulk_insert
    batches: list[int] = []

    def dies_at_the_second_batch(conn: Connection, model: Any, rows: Any) -> None:
        if model is PartitionStats:
            batches.append(len(rows))
            if len(batches) == 2:  # the server ends the streaming connection
                conn.exec_driver_sql("SELECT pg_terminate_backend(pg_backend_pid())")
        inserted(conn, model, rows)

    monkeypatch.setattr(streamed_write, "bulk_insert", dies_at_the_second_batch)
    ms = registered(pg_url, tmp_path / "facts")
    with caplog.at_level(logging.WARNING, logger="collectors.streamed_write"):
        report = collect(ms.engine, "facts", spark=spark)
    assert len(batches) == 2
    assert streams[0].finished is False
    assert "streaming the write failed" in caplog.text
    assert report.partitions_scanned == DAYS
    partitions, columns = stored(ms)
    assert (len(partitions), len(columns)) == (DAYS, DAYS * 2)
    whole = table_statistics(ms.engine, "facts")
    assert (whole.partitions, whole.row_count) == (DAYS, DAYS * 3)
    ms.dispose()


def test_a_scan_failing_while_streaming_keeps_the_old_statistics(
    pg_url: str,
    spark: Any,
    tmp_path: Path,
    streams: list[Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from collectors.collect import CollectionFailed, collect
    from collectors.streamed_write import BATCH_PARTITIONS, StreamedWrite

    root = tmp_path / "facts"
    ms = registered(pg_url, root)
    collect(ms.engine, "facts", spark=spark)
    before = stored(ms)
    write_days(root, 5)
    added = StreamedWrite.add
    handed: list[int] = []

    def fails_after_two_batches(self: Any, pid: int, *rows: Any) -> None:
        handed.append(pid)
        if len(handed) == 2 * BATCH_PARTITIONS + 1:  # two batches copied in, or being copied
            raise RuntimeError("the scan broke")
        added(self, pid, *rows)

    monkeypatch.setattr(StreamedWrite, "add", fails_after_two_batches)
    with pytest.raises(CollectionFailed, match="previous statistics kept"):
        collect(ms.engine, "facts", spark=spark)
    assert stored(ms) == before
    monkeypatch.setattr(StreamedWrite, "add", added)
    collect(ms.engine, "facts", spark=spark)  # no lock left behind
    whole = table_statistics(ms.engine, "facts")
    assert (whole.partitions, whole.row_count) == (DAYS, DAYS * 5)
    ms.dispose()


def test_a_collection_failing_before_its_scan_leaves_no_transaction_open(
    pg_url: str, spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import collectors.collect
    from collectors.collect import CollectionFailed, collect

    root = tmp_path / "facts"
    ms = registered(pg_url, root)
    collect(ms.engine, "facts", spark=spark)
    before = stored(ms)

    def unreadable(*_: Any) -> Any:
        raise RuntimeError("the files cannot be read")

    monkeypatch.setattr(collectors.collect, "_reader", unreadable)
    with pytest.raises(CollectionFailed, match="cannot be read"):
        collect(ms.engine, "facts", full=True, spark=spark)
    # the streamed write's transaction was rolled back: its row locks are gone
    with ms.engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL lock_timeout = '2s'")
        conn.execute(select(PartitionStats.partition_id).with_for_update()).all()
    assert stored(ms) == before
    ms.dispose()
