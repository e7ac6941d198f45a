"""PySpark 4 with Hive support using `statlas daemon` as its metastore (Hive's built-in 2.3
client over Thrift), on SQLite and PostgreSQL: DDL, MSCK REPAIR, partitions added, dropped
and written by INSERT, ANALYZE, partition filters of every form Spark pushes (each answered
from statlas's typed index, the same rows as reading the files), a managed table's DROP,
and statlas's own statistics in Spark's optimizer with no ANALYZE."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.hms_daemon import hms_daemon

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

STATLAS = Path(sys.executable).parent / "statlas"
DAYS = ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"]
REGIONS = ["ap", "eu", "uk", "us"]
HOURS = [1, 2, 3, 4]
ROWS_PER_PARTITION = 5

# (Spark SQL condition, the filter string the Hive client sends for it)
FILTERS = [
    ("dt = DATE'2024-01-02'", 'dt = "2024-01-02"'),
    ("dt IN (DATE'2024-01-01', DATE'2024-01-03') AND region = 'eu'", "(dt) in"),
    ("dt >= DATE'2024-01-03' OR region LIKE 'u%'", "like"),
    ("region NOT IN ('ap', 'us') AND dt <> DATE'2024-01-03'", "not in"),
    ("h > 2 AND h != 4", "h > 2"),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_events(root: Path) -> int:
    """The external table's files: one Parquet file per (dt, region, h)."""
    rows = 0
    for d in DAYS:
        for r in REGIONS:
            for h in HOURS:
                directory = root / f"dt={d}" / f"region={r}" / f"h={h}"
                directory.mkdir(parents=True)
                base = rows
                table = pa.table(
                    {
                        "id": pa.array(range(base, base + ROWS_PER_PARTITION), pa.int64()),
                        "amount": pa.array(
                            [float(i % 97) + 0.5 for i in range(base, base + ROWS_PER_PARTITION)]
                        ),
                    }
                )
                pq.write_table(table, directory / "part-00000.parquet")
                rows += ROWS_PER_PARTITION
    return rows


def daemon(db_url: str, cwd: Path) -> contextlib.AbstractContextManager[tuple[int, Path]]:
    """`statlas daemon` serving the Hive Metastore API on `db_url`: (thrift port, log)."""
    return hms_daemon(db_url, cwd)


SPARK_SCRIPT = """
import json, os, subprocess, sys
from collectors.spark_session import spark_session

conf = json.loads(sys.argv[1])
events, statlas, warehouse = sys.argv[2], sys.argv[3], sys.argv[4]
spark = spark_session("local[1]", conf)
out = {}
q = lambda sql: [list(r) for r in spark.sql(sql).collect()]

out["databases"] = q("SHOW DATABASES")
spark.sql("CREATE DATABASE shop")
out["databases_after"] = q("SHOW DATABASES")
spark.sql(
    "CREATE EXTERNAL TABLE shop.events (id BIGINT, amount DOUBLE) "
    "PARTITIONED BY (dt DATE, region STRING, h INT) STORED AS PARQUET "
    f"LOCATION '{events}'"
)
spark.sql("MSCK REPAIR TABLE shop.events")
out["partitions"] = len(q("SHOW PARTITIONS shop.events"))
spark.sql("ALTER TABLE shop.events ADD PARTITION (dt='2024-02-01', region='zz', h=9)")
out["partitions_added"] = len(q("SHOW PARTITIONS shop.events"))
spark.sql("ALTER TABLE shop.events DROP PARTITION (dt='2024-02-01', region='zz', h=9)")
out["partitions_dropped"] = len(q("SHOW PARTITIONS shop.events"))
out["describe"] = q("DESCRIBE EXTENDED shop.events")
out["count"] = q("SELECT count(*) FROM shop.events")[0][0]

files = (
    spark.read.schema("id BIGINT, amount DOUBLE, dt DATE, region STRING, h INT")
    .option("basePath", events)
    .parquet(events)
)
out["filters"] = []
for condition in json.loads(sys.argv[5]):
    through_metastore = sorted(
        map(tuple, q(f"SELECT id, amount, dt, region, h FROM shop.events WHERE {condition}"))
    )
    selected = files.where(condition).select("id", "amount", "dt", "region", "h")
    direct = sorted(tuple(r) for r in selected.collect())
    out["filters"].append(
        [condition, len(through_metastore), len(direct), through_metastore == direct,
         through_metastore[:2], direct[:2]]
    )

spark.sql(
    "CREATE TABLE shop.sales (id BIGINT, v STRING) PARTITIONED BY (day STRING) "
    "STORED AS PARQUET"
)
spark.sql("INSERT INTO shop.sales PARTITION (day='a') VALUES (1, 'x'), (2, 'y')")
spark.sql(
    "INSERT INTO shop.sales PARTITION (day) "
    "SELECT id, 'z', CAST(id % 3 AS STRING) FROM range(6)"
)
out["sales_partitions"] = q("SHOW PARTITIONS shop.sales")
out["sales_rows"] = q("SELECT day, count(*) FROM shop.sales GROUP BY day ORDER BY day")
sales_location = [r for r in q("DESCRIBE EXTENDED shop.sales") if r[0] == "Location"][0][1]
out["sales_dir_before_drop"] = os.path.isdir(sales_location.replace("file:", "", 1))
spark.sql("DROP TABLE shop.sales")
out["sales_dir_after_drop"] = os.path.isdir(sales_location.replace("file:", "", 1))
out["tables"] = q("SHOW TABLES IN shop")

spark.sql("ANALYZE TABLE shop.events COMPUTE STATISTICS")
spark.sql("REFRESH TABLE shop.events")
out["analyzed"] = [r for r in q("DESCRIBE EXTENDED shop.events") if r[0] == "Statistics"]

def statlas_cli(*argv):
    done = subprocess.run([statlas, *argv], capture_output=True, text=True)
    return [done.returncode, done.stdout, done.stderr[-2000:]]


out["source_before"] = statlas_cli("stats", "shop.events", "--column", "id", "--json")
# statlas collects the table Spark created through its metastore; Spark then sees
# statlas's figures (fresher than its ANALYZE) with no ANALYZE of its own
collected = subprocess.run(
    [statlas, "collect", "shop.events", "--master", "local[1]"],
    capture_output=True, text=True,
)
out["collect"] = [collected.returncode, collected.stdout + collected.stderr[-2000:]]
out["source_after"] = statlas_cli("stats", "shop.events", "--column", "id", "--json")
out["table_list"] = statlas_cli("table", "list", "--json")
out["lookup"] = statlas_cli("partitions", "shop.events", "--where", "region = 'eu'", "--json")
out["estimate"] = statlas_cli(
    "estimate", "--sql", "SELECT count(*) FROM shop.events WHERE region = 'eu'", "--json"
)
spark.sql("REFRESH TABLE shop.events")
out["statistics"] = [r for r in q("DESCRIBE EXTENDED shop.events") if r[0] == "Statistics"]
out["amount"] = q("DESCRIBE EXTENDED shop.events amount")
out["dt"] = q("DESCRIBE EXTENDED shop.events dt")
out["h"] = q("DESCRIBE EXTENDED shop.events h")
out["explain_cost"] = q("EXPLAIN COST SELECT * FROM shop.events WHERE amount > 90")[0][0]

# Hive's and Trino's column-statistics calls answer from statlas's statistics
from hive_metastore import ThriftHiveMetastore, ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

port = int(conf["spark.hadoop.hive.metastore.uris"].rsplit(":", 1)[1])
transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
transport.open()
table_stats = client.get_table_statistics_req(
    hms.TableStatsRequest(dbName="shop", tblName="events", colNames=["id", "amount"])
).tableStats
out["hive_table_stats"] = {
    o.colName: [
        (o.statsData.longStats or o.statsData.doubleStats).numDVs,
        (o.statsData.longStats or o.statsData.doubleStats).numNulls,
        (o.statsData.longStats or o.statsData.doubleStats).lowValue,
        (o.statsData.longStats or o.statsData.doubleStats).highValue,
    ]
    for o in table_stats
}
name = "dt=2024-01-01/region=eu/h=1"
part_stats = client.get_partitions_statistics_req(
    hms.PartitionsStatsRequest(dbName="shop", tblName="events", colNames=["id"], partNames=[name])
).partStats
out["hive_partition_stats"] = [
    [o.statsData.longStats.lowValue, o.statsData.longStats.highValue] for o in part_stats[name]
]
out["partition_parameters"] = client.get_partition_by_name("shop", "events", name).parameters
transport.close()
spark.stop()
print("RESULT " + json.dumps(out, default=str))
"""


def test_spark_uses_statlas_as_its_hive_metastore(db_url: str, tmp_path: Path) -> None:
    events = tmp_path / "lake" / "events"
    total = write_events(events)
    with daemon(db_url, tmp_path) as (port, log):
        conf = {
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.hive.metastore.uris": f"thrift://127.0.0.1:{port}",
            "spark.sql.warehouse.dir": str(tmp_path / "warehouse"),
            "spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict",
            "spark.sql.cbo.enabled": "true",
            "spark.sql.statistics.histogram.enabled": "true",
        }
        env = {k: v for k, v in os.environ.items() if not k.startswith("STATLAS_")}
        env.update(STATLAS_DB_URL=db_url, SPARK_LOCAL_IP="127.0.0.1")
        ran = subprocess.run(
            [
                sys.executable,
                "-c",
                textwrap.dedent(SPARK_SCRIPT),
                json.dumps(conf),
                str(events),
                str(STATLAS),
                str(tmp_path / "warehouse"),
                json.dumps([condition for condition, _ in FILTERS]),
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        daemon_log = log.read_text(errors="replace")
    assert ran.returncode == 0, ran.stderr[-4000:] + daemon_log[-4000:]
    result = json.loads(ran.stdout.split("RESULT ", 1)[1])

    assert ["default"] in result["databases"]
    assert ["shop"] in result["databases_after"]
    partitions = len(DAYS) * len(REGIONS) * len(HOURS)
    assert result["partitions"] == partitions
    assert result["partitions_added"] == partitions + 1
    assert result["partitions_dropped"] == partitions
    describe = {r[0]: r[1] for r in result["describe"]}
    assert describe["Type"] == "EXTERNAL"
    assert describe["Provider"] == "hive"
    assert result["count"] == total

    for condition, rows, direct_rows, same, *first in result["filters"]:
        assert same, f"{condition}: {rows} rows through statlas, {direct_rows} from files {first}"
        assert rows > 0, condition
    index_lines = [line for line in daemon_log.splitlines() if "get_partitions_by_filter" in line]
    for condition, sent in FILTERS:
        answered = [line for line in index_lines if sent in line and "from the index" in line]
        assert answered, f"{condition}: {sent!r} not answered from the index:\n" + "\n".join(
            index_lines
        )
    assert not [line for line in index_lines if "not compiled" in line], index_lines

    assert sorted(r[0] for r in result["sales_partitions"]) == [
        "day=0",
        "day=1",
        "day=2",
        "day=a",
    ]
    assert result["sales_rows"] == [["0", 2], ["1", 2], ["2", 2], ["a", 2]]
    assert result["sales_dir_before_drop"] and not result["sales_dir_after_drop"]
    assert result["tables"] == [["shop", "events", False]]
    assert result["analyzed"] and f"{total} rows" in result["analyzed"][0][1]

    code, collect_output = result["collect"]
    assert code == 0, collect_output
    for key in ("source_before", "source_after", "table_list", "lookup", "estimate"):
        assert result[key][0] == 0, (key, result[key])
    before = json.loads(result["source_before"][1])["served_to_engines"]
    after = json.loads(result["source_after"][1])
    assert before.startswith("an engine's"), before
    assert after["served_to_engines"].startswith("statlas's collection"), after
    assert after["row_count"] == total
    assert "shop.events" in result["table_list"][1]
    assert json.loads(result["lookup"][1])["count"] == len(DAYS) * len(HOURS)
    assert result["estimate"][1].strip()
    assert result["hive_table_stats"]["id"] == [total, 0, 0, total - 1]
    assert result["hive_table_stats"]["amount"][:2] == [97, 0]
    assert result["hive_table_stats"]["amount"][2:] == [0.5, 96.5]
    first = (0 * len(REGIONS) + REGIONS.index("eu")) * len(HOURS) * ROWS_PER_PARTITION
    assert result["hive_partition_stats"] == [[first, first + ROWS_PER_PARTITION - 1]]
    assert result["partition_parameters"]["numRows"] == str(ROWS_PER_PARTITION)
    amount = {r[0]: r[1] for r in result["amount"]}
    assert amount["min"] == "0.5" and amount["max"] == "96.5", amount
    assert amount["distinct_count"] == "97", amount
    assert amount["histogram"] != "NULL", amount
    # the partition keys' statistics come from the rows of each partition
    dt = {r[0]: r[1] for r in result["dt"]}
    assert (dt["min"], dt["max"], dt["distinct_count"]) == ("2024-01-01", "2024-01-04", "4"), dt
    assert dt["num_nulls"] == "0" and dt["histogram"] != "NULL", dt
    h = {r[0]: r[1] for r in result["h"]}
    assert (h["min"], h["max"], h["distinct_count"]) == ("1", "4", "4"), h
    assert f"rowCount={total}" in result["explain_cost"] or f"rowCount={total}" in str(
        result["statistics"]
    ), result["explain_cost"]
