"""A sampled table's rows whose key other tables reference heavily are kept in its sample
whatever the draw, with weight one (collectors.forced_keys): collected with a real Spark
into SQLite and PostgreSQL, the key table sampled again once the referencing table is known,
and a join through the heavy keys estimated from their rows."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from collectors.collect import collect_tables
from collectors.forced_keys import worth_forcing
from collectors.spark_session import LazySession
from metastore import Metastore
from metastore.statistics.block_reads import table_sample
from metastore.statistics.samples import FORCED, partition_weights
from optimizer.estimate.sources import MetastoreSource
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Aggregate
from optimizer.sql_to_plan import build_plan

HEAVY = (101, 2222, 5005)  # the items sales reference heavily
DAYS = 12
ITEMS_PER_DAY = 1000
HEAVY_SALES = 400  # per heavy item and day
SPREAD_SALES = 750  # per day, over every item


def test_partition_weights_give_forced_rows_one() -> None:
    drawn = pa.table({"k": [1.0, 2.0, 3.0, 4.0]})
    assert partition_weights(drawn, 40).tolist() == [10.0] * 4
    marked = drawn.append_column(FORCED, pa.array([1.0, 0.0, 1.0, 0.0]))
    weights = partition_weights(marked, 40)
    assert weights.tolist() == [1.0, 19.0, 1.0, 19.0]
    assert weights.sum() == 40
    every = drawn.append_column(FORCED, pa.array([1.0] * 4))
    assert partition_weights(every, 4).tolist() == [1.0] * 4


def write_shop(root: Path) -> None:
    """shop.items (a key, item_id, and the heavy items' category 'hot') and shop.sales
    (every item sold a little, the HEAVY ones a lot, in store 7), by day."""
    rng = np.random.default_rng(7)
    for day in range(DAYS):
        name = write_items(root, day)
        spread = rng.integers(1, DAYS * ITEMS_PER_DAY + 1, SPREAD_SALES)
        sold = np.concatenate([spread, np.repeat(np.array(HEAVY), HEAVY_SALES)])
        # the heavy items sold in store 7: a heavy value that is no item's id
        stores = np.concatenate(
            [rng.integers(1, 51, spread.size), np.full(sold.size - spread.size, 7)]
        )
        sales = pa.table(
            {"item_id": sold, "store": stores, "quantity": rng.integers(1, 5, sold.size)}
        )
        (root / "sales" / name).mkdir(parents=True)
        pq.write_table(sales, root / "sales" / name / "part-00000.parquet")


def write_items(root: Path, day: int) -> str:
    """shop.items' partition of `day` (0 is the first): ITEMS_PER_DAY new items."""
    name = f"day={dt.date(2024, 5, 1) + dt.timedelta(days=day)}"
    ids = np.arange(day * ITEMS_PER_DAY + 1, (day + 1) * ITEMS_PER_DAY + 1)
    category = ["hot" if i in HEAVY else f"c{i % 10}" for i in ids.tolist()]
    items = pa.table({"item_id": ids, "category": category, "price": ids / 7.0})
    (root / "items" / name).mkdir(parents=True)
    pq.write_table(items, root / "items" / name / "part-00000.parquet")
    return name


@pytest.fixture
def shop(metastore: Metastore, spark: Any, tmp_path: Path) -> Metastore:
    write_shop(tmp_path)
    # items drawn one row in twenty: the heavy items' rows would be in it or not
    metastore.register_table("shop.items", str(tmp_path / "items"), properties={"sample_rows": 600})
    metastore.register_table("shop.sales", str(tmp_path / "sales"))
    return metastore


def collected(metastore: Metastore, spark: Any, **options: Any) -> list[Any]:
    sessions = LazySession(session=spark)
    tables = ["shop.items", "shop.sales"]
    return list(collect_tables(metastore.engine, tables, spark=sessions, **options))


def test_only_a_scan_of_a_tenth_of_its_table_looks_for_forced_keys() -> None:
    assert worth_forcing(0.1, 40, 40)
    assert worth_forcing(0.1, 4, 40)
    assert not worth_forcing(0.1, 3, 40)  # an appended partition or three
    assert not worth_forcing(1.0, 40, 40)  # sampled whole
    assert not worth_forcing(0.0, 40, 40)  # not sampled


@pytest.mark.spark
def test_a_key_referenced_heavily_is_kept_in_the_sample(
    shop: Metastore, spark: Any, tmp_path: Path
) -> None:
    outcomes = collected(shop, spark)
    # items had no statistics when collected first: sampled again once sales were known
    assert [o.table for o in outcomes] == ["shop.items", "shop.sales", "shop.items"]
    first, again = outcomes[0].report, outcomes[2].report
    assert first is not None
    assert first.forced is None
    assert first.forcing_looked
    assert again is not None
    assert again.partitions_scanned == DAYS
    assert again.forced is not None
    assert again.forced.column == "item_id"
    assert set(HEAVY) <= set(again.forced.values)
    assert 7 not in again.forced.values  # sales.store spans 1-50, not the items' 1-12,000
    assert again.as_json()["forced_keys"] == len(again.forced.values)

    sample = table_sample(shop.engine, "shop.items")
    assert sample is not None
    ids, weights = sample.columns["item_id"], sample.weights
    for key in HEAVY:
        assert weights[ids == key].tolist() == [1.0]  # its row, standing for itself
    assert weights.sum() == pytest.approx(DAYS * ITEMS_PER_DAY)
    drawn = ~np.isin(ids, again.forced.values)
    assert 300 < drawn.sum() < 1000
    assert weights[drawn].min() > 5

    # nothing changed: nothing scanned, and no table sampled again
    outcomes = collected(shop, spark)
    assert [(o.table, o.report and o.report.partitions_scanned) for o in outcomes] == [
        ("shop.items", 0),
        ("shop.sales", 0),
    ]
    # an appended partition of new items (one of 13): scanned without looking for forced keys
    write_items(tmp_path, DAYS)
    outcomes = collected(shop, spark)
    assert [(o.table, o.report and o.report.partitions_scanned) for o in outcomes] == [
        ("shop.items", 1),
        ("shop.sales", 0),
    ]
    assert outcomes[0].report.forced is None
    assert not outcomes[0].report.forcing_looked
    # a full collection looks again, finds them, and samples no table a second time
    outcomes = collected(shop, spark, full=True)
    assert [o.table for o in outcomes] == ["shop.items", "shop.sales"]
    assert outcomes[0].report.forced == again.forced


@pytest.mark.spark
def test_a_join_through_heavy_keys_is_estimated_from_their_rows(
    shop: Metastore, spark: Any
) -> None:
    collected(shop, spark)
    source = MetastoreSource(shop.engine, memo=True)
    sql = (
        "SELECT COUNT(*) FROM shop.sales s JOIN shop.items i ON s.item_id = i.item_id"
        " WHERE i.category = 'hot'"
    )
    plan = build_plan(sql, source.table)
    assert isinstance(plan, Aggregate)
    estimate = StatsQuery(source, "sketch").of(plan.child).rows.value
    heavy_sales = len(HEAVY) * HEAVY_SALES * DAYS  # and a few of the spread sales
    assert estimate == pytest.approx(heavy_sales, rel=0.1)
