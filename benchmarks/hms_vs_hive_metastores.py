"""The two metastores of benchmarks/hms_vs_hive.py: statlas's daemon on its own PostgreSQL
database, the Thrift clients of each side, and the table `events` created and filled with the
same partitions on both (and listed, to compare them)."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from benchmarks.hms import STATLAS, RawClient, daemon
from benchmarks.real_hive import recreate_database

PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"
DB, TABLE = "default", "events"
SIDES = ("statlas", "hive")


def dates(days: int) -> list[str]:
    """`days` distinct, sortable date strings."""
    first = 18262  # 2020-01-01, days since the epoch
    return [time.strftime("%Y-%m-%d", time.gmtime((first + d) * 86400)) for d in range(days)]


def region_names(regions: int) -> list[str]:
    return [f"region-{i:03d}" for i in range(regions)]


def thrift_client(port: int) -> tuple[thrift_api.Client, TTransport.TTransportBase]:
    """The generated client (for set-up, lock and unlock), Hive's wire settings."""
    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    transport.open()
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    return thrift_api.Client(protocol), transport


def fresh_database(db: str) -> None:
    recreate_database(db, PG_HOST, PG_PORT, PG_USER)


@contextlib.contextmanager
def statlas_metastore(db: str, workdir: Path) -> Iterator[int]:
    fresh_database(db)
    url = f"postgresql+psycopg2://{PG_USER}@{PG_HOST}:{PG_PORT}/{db}"
    subprocess.run([STATLAS, "--db", url, "db", "upgrade"], check=True, capture_output=True)
    workdir.mkdir(parents=True, exist_ok=True)
    with daemon(url, workdir) as (port, _process):
        yield port


@dataclass
class Side:
    name: str
    port: int
    raw: RawClient
    client: thrift_api.Client
    transport: TTransport.TTransportBase
    iceberg: Path
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.port}"


def table_object(location: str) -> hms.Table:
    storage = hms.StorageDescriptor(
        cols=[hms.FieldSchema("user_id", "bigint"), hms.FieldSchema("event", "string")],
        location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=hms.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={"serialization.format": "1"},
        ),
        compressed=False,
        numBuckets=-1,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return hms.Table(
        tableName=TABLE,
        dbName=DB,
        owner="bench",
        createTime=int(time.time()),
        lastAccessTime=0,
        retention=0,
        sd=storage,
        partitionKeys=[hms.FieldSchema("dt", "string"), hms.FieldSchema("region", "string")],
        parameters={"EXTERNAL": "TRUE"},
        tableType="EXTERNAL_TABLE",
    )


def partition_objects(
    location: str, days: list[str], regions: list[str]
) -> Iterator[hms.Partition]:
    table = table_object(location)
    for d in days:
        for r in regions:
            storage = hms.StorageDescriptor(**vars(table.sd))
            storage.location = f"{location}/dt={d}/region={r}"
            yield hms.Partition(
                values=[d, r],
                dbName=DB,
                tableName=TABLE,
                createTime=int(time.time()),
                lastAccessTime=0,
                sd=storage,
                parameters={"numFiles": "4", "totalSize": "4194304", "numRows": "100000"},
            )


def make_directories(root: Path, days: list[str], regions: list[str]) -> None:
    """The table's partition directories. Hive's add_partitions creates a missing one
    through Hadoop's local file system, which (no native Hadoop library in pyspark) forks
    `chmod` per directory: ~40 partitions/s here, a cost of this set-up, not of a
    metastore on HDFS or S3. statlas creates none."""
    for d in days:
        for r in regions:
            (root / f"dt={d}" / f"region={r}").mkdir(parents=True, exist_ok=True)


def fill(side: Side, location: str, days: list[str], regions: list[str], batch: int) -> float:
    """Create the table and add its partitions; returns the seconds add_partitions took."""
    try:
        side.client.get_database(DB)
    except hms.NoSuchObjectException:
        side.client.create_database(hms.Database(name=DB, description="", parameters={}))
    side.client.create_table(table_object(location))
    pending: list[hms.Partition] = []
    seconds = 0.0
    for partition in partition_objects(location, days, regions):
        pending.append(partition)
        if len(pending) == batch:
            started = time.perf_counter()
            side.client.add_partitions(pending)
            seconds += time.perf_counter() - started
            pending = []
    if pending:
        started = time.perf_counter()
        side.client.add_partitions(pending)
        seconds += time.perf_counter() - started
    return seconds


def listing(side: Side) -> list[tuple[str, str]]:
    """(name, location) of every partition, sorted; locations without a file: scheme."""
    names = side.client.get_partition_names(DB, TABLE, -1)
    found: list[tuple[str, str]] = []
    for start in range(0, len(names), 1000):
        for p in side.client.get_partitions_by_names(DB, TABLE, names[start : start + 1000]):
            location = p.sd.location.removeprefix("file:").replace("///", "/")
            found.append((f"dt={p.values[0]}/region={p.values[1]}", location))
    return sorted(found)
