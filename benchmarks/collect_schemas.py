"""statlas collect beside Spark's ANALYZE on a table written by another tool: camel-case
column names, a struct, an array, and a schema that changed halfway (Id widened from int to
bigint, a column dropped, two added).

    python benchmarks/collect_schemas.py [--days 365] [--rows 5000] [--repeat 3]
                                         [--master local[2]]

In one run, one SparkSession, medians of --repeat:
  footers        the footer reads a collection now makes first (collectors.file_schemas:
                 every partition listed, every file's schema read, merged)
  statlas full   statlas collect --full into SQLite (every statistic, per partition,
                 struct leaves included), the footer reads included
  analyze        ANALYZE TABLE ... COMPUTE STATISTICS FOR COLUMNS, histograms on, of the
                 scalar columns (FOR ALL COLUMNS refuses a struct or array column), on a
                 Spark table over the same files declared with the merged schema (Spark's
                 own mergeSchema cannot read them: int and bigint)
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from collectors.collect import collect
from collectors.file_schemas import partition_schemas, read_layout
from collectors.spark_session import spark_session
from metastore import Metastore


def write_lake(root: Path, days: int, rows: int) -> None:
    """`days` partitions `Day=...` of `rows` rows; the second half in the newer schema."""
    start = dt.date(2024, 1, 1)
    owner = pa.struct([("UserId", pa.int32()), ("DisplayName", pa.string())])
    for n in range(days):
        day = start + dt.timedelta(days=n)
        ids = list(range(n * rows, (n + 1) * rows))
        common: dict[str, Any] = {
            "CreationDate": pa.array([day] * rows),
            "Owner": pa.array(
                [{"UserId": i % 9973, "DisplayName": f"user {i % 9973}"} for i in ids], owner
            ),
            "ViewCount": pa.array([(i * 7919) % 100_000 for i in ids], pa.int64()),
        }
        if n < days // 2:
            columns = {"Id": pa.array(ids, pa.int32()), "Title": [f"t{i % 5000}" for i in ids]}
        else:
            columns = {
                "Tags": pa.array([["a", "b"][: i % 3] for i in ids], pa.list_(pa.string())),
                "Id": pa.array(ids, pa.int64()),
                "Score": pa.array([(i % 41) - 20 for i in ids], pa.int16()),
            }
        directory = root / f"Day={day.isoformat()}"
        directory.mkdir(parents=True)
        pq.write_table(pa.table({**columns, **common}), directory / "part-00000.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="statlas-schemas-"))
    lake = work / "posts"
    write_lake(lake, args.days, args.rows)
    spark = spark_session(args.master)
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")  # as statlas keeps them
    metastore = Metastore(f"sqlite:///{work / 'statlas.db'}")
    metastore.upgrade()
    metastore.register_table("posts", str(lake))
    times: dict[str, list[float]] = {"footers": [], "full": [], "analyze": []}
    report, refused = None, "accepted"
    try:
        locations = {i: str(p) for i, p in enumerate(sorted(lake.iterdir()))}
        registered = metastore.table("posts").columns
        collect(metastore.engine, "posts", spark=spark)  # warm-up: JIT, jar, caches
        schema = ", ".join(f"`{c.name}` {c.type}" for c in metastore.table("posts").columns)
        spark.sql(
            f"CREATE TABLE posts ({schema}, Day STRING) USING parquet PARTITIONED BY (Day) "
            f"LOCATION '{lake}'"
        )
        spark.sql("ALTER TABLE posts RECOVER PARTITIONS")
        try:  # Spark describes no struct or array column: FOR ALL COLUMNS is refused
            spark.sql("ANALYZE TABLE posts COMPUTE STATISTICS FOR ALL COLUMNS")
        except Exception as error:
            refused = str(error).split("]")[0].lstrip("[")
        scalars = ", ".join(
            f"`{c.name}`"
            for c in metastore.table("posts").columns
            if not c.type.startswith(("struct<", "array<", "map<"))
        )
        for _ in range(args.repeat):
            started = time.perf_counter()
            layout = read_layout(registered, partition_schemas(locations, "parquet", False), False)
            times["footers"].append(time.perf_counter() - started)
            assert not layout.failed
            started = time.perf_counter()
            report = collect(metastore.engine, "posts", spark=spark, full=True)
            times["full"].append(time.perf_counter() - started)
            started = time.perf_counter()
            spark.sql(f"ANALYZE TABLE posts COMPUTE STATISTICS FOR COLUMNS {scalars}").collect()
            times["analyze"].append(time.perf_counter() - started)
    finally:
        spark.sql("DROP TABLE IF EXISTS posts")
        metastore.dispose()
        shutil.rmtree(work, ignore_errors=True)
    assert report is not None
    median = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"{args.days} partitions of {args.rows:,} rows ({report.rows:,} rows), "
        f"{len(report.columns_skipped)} columns in part ({', '.join(report.columns_skipped)}), "
        f"medians of {args.repeat}, {args.master}\n"
    )
    print("| step | seconds | ratio |")
    print("|---|---|---|")
    print(f"| Spark ANALYZE FOR ALL COLUMNS | - | refused: {refused} |")
    print(f"| Spark ANALYZE FOR COLUMNS (the scalar ones) | {median['analyze']:.2f} | 1.00 |")
    print(
        f"| statlas collect --full | {median['full']:.2f} | "
        f"{median['full'] / median['analyze']:.2f} x ANALYZE |"
    )
    print(
        f"| of which the footer reads | {median['footers']:.2f} | "
        f"{median['footers'] / median['full']:.1%} of the collection |"
    )


if __name__ == "__main__":
    main()
