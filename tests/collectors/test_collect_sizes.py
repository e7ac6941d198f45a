"""Statistics sized to what they serve (issue 49, docs/design.md#sizes), collected by Spark
into SQLite and PostgreSQL: in a table of 70 partitions each partition's Theta sketch holds
at most 1,024 hashes (lgK 10), yet the distinct values of the whole table and of a month of
its partitions are within lgK 12's error of the exact counts, one partition's within lgK 10's;
a key column keeps no heavy hitters, a skewed one keeps its heavy value, a column of 120
about equally common values keeps none, one of three values keeps them; KLL sketches are
stored packed and the histograms count every row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasketches import compact_theta_sketch
from sqlalchemy import select

from metastore import Metastore, PartitionQuery
from metastore.models import ColumnStats
from metastore.statistics.from_top_k import FROM_TOP_K
from metastore.statistics.kll_packing import MARK
from metastore.statistics.summaries import table_statistics

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DAYS = 70
ROWS = 3_000
THETA_12 = 0.016  # relative standard errors: 1 / sqrt(4,096) and 1 / sqrt(1,024)
THETA_10 = 0.031


def day(i: int) -> str:
    return f"2024-{1 + i // 28:02d}-{1 + i % 28:02d}"


def test_a_many_partition_table_is_sized_and_as_accurate(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect

    sevens = 0
    for i in range(DAYS):
        ids = list(range(i * ROWS, (i + 1) * ROWS))
        hot = [7 if n % 4 == 0 else n for n in ids]  # 7 in a quarter of the rows
        sevens += hot.count(7)
        table = pa.table(
            {
                "id": ids,
                "hot": hot,
                "price": [n % 997 / 10 for n in ids],
                "even": [n % 120 for n in ids],  # 25 rows each: exact, and nothing to tell
                "lumpy": [0 if n % 10 == 0 else n % 120 for n in ids],  # 0 in 10% of rows
                "flag": [n % 3 for n in ids],
            }
        )
        directory = tmp_path / "t" / f"dt={day(i)}"
        directory.mkdir(parents=True)
        pq.write_table(table, directory / "part-00000.parquet")
    metastore.register_table("t", str(tmp_path / "t"))
    collect(metastore.engine, "t", spark=spark, scan="jvm")

    with metastore.engine.connect() as conn:
        rows = conn.execute(
            select(ColumnStats.column_name, ColumnStats.theta, ColumnStats.kll, ColumnStats.top_k)
        ).all()
    ids = [r for r in rows if r.column_name == "id"]
    assert len(ids) == DAYS
    assert max(compact_theta_sketch.deserialize(r.theta).num_retained for r in ids) <= 1_024
    assert all(r.top_k is None for r in ids)  # a key: no value above the sketch's error
    assert all(r.top_k is not None for r in rows if r.column_name == "hot")
    assert all(r.top_k is None for r in rows if r.column_name == "even")
    assert all(r.top_k is not None for r in rows if r.column_name in ("lumpy", "flag"))
    # packed by the scan, or where the heavy hitters count every value, a mark
    assert all(r.kll[0] == MARK for r in rows if r.kll is not None and r.top_k is None)
    assert all(r.kll[0] in (MARK, FROM_TOP_K) for r in rows if r.kll is not None)

    whole = table_statistics(metastore.engine, "t", buckets=10)
    assert whole.columns["id"].ndv == pytest.approx(DAYS * ROWS, rel=3 * THETA_12)
    assert whole.columns["hot"].mcv[0] == (7, sevens)
    assert whole.columns["price"].equi_depth is not None
    assert sum(whole.columns["price"].equi_depth.counts) == pytest.approx(DAYS * ROWS)
    month = table_statistics(
        metastore.engine, "t", PartitionQuery.of({"dt": [day(i) for i in range(28)]})
    )
    assert month.columns["id"].ndv == pytest.approx(28 * ROWS, rel=3 * THETA_12)
    one = table_statistics(metastore.engine, "t", PartitionQuery.of({"dt": [day(5)]}))
    assert one.columns["id"].ndv == pytest.approx(ROWS, rel=3 * THETA_10)
