"""A pooled PostgreSQL connection that received a large value (a table's pre-merged sample)
is closed when it returns to the pool: libpq keeps its input buffer at the largest message
it received for as long as the connection lives (metastore.engine.note_read)."""

from __future__ import annotations

import secrets
from pathlib import Path

from sqlalchemy import Engine, func, insert, literal, select

from metastore import Metastore
from metastore.catalog.tables import get_table
from metastore.engine import LARGE_READ_BYTES, make_engine, note_read
from metastore.models import CollectionRun, PartitionStats
from metastore.statistics.block_reads import table_sample
from metastore.statistics.samples import encode_sample
from tests.support.partitions import write_partitions


def backend(engine: Engine) -> int:
    """The PostgreSQL server process of the connection the pool lends next."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.pg_backend_pid())).scalar_one())


def test_a_connection_that_received_a_large_value_leaves_the_pool(pg_url: str) -> None:
    engine = make_engine(pg_url)
    try:
        first = backend(engine)
        with engine.connect() as conn:
            small = conn.execute(select(literal(b"x" * 1000))).scalar_one()
            note_read(conn, len(small))
        assert backend(engine) == first  # kept: its buffer is small
        with engine.connect() as conn:
            large = conn.execute(select(func.decode(func.repeat("ab", LARGE_READ_BYTES), "hex")))
            note_read(conn, len(large.scalar_one()))
        assert backend(engine) != first  # closed on its return: a new connection
    finally:
        engine.dispose()


def with_sample(metastore: Metastore, tmp_path: Path, text_bytes: int) -> None:
    """Table t of one partition whose stored sample holds three strings of `text_bytes`."""
    metastore.register_table("t", str(write_partitions(tmp_path / "t", ["k"], [["1"]])))
    texts = [(secrets.token_hex(text_bytes // 2),) for _ in range(3)]
    with metastore.engine.begin() as conn:
        info = get_table(conn, "t")
        store = info.store()
        partition = conn.execute(select(store.table.c.id)).scalar_one()
        run = conn.execute(
            insert(CollectionRun).values(table_id=info.id, status="succeeded")
        ).inserted_primary_key
        assert run is not None
        conn.execute(
            insert(PartitionStats).values(
                table_id=info.id,
                partition_id=partition,
                row_count=3,
                file_count=1,
                total_bytes=1,
                modified_ns=1,
                run_id=run[0],
                sample_size=3,
                sample=encode_sample([("label", "string")], texts),
            )
        )


def test_reading_a_large_sample_closes_its_connection(pg_url: str, tmp_path: Path) -> None:
    metastore = Metastore(pg_url)
    metastore.upgrade()
    try:
        with_sample(metastore, tmp_path, LARGE_READ_BYTES)  # stored: about half (hex digits)
        before = backend(metastore.engine)
        sample = table_sample(metastore.engine, "t")
        assert sample is not None
        assert sample.size == 3
        assert backend(metastore.engine) != before
    finally:
        metastore.dispose()


def test_a_small_sample_keeps_its_connection(pg_url: str, tmp_path: Path) -> None:
    metastore = Metastore(pg_url)
    metastore.upgrade()
    try:
        with_sample(metastore, tmp_path, 1000)
        before = backend(metastore.engine)
        assert table_sample(metastore.engine, "t") is not None
        assert backend(metastore.engine) == before
    finally:
        metastore.dispose()
