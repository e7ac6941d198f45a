"""A process appending to an Iceberg table through pyiceberg's own Hive catalog, as a user
would: `python -m tests.support.iceberg_appender URI WAREHOUSE TABLE WORKER COUNT`.

Each append writes one row whose id is WORKER * 1000 + i; a commit another writer beat is
retried on the reloaded table. Prints `acked <id>` once pyiceberg acknowledged the append
(its commit returned), and nothing for an append it did not acknowledge.
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import CommitFailedException

PATIENCE = 240.0  # seconds an append keeps retrying before the worker gives up on it


def catalog(uri: str, warehouse: str) -> HiveCatalog:
    return HiveCatalog(
        "statlas",
        **{
            "uri": uri,
            "warehouse": warehouse,
            "lock-check-min-wait-time": "0.05",
            "lock-check-max-wait-time": "0.5",
            "lock-check-retries": "40",
        },
    )


def main(uri: str, warehouse: str, table_name: str, worker: int, count: int) -> int:
    hive = catalog(uri, warehouse)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False)])
    for i in range(count):
        row = worker * 1000 + i
        deadline = time.monotonic() + PATIENCE
        attempt = 0
        while True:
            table = hive.load_table(table_name)
            try:
                table.append(pa.table({"id": pa.array([row], pa.int64())}, schema=schema))
            except CommitFailedException as error:
                if time.monotonic() > deadline:
                    print(f"gave up {row}: {error}", flush=True)
                    break
                attempt += 1
                time.sleep(0.01 * (attempt % 10))
                continue
            print(f"acked {row}", flush=True)
            break
    return 0


if __name__ == "__main__":
    uri, warehouse, table_name, worker, count = sys.argv[1:6]
    sys.exit(main(uri, warehouse, table_name, int(worker), int(count)))
