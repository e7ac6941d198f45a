"""Estimates against Spark-computed truth on small generated data: a fact table partitioned
by day whose foreign key follows a Zipf law, and a dimension table; both collected into
each database. Golden figures: (SQL, the q-error each level must stay within)."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metastore import Metastore

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

# (sql, max q-error at sketch level, max q-error at basic level or None for "no bound")
GOLDEN = [
    ("SELECT * FROM facts f WHERE f.day = DATE'2024-01-03'", 1.01, 1.01),
    ("SELECT * FROM facts f WHERE f.day BETWEEN '2024-01-02' AND '2024-01-04'", 1.01, 1.01),
    ("SELECT * FROM facts f WHERE f.qty < 10", 1.15, None),
    ("SELECT * FROM facts f WHERE f.qty >= 10 AND f.qty < 20", 1.2, None),
    ("SELECT * FROM facts f WHERE f.dim_id = 1", 1.2, None),
    ("SELECT * FROM facts f WHERE f.dim_id IN (1, 2, 3)", 1.2, None),
    ("SELECT * FROM facts f WHERE f.dim_id = 999999", 1.01, None),
    ("SELECT * FROM facts f WHERE f.tag = 'hot'", 1.2, None),
    ("SELECT * FROM facts f WHERE f.tag LIKE 'c%'", 1.5, None),
    ("SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id", 1.1, 1.1),
    ("SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id WHERE d.kind = 'a'", 1.5, None),
    ("SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id WHERE d.id <= 3", 1.5, None),
    # a value set on the dimension's key carries over to the fact's key (its heavy hitters)
    ("SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id WHERE d.id IN (1, 2, 40)", 1.2, None),
    ("SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id WHERE d.id = 2", 1.2, None),
    ("SELECT * FROM facts f JOIN facts g ON f.dim_id = g.dim_id", 1.5, None),
    (
        "SELECT * FROM facts f WHERE f.dim_id IN (SELECT d.id FROM dims d WHERE d.id < 50)",
        1.5,
        None,
    ),
    ("SELECT f.tag, COUNT(*) FROM facts f GROUP BY f.tag", 1.01, None),
    # correlated columns (band is a function of qty): counted on the row sample
    ("SELECT * FROM facts f WHERE f.qty < 10 AND f.band = 'high'", 2.0, None),
    ("SELECT * FROM facts f WHERE f.qty >= 30 AND f.band = 'high'", 1.05, None),
    ("SELECT * FROM facts f WHERE f.tag LIKE '%o%'", 1.05, None),
    # a long prefix of a column without a sketch of its order: min/max alone would give it
    # 256^-6 of the range (TPC-H q20's p_name LIKE 'forest%' came out as no rows)
    ("SELECT * FROM facts f WHERE f.phrase LIKE 'forest%'", 1.5, None),
    (
        "SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id WHERE f.qty >= 30 "
        "AND f.band = 'high' AND f.day >= '2024-01-04'",
        1.5,
        None,
    ),
    ("SELECT * FROM facts f LEFT JOIN dims d ON f.dim_id = d.id", 1.1, 1.1),
    # a ticket's lines share their customer and their day (the partition key): the groups
    # of customer and day are filled by the distinct (day, customer) pairs, not by the rows
    # as independent draws (4,200 combinations, 7,200 rows, about 810 pairs)
    (
        "SELECT d.id, d.kind, t.day, COUNT(*) FROM tickets t JOIN dims d ON t.cust = d.id "
        "GROUP BY d.id, d.kind, t.day",
        1.3,
        None,
    ),
    # ... a filter on the lines' items keeps a pair when one of its eight lines passes:
    # pairs dropped as a filter drops a column's values, not in the share of rows kept
    (
        "SELECT d.id, t.day, COUNT(*) FROM tickets t JOIN dims d ON t.cust = d.id "
        "WHERE t.item < 100 GROUP BY d.id, t.day",
        1.3,
        None,
    ),
    # a calendar's key, filtered by its year, carried onto the facts' day: the year's days
    # the facts' range holds, read from the filtered sample (the calendar's key spread
    # evenly over ten years would leave one of them)
    (
        "SELECT f.day, COUNT(*) FROM facts f JOIN calendar c ON f.day = c.d "
        "WHERE c.yr = 2024 GROUP BY f.day",
        1.1,
        None,
    ),
    # a key equal to another plus a constant has the other's distinct values (TPC-DS q2's
    # weeks a year apart), not an unknown predicate's 1/3
    ("SELECT * FROM dims a JOIN dims b ON a.id = b.id + 1", 1.1, None),
    # a sum of non-negative values is never negative: SUM(qty) > 0 keeps nearly every group
    (
        "SELECT f.dim_id, SUM(f.qty) AS total FROM facts f GROUP BY f.dim_id HAVING SUM(f.qty) > 0",
        1.3,
        None,
    ),
    # the hottest dimension rows sit in a rare group: the join carries the fact's heavy keys
    # onto d.grp, so the group's filter two joins away keeps them
    (
        "SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id JOIN grps g ON d.grp = g.gid "
        "WHERE g.name = 'g9'",
        1.5,
        None,
    ),
    # a foreign key to a composite key ((dim_id, sup) of offers, four suppliers a dimension
    # row): not 1/V(dim_id) x 1/V(sup)
    (
        "SELECT * FROM facts f JOIN offers o ON f.dim_id = o.dim_id AND f.sup = o.sup "
        "WHERE o.stock < 20",
        1.5,
        None,
    ),
    # a filter leaving about one offer per dimension row: dim_id alone is (nearly) unique
    # among the kept offers, the supplier still completes it (1 in 4), not 1/V(sup): 90
    # rows, estimated 0.4 without. The bound is loose because the facts of the kept dim_ids
    # (345, cold keys of the Zipf tail) are estimated at about 105: the tail's own error
    (
        "SELECT * FROM facts f JOIN offers o ON f.dim_id = o.dim_id AND f.sup = o.sup "
        "WHERE o.stock < 2",
        4.0,
        None,
    ),
    # the filter on the dimension drops the hot keys, and with them their suppliers' rows
    (
        "SELECT * FROM facts f JOIN dims d ON f.dim_id = d.id JOIN sups s ON f.sup = s.sid "
        "WHERE d.grp = 9 AND s.sid < 100",
        1.5,
        None,
    ),
]

SUPPLIERS = 200
COLOURS = [
    "almond", "azure", "black", "blue", "firebrick", "floral", "forest", "frosted", "fuchsia",
    "ghost", "gold", "green", "honeydew", "ivory", "lace", "lavender", "lawn", "lemon",
    "yellow", "white",
]  # fmt: skip


def suppliers_of(dim_id: int) -> list[int]:
    """A dimension row's four suppliers (TPC-H's partsupp rule, on a smaller domain)."""
    return [(dim_id + j * (SUPPLIERS // 4)) % SUPPLIERS for j in range(4)]


def q_error(estimate: float, truth: float) -> float:
    estimate, truth = max(estimate, 1.0), max(truth, 1.0)
    return max(estimate / truth, truth / estimate)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(42)
    root = tmp_path_factory.mktemp("golden")
    weights = [1 / k**1.3 for k in range(1, 501)]
    extra = random.Random(7)  # the columns and tables added later draw from their own
    words = random.Random(11)
    for day in range(6):
        rows = 2000 + 300 * day
        ids = rng.choices(range(1, 501), weights=weights, k=rows)
        sups = [extra.choice(suppliers_of(i)) for i in ids]
        qty = [rng.randrange(50) for _ in range(rows)]
        data = pa.table(
            {
                "dim_id": pa.array(ids, pa.int64()),
                "sup": pa.array(sups, pa.int64()),
                "qty": pa.array(qty, pa.int32()),
                "band": ["high" if q >= 25 else "low" for q in qty],  # a function of qty
                "tag": [
                    "hot" if rng.random() < 0.3 else rng.choice(["cold", "cool", "warm", "mild"])
                    for _ in range(rows)
                ],
                # two of COLOURS, as TPC-H's p_name: prefixes shared by several words
                "phrase": [" ".join(words.sample(COLOURS, 2)) for _ in range(rows)],
            }
        )
        directory = root / "facts" / f"day={dt.date(2024, 1, 1) + dt.timedelta(day)}"
        directory.mkdir(parents=True)
        pq.write_table(data, directory / "part-0.parquet")
    shop = random.Random(13)  # the tickets draw from their own: the other tables stay
    for day in range(6):  # 150 tickets a day of 8 lines each, one customer a ticket
        customers = [shop.randrange(1, 701) for _ in range(150)]
        directory = root / "tickets" / f"day={dt.date(2024, 1, 1) + dt.timedelta(day)}"
        directory.mkdir(parents=True)
        pq.write_table(
            pa.table(
                {
                    "ticket": pa.array([t for t in range(150) for _ in range(8)], pa.int64()),
                    "cust": pa.array([c for c in customers for _ in range(8)], pa.int64()),
                    "item": pa.array([shop.randrange(500) for _ in range(1200)], pa.int64()),
                }
            ),
            directory / "part-0.parquet",
        )
    (root / "dims").mkdir()
    pq.write_table(
        pa.table(
            {
                "id": pa.array(range(1, 701), pa.int64()),
                "kind": [rng.choice("abcd") for _ in range(700)],
                # group 9 holds the two hottest keys and a few cold ones
                "grp": pa.array(
                    [9 if i <= 2 or i % 97 == 0 else extra.randrange(9) for i in range(1, 701)],
                    pa.int64(),
                ),
            }
        ),
        root / "dims" / "part-0.parquet",
    )
    (root / "calendar").mkdir()
    days = [dt.date(2020, 1, 1) + dt.timedelta(n) for n in range(3653)]  # ten years
    pq.write_table(
        pa.table(
            {
                "d": pa.array(days, pa.date32()),
                "yr": pa.array([d.year for d in days], pa.int64()),
            }
        ),
        root / "calendar" / "part-0.parquet",
    )
    (root / "grps").mkdir()
    pq.write_table(
        pa.table({"gid": pa.array(range(10), pa.int64()), "name": [f"g{g}" for g in range(10)]}),
        root / "grps" / "part-0.parquet",
    )
    (root / "offers").mkdir()
    offers = [(i, s) for i in range(1, 701) for s in suppliers_of(i)]
    pq.write_table(
        pa.table(
            {
                "dim_id": pa.array([i for i, _ in offers], pa.int64()),
                "sup": pa.array([s for _, s in offers], pa.int64()),
                "stock": pa.array([extra.randrange(100) for _ in offers], pa.int64()),
            }
        ),
        root / "offers" / "part-0.parquet",
    )
    (root / "sups").mkdir()
    pq.write_table(
        pa.table({"sid": pa.array(range(SUPPLIERS), pa.int64())}),
        root / "sups" / "part-0.parquet",
    )
    return root


TABLES = ("facts", "tickets", "dims", "calendar", "grps", "offers", "sups")
PARTITIONED = ("facts", "tickets")  # by day


@pytest.fixture(scope="module")
def truth(spark: Any, lake: Path) -> dict[str, int]:
    from collectors.spark_session import session_settings

    for table in TABLES:
        path = str(lake / table)
        reader = spark.read.option("basePath", path) if table in PARTITIONED else spark.read
        reader.parquet(path).createOrReplaceTempView(table)
    with session_settings(
        spark, {"spark.sql.sources.partitionColumnTypeInference.enabled": "true"}
    ):
        counts = {
            sql: spark.sql(f"SELECT COUNT(*) FROM ({sql}) q").first()[0] for sql, _, _ in GOLDEN
        }
    for table in TABLES:
        spark.catalog.dropTempView(table)
    return counts


def test_estimates_against_spark_truth(
    metastore: Metastore, spark: Any, lake: Path, truth: dict[str, int]
) -> None:
    from collectors.collect import collect
    from optimizer.estimate.api import estimate_rows

    for table in TABLES:
        metastore.register_table(table, str(lake / table))
        collect(metastore.engine, table, spark=spark)
    failures = []
    for sql, sketch_bound, basic_bound in GOLDEN:
        errors = {
            level: q_error(estimate_rows(metastore.engine, sql, level), truth[sql])
            for level in ("basic", "histogram", "sketch")
        }
        if errors["sketch"] > sketch_bound or (basic_bound and errors["basic"] > basic_bound):
            from optimizer.estimate.api import estimated
            from optimizer.estimate.explain import estimate_text

            failures.append(
                (
                    sql,
                    truth[sql],
                    {k: round(v, 3) for k, v in errors.items()},
                    *estimated(metastore.engine, sql, estimate_text, "sketch").splitlines(),
                )
            )
    assert not failures, json.dumps(failures, indent=1)
