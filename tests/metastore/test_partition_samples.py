"""Each partition's row sample kept once (metastore.statistics.partition_samples): a full
collection leaves it in the block of HOLDING_LEVEL over the partition, not in the
partition's own row; every selection still reads every partition's rows, after partitions
are appended, changed and dropped (a dropped block's samples go back to its partitions, or
its row stays as their holder). On SQLite and PostgreSQL, collected with a real Spark."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from metastore import Metastore, PartitionQuery
from metastore.catalog.tables import forget_statistics, get_table
from metastore.engine import run_write
from metastore.models import PartitionStats, RollupBlock
from metastore.statistics.block_reads import table_sample
from metastore.statistics.partition_samples import HOLDING_LEVEL
from metastore.statistics.rollups import refresh_blocks
from tests.metastore.test_rollups import START, day_values, write_day

DAYS = 70  # ids 1..70: blocks of HOLDING_LEVEL 0 (ids 1..63) and 1 (64..70)


def days(*numbers: int) -> PartitionQuery:
    listed = ", ".join(f"'{START + dt.timedelta(days=n)}'" for n in numbers)
    return PartitionQuery(where=f"day IN ({listed})")


def sampled_ids(ms: Metastore, *numbers: int) -> list[int]:
    sample = table_sample(ms.engine, "facts", days(*numbers))
    assert sample is not None
    return sorted(int(v) for v in sample.columns["id"])


def expected_ids(*numbers: int, rows: dict[int, int] | None = None) -> list[int]:
    """The ids of the days' rows (4 a day, or as `rows` says)."""
    return sorted(v for n in numbers for v in day_values(n, (rows or {}).get(n, 4))["id"])


def where_kept(ms: Metastore) -> tuple[int, int, int]:
    """(partitions with a sample, of them in their own rows, blocks of HOLDING_LEVEL with one)."""
    p, b = PartitionStats.__table__.c, RollupBlock.__table__.c
    with ms.engine.connect() as conn:
        sampled = conn.execute(select(func.count()).where(p.sample_size > 0)).scalar_one()
        own = conn.execute(select(func.count()).where(p.sample.is_not(None))).scalar_one()
        blocks = conn.execute(
            select(func.count()).where(b.level == HOLDING_LEVEL, b.sample.is_not(None))
        ).scalar_one()
    return int(sampled), int(own), int(blocks)


SELECTIONS = [(5,), (1, 2, 3), (8, 9, 10, 11, 12, 13, 14, 15), (62, 63, 64, 65), (33, 70)]


def check_every_selection(ms: Metastore, rows: dict[int, int] | None = None) -> None:
    for selection in SELECTIONS:
        assert sampled_ids(ms, *selection) == expected_ids(*selection, rows=rows), selection


def collected(ms: Metastore, spark: Any, tmp_path: Path) -> Path:
    """A table of DAYS days, registered and fully collected; its root."""
    from collectors.collect import collect

    root = tmp_path / "facts"
    for day in range(1, DAYS + 1):
        write_day(root, day)
    ms.register_table("facts", str(root))
    collect(ms.engine, "facts", spark=spark, full=True)
    return root


def test_a_partition_sample_is_kept_once_and_read_from_its_block(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect

    root = collected(metastore, spark, tmp_path)
    # no partition keeps its own sample: the two blocks of HOLDING_LEVEL keep them all
    assert where_kept(metastore) == (DAYS, 0, 2)
    check_every_selection(metastore)

    # a partition appended: its rows appended to the block it joins, not kept twice
    write_day(root, DAYS + 1)
    metastore.register_table("facts", str(root))
    collect(metastore.engine, "facts", spark=spark)
    assert where_kept(metastore) == (DAYS + 1, 0, 2)
    assert sampled_ids(metastore, 70, 71) == expected_ids(70, 71)

    # a partition changed: the block over it built again, its own and the others' rows read
    shutil.rmtree(next(root.glob("day=*-01-11")))
    write_day(root, 10, rows=6)
    metastore.register_table("facts", str(root))
    collect(metastore.engine, "facts", spark=spark)
    assert where_kept(metastore) == (DAYS + 1, 0, 2)
    assert sampled_ids(metastore, 9, 10, 11) == expected_ids(9, 10, 11, rows={10: 6})
    check_every_selection(metastore, rows={10: 6})


def test_dropped_statistics_leave_the_others_samples_readable(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    collected(metastore, spark, tmp_path)
    info = metastore.table("facts")

    def forget(conn: Any) -> None:
        p = PartitionStats.__table__.c
        table_id = get_table(conn, "facts").id
        (pid,) = conn.execute(
            select(p.partition_id).where(p.table_id == table_id).order_by(p.partition_id).limit(1)
        ).one()
        forget_statistics(conn, table_id, [int(pid)])

    run_write(metastore.engine, forget)
    # the block over the dropped partition stays as the others' holder: no selection reads
    # it as a block, their samples are read from it
    b = RollupBlock.__table__.c
    with metastore.engine.connect() as conn:
        holder = conn.execute(
            select(b.partitions).where(b.level == HOLDING_LEVEL, b.block == 0)
        ).scalar_one()
    assert holder == 0
    assert sampled_ids(metastore, 2, 3, 40) == expected_ids(2, 3, 40)
    assert sampled_ids(metastore, 8, 9, 10, 11, 12, 13, 14, 15) == expected_ids(*range(8, 16))

    # built again (as the next collection does): the holder's samples go back to their
    # partitions first, then into the new block
    types = {c.name: c.type for c in info.columns}
    run_write(
        metastore.engine,
        lambda conn: refresh_blocks(conn, get_table(conn, "facts").id, types),
    )
    assert where_kept(metastore) == (DAYS - 1, 0, 2)
    assert sampled_ids(metastore, 2, 3, 40, 70) == expected_ids(2, 3, 40, 70)


def test_a_sample_left_unencoded_is_encoded_where_it_is_given_back() -> None:
    """A full collection leaves the samples its blocks will hold unencoded (their tables
    pooled); where one is given back to its partition's row it is encoded then, to the
    bytes its table would have been stored as."""
    import pyarrow as pa
    import pytest

    from metastore.statistics.rollups import PartitionPiece, stored_sample
    from metastore.statistics.samples import encode_table, sample_table

    table = pa.table({"id": pa.array([3.0, 6.0, None]), "label": ["a", None, "日本"]})
    left = PartitionPiece(40, (3, None), [], table)
    assert stored_sample(left) == encode_table(table)
    assert sample_table(stored_sample(left)).equals(table)
    kept = PartitionPiece(40, (3, b"stored"), [], table)
    assert stored_sample(kept) == b"stored"  # bytes at hand are not encoded again
    with pytest.raises(ValueError, match="neither"):
        stored_sample(PartitionPiece(40, (3, None), []))
