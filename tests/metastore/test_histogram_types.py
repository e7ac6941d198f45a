"""Histogram bounds follow the column's type (issue 21, part 5), on SQLite and PostgreSQL:
integer and date columns get integer edges (whole numbers, whole days), decimals edges on
their scale, doubles keep fractional edges; every bucket's count is the rows between its
bounds as shown, and the counts add up to the rows.

The statistics are recorded as `statlas collect` records them (per-partition KLL and HLL
sketches, min/max as text), written directly so no Spark is needed: 180 rows, few enough
that the merged KLL sketch is exact and counts can be compared with the truth. One partition's
KLL sketches are stored as statistics collected before issue 49 were (raw), the other's as
the scan stores them now (deflated): the two forms merge."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasketches import hll_sketch, kll_doubles_sketch
from sqlalchemy import insert, select

from metastore import Metastore
from metastore.catalog.tables import get_table
from metastore.models import CollectionRun, ColumnStats, PartitionStats
from metastore.statistics.histograms import deflated
from metastore.statistics.summaries import table_statistics
from metastore.types import format_value
from statlas.charts import bar_chart

EPOCH = dt.date(1970, 1, 1)
ROWS_PER_PART = 90
START = dt.date(2024, 3, 1)
MIDNIGHT = dt.datetime(2024, 3, 1)


def columns_of(i: int) -> dict[str, Any]:
    """Row i of the table: every column a function of i."""
    return {
        "order_id": i * 7,  # 0 .. 1253
        "flag": i % 3,  # three distinct values
        "day": START + dt.timedelta(days=i % 10),  # ten days
        "price": Decimal(1 + (i * 7919) % 50_000) / 100,  # 0.01 .. 500.00
        "ratio": i / 7,
        "qty": (i * 13) % 1000,  # no KLL sketch: the uniform histogram
        "at": MIDNIGHT + dt.timedelta(microseconds=i),  # 180 consecutive microseconds
    }


SCHEMA = pa.schema(
    [
        ("order_id", pa.int64()),
        ("flag", pa.int8()),
        ("day", pa.date32()),
        ("price", pa.decimal128(10, 2)),
        ("ratio", pa.float64()),
        ("qty", pa.int32()),
        ("at", pa.timestamp("us")),
    ]
)


def as_double(value: Any) -> float:
    """A value as the collector sketches it: dates as days, timestamps as microseconds."""
    if isinstance(value, dt.datetime):
        return float((value - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1))
    if isinstance(value, dt.date):
        return float((value - EPOCH).days)
    return float(value)


@pytest.fixture
def orders(metastore: Metastore, tmp_path: Path) -> dict[str, list[Any]]:
    return record_orders(metastore, tmp_path)


def record_orders(metastore: Metastore, tmp_path: Path) -> dict[str, list[Any]]:
    """Table `orders`, two partitions of 90 rows, with statistics; the values per column."""
    parts = {"a": range(0, ROWS_PER_PART), "b": range(ROWS_PER_PART, 2 * ROWS_PER_PART)}
    for part, indexes in parts.items():
        directory = tmp_path / "orders" / f"part={part}"
        directory.mkdir(parents=True)
        rows = [columns_of(i) for i in indexes]
        table = pa.Table.from_pylist(rows, schema=SCHEMA)
        pq.write_table(table, directory / "part-00000.parquet")
    metastore.register_table("orders", str(tmp_path / "orders"))
    with metastore.engine.begin() as conn:
        info = get_table(conn, "orders")
        store = info.store()
        ids = dict(conn.execute(select(store.key_columns[0], store.table.c.id)).all())
        run = conn.execute(
            insert(CollectionRun).values(table_id=info.id, status="succeeded")
        ).inserted_primary_key
        assert run is not None
        for part, indexes in parts.items():
            rows = [columns_of(i) for i in indexes]
            conn.execute(
                insert(PartitionStats).values(
                    table_id=info.id,
                    partition_id=ids[part],
                    row_count=len(rows),
                    file_count=1,
                    total_bytes=1,
                    modified_ns=1,
                    run_id=run[0],
                )
            )
            for name in SCHEMA.names:
                values = [r[name] for r in rows]
                conn.execute(
                    insert(ColumnStats).values(
                        column_stats(info.id, ids[part], name, values, deflate=part == "b")
                    )
                )
    return {name: [columns_of(i)[name] for i in range(2 * ROWS_PER_PART)] for name in SCHEMA.names}


def column_stats(
    table_id: int, partition_id: int, name: str, values: list[Any], deflate: bool = False
) -> dict[str, Any]:
    hll = hll_sketch(12)
    kll = kll_doubles_sketch(200)
    for value in values:
        hll.update(as_double(value))
        kll.update(as_double(value))
    return {
        "table_id": table_id,
        "partition_id": partition_id,
        "column_name": name,
        "null_count": 0,
        "min_value": format_value(min(values)),
        "max_value": format_value(max(values)),
        "hll": hll.serialize_compact(),
        "kll": None if name == "qty" else (deflated if deflate else bytes)(kll.serialize()),
    }


def bucket_truth(values: Sequence[Any], bounds: Sequence[Any]) -> list[int]:
    """Rows in [bounds[i], bounds[i+1]) as shown, the last bucket closed."""
    last = len(bounds) - 2
    return [
        sum(1 for v in values if bounds[i] <= v < bounds[i + 1] or (i == last and v == bounds[-1]))
        for i in range(len(bounds) - 1)
    ]


def histogram_json(metastore: Metastore, column: str, buckets: int) -> dict[str, Any]:
    summary = table_statistics(metastore.engine, "orders", columns=[column], buckets=buckets)
    return summary.columns[column].as_json()


def test_bigint_equi_width_has_integer_bounds(
    metastore: Metastore, orders: dict[str, list[Any]]
) -> None:
    data = histogram_json(metastore, "order_id", 4)
    width = data["equi_width"]
    # width ceil((1253 - 0 + 1) / 4) = 314: the old histogram printed [0, 313.25)
    assert width["bounds"] == [0, 314, 628, 942, 1253]
    assert all(type(b) is int for b in width["bounds"])
    assert width["counts"] == bucket_truth(orders["order_id"], width["bounds"])
    assert sum(width["counts"]) == 180
    assert bar_chart(width)[0].startswith("[0, 314)")
    depth = data["equi_depth"]
    assert all(type(b) is int for b in depth["bounds"])
    assert depth["counts"] == bucket_truth(orders["order_id"], depth["bounds"])
    assert sum(depth["counts"]) == 180


def test_fewer_integers_than_buckets_gives_fewer_buckets(
    metastore: Metastore, orders: dict[str, list[Any]]
) -> None:
    width = histogram_json(metastore, "flag", 8)["equi_width"]
    # three values, eight buckets asked: one bucket per value, none empty by rounding
    assert width == {"bounds": [0, 1, 2, 2], "counts": [60, 60, 60]}


def test_date_bounds_are_whole_days(metastore: Metastore, orders: dict[str, list[Any]]) -> None:
    data = histogram_json(metastore, "day", 4)
    width = data["equi_width"]
    # ten days, four buckets: three days each, the last bucket the last day
    assert width["bounds"] == ["2024-03-01", "2024-03-04", "2024-03-07", "2024-03-10", "2024-03-10"]
    shown = [dt.date.fromisoformat(b) for b in width["bounds"]]
    assert width["counts"] == bucket_truth(orders["day"], shown) == [54, 54, 54, 18]
    depth = data["equi_depth"]
    shown = [dt.date.fromisoformat(b) for b in depth["bounds"]]
    assert depth["counts"] == bucket_truth(orders["day"], shown)
    assert sum(depth["counts"]) == 180


def test_decimal_bounds_are_on_the_scale(
    metastore: Metastore, orders: dict[str, list[Any]]
) -> None:
    data = histogram_json(metastore, "price", 4)
    for kind in ("equi_width", "equi_depth"):
        histogram = data[kind]
        exact = [Decimal(repr(b)) for b in histogram["bounds"]]
        assert all(b == round(b, 2) for b in exact), (kind, histogram["bounds"])
        assert histogram["counts"] == bucket_truth(orders["price"], exact), kind
        assert sum(histogram["counts"]) == 180
    low, high = min(orders["price"]), max(orders["price"])
    width = data["equi_width"]["bounds"]
    step = Decimal(repr(width[1])) - Decimal(repr(width[0]))
    # width ceil((max - min + 0.01) / 4) in hundredths
    assert step == -((low - high - Decimal("0.01")) * 100 // 4) / 100
    assert width[0] == float(low)
    assert width[-1] == float(high)


def test_double_bounds_stay_fractional(metastore: Metastore, orders: dict[str, list[Any]]) -> None:
    width = histogram_json(metastore, "ratio", 4)["equi_width"]
    high = max(orders["ratio"])
    assert width["bounds"] == [0.0, high / 4, high / 2, 3 * high / 4, high]
    assert width["counts"] == bucket_truth(orders["ratio"], width["bounds"])


def test_seed_uniform_of_an_integer_column(
    metastore: Metastore, orders: dict[str, list[Any]]
) -> None:
    data = histogram_json(metastore, "qty", 64)
    assert data["equi_width"] is None
    assert data["equi_depth"] is None
    uniform = data["uniform"]
    bounds: list[int] = uniform["bounds"]
    assert all(type(b) is int for b in bounds)
    assert bounds[0] == min(orders["qty"])
    assert bounds[-1] == max(orders["qty"])
    assert sum(uniform["counts"]) == pytest.approx(180, abs=1e-9)
    # uniform over the integers: each bucket's share of the rows is its share of them
    integers = bounds[-1] - bounds[0] + 1
    last = len(bounds) - 2
    for i, count in enumerate(uniform["counts"]):
        size = bounds[i + 1] - bounds[i] + (1 if i == last else 0)
        assert count == pytest.approx(180 * size / integers, abs=1e-3)


def test_timestamp_bounds_are_whole_microseconds(
    metastore: Metastore, orders: dict[str, list[Any]]
) -> None:
    width = histogram_json(metastore, "at", 4)["equi_width"]
    # 180 microseconds in buckets of 45 (the old edges were 44.75, 89.5, 134.25 microseconds)
    assert width["bounds"] == [
        "2024-03-01 00:00:00",
        "2024-03-01 00:00:00.000045",
        "2024-03-01 00:00:00.000090",
        "2024-03-01 00:00:00.000135",
        "2024-03-01 00:00:00.000179",
    ]
    shown = [dt.datetime.fromisoformat(b) for b in width["bounds"]]
    assert width["counts"] == bucket_truth(orders["at"], shown) == [45, 45, 45, 45]
