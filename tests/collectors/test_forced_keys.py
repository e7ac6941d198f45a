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
from collectors.forced_keys import _shared_heavy_values, looks_for_forced_keys
from collectors.spark_session import LazySession
from metastore import Metastore
from metastore.engine import run_read
from metastore.statistics.block_reads import table_sample
from metastore.statistics.forced_keys import read_forced_keys
from metastore.statistics.samples import FORCED, partition_weights
from metastore.statistics.summaries import ColumnSummary
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


def summary(name: str, low: int, high: int, ndv: int, mcv: list[tuple[int, int]]) -> Any:
    return ColumnSummary(
        name, "bigint", 0, low, high, ndv, "theta", None, None, mcv, None, None, None
    )


class Counted:
    """A table's sampled counts per value of a column (what its row sample shows)."""

    def __init__(self, counts: dict[int, float]) -> None:
        self.given = counts

    def counts(self, name: str) -> dict[int, float]:
        return dict(self.given)


def test_values_heavy_elsewhere_are_forced_where_they_are_light() -> None:
    # comments.c_owner: 20,000 rows over 2,000 owners (10 per owner); posts.p_owner holds
    # owners 5, 6 and 7 heavily (200 rows, 20 times its 10 per owner)
    comments = summary("c_owner", 1, 2000, 2000, [(7, 500)])
    posts = summary("p_owner", 1, 2000, 2000, [(5, 200), (6, 200), (7, 200), (8, 30)])
    sampled = Counted({5: 12.0, 6: 150.0})  # 6 is heavy in comments too, by its sample
    found = _shared_heavy_values(comments, 20_000, [(posts, 20_000)], 1000.0, sampled)
    assert found == (5,)  # 6 and 7 heavy here too, 8 light elsewhere
    # their rows within the budget, from the heaviest elsewhere down
    light = Counted({5: 60.0, 6: 50.0})
    assert _shared_heavy_values(comments, 20_000, [(posts, 20_000)], 100.0, light) == (5,)
    assert _shared_heavy_values(comments, 20_000, [(posts, 20_000)], 120.0, light) == (5, 6)
    # a column over other values (post ids, 1 to 300,000) says nothing of owners
    post_ids = summary("v_post", 1, 300_000, 2000, [(5, 5000)])
    assert _shared_heavy_values(comments, 20_000, [(post_ids, 20_000)], 1000.0, sampled) == ()


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


def stored(metastore: Metastore, table: str) -> dict[str, tuple[int, ...]]:
    """The table's forced keys as the metastore keeps them."""
    info = metastore.table(table)
    return run_read(metastore.engine, lambda conn: read_forced_keys(conn, info.id))


def collected(metastore: Metastore, spark: Any, **options: Any) -> list[Any]:
    sessions = LazySession(session=spark)
    tables = ["shop.items", "shop.sales"]
    return list(collect_tables(metastore.engine, tables, spark=sessions, **options))


def test_only_a_scan_of_every_partition_chooses_forced_keys() -> None:
    assert looks_for_forced_keys(0.1, 40, 40)
    assert not looks_for_forced_keys(0.1, 39, 40)  # the others were drawn with the stored ones
    assert not looks_for_forced_keys(0.1, 1, 41)  # an appended partition
    assert not looks_for_forced_keys(1.0, 40, 40)  # sampled whole
    assert not looks_for_forced_keys(0.0, 40, 40)  # not sampled


@pytest.mark.spark
def test_a_key_referenced_heavily_is_kept_in_the_sample(
    shop: Metastore, spark: Any, tmp_path: Path
) -> None:
    outcomes = collected(shop, spark)
    # items had no statistics when collected first: sampled again once sales were known
    assert [o.table for o in outcomes] == ["shop.items", "shop.sales", "shop.items"]
    first, again = outcomes[0].report, outcomes[2].report
    assert first is not None
    assert first.forced == ()
    assert first.forcing_looked
    assert again is not None
    assert again.partitions_scanned == DAYS
    assert [k.column for k in again.forced] == ["item_id"]
    (keys,) = again.forced
    assert set(HEAVY) <= set(keys.values)
    assert 7 not in keys.values  # sales.store spans 1-50, not the items' 1-12,000
    assert again.as_json()["forced_keys"] == len(keys.values)
    assert stored(shop, "shop.items") == {"item_id": keys.values}

    sample = table_sample(shop.engine, "shop.items")
    assert sample is not None
    ids, weights = sample.columns["item_id"], sample.weights
    for key in HEAVY:
        assert weights[ids == key].tolist() == [1.0]  # its row, standing for itself
    assert weights.sum() == pytest.approx(DAYS * ITEMS_PER_DAY)
    drawn = ~np.isin(ids, keys.values)
    assert 300 < drawn.sum() < 1000
    assert weights[drawn].min() > 5

    # nothing changed: nothing scanned, and no table sampled again
    outcomes = collected(shop, spark)
    assert [(o.table, o.report and o.report.partitions_scanned) for o in outcomes] == [
        ("shop.items", 0),
        ("shop.sales", 0),
    ]
    # an appended partition of new items (one of 13): drawn with the stored keys, not looking
    write_items(tmp_path, DAYS)
    outcomes = collected(shop, spark)
    assert [(o.table, o.report and o.report.partitions_scanned) for o in outcomes] == [
        ("shop.items", 1),
        ("shop.sales", 0),
    ]
    assert outcomes[0].report.forced == again.forced
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


RETURNS_PER_DAY = 2000  # over every item, each returned twice on average
HEAVY_RETURNED_ON = (0, 5, 10)  # the days each heavy item is returned once: light in returns


def write_returns(root: Path) -> None:
    """shop.returns: items returned, by day; the HEAVY items (heavy in sales) three times
    each, as 'broken', the others as any reason."""
    rng = np.random.default_rng(11)
    for day in range(DAYS):
        items = rng.integers(1, DAYS * ITEMS_PER_DAY + 1, RETURNS_PER_DAY)
        items = items[~np.isin(items, HEAVY)]
        reasons = rng.choice(["late", "broken", "lost"], items.size).tolist()
        if day in HEAVY_RETURNED_ON:
            items = np.concatenate([items, np.array(HEAVY)])
            reasons += ["broken"] * len(HEAVY)
        name = f"day={dt.date(2024, 5, 1) + dt.timedelta(days=day)}"
        (root / "returns" / name).mkdir(parents=True)
        pq.write_table(
            pa.table({"item_id": items, "reason": reasons}),
            root / "returns" / name / "part-00000.parquet",
        )


@pytest.mark.spark
def test_values_heavy_in_another_table_are_kept_where_they_are_light(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    write_shop(tmp_path)
    write_returns(tmp_path)
    # both drawn about one row in ten: a heavy item's three returns would be in it or not,
    # and the two samples would meet in too few row pairs to tell its degrees
    metastore.register_table(
        "shop.sales", str(tmp_path / "sales"), properties={"sample_rows": 2400}
    )
    metastore.register_table(
        "shop.returns", str(tmp_path / "returns"), properties={"sample_rows": 2400}
    )
    sessions = LazySession(session=spark)
    tables = ["shop.sales", "shop.returns"]
    outcomes = list(collect_tables(metastore.engine, tables, spark=sessions))
    # returns had no statistics of its own when first collected: sampled again at the end
    assert [o.table for o in outcomes] == ["shop.sales", "shop.returns", "shop.returns"]
    last = {o.table: o.report for o in outcomes}
    keys = {k.column: k.values for k in last["shop.returns"].forced}
    assert set(HEAVY) <= set(keys["item_id"])  # heavy in sales, light in returns
    assert stored(metastore, "shop.returns") == keys
    assert "item_id" not in stored(metastore, "shop.sales")  # heavy in sales itself

    sample = table_sample(metastore.engine, "shop.returns")
    assert sample is not None
    ids, weights = sample.columns["item_id"], sample.weights
    for key in HEAVY:
        assert weights[ids == key].tolist() == [1.0] * len(HEAVY_RETURNED_ON)
    assert weights.max() > 5  # the others drawn
    assert set(HEAVY) <= set(sample.complete["item_id"].tolist())

    spark.read.parquet(str(tmp_path / "sales")).createOrReplaceTempView("t_sales")
    spark.read.parquet(str(tmp_path / "returns")).createOrReplaceTempView("t_returns")
    join = " s JOIN {r} r ON s.item_id = r.item_id WHERE s.store = 7"
    true = spark.sql("SELECT COUNT(*) FROM t_sales" + join.format(r="t_returns")).collect()[0][0]
    source = MetastoreSource(metastore.engine, memo=True)
    sql = "SELECT COUNT(*) FROM shop.sales" + join.format(r="shop.returns")
    plan = build_plan(sql, source.table)
    assert isinstance(plan, Aggregate)
    estimate = StatsQuery(source, "sketch").of(plan.child).rows.value
    assert estimate == pytest.approx(true, rel=0.1)
