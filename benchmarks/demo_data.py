"""Write the demo dataset: sales partitioned by dt (date) and region (string), as Parquet.

Ninety-one days x four regions, a default partition (__HIVE_DEFAULT_PARTITION__) and a
region whose name needs Hive's path escaping, each partition one small Parquet file.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from metastore.partitions.names import DEFAULT_PARTITION_NAME, escape_path_name

REGIONS = ["emea", "apac", "amer", "latam/south"]


def write_demo(root: Path, days: int = 91, seed: int = 7) -> int:
    rng = random.Random(seed)
    start = dt.date(2024, 3, 1)
    count = 0
    for offset in [*range(days), None]:
        day = DEFAULT_PARTITION_NAME if offset is None else (start + dt.timedelta(offset))
        for region in REGIONS:
            directory = root / f"dt={day}" / f"region={escape_path_name(region)}"
            directory.mkdir(parents=True, exist_ok=True)
            rows = rng.randint(20, 60)
            table = pa.table(
                {
                    "order_id": pa.array(range(count * 100, count * 100 + rows), pa.int64()),
                    "customer": [f"c{rng.randint(1, 500)}" for _ in range(rows)],
                    "amount": pa.array([round(rng.uniform(1, 500), 2) for _ in range(rows)]),
                }
            )
            pq.write_table(table, directory / "part-00000.parquet")
            count += 1
    return count


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "demo/sales")
    print(f"wrote {write_demo(target)} partitions under {target}")
