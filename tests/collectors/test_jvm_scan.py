"""The one-pass JVM collection scan (collectors.jvm_scan) against Spark's own aggregates on
the same data: every exact figure equal, every sketch estimating the same (both are fed the
same values), over every column type, partitions split across tasks and merged, a NULL
partition key, an unpartitioned table, and the row sample."""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import math
import random
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasketches import (
    compact_theta_sketch,
    hll_sketch,
    hll_union,
    tgt_hll_type,
    theta_union,
    update_theta_sketch,
)

from collectors import jvm_scan
from collectors.aggregations import (
    ColumnRecord,
    aggregate,
    column_records,
    forcing,
    plan_columns,
    sample_record,
    sampled,
)
from collectors.driver_rows import arrow_records, driver_rows
from collectors.forced_keys import ForcedKeys
from collectors.jvm_scan import ScanUnavailable, scan, scan_method, spec, top_k_map_size
from collectors.spark_session import session_settings, spark_session
from metastore.errors import StatlasError
from metastore.partitions.names import partition_name
from metastore.statistics.column_pieces import figures_of, piece_of_partition, stored_figures
from metastore.statistics.exact_sets import HASHED_SET, exact_values
from metastore.statistics.exact_top_k import EXACT_TOP_K
from metastore.statistics.from_top_k import COUNTED, FROM_TOP_K
from metastore.statistics.histograms import (
    inflated,
    merge_frequent_items,
    merge_hll,
    merge_kll,
    merge_theta,
    most_common,
)
from metastore.statistics.samples import FORCED, sample_table
from tests.support.heavy_hitters import heavy_hitters_inform

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]
SEED = 11


def rows_table(rng: random.Random, rows: int) -> pa.Table:
    def values(make: Any) -> list[Any]:  # about 15% NULLs
        return [None if rng.random() < 0.15 else make() for _ in range(rows)]

    day0 = dt.date(2024, 1, 1)
    utc0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    local0 = dt.datetime(2024, 1, 1)
    names = ["ä", "b", "", "zz", "日本"]
    return pa.table(
        {
            "flag": pa.array(values(lambda: rng.random() < 0.3), pa.bool_()),
            "tiny": pa.array(values(lambda: rng.randrange(-128, 128)), pa.int8()),
            "small": pa.array(values(lambda: rng.randrange(-3000, 3000)), pa.int16()),
            "id": pa.array(values(lambda: rng.randrange(5_000)), pa.int32()),
            "big": pa.array(values(lambda: rng.randrange(-(2**50), 2**50)), pa.int64()),
            "ratio": pa.array(values(rng.random), pa.float32()),
            "score": pa.array(
                values(lambda: rng.choice([1.5, -0.0, 0.0, float("nan"), rng.random() * 100])),
                pa.float64(),
            ),
            "amount": pa.array(
                values(lambda: Decimal(rng.randrange(-100_000, 100_000)) / 100),
                pa.decimal128(10, 2),
            ),
            "huge": pa.array(
                values(lambda: Decimal(rng.randrange(10**25)) / 10**5), pa.decimal128(30, 5)
            ),
            "day": pa.array(values(lambda: day0 + dt.timedelta(rng.randrange(400))), pa.date32()),
            "at": pa.array(
                values(lambda: utc0 + dt.timedelta(seconds=rng.randrange(10**7))),
                pa.timestamp("us", tz="UTC"),
            ),
            "local": pa.array(
                values(lambda: local0 + dt.timedelta(microseconds=rng.randrange(10**12))),
                pa.timestamp("us"),
            ),
            "name": values(lambda: rng.choice([*names, f"n{rng.randrange(300)}"])),
            "blob": pa.array(
                values(lambda: bytes([rng.randrange(256)]) * rng.randrange(4)), pa.binary()
            ),
            "tags": values(lambda: ["a", "b"][: rng.randrange(3)]),
        }
    )


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Partitions by (dt, region): one of three files, one NULL-keyed, one of 3,000 rows
    (beyond the sketches' exact modes), the rest small."""
    rng = random.Random(SEED)
    root = tmp_path_factory.mktemp("jvm-scan") / "events"
    layout = [
        (["2024-01-01", "emea"], [150, 90, 60]),
        (["2024-01-01", "apac"], [120]),
        (["2024-01-02", "emea"], [3_000]),
        ([None, "emea"], [80]),
        (["2024-01-03", None], [40]),
    ]
    for values, files in layout:
        directory = root / partition_name(["dt", "region"], values)
        directory.mkdir(parents=True)
        for i, rows in enumerate(files):
            pq.write_table(rows_table(rng, rows), directory / f"part-{i:05d}.parquet")
    return root


def by_partition(frame: Any, keys: list[str]) -> dict[tuple[Any, ...], Any]:
    return {tuple(row[k] for k in keys): row.asDict() for row in frame.collect()}


def plans_of(frame: Any, keys: list[str]) -> list[Any]:
    return plan_columns(
        [(f.name, f.dataType.simpleString()) for f in frame.schema.fields if f.name not in keys]
    )


def spark_aggregates(frame: Any, keys: list[str], plans: list[Any], rate: float) -> Any:
    return aggregate(frame, keys, plans, rate)


def comparable(items: list[tuple[Any, int]]) -> list[tuple[str, int]]:
    """Heavy hitters with NaN comparable to itself (NaN != NaN in Python)."""
    return [(repr(value), count) for value, count in items]


def assert_same_column(jvm: ColumnRecord, spark: ColumnRecord, rows: int) -> None:
    where = jvm.name
    assert jvm.null_count == spark.null_count, where
    assert (jvm.min_value, jvm.max_value) == (spark.min_value, spark.max_value), where
    assert (jvm.total_len, jvm.max_len) == (spark.total_len, spark.max_len), where
    # the kind of the heavy hitters' items is kept with them (the scan keeps fewer)
    assert jvm.top_k_items == (spark.top_k_items if jvm.top_k is not None else None), where
    read = figures_of(jvm)  # a sketch its heavy hitters stand for, as read (from_top_k)
    for mine, theirs, merge in (
        (read["hll"], spark.hll, merge_hll),
        (read["theta"], spark.theta, merge_theta),
    ):
        assert (mine is None) == (theirs is None), where
        if mine is not None and theirs is not None:
            a, b = merge([mine]).get_estimate(), merge([theirs]).get_estimate()
            assert math.isclose(a, b, rel_tol=0.02 if rows > 1_000 else 1e-12), (where, a, b)
    assert (read["kll"] is None) == (spark.kll is None), where
    if read["kll"] is not None and spark.kll is not None:
        a, b = merge_kll([read["kll"]]), merge_kll([spark.kll])
        assert a.n == b.n, where
        if a.n:
            assert (a.get_min_value(), a.get_max_value()) == (b.get_min_value(), b.get_max_value())
            for q in (0.1, 0.5, 0.9):
                if a.n <= 200:
                    assert a.get_quantile(q) == b.get_quantile(q), (where, q)
                else:  # both within KLL's rank error of the truth: of each other within twice
                    # it (a value with a mass of its own spans the ranks from below to above it)
                    x = a.get_quantile(q)
                    low, high = b.get_rank(x, inclusive=False), b.get_rank(x, inclusive=True)
                    assert low - 0.04 <= q <= high + 0.04, (where, q, low, high)
    if jvm.top_k is None and spark.top_k is not None:
        # the scan keeps no heavy hitters that tell nothing (above their error, or skewed)
        assert not heavy_hitters_inform(spark.top_k, spark.top_k_items), where
    assert spark.top_k is not None or jvm.top_k is None, where
    if jvm.top_k is not None and spark.top_k is not None:
        a = comparable(most_common(merge_frequent_items([jvm.top_k], jvm.top_k_items), 10))
        b = comparable(most_common(merge_frequent_items([spark.top_k], spark.top_k_items), 10))
        if rows <= 200:
            assert a == b, where
        else:
            assert [v for v, _ in a[:3]] == [v for v, _ in b[:3]], where


def compare(frame: Any, keys: list[str], rate: float = 0.0) -> dict[tuple[Any, ...], Any]:
    plans = plans_of(frame, keys)
    assert scan_method(frame.sparkSession, plans) == "jvm"
    mine = by_partition(scan(frame, keys, plans, rate, SEED, 8), keys)
    theirs = by_partition(spark_aggregates(frame, keys, plans, rate), keys)
    assert mine.keys() == theirs.keys()
    for key, row in mine.items():
        rows = int(row["__rows"])
        assert rows == int(theirs[key]["__rows"]), key
        pairs = zip(column_records(row, plans), column_records(theirs[key], plans), strict=True)
        for a, b in pairs:
            assert_same_column(a, b, rows)
    return mine


def test_one_pass_scan_equals_spark_aggregates(spark: Any, lake: Path) -> None:
    frame = spark.read.parquet(str(lake))
    # one file per task: the partition of three files is merged from three tasks' states
    small = {"spark.sql.files.maxPartitionBytes": "1024", "spark.sql.files.openCostInBytes": "1024"}
    with session_settings(spark, small):
        assert frame.rdd.getNumPartitions() >= 7
        mine = compare(frame, ["dt", "region"])
    assert len(mine) == 5
    assert int(mine[("2024-01-01", "emea")]["__rows"]) == 300
    # every file in one task: its states are merged in that task, with no second stage
    one_task = frame.coalesce(1)
    assert one_task.rdd.getNumPartitions() == 1
    assert {k: v["__rows"] for k, v in compare(one_task, ["dt", "region"]).items()} == {
        k: v["__rows"] for k, v in mine.items()
    }
    assert ("__HIVE_DEFAULT_PARTITION__", "emea") in mine or (None, "emea") in mine
    types = {f.name: f.dataType.simpleString() for f in frame.schema.fields}
    assert types["local"] == "timestamp_ntz"
    assert types["huge"] == "decimal(30,5)"


def scanned_in_stages(frame: Any, keys: list[str]) -> tuple[dict[tuple[Any, ...], Any], int]:
    """The scan's rows by partition, and how many stages its jobs ran."""
    context = frame.sparkSession.sparkContext
    group = f"stages-{time.time_ns()}"
    context.setJobGroup(group, "the scan's stages")
    try:
        rows = by_partition(scan(frame, keys, plans_of(frame, keys), 0.0, SEED, 8), keys)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    tracker = context.statusTracker()
    jobs = tracker.getJobIdsForGroup(group)
    stages = {stage for job in jobs for stage in tracker.getJobInfo(job).stageIds}
    return rows, len(stages)


def test_partitions_read_whole_by_their_tasks_are_scanned_in_one_stage(
    spark: Any, tmp_path: Path
) -> None:
    """Where no partition's files are split between two tasks, each task's states are
    partitions whole: they are merged in the task, with no second stage (its results reach
    the driver as each task ends). A partition whose files two tasks read is merged in a
    second stage, as before; both give every partition once, with the same figures."""
    rng = random.Random(9)
    for day in range(6):
        directory = tmp_path / f"dt=2024-01-0{day + 1}"
        directory.mkdir()
        pq.write_table(rows_table(rng, 200 + 50 * day), directory / "part-00000.parquet")
    # a file a task (no file split, each task full with one): six tasks, each partition
    # read whole by one
    small = {"spark.sql.files.maxPartitionBytes": "1m", "spark.sql.files.openCostInBytes": "1m"}
    with session_settings(spark, small):
        frame = spark.read.parquet(str(tmp_path))
        assert frame.rdd.getNumPartitions() == 6
        whole, stages = scanned_in_stages(frame, ["dt"])
        assert stages == 1
        assert compare(frame, ["dt"]).keys() == whole.keys()
    # a second file in one partition: two tasks read it, and a second stage merges them
    pq.write_table(rows_table(rng, 120), tmp_path / "dt=2024-01-03" / "part-00001.parquet")
    with session_settings(spark, small):
        frame = spark.read.parquet(str(tmp_path))
        assert frame.rdd.getNumPartitions() == 7
        split, stages = scanned_in_stages(frame, ["dt"])
        assert stages == 2
        compare(frame, ["dt"])
    assert split.keys() == whole.keys()
    assert [int(split[k]["__rows"]) - int(whole[k]["__rows"]) for k in sorted(whole)] == [
        0, 0, 120, 0, 0, 0
    ]  # fmt: skip
    # keyed by a part of the partition columns: tasks of one day's two regions share a key
    nested = tmp_path.parent / f"{tmp_path.name}-regions"
    for day, region in itertools.product(("2024-01-01", "2024-01-02"), ("emea", "apac")):
        directory = nested / f"dt={day}" / f"region={region}"
        directory.mkdir(parents=True)
        pq.write_table(rows_table(rng, 100), directory / "part-00000.parquet")
    with session_settings(spark, small):
        frame = spark.read.parquet(str(nested)).drop("region")
        assert frame.rdd.getNumPartitions() == 4
        by_day, stages = scanned_in_stages(frame, ["dt"])
    assert stages == 2
    assert {k: int(v["__rows"]) for k, v in by_day.items()} == {
        ("2024-01-01",): 200,
        ("2024-01-02",): 200,
    }


def assert_described_alike(a: ColumnRecord, b: ColumnRecord, where: Any) -> None:
    """Two scans' records of a column over the same rows: every exact figure equal, the
    sketches estimating alike, exact heavy hitters equal."""
    assert a.null_count == b.null_count, where
    assert (a.min_value, a.max_value) == (b.min_value, b.max_value), where
    assert (a.total_len, a.max_len) == (b.total_len, b.max_len), where
    mine, theirs = figures_of(a), figures_of(b)
    for kind, merge in (("hll", merge_hll), ("theta", merge_theta)):
        if mine[kind] is not None or theirs[kind] is not None:
            x, y = merge([mine[kind]]).get_estimate(), merge([theirs[kind]]).get_estimate()
            assert math.isclose(x, y, rel_tol=0.02), (where, kind, x, y)
    if mine["kll"] is not None or theirs["kll"] is not None:
        k, m = merge_kll([mine["kll"]]), merge_kll([theirs["kll"]])
        assert k.n == m.n, where
        assert (k.get_min_value(), k.get_max_value()) == (m.get_min_value(), m.get_max_value())
        for q in (0.1, 0.5, 0.9):
            v = k.get_quantile(q)
            low, high = m.get_rank(v, inclusive=False), m.get_rank(v, inclusive=True)
            assert low - 0.04 <= q <= high + 0.04, (where, q, low, high)
    assert (a.top_k is None) == (b.top_k is None), where
    if a.top_k is not None and b.top_k is not None:
        x = merge_frequent_items([a.top_k], a.top_k_items)
        counted = most_common(x, 1_000)
        if all(x.get_lower_bound(v) == x.get_upper_bound(v) for v, _ in counted):
            # exact: the same counts (the weights add up)
            expected = most_common(merge_frequent_items([b.top_k], b.top_k_items), 1_000)
            assert sorted(comparable(counted)) == sorted(comparable(expected)), where


def test_columnar_batches_describe_what_rows_describe(spark: Any, tmp_path: Path) -> None:
    """Parquet read as its columnar batches: a run of a column's values is described once
    per distinct value, by dictionary id (strings) or by value (integers, dates, decimals,
    doubles), with its count as the weight. Every exact figure equals the row-by-row scan's,
    and so do the row sample (the same draws), the exact heavy hitters and the sketches'
    estimates; partitions span several batches and row groups."""
    rng = random.Random(5)
    for day in ("2024-01-01", "2024-01-02"):
        table = rows_table(rng, 9_000)
        modes = [
            None if rng.random() < 0.1 else rng.choice(["AIR", "MAIL", "SHIP"])
            for _ in range(9_000)
        ]
        quantities = [Decimal(rng.randrange(1, 51)) for _ in range(9_000)]
        table = table.append_column("mode", pa.array(modes, pa.string()))
        table = table.append_column("qty", pa.array(quantities, pa.decimal128(15, 2)))
        (tmp_path / f"dt={day}").mkdir()
        pq.write_table(table, tmp_path / f"dt={day}" / "part.parquet", row_group_size=4_000)
    frame = spark.read.parquet(str(tmp_path))
    plans = plans_of(frame, ["dt"])
    described: dict[bool, dict[tuple[Any, ...], Any]] = {}
    for columnar in (True, False):
        with session_settings(spark, {"spark.statlas.scan.columnar": str(columnar).lower()}):
            assert jvm_scan.reads_batches(frame, ["dt"], plans) is columnar
            described[columnar] = by_partition(scan(frame, ["dt"], plans, 0.02, SEED, 2), ["dt"])
    batches, rows = described[True], described[False]
    assert batches.keys() == rows.keys()
    assert len(batches) == 2
    for key, row in batches.items():
        assert row["__rows"] == rows[key]["__rows"] == 9_000
        assert row["__sample_columns"] == rows[key]["__sample_columns"], key
        pairs = zip(column_records(row, plans), column_records(rows[key], plans), strict=True)
        for a, b in pairs:
            assert_described_alike(a, b, (key, a.name))
        by_name = {r.name: r for r in column_records(row, plans)}
        assert by_name["mode"].top_k is not None  # (qty's 50 even values tell nothing)


def test_unpartitioned_table_and_empty_table(spark: Any, tmp_path: Path) -> None:
    pq.write_table(rows_table(random.Random(3), 500), tmp_path / "flat.parquet")
    frame = spark.read.parquet(str(tmp_path / "flat.parquet"))
    mine = compare(frame, [])
    assert int(mine[()]["__rows"]) == 500
    empty = frame.limit(0)
    plans = plans_of(empty, [])
    rows = scan(empty, [], plans, 0.0, SEED, 1).collect()
    theirs = spark_aggregates(empty, [], plans, 0.0).collect()
    assert len(rows) <= 1
    assert [r["__rows"] for r in rows] in ([0], [])
    assert theirs[0]["__rows"] == 0


def test_sketch_sizes_follow_what_they_carry(spark: Any, tmp_path: Path) -> None:
    """Partition sketches sized as docs/design.md#sizes says: Theta at the lgK the driver
    asks (1,024 entries for a 5,000-value partition, not 4,096), and heavy hitters only
    where they name a value above their error (a key column's are dropped, a skewed
    column's kept, its heavy value first)."""
    for day in ("2024-01-01", "2024-01-02"):
        ids = list(range(5_000)) if day.endswith("1") else list(range(5_000, 10_000))
        skewed = [7 if i % 3 == 0 else 100_000 + i for i in ids]
        directory = tmp_path / f"dt={day}"
        directory.mkdir()
        pq.write_table(pa.table({"id": ids, "skewed": skewed}), directory / "part.parquet")
    frame = spark.read.parquet(str(tmp_path))
    plans = plans_of(frame, ["dt"])
    for row in scan(frame, ["dt"], plans, 0.0, SEED, 2, 10).collect():
        records = {r.name: r for r in column_records(row.asDict(), plans)}
        for name in ("id", "skewed"):
            theta = records[name].theta
            assert theta is not None
            retained = compact_theta_sketch.deserialize(theta).num_retained
            assert 1_024 <= retained < 2_048, (name, retained)
        assert records["id"].top_k is None
        kept = records["skewed"].top_k
        assert kept is not None
        assert most_common(merge_frequent_items([kept], "longs"), 1)[0] == (7, 1_667)


def test_sparse_integral_sketches_are_trimmed_dense_ones_kept(spark: Any, tmp_path: Path) -> None:
    """issue 49: a partition's Theta sketch of an integral column whose values are few in
    their range is trimmed down to the least lgK the driver allows (histograms.sparse_key_lg_k:
    2**12 x their share of the range); one whose values fill much of it, and strings, keep
    the lgK asked; either way within the sketch's error of the partition's distinct count."""
    rng = random.Random(49)
    distinct = {}
    for day in ("2024-01-01", "2024-01-02"):
        sparse = rng.sample(range(10**7), 5_000)  # 0.05% of their range
        dense = [rng.randrange(6_000) for _ in range(5_000)]  # about 3,400 of 6,000
        names = [f"n{v}" for v in sparse]
        directory = tmp_path / f"dt={day}"
        directory.mkdir()
        table = pa.table({"sparse": sparse, "dense": dense, "name": names})
        distinct[day] = {"sparse": 5_000, "dense": len(set(dense)), "name": 5_000}
        pq.write_table(table, directory / "part.parquet")
    frame = spark.read.parquet(str(tmp_path))
    plans = plans_of(frame, ["dt"])
    rows = scan(frame, ["dt"], plans, 0.0, SEED, 2, 10, theta_least=5).collect()
    assert len(rows) == 2
    for row in rows:
        records = {r.name: r for r in column_records(row.asDict(), plans)}
        retained = {}
        for name in ("sparse", "dense", "name"):
            theta = records[name].theta
            assert theta is not None
            sketch = compact_theta_sketch.deserialize(theta)
            retained[name] = sketch.num_retained
            relative = 3 / math.sqrt(sketch.num_retained)
            exact = distinct[row["dt"]][name]
            assert math.isclose(sketch.get_estimate(), exact, rel_tol=relative), name
        assert retained["sparse"] == 32
        assert retained["dense"] >= 1_024
        assert retained["name"] >= 1_024


def test_few_dates_are_stored_as_their_values_many_as_a_sketch(spark: Any, tmp_path: Path) -> None:
    """issue 49: a partition's HLL sketch of a date column whose heavy hitters name every
    value is stored as those values (exact_sets.exact_values), which hashed again give the
    scan's own sketch; a column of more values than its heavy hitters hold stays a sketch."""
    rng = random.Random(49)
    day0 = dt.date(1995, 1, 1)
    few = [day0 + dt.timedelta(rng.randrange(170)) for _ in range(3_000)]
    many = [day0 + dt.timedelta(rng.randrange(2_000)) for _ in range(3_000)]
    prices = [Decimal(rng.randrange(1, 51)) + Decimal("0.25") for _ in range(3_000)]
    directory = tmp_path / "dt=2024-01-01"
    directory.mkdir()
    table = pa.table({"few": few, "many": many, "price": pa.array(prices, pa.decimal128(15, 2))})
    pq.write_table(table, directory / "part.parquet")
    frame = spark.read.parquet(str(tmp_path))
    plans = plans_of(frame, ["dt"])
    [row] = scan(frame, ["dt"], plans, 0.0, SEED, 1).collect()
    records = {r.name: r for r in column_records(row.asDict(), plans)}
    # a decimal's: its unscaled values, hashed as Spark hashes them: the same coupons as
    # Spark's own sketch of the partition (hll_sketch_agg)
    price = records["price"].hll
    assert price is not None
    assert price[0] == HASHED_SET
    [theirs] = spark_aggregates(frame, ["dt"], plans, 0.0).collect()
    spark_price = {r.name: r for r in column_records(theirs.asDict(), plans)}["price"].hll
    assert spark_price is not None
    assert merge_hll([price]).get_estimate() == pytest.approx(50, rel=0.01)
    assert merge_hll([price, spark_price]).get_estimate() == pytest.approx(
        merge_hll([spark_price]).get_estimate()
    )
    stored = records["few"].hll
    assert stored is not None
    values = exact_values(stored)
    assert values is not None
    days = sorted({(d - dt.date(1970, 1, 1)).days for d in few})
    assert values.tolist() == days
    assert len(stored) < 100  # 170 days of 4-byte coupons: about 700 bytes as a sketch
    rebuilt = hll_sketch.deserialize(inflated(stored))
    assert rebuilt.get_estimate() == pytest.approx(len(days), rel=0.01)
    # the same coupons as a sketch fed the days: their union counts no more
    union = hll_union(12)
    union.update(rebuilt)
    fed = hll_sketch(12, tgt_hll_type.HLL_4)
    for day in days:
        fed.update(day)
    union.update(fed)
    assert union.get_estimate() == pytest.approx(rebuilt.get_estimate())
    assert merge_hll([stored]).get_estimate() == pytest.approx(len(days), rel=0.01)
    kept = records["many"].hll
    assert kept is not None
    assert exact_values(kept) is None
    distinct = len(set(many))
    assert merge_hll([kept, stored]).get_estimate() == pytest.approx(
        len(set(many) | set(few)), rel=0.05
    )
    assert merge_hll([kept]).get_estimate() == pytest.approx(distinct, rel=0.05)


def test_a_kll_sketch_its_heavy_hitters_count_is_stored_as_a_mark(
    spark: Any, tmp_path: Path
) -> None:
    """issue 49: where a partition's stored heavy hitters count every value (a discount's 11,
    a line number's 7), its KLL sketch is stored as a one-byte mark and read as those values,
    each as often as counted (from_top_k); a column of more values keeps its sketch."""
    rng = random.Random(7)
    discounts = [Decimal(rng.choice(range(11))) / 100 for _ in range(3_000)]
    lines = [rng.choice([1, 1, 1, 2, 2, 3, 4, 5, 6, 7]) for _ in range(3_000)]
    many = [rng.randrange(100_000) for _ in range(3_000)]
    modes = [rng.choice(["AIR", "MAIL", "SHIP", "TRUCK", "RAIL", "FOB", "REG AIR"]) for _ in many]
    directory = tmp_path / "dt=2024-01-01"
    directory.mkdir()
    table = pa.table(
        {
            "discount": pa.array(discounts, pa.decimal128(15, 2)),
            "line": lines,
            "many": many,
            "mode": modes,
        }
    )
    pq.write_table(table, directory / "part.parquet")
    frame = spark.read.parquet(str(tmp_path))
    plans = plans_of(frame, ["dt"])
    [row] = scan(frame, ["dt"], plans, 0.0, SEED, 1).collect()
    records = {r.name: r for r in column_records(row.asDict(), plans)}
    for name, values in (("discount", [float(d) for d in discounts]), ("line", lines)):
        assert records[name].kll == bytes([FROM_TOP_K]), name
        piece = piece_of_partition(records[name])
        assert piece.kll is not None
        assert piece.kll[0] == COUNTED
        sketch = merge_kll([piece.kll])
        assert sketch.n == len(values)
        for value in sorted(set(values)):
            exact = sum(v <= value for v in values) / len(values)
            assert sketch.get_rank(value, True) == pytest.approx(exact, abs=0.01), (name, value)
        # stored again (a block's or an Iceberg append's write), the mark
        assert stored_figures(piece.figures())["kll"] == bytes([FROM_TOP_K])
    kept = records["many"].kll
    assert kept is not None
    assert len(kept) > 1
    assert merge_kll([kept]).n == 3_000
    # Theta sketches of few integers or strings: the mark, built again from the items as
    # the scan fed them (the same hashes as a sketch fed the values themselves)
    for name, values in (("line", lines), ("mode", modes)):
        assert records[name].theta == bytes([FROM_TOP_K]), name
        theta = figures_of(records[name])["theta"]
        assert theta is not None
        fed = update_theta_sketch()
        for value in values:
            fed.update(value)
        union = theta_union()
        union.update(compact_theta_sketch.deserialize(theta))
        union.update(fed)
        assert compact_theta_sketch.deserialize(theta).get_estimate() == len(set(values))
        assert union.get_result().get_estimate() == len(set(values)), name
    assert records["many"].theta is not None
    assert records["many"].theta[0] != FROM_TOP_K
    # heavy hitters that never purged: their items and counts, read as the sketch again
    for name, values in (
        ("discount", [float(d) for d in discounts]),
        ("line", lines),
        ("mode", modes),
    ):
        stored = records[name].top_k
        assert stored is not None
        assert stored[0] == EXACT_TOP_K, name
        assert len(stored) < 80, (name, len(stored))  # the deflated sketch: 90 to 160
        counted = Counter(values)
        read = most_common(merge_frequent_items([stored], records[name].top_k_items), 20)
        assert sorted(read) == sorted(counted.items()), name


def test_row_sample_keeps_every_row_at_rate_one(spark: Any, lake: Path) -> None:
    frame = spark.read.parquet(str(lake / "dt=2024-01-01"))
    keys = ["region"]
    plans = plans_of(frame, keys)
    mine = by_partition(scan(frame, keys, plans, 1.0, SEED, 2), keys)
    theirs = by_partition(spark_aggregates(frame, keys, plans, 1.0), keys)
    # the day's two partitions, 300 and 120 rows: the loop below checks each of them
    assert sorted(mine) == sorted(theirs) == [("apac",), ("emea",)]
    assert [int(mine[k]["__rows"]) for k in [("apac",), ("emea",)]] == [120, 300]
    columns = [p.alias for p in sampled(plans)]
    assert len(columns) == 13  # every column but the binary and the array one
    for key in mine:
        a, b = sample_record(mine[key], plans), sample_record(theirs[key], plans)
        assert a is not None
        assert b is not None
        assert a[0] == b[0] == int(mine[key]["__rows"])
        # the scan packs the rows by column, Spark's aggregation gives them as rows: the
        # same rows stored, value for value (numbers as doubles, NULL as NaN or None)
        rows_a, rows_b = (sorted(map(repr, sample_table(x[1]).to_pylist())) for x in (a, b))
        assert rows_a == rows_b
        assert sample_table(a[1]).schema == sample_table(b[1]).schema
        assert sample_table(a[1]).column_names == [p.name for p in sampled(plans)]
        # the table handed on beside the bytes is the one they store (blocks built ahead)
        for got in (a, b):  # (value for value: NaN is not equal to itself)
            assert got[2].schema == sample_table(got[1]).schema
            assert repr(got[2].to_pylist()) == repr(sample_table(got[1]).to_pylist())
    # at a rate below one, about that share of the rows is drawn
    drawn = by_partition(scan(frame, keys, plans, 0.5, SEED, 2), keys)
    total = sum(r[0] for r in (sample_record(row, plans) for row in drawn.values()) if r)
    assert 0.4 * 420 < total < 0.6 * 420


def test_forced_keys_are_sampled_whatever_the_draw(spark: Any, lake: Path) -> None:
    frame = spark.read.parquet(str(lake / "dt=2024-01-01"))
    keys = ["region"]
    plans = plans_of(frame, keys)
    ids = [r["id"] for r in frame.select("id").collect() if r["id"] is not None]
    # keys of two columns: about 15 of the 420 rows by their id, about 5 by their tiny
    forced = (ForcedKeys("id", tuple(sorted(set(ids[::25])))), ForcedKeys("tiny", (-7, 5, 100)))
    assert forcing(plans, 0.2, forced)
    assert not forcing(plans, 1.0, forced)
    assert not forcing(plans, 0.2, (ForcedKeys("nothing", (1, 2)),))

    def is_forced(row: Any) -> bool:
        return row["id"] in forced[0].values or row["tiny"] in forced[1].values

    plain = by_partition(scan(frame, keys, plans, 0.2, SEED, 2), keys)
    for method in ("jvm", "spark"):
        if method == "jvm":
            got = by_partition(scan(frame, keys, plans, 0.2, SEED, 2, forced=forced), keys)
        else:
            got = by_partition(aggregate(frame, keys, plans, 0.2, forced=forced), keys)
        by_tiny_alone = 0
        for key, row in got.items():
            record = sample_record(row, plans, marked=True)
            assert record is not None
            table = record[2]
            assert table.column_names == [p.name for p in sampled(plans)] + [FORCED]
            marks = table.column(FORCED).to_pylist()
            rows = [  # the sample's doubles, NaN for NULL, as the frame's values
                {k: None if v != v else int(v) for k, v in r.items()}
                for r in table.select(["id", "tiny"]).to_pylist()
            ]
            # every row of a forced key of either column is in the sample, marked; no other row
            in_partition = frame.where(frame.region == key[0]).select("id", "tiny").collect()
            wanted = sorted(((r["id"], r["tiny"]) for r in in_partition if is_forced(r)), key=repr)
            got_forced = [r for r, m in zip(rows, marks, strict=True) if m == 1.0]
            assert sorted(((r["id"], r["tiny"]) for r in got_forced), key=repr) == wanted
            by_tiny_alone += sum(r["id"] not in forced[0].values for r in got_forced)
            if method == "jvm":  # the rows drawn are those drawn without forced keys
                unforced = sample_record(plain[key], plans)
                assert unforced is not None
                drawn = {repr(r) for r in unforced[2].to_pylist()}
                kept = table.drop_columns([FORCED]).to_pylist()
                assert drawn <= {repr(r) for r in kept}
                assert sum(not m for m in marks) == len(
                    drawn - {repr(r) for r, m in zip(kept, marks, strict=True) if m}
                )
        assert by_tiny_alone > 0


def test_scan_method_choice(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    plans = plan_columns([("id", "bigint"), ("span", "interval day to second")])
    assert scan_method(spark, plans[:1]) == "jvm"
    assert scan_method(spark, plans) == "spark"  # a type it does not describe: Spark's aggregates
    with pytest.raises(ScanUnavailable, match="cannot describe interval"):
        scan_method(spark, plans, "jvm")
    monkeypatch.setenv("STATLAS_SCAN", "spark")
    assert scan_method(spark, plans[:1]) == "spark"
    assert scan_method(spark, plans[:1], "jvm") == "jvm"


def test_column_plan_text() -> None:
    id_plan, name_plan, tags_plan = plan_columns(
        [("id", "bigint"), ("name", "string"), ("tags", "array<string>")]
    )
    assert spec(id_plan).startswith("alias=c0,minmax,distinct=theta,kll,topk=longs,")
    assert spec(name_plan).startswith("alias=c1,minmax,length,distinct=theta,topk=strings,")
    assert spec(tags_plan).startswith("alias=c2,hll=")
    assert top_k_map_size(100) == 256
    assert top_k_map_size(3) == 4


def test_driver_rows_streams_every_row_a_few_partitions_per_job(spark: Any) -> None:
    frame = spark.range(0, 1_000, numPartitions=7).selectExpr("id", "id * 2 AS twice")
    context = spark.sparkContext
    context.setJobGroup("driver-rows-test", "driver_rows test")
    try:
        rows = list(driver_rows(frame, partitions_per_job=3))
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    assert [tuple(r) for r in rows] == [tuple(r) for r in frame.collect()]
    assert rows[0].twice == 0
    assert rows[-1].asDict() == {"id": 999, "twice": 1998}
    assert len(context.statusTracker().getJobIdsForGroup("driver-rows-test")) == 3  # 3+3+1
    assert list(driver_rows(frame.limit(0))) == []


def test_arrow_records_hold_what_the_rows_hold(
    spark: Any, lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan's result carried as Arrow gives every value its Row gives, every type:
    timestamps as the naive local time (here New York's, not the session's UTC), decimals
    at their scale, floats as the float32 read back, sketches' bytes."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        frame = spark.read.parquet(str(lake))
        keys = ["dt", "region"]
        plans = plans_of(frame, keys)
        result = scan(frame, keys, plans, 1.0, SEED, 5)
        context = spark.sparkContext
        context.setJobGroup("arrow-records-test", "arrow_records test")
        try:
            with session_settings(spark, {"spark.sql.adaptive.enabled": "false"}):
                mine = list(arrow_records(result.repartition(5), partitions_per_job=2))
        finally:
            context.setLocalProperty("spark.jobGroup.id", None)
        theirs = [r.asDict() for r in result.collect()]
    finally:
        monkeypatch.undo()
        time.tzset()

    def comparable(values: dict[str, Any]) -> dict[str, str]:
        def text(name: str, value: Any) -> str:
            if name.endswith("__kll") and value is not None:  # compaction draws at random:
                kll = merge_kll([bytes(value)])  # two runs over 3 files keep other items
                return repr((kll.n, kll.get_min_value(), kll.get_max_value()))
            return repr(bytes(value) if isinstance(value, bytearray) else value)

        return {k: text(k, v) for k, v in values.items()}

    assert len(mine) == len(theirs) == 5
    assert sorted(map(comparable, mine), key=repr) == sorted(map(comparable, theirs), key=repr)
    stamps = [r["c10__min"] for r in mine if r["c10__min"] is not None]
    assert stamps
    assert all(s.tzinfo is None for s in stamps)
    assert len(context.statusTracker().getJobIdsForGroup("arrow-records-test")) == 3  # 2+2+1
    assert list(arrow_records(result.limit(0))) == []


def test_a_failed_jar_build_falls_back_to_sparks_aggregates(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    package = tmp_path / "src" / "statlas" / "collect"
    package.mkdir(parents=True)
    (package / "Broken.java").write_text("package statlas.collect; class Broken { int x = ; }")
    monkeypatch.setattr(jvm_scan, "SOURCES", tmp_path / "src")
    monkeypatch.setattr(jvm_scan, "JAR", tmp_path / "statlas-collect.jar")
    with pytest.raises(StatlasError, match="building the collection scan's jar failed"):
        jvm_scan.scan_jar()
    assert not (tmp_path / "statlas-collect.jar").exists()
    with caplog.at_level(logging.WARNING, logger="collectors.spark_session"):
        session = spark_session("local[2]")  # the running session, not an error
    assert session.sparkContext is spark.sparkContext
    assert "collecting with Spark's aggregates" in caplog.text
