"""Does a collection's cost follow rows or partitions (issue 49, point 3)? The same rows,
TPC-H SF 1 lineitem, in 2,000 small partitions and in 200, collected in full side by side.

    python benchmarks/collect_shapes.py [--scale 1] [--repeat 3] [--master local[2]]
                                        [--shapes 2000,200]

Run `make data` first. Each shape is lineitem with a key `shard`, a hash of the row's
order and line numbers modulo N, written once under benchmarks/.data/shapes-sf<scale>/
hashed-<N>/ (one file per partition, N of them) and kept. Per
shape, in one SparkSession after a warm-up collection: `statlas collect --full` into a fresh
SQLite metastore, medians of --repeat, with the database's growth. Printed: seconds and MB
per shape and the ratio of each to the fewest partitions' (target: within 1.3 x).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from metastore_bytes import database_bytes, parquet_bytes
from pyspark.sql import functions as F

from collectors.collect import collect
from collectors.spark_session import spark_session
from metastore import Metastore

DATA = Path(__file__).resolve().parent / ".data"


def shape(spark: object, source: Path, out: Path, partitions: int) -> Path:
    """lineitem partitioned by a hash of each row's key (order and line) modulo
    `partitions`, one file per partition: every shard holds rows. (TPC-H's order keys are
    sparse, and `l_orderkey % 2000` left half the shards empty: 1,000 partitions.)"""
    target = out / f"hashed-{partitions}"
    if (target / "_SUCCESS").exists():
        return target
    frame = spark.read.parquet(str(source))  # type: ignore[attr-defined]
    key = F.xxhash64("l_orderkey", "l_linenumber")
    sharded = frame.withColumn("shard", F.pmod(key, F.lit(partitions)))
    sharded.repartition(partitions, "shard").write.mode("overwrite").partitionBy("shard").parquet(
        str(target)
    )
    found = sum(1 for d in target.iterdir() if d.is_dir())
    if found != partitions:
        raise SystemExit(f"{target} holds {found} partitions, not {partitions}")
    return target


def collected(directory: Path, work: Path, name: str, spark: object) -> tuple[float, int]:
    """Seconds of a full collection into a fresh SQLite metastore, and its growth."""
    metastore = Metastore(f"sqlite:///{work / name}.db")
    metastore.upgrade()
    metastore.register_table("lineitem", str(directory))
    before = database_bytes(metastore.engine)
    report = collect(metastore.engine, "lineitem", full=True, spark=spark, scan="jvm")
    grown = database_bytes(metastore.engine) - before
    metastore.dispose()
    return report.seconds, grown


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--shapes", default="2000,200")
    args = parser.parse_args()
    source = DATA / f"tpch-sf{args.scale}" / "uniform" / "lineitem"
    if not source.exists():
        raise SystemExit(f"{source} is missing: run `make data` first")
    spark = spark_session(args.master)
    counts = [int(n) for n in args.shapes.split(",")]
    shapes = {n: shape(spark, source, DATA / f"shapes-sf{args.scale}", n) for n in counts}
    work = Path(tempfile.mkdtemp(prefix="statlas-shapes-"))
    collected(shapes[min(counts)], work, "warm-up", spark)
    seconds: dict[int, list[float]] = {n: [] for n in counts}
    grown: dict[int, int] = {}
    for attempt in range(args.repeat):
        for n in counts:
            taken, grown[n] = collected(shapes[n], work, f"{n}-{attempt}", spark)
            seconds[n].append(taken)
        print(
            f"attempt {attempt + 1}: " + ", ".join(f"{n}: {seconds[n][-1]:.1f} s" for n in counts)
        )
    fewest = min(counts)
    base = statistics.median(seconds[fewest])
    print(f"\nlineitem SF {args.scale}, {args.master}, medians of {args.repeat}\n")
    print("| partitions | Parquet MB | collect s | x the fewest | metastore MB | x the fewest |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in counts:
        median = statistics.median(seconds[n])
        print(
            f"| {n:,} | {parquet_bytes(shapes[n]) / 1e6:,.0f} | {median:.1f} | "
            f"{median / base:.2f} | {grown[n] / 1e6:,.1f} | {grown[n] / grown[fewest]:.2f} |"
        )


if __name__ == "__main__":
    main()
