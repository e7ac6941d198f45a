"""TPC-H SF 0.01 as a lake whose statistics Spark collected (`collected_tpch_lake`): the
planner's and the pruner's tests run over it."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Lake:
    root: Path
    metastore: Any


def collected_tpch_lake(root: Path, spark: Any) -> Lake:
    """TPC-H SF 0.01 (tpchgen-cli) as one Parquet directory per table under `root`,
    registered in a SQLite metastore there and collected with `spark` (on 2 shuffle
    partitions)."""
    from benchmarks.data import TABLES as TPCH_TABLES
    from benchmarks.data import read, write
    from collectors.collect import collect
    from collectors.spark_session import session_settings
    from metastore import Metastore

    tool = Path(sys.executable).parent / "tpchgen-cli"
    raw = root / "raw"
    subprocess.run(
        [str(tool), "parquet", "-s", "0.01", f"--output-dir={raw}"], check=True, capture_output=True
    )
    for table in TPCH_TABLES:
        write(read(raw, table), root / table)
    metastore = Metastore(f"sqlite:///{root / 'statlas.db'}")
    metastore.upgrade()
    with session_settings(spark, {"spark.sql.shuffle.partitions": "2"}):
        for table in TPCH_TABLES:
            metastore.register_table(table, str(root / table))
            collect(metastore.engine, table, spark=spark)
    return Lake(root, metastore)
