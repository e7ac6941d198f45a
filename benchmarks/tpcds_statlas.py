"""statlas over the TPC-DS lake of `benchmarks/data.py --set tpcds`: a metastore with the 24
tables registered and collected (incrementally: a second run scans nothing).

    python benchmarks/tpcds_statlas.py [--scale 1] [--db URL] [--master local[2]]
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from qerror_statlas import register_and_collect
from tpcds_queries import TABLES

from metastore import Metastore

DATA = Path(__file__).resolve().parent / ".data"


def lake(root: Path, scale: str) -> Path:
    directory = root / f"tpcds-sf{scale}" / "lake"
    if not directory.is_dir():
        raise SystemExit(f"{directory} is missing: run benchmarks/data.py --set tpcds first")
    return directory


def default_url(root: Path, scale: str) -> str:
    return f"sqlite:///{root / f'tpcds-statlas-sf{scale}.db'}"


def metastore_for(root: Path, scale: str, spark: Any, url: str | None = None) -> Metastore:
    """The TPC-DS metastore at `url` (a SQLite file under `root` by default), every table
    registered and collected."""
    directory = lake(root, scale)
    metastore = Metastore(url or default_url(root, scale))
    metastore.upgrade()
    register_and_collect(metastore, directory, TABLES, spark)
    return metastore


def main() -> None:
    from collectors.spark_session import spark_session

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", default="1")
    parser.add_argument("--db", default=None)
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    spark = spark_session(args.master, {"spark.app.name": "statlas-tpcds"})
    metastore_for(DATA, args.scale, spark, args.db)


if __name__ == "__main__":
    main()
