"""Hive-style partition directories: small ones of three rows for any keys
(`write_partitions`), and a partition of the collection tests' table (`write_partition`):
random rows of every kind of column (integers, a decimal, a date, strings with NULLs, a
list), one Parquet file under the directory of its (dt, region) values."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from metastore import Metastore
from metastore.partitions.names import partition_name


def write_partition(
    root: Path, values: list[str | None], rng: random.Random, rows: int
) -> pa.Table:
    table = pa.table(
        {
            "id": pa.array([rng.randrange(10_000) for _ in range(rows)], pa.int64()),
            "name": [None if rng.random() < 0.2 else f"n{rng.randrange(50)}" for _ in range(rows)],
            "amount": pa.array(
                [Decimal(rng.randrange(100_000)) / 100 for _ in range(rows)], pa.decimal128(10, 2)
            ),
            "day": pa.array(
                [dt.date(2024, 1, 1) + dt.timedelta(rng.randrange(60)) for _ in range(rows)],
                pa.date32(),
            ),
            "hot": pa.array(
                [1 if rng.random() < 0.6 else rng.randrange(1000) for _ in range(rows)], pa.int32()
            ),
            "rate": pa.array(
                [Decimal(rng.choice(["0.05", "0.10", "0.10", "0.25"])) for _ in range(rows)],
                pa.decimal128(4, 2),
            ),
            "tags": [["a", "b"] if rng.random() < 0.5 else None for _ in range(rows)],
        }
    )
    directory = root / partition_name(["dt", "region"], values)
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / "part-00000.parquet")
    return table


def write_partitions(
    root: Path,
    keys: Sequence[str],
    rows: Sequence[Sequence[str | None]],
    data_format: str = "parquet",
) -> Path:
    """A Hive-style dataset under root: one small data file per partition. Raw values are
    escaped as Hive does; None is the default partition."""
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "label": ["a", None, "c"]})
    for raw in rows:
        directory = root / partition_name(list(keys), list(raw)) if keys else root
        directory.mkdir(parents=True, exist_ok=True)
        if data_format == "orc":
            from pyarrow import orc

            orc.write_table(table, str(directory / "part-00000.orc"))
        else:
            pq.write_table(table, directory / "part-00000.parquet")
    return root


SALES_DAYS = ["2024-01-01", "2024-01-02", "2024-01-03"]
SALES_REGIONS = ["emea", "apac", "amer"]


def register_sales(metastore: Metastore, root: Path) -> Metastore:
    """`sales` under `root`: by dt (date) x region (string), SALES_DAYS x SALES_REGIONS,
    with a default partition on each key; registered in `metastore`, which is returned."""
    rows: list[list[str | None]] = [[d, r] for d in SALES_DAYS for r in SALES_REGIONS]
    rows += [[None, "emea"], ["2024-01-01", None]]
    write_partitions(root / "sales", ["dt", "region"], rows)
    metastore.register_table("sales", str(root / "sales"))
    return metastore


def corrupt_pages(path: Path) -> None:
    """Overwrite a Parquet file's data pages, its footer kept: the file's schema reads, its
    rows do not (Spark's scan of it fails)."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    start, end = 4, len(data) - 8 - footer
    data[start:end] = b"\xff" * (end - start)
    path.write_bytes(bytes(data))
