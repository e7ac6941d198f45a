"""Column names as the Parquet files spell them (`Id`, `CreationDate`, `order id`, a struct
`addr`) through the Hive Metastore API, on SQLite and PostgreSQL: a table registered and
collected by statlas is served by a real Thrift client with its columns so spelled, Spark's
statistics parameters under those names and Hive's column statistics asked in lower case;
and Spark's own Hive client (a process of its own) describes and queries it so."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from metastore import Metastore
from servers.hive_metastore.server import ThriftService
from tests.support.processes import statlas_env

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

EPOCH = dt.date(1970, 1, 1)
CITIES = ["Paris", "Lyon", "Nice", None]
ROWS = {1: 40, 2: 35}  # rows of the partitions p=1 and p=2
ID_ABOVE = 25  # the query's `Id > ID_ABOVE`
PREFIX = "spark.sql.statistics.colStats."
COLUMNS = [
    ("Id", "bigint"),
    ("CreationDate", "date"),
    ("order id", "string"),
    ("addr", "struct<city:string>"),
]


@dataclass
class Posts:
    """The values written, both partitions together."""

    root: Path
    values: dict[str, list[Any]]

    @property
    def rows(self) -> int:
        return len(self.values["Id"])

    def present(self, column: str) -> list[Any]:
        return [v for v in self.values[column] if v is not None]

    def distinct(self, column: str) -> int:
        return len(set(self.present(column)))

    def nulls(self, column: str) -> int:
        return self.rows - len(self.present(column))


def write_posts(root: Path) -> Posts:
    """Two partitions whose rows overlap in Id and CreationDate, with NULLs in each column."""
    values: dict[str, list[Any]] = {"Id": [], "CreationDate": [], "order id": [], "addr": []}
    for p, rows in ROWS.items():
        part: dict[str, list[Any]] = {
            "Id": [None if i % 9 == 4 else (i * 7) % 31 + 10 * p for i in range(rows)],
            "CreationDate": [
                None if i % 11 == 0 else dt.date(2024, 1, 1) + dt.timedelta((i * 3) % 13 + p)
                for i in range(rows)
            ],
            "order id": [None if i % 8 == 6 else f"o-{(i * p) % 17}" for i in range(rows)],
            "addr": [None if i % 13 == 5 else {"city": CITIES[i % 4]} for i in range(rows)],
        }
        table = pa.table(
            {
                "Id": pa.array(part["Id"], pa.int64()),
                "CreationDate": pa.array(part["CreationDate"], pa.date32()),
                "order id": pa.array(part["order id"], pa.string()),
                "addr": pa.array(part["addr"], pa.struct([("city", pa.string())])),
            }
        )
        directory = root / f"p={p}"
        directory.mkdir(parents=True)
        pq.write_table(table, directory / "part-00000.parquet")
        for column, column_values in part.items():
            values[column] += column_values
    return Posts(root, values)


@pytest.fixture
def posts(metastore: Metastore, spark: Any, tmp_path: Path) -> Posts:
    from collectors.collect import collect

    written = write_posts(tmp_path / "posts")
    metastore.register_table("posts", str(written.root))
    collect(metastore.engine, "posts", spark=spark)
    return written


@pytest.fixture
def service(metastore: Metastore, posts: Posts, tmp_path: Path) -> Iterator[ThriftService]:
    server = ThriftService(metastore.ready(), "127.0.0.1", 0, str(tmp_path / "warehouse"))
    server.start()
    yield server
    server.stop()


def test_thrift_client_sees_the_files_spelling(service: ThriftService, posts: Posts) -> None:
    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", service.port))
    client = thrift_api.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    try:
        table = client.get_table("default", "posts")
        table_stats = client.get_table_statistics_req(
            hms.TableStatsRequest(
                dbName="default", tblName="posts", colNames=["id", "creationdate", "order id"]
            )
        ).tableStats
        by_upper_case = client.get_table_statistics_req(
            hms.TableStatsRequest(dbName="default", tblName="posts", colNames=["ID"])
        ).tableStats
    finally:
        transport.close()

    assert [(c.name, c.type) for c in table.sd.cols] == COLUMNS
    assert [k.name for k in table.partitionKeys] == ["p"]
    parameters = table.parameters
    assert parameters["spark.sql.statistics.numRows"] == str(posts.rows)
    for column in ("Id", "CreationDate", "order id"):
        assert parameters[f"{PREFIX}{column}.distinctCount"] == str(posts.distinct(column))
        assert parameters[f"{PREFIX}{column}.nullCount"] == str(posts.nulls(column))
    assert parameters[f"{PREFIX}Id.min"] == str(min(posts.present("Id")))
    assert parameters[f"{PREFIX}Id.max"] == str(max(posts.present("Id")))
    assert parameters[f"{PREFIX}CreationDate.min"] == str(min(posts.present("CreationDate")))
    assert parameters[f"{PREFIX}CreationDate.max"] == str(max(posts.present("CreationDate")))
    # no parameter under a folded spelling of a column (Spark reads them by the schema's)
    assert not [k for k in parameters if k.startswith((f"{PREFIX}id.", f"{PREFIX}creationdate."))]

    stats = {o.colName.lower(): o for o in table_stats}
    assert sorted(stats) == ["creationdate", "id", "order id"]
    ids = stats["id"].statsData.longStats
    assert stats["id"].colType == "bigint"
    assert (ids.numDVs, ids.numNulls) == (posts.distinct("Id"), posts.nulls("Id"))
    assert (ids.lowValue, ids.highValue) == (min(posts.present("Id")), max(posts.present("Id")))
    dates = stats["creationdate"].statsData.dateStats
    assert stats["creationdate"].colType == "date"
    assert (dates.numDVs, dates.numNulls) == (
        posts.distinct("CreationDate"),
        posts.nulls("CreationDate"),
    )
    days = [(d - EPOCH).days for d in posts.present("CreationDate")]
    assert (dates.lowValue.daysSinceEpoch, dates.highValue.daysSinceEpoch) == (min(days), max(days))
    orders = stats["order id"].statsData.stringStats
    lengths = [len(v) for v in posts.present("order id")]
    assert (orders.numDVs, orders.numNulls) == (posts.distinct("order id"), posts.nulls("order id"))
    assert orders.maxColLen == max(lengths)
    assert orders.avgColLen == pytest.approx(sum(lengths) / len(lengths))
    assert [(o.colName.lower(), o.statsData.longStats.numDVs) for o in by_upper_case] == [
        ("id", posts.distinct("Id"))
    ]


SPARK_SCRIPT = """
import json, sys
from collectors.spark_session import spark_session

conf = json.loads(sys.argv[1])
spark = spark_session("local[1]", conf)
q = lambda sql: [list(r) for r in spark.sql(sql).collect()]
out = {
    "describe": q("DESCRIBE EXTENDED default.posts"),
    "schema": [[f.name, f.dataType.simpleString()] for f in spark.table("default.posts").schema],
    "above": q(f"SELECT count(*) FROM default.posts WHERE Id > {int(sys.argv[2])}")[0][0],
    "order": q("SELECT count(*) FROM default.posts WHERE `order id` = 'o-3'")[0][0],
    "city": q("SELECT count(*) FROM default.posts WHERE addr.city = 'Lyon' AND p = 2")[0][0],
    "dates": q("SELECT count(DISTINCT CreationDate) FROM default.posts")[0][0],
}
spark.stop()
print("RESULT " + json.dumps(out, default=str))
"""


@pytest.mark.slow
def test_sparks_hive_client_sees_the_files_spelling(
    service: ThriftService, posts: Posts, db_url: str, tmp_path: Path
) -> None:
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": f"thrift://127.0.0.1:{service.port}",
        "spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
    }
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(SPARK_SCRIPT),
            json.dumps(conf),
            str(ID_ABOVE),
        ],
        cwd=tmp_path,
        env=statlas_env(db_url),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr[-4000:]
    result = json.loads(ran.stdout.split("RESULT ", 1)[1])

    described = []
    for name, type_, *_ in result["describe"]:
        if not name or name.startswith("#"):
            break
        described.append((name, type_))
    assert described == [*COLUMNS, ("p", "int")]
    assert result["schema"] == [[n, t] for n, t in described]
    assert result["above"] == sum(1 for v in posts.present("Id") if v > ID_ABOVE)
    assert result["order"] == posts.values["order id"].count("o-3")
    lyon_in_p2 = [
        a for a in posts.values["addr"][ROWS[1] :] if a is not None and a["city"] == "Lyon"
    ]
    assert result["city"] == len(lyon_in_p2)
    assert result["dates"] == posts.distinct("CreationDate")
