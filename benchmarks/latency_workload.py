"""The sets of benchmarks/latency.py: the TPC-H and star queries, the synthetic table (its
queries and its data, written once), and the options naming them."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from pathlib import Path

import star_queries
import tpch_queries

DATA = Path(__file__).resolve().parent / ".data"
TPCH_TABLES = ("lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region")
QUERY_SETS: dict[str, tuple[dict[str, str], str]] = {
    "tpch": (tpch_queries.QUERIES, "uniform"),
    "star": (star_queries.QUERIES, "zipf-1"),
}
ALL_SETS = ("tpch", "star", "synthetic")
ALL_DBS = ("sqlite", "postgres")

SYNTHETIC_TABLE = "synthetic"
FIRST_DAY = dt.date(2020, 1, 1)
ROWS_PER_PARTITION = 4
SYNTHETIC_SEED = 20261122


def month_range(days: int, first: dt.date = FIRST_DAY) -> tuple[dt.date, dt.date]:
    """One calendar month of the synthetic table's `days` days: the month of its middle
    day, clipped to the table's days (a table shorter than a month: all of it)."""
    last = first + dt.timedelta(days=days - 1)
    middle = first + dt.timedelta(days=days // 2)
    start = middle.replace(day=1)
    end = (start.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
    return max(start, first), min(end, last)


def synthetic_queries(days: int) -> dict[str, str]:
    """The synthetic set: the whole table, and one month of days."""
    start, end = month_range(days)
    return {
        "whole": f"SELECT COUNT(*) FROM {SYNTHETIC_TABLE}",
        "month": (
            f"SELECT COUNT(*) FROM {SYNTHETIC_TABLE} "
            f"WHERE day BETWEEN DATE '{start.isoformat()}' AND DATE '{end.isoformat()}'"
        ),
    }


def chosen_queries(sets: list[str], wanted: list[str]) -> dict[str, dict[str, str]]:
    """{set: {query: sql}} of the TPC-H and star sets among `sets`, limited to `wanted`
    (all when empty); a set none of whose queries is wanted is left out."""
    known = {q for name in sets if name in QUERY_SETS for q in QUERY_SETS[name][0]}
    unknown = [q for q in wanted if q not in known]
    if unknown:
        raise SystemExit(f"unknown queries {unknown}: the sets {sets} hold {sorted(known)}")
    chosen = {}
    for name in sets:
        if name not in QUERY_SETS:
            continue
        picked = {q: s for q, s in QUERY_SETS[name][0].items() if not wanted or q in wanted}
        if picked:
            chosen[name] = picked
    return chosen


def split_list(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    """A comma-separated option's items, each one of `allowed`, in the given order."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    wrong = [s for s in items if s not in allowed]
    if wrong or not items:
        raise SystemExit(f"--{what} takes a comma-separated list of {', '.join(allowed)}")
    return list(dict.fromkeys(items))


# ---------------------------------------------------------------------- synthetic data


def synthetic_dir(days: int, regions: int) -> Path:
    return DATA / f"latency-synthetic-{days}x{regions}"


def synthetic_data(days: int, regions: int) -> Path:
    """The synthetic table's directory (written once): day=YYYY-MM-DD/region=region-NNN/,
    ROWS_PER_PARTITION rows each."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.dataset as ds

    root = synthetic_dir(days, regions)
    table_dir = root / SYNTHETIC_TABLE
    if (root / "_COMPLETE").exists():
        return table_dir
    began = time.perf_counter()
    rng = np.random.default_rng(SYNTHETIC_SEED)
    per_day = regions * ROWS_PER_PARTITION
    rows = days * per_day
    day_index = np.repeat(np.arange(days), per_day)
    day = (np.datetime64(FIRST_DAY.isoformat(), "D") + day_index).astype("datetime64[D]")
    names = np.array([f"region-{i:03d}" for i in range(regions)])
    region = np.tile(np.repeat(names, ROWS_PER_PARTITION), days)
    events = np.array(["view", "click", "cart", "buy", "refund", "share", "search", "login"])
    score = rng.normal(50.0, 15.0, rows)
    data = pa.table(
        {
            "day": pa.array(day),
            "region": pa.array(region, pa.string()),
            "quantity": pa.array(rng.integers(1, 100, rows), pa.int32()),
            "user_id": pa.array(rng.integers(1, 5_000_000_000, rows), pa.int64()),
            "score": pa.array(score, pa.float64(), mask=rng.random(rows) < 0.02),
            "amount": pa.array(np.round(rng.uniform(0, 1000, rows), 2)).cast(
                pa.decimal128(12, 2), safe=False
            ),
            "event": pa.array(events[rng.integers(0, len(events), rows)], pa.string()),
            "event_date": pa.array(
                (day + rng.integers(-30, 1, rows).astype("timedelta64[D]")).astype("datetime64[D]")
            ),
        }
    )
    tmp = root / (SYNTHETIC_TABLE + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    ds.write_dataset(
        data,
        tmp,
        format="parquet",
        partitioning=ds.partitioning(
            pa.schema([data.schema.field("day"), data.schema.field("region")]), flavor="hive"
        ),
        basename_template="part-{i}.parquet",
        max_partitions=days * regions + 1,
    )
    shutil.rmtree(table_dir, ignore_errors=True)
    tmp.rename(table_dir)
    (root / "_COMPLETE").write_text("")
    print(
        f"  synthetic data: {days * regions:,} partitions, {rows:,} rows written in "
        f"{time.perf_counter() - began:.0f} s",
        flush=True,
    )
    return table_dir
