"""The Hive Metastore Thrift API through a real Thrift client on loopback, on SQLite and
PostgreSQL: databases, tables, partitions, filters from the typed index, bad input, and
Trino's call sequence (from trino-hive's ThriftHiveMetastore) replayed."""

from __future__ import annotations

from pathlib import Path

import pytest
from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException
from thrift.transport import TTransport

from metastore import Metastore
from servers.hive_metastore.server import ThriftService
from tests.support.hms_daemon import ThriftClient
from tests.support.partitions import write_partitions

PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def sales_table(location: str, db: str = "default", name: str = "sales") -> hms.Table:
    return hms.Table(
        tableName=name,
        dbName=db,
        owner="alice",
        sd=hms.StorageDescriptor(
            cols=[
                hms.FieldSchema("id", "bigint", "the id"),
                hms.FieldSchema("amount", "decimal(10,2)", None),
            ],
            location=f"file:{location}",
            inputFormat=PARQUET_IN,
            outputFormat=PARQUET_OUT,
            serdeInfo=hms.SerDeInfo(serializationLib=PARQUET_SERDE, parameters={"a": "1"}),
            numBuckets=-1,
        ),
        partitionKeys=[hms.FieldSchema("dt", "date", None), hms.FieldSchema("h", "smallint")],
        parameters={"EXTERNAL": "TRUE", "custom": "kept"},
        tableType="EXTERNAL_TABLE",
    )


def partition(values: list[str], db: str = "default", table: str = "sales") -> hms.Partition:
    return hms.Partition(values=values, dbName=db, tableName=table, parameters={"p": "1"})


def test_databases_default_create_and_drop(client: ThriftClient) -> None:
    assert client.get_database("default").name == "default"
    assert client.get_databases("*") == ["default"]
    client.create_database(hms.Database(name="Sales_DB", description="d", parameters={"x": "y"}))
    db = client.get_database("sales_db")
    assert (db.description, db.parameters) == ("d", {"x": "y"})
    assert client.get_all_databases() == ["default", "sales_db"]
    assert client.get_databases("sales*") == ["sales_db"]
    with pytest.raises(hms.AlreadyExistsException):
        client.create_database(hms.Database(name="sales_db"))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database("nope")
    client.drop_database("sales_db", True, False)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_database("sales_db")


def test_table_round_trip_and_statlas_sees_it(
    client: ThriftClient, metastore: Metastore, tmp_path: Path
) -> None:
    location = str(tmp_path / "sales")
    client.create_table(sales_table(location))
    table = client.get_table("default", "sales")
    assert [(c.name, c.type, c.comment) for c in table.sd.cols] == [
        ("id", "bigint", "the id"),
        ("amount", "decimal(10,2)", None),
    ]
    assert [(k.name, k.type) for k in table.partitionKeys] == [("dt", "date"), ("h", "smallint")]
    assert table.parameters["custom"] == "kept"
    assert table.sd.location == f"file:{location}"
    assert table.sd.serdeInfo.serializationLib == PARQUET_SERDE
    assert table.sd.serdeInfo.parameters == {"a": "1"}
    assert (table.owner, table.tableType) == ("alice", "EXTERNAL_TABLE")
    assert client.get_tables("default", "*") == ["sales"]
    assert client.get_table_req(hms.GetTableRequest(dbName="default", tblName="sales")).table
    info = metastore.table("sales")
    assert [str(k.type) for k in info.partition_keys] == ["date", "int"]
    assert [c.name for c in info.columns] == ["id", "amount"]
    with pytest.raises(hms.AlreadyExistsException):
        client.create_table(sales_table(location))
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table("default", "missing")


def test_registered_table_is_visible(
    client: ThriftClient, metastore: Metastore, tmp_path: Path
) -> None:
    root = write_partitions(tmp_path / "events", ["dt"], [["2024-01-01"], ["2024-01-02"]])
    metastore.register_table("events", str(root))
    table = client.get_table("default", "events")
    assert table.tableType == "EXTERNAL_TABLE"
    assert table.sd.inputFormat == PARQUET_IN
    assert [c.name for c in table.sd.cols] == ["id", "label"]
    assert client.get_partition_names("default", "events", -1) == [
        "dt=2024-01-01",
        "dt=2024-01-02",
    ]
    [p] = client.get_partitions_by_filter("default", "events", 'dt = "2024-01-02"', -1)
    assert p.values == ["2024-01-02"]
    assert p.sd.location == f"file:{root}/dt=2024-01-02"


def test_partitions_add_read_filter_drop(client: ThriftClient, tmp_path: Path) -> None:
    client.create_table(sales_table(str(tmp_path / "sales")))
    added = client.add_partitions_req(
        hms.AddPartitionsRequest(
            dbName="default",
            tblName="sales",
            parts=[partition([f"2024-01-0{d}", str(h)]) for d in (1, 2, 3) for h in (1, 2)],
            ifNotExists=False,
            needResult=True,
        )
    )
    assert len(added.partitions) == 6
    names = client.get_partition_names("default", "sales", -1)
    assert names[0] == "dt=2024-01-01/h=1" and len(names) == 6
    assert client.get_partition_names("default", "sales", 2) == names[:2]
    found = client.get_partitions_by_filter(
        "default", "sales", '(dt) in ("2024-01-01", "2024-01-03") and h = 2', -1
    )
    assert sorted(tuple(p.values) for p in found) == [("2024-01-01", "2"), ("2024-01-03", "2")]
    assert found[0].sd.location.endswith("/sales/dt=2024-01-01/h=2")
    assert found[0].parameters["p"] == "1"
    # a filter that does not parse is refused, as Hive refuses it (raw clients do not
    # filter again: every partition would be a wrong answer)
    with pytest.raises(hms.MetaException, match="Error parsing partition filter"):
        client.get_partitions_by_filter("default", "sales", "dt ~~ 3", -1)
    ps = client.get_partitions_ps_with_auth("default", "sales", ["2024-01-02", ""], -1, "u", [])
    assert sorted(tuple(p.values) for p in ps) == [("2024-01-02", "1"), ("2024-01-02", "2")]
    one = client.get_partition_with_auth("default", "sales", ["2024-01-02", "1"], "u", [])
    assert one.values == ["2024-01-02", "1"]
    by_names = client.get_partitions_by_names("default", "sales", names[:3])
    assert [p.values for p in by_names] == [
        v.split("/") and [n.split("=")[1] for n in v.split("/")] for v in names[:3]
    ]
    with pytest.raises(hms.AlreadyExistsException):
        client.add_partitions_req(
            hms.AddPartitionsRequest(
                dbName="default", tblName="sales", parts=[partition(["2024-01-01", "1"])]
            )
        )
    skipped = client.add_partitions_req(
        hms.AddPartitionsRequest(
            dbName="default",
            tblName="sales",
            parts=[partition(["2024-01-01", "1"])],
            ifNotExists=True,
            needResult=True,
        )
    )
    assert skipped.partitions == []
    assert client.drop_partition_with_environment_context(
        "default", "sales", ["2024-01-01", "1"], False, None
    )
    assert len(client.get_partition_names("default", "sales", -1)) == 5
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_partition("default", "sales", ["2024-01-01", "1"], False)


def test_bad_input_writes_nothing(client: ThriftClient, tmp_path: Path) -> None:
    client.create_table(sales_table(str(tmp_path / "sales")))
    with pytest.raises(hms.InvalidObjectException, match="not a valid date"):
        client.add_partitions_req(
            hms.AddPartitionsRequest(
                dbName="default",
                tblName="sales",
                parts=[partition(["2024-01-01", "1"]), partition(["2024-13-45", "1"])],
            )
        )
    assert client.get_partition_names("default", "sales", -1) == []
    with pytest.raises(hms.NoSuchObjectException):
        client.get_partitions_by_filter("default", "missing", 'dt = "x"', -1)
    bad = sales_table(str(tmp_path / "other"), name="other")
    bad.partitionKeys = [hms.FieldSchema("x", "double")]
    with pytest.raises(hms.InvalidObjectException, match="not supported"):
        client.create_table(bad)
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table("default", "other")


def test_unknown_method_answers_invalid_method_name(service: ThriftService) -> None:
    """Spark and Trino match this exact text to fall back to older calls."""
    c = ThriftClient(service.port)
    try:
        with pytest.raises(TApplicationException) as raised:
            c.get_valid_write_ids(hms.GetValidWriteIdsRequest(fullTableNames=["default.t"]))
        assert raised.value.type == TApplicationException.UNKNOWN_METHOD
        assert raised.value.message == "Invalid method name: 'get_valid_write_ids'"
        # the connection stays usable
        assert c.get_database("default").name == "default"
        c.shutdown()  # fb303's one-way call, sent by Hive's client on close
        assert c.set_ugi("bob", ["staff"]) == ["bob", "staff"]
    finally:
        c.close()


def test_alter_and_rename_table(client: ThriftClient, metastore: Metastore, tmp_path: Path) -> None:
    client.create_table(sales_table(str(tmp_path / "sales")))
    table = client.get_table("default", "sales")
    table.parameters["spark.sql.statistics.numRows"] = "42"
    table.sd.cols.append(hms.FieldSchema("note", "string", "added"))
    client.alter_table_with_environment_context("default", "sales", table, None)
    again = client.get_table("default", "sales")
    assert again.parameters["spark.sql.statistics.numRows"] == "42"
    assert [c.name for c in again.sd.cols] == ["id", "amount", "note"]
    client.create_database(hms.Database(name="archive"))
    again.dbName, again.tableName = "archive", "old_sales"
    client.alter_table("default", "sales", again)
    assert client.get_tables("archive", "*") == ["old_sales"]
    assert metastore.table("archive.old_sales").name == "archive.old_sales"
    with pytest.raises(hms.NoSuchObjectException):
        client.get_table("default", "sales")


def test_managed_drop_deletes_only_inside_warehouse(
    client: ThriftClient, service: ThriftService, tmp_path: Path
) -> None:
    inside = tmp_path / "warehouse" / "m"
    inside.mkdir(parents=True)
    (inside / "f.parquet").write_bytes(b"x")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f.parquet").write_bytes(b"x")
    for name, location in (("m", inside), ("n", outside)):
        table = sales_table(str(location), name=name)
        table.tableType = "MANAGED_TABLE"
        table.parameters = {}
        client.create_table(table)
    external = sales_table(str(tmp_path / "warehouse" / "e"), name="e")
    (tmp_path / "warehouse" / "e").mkdir()
    client.create_table(external)
    for name in ("m", "n", "e"):
        client.drop_table_with_environment_context("default", name, True, None)
    assert not inside.exists()
    assert outside.exists()
    assert (tmp_path / "warehouse" / "e").exists()
    assert client.get_all_tables("default") == []


def test_trino_call_sequence(client: ThriftClient, tmp_path: Path) -> None:
    """Trino's metastore calls in the order its ThriftHiveMetastore makes them for a query
    over a partitioned table."""
    client.create_table(sales_table(str(tmp_path / "sales")))
    client.add_partitions(
        [partition([f"2024-02-{d:02d}", str(h)]) for d in range(1, 21) for h in (1, 2, 3)]
    )
    assert "default" in client.get_all_databases()
    assert client.get_database("default").name == "default"
    assert client.get_all_tables("default") == ["sales"]
    assert client.get_tables_by_type("default", ".*", "VIRTUAL_VIEW") == []
    table = client.get_table_req(hms.GetTableRequest(dbName="default", tblName="sales")).table
    assert table.tableName == "sales"
    names = client.get_partition_names_ps("default", "sales", ["", "2"], -1)
    assert len(names) == 20 and all(n.endswith("/h=2") for n in names)
    fetched: list[hms.Partition] = []
    batch = 10
    position = 0
    while position < len(names):
        chunk = names[position : position + batch]
        fetched += client.get_partitions_by_names("default", "sales", chunk)
        position += batch
        batch = min(batch * 2, 100)
    assert [p.values[1] for p in fetched] == ["2"] * 20
    # statistics: written by Trino, read back as given
    stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName="default", tableName="sales"),
        statsObj=[
            hms.ColumnStatisticsObj(
                colName="id",
                colType="bigint",
                statsData=hms.ColumnStatisticsData(
                    longStats=hms.LongColumnStatsData(
                        lowValue=1, highValue=99, numNulls=0, numDVs=50
                    )
                ),
            )
        ],
        engine="trino",
    )
    assert client.update_table_column_statistics(stats)
    read = client.get_table_statistics_req(
        hms.TableStatsRequest(dbName="default", tblName="sales", colNames=["id"])
    )
    assert read.tableStats[0].statsData.longStats.highValue == 99
    part_name = names[0]
    part_stats = hms.ColumnStatistics(
        statsDesc=hms.ColumnStatisticsDesc(
            isTblLevel=False, dbName="default", tableName="sales", partName=part_name
        ),
        statsObj=stats.statsObj,
    )
    assert client.update_partition_column_statistics(part_stats)
    by_partition = client.get_partitions_statistics_req(
        hms.PartitionsStatsRequest(
            dbName="default", tblName="sales", colNames=["id"], partNames=[part_name, names[1]]
        )
    ).partStats
    assert list(by_partition) == [part_name]
    assert by_partition[part_name][0].statsData.longStats.numDVs == 50
    assert client.delete_table_column_statistics("default", "sales", "id", "trino")
    read = client.get_table_statistics_req(
        hms.TableStatsRequest(dbName="default", tblName="sales", colNames=["id"])
    )
    assert read.tableStats == []


def test_streamed_partition_replies_equal_the_generated_encoding(
    client: ThriftClient, service: ThriftService, tmp_path: Path
) -> None:
    """Partition lists are encoded without Thrift objects (servers.hive_metastore.encoding): what a
    client decodes must equal the objects the generated code would have sent, for plain
    partitions, one with parameters, one with a storage descriptor of its own, and NULL."""
    client.create_table(sales_table(str(tmp_path / "sales")))
    plain = partition(["2024-01-01", "1"])
    plain.parameters = {}
    own = partition(["2024-01-02", "1"])
    own.sd = sales_table(str(tmp_path / "elsewhere")).sd
    own.sd.inputFormat = "org.apache.hadoop.mapred.TextInputFormat"
    own.sd.location = f"file:{tmp_path}/elsewhere/p"
    null = partition(["__HIVE_DEFAULT_PARTITION__", "2"])
    null.parameters = {"ü": "ß", "numRows": "3"}
    client.add_partitions([plain, own, null, partition(["2024-01-03", "4"])])
    streamed = client.get_partitions("default", "sales", -1)
    generated = service.handler.get_partitions("default", "sales", -1)
    assert len(streamed) == 4
    assert streamed == generated
    assert streamed[1].sd.inputFormat == "org.apache.hadoop.mapred.TextInputFormat"
    assert streamed[1].sd.location == f"file:{tmp_path}/elsewhere/p"
    assert [p.values[0] for p in streamed].count("__HIVE_DEFAULT_PARTITION__") == 1
    by_filter = client.get_partitions_by_filter("default", "sales", "h >= 2", -1)
    assert by_filter == service.handler.get_partitions_by_filter("default", "sales", "h >= 2", -1)
    assert [p.values for p in by_filter] == [
        ["2024-01-03", "4"],
        ["__HIVE_DEFAULT_PARTITION__", "2"],
    ]


def test_a_dropped_connection_writes_nothing(
    client: ThriftClient, service: ThriftService, tmp_path: Path
) -> None:
    """A client that goes away in the middle of its request (here: half of an
    add_partitions_req sent) leaves nothing written; the server goes on serving."""
    import socket

    from thrift.Thrift import TMessageType

    client.create_table(sales_table(str(tmp_path / "sales")))
    buffer = TTransport.TMemoryBuffer()
    protocol = TBinaryProtocol.TBinaryProtocol(buffer)
    protocol.writeMessageBegin("add_partitions_req", TMessageType.CALL, 1)
    thrift_api.add_partitions_req_args(
        request=hms.AddPartitionsRequest(
            dbName="default",
            tblName="sales",
            parts=[partition([f"2024-03-{d:02d}", "1"]) for d in range(1, 29)],
        )
    ).write(protocol)
    protocol.writeMessageEnd()
    whole = buffer.getvalue()
    with socket.create_connection(("127.0.0.1", service.port)) as raw:
        raw.sendall(whole[: len(whole) // 2])
    assert client.get_partition_names("default", "sales", -1) == []
    wrong = partition(["2024-03-01"])  # one value for two keys
    with pytest.raises(hms.InvalidObjectException, match="2 partition keys, not 1 values"):
        client.add_partitions([wrong])
    assert client.get_partition_names("default", "sales", -1) == []
    client.add_partitions([partition(["2024-03-01", "1"])])
    assert client.get_partition_names("default", "sales", -1) == ["dt=2024-03-01/h=1"]


def test_views_and_partitions_by_expr(client: ThriftClient, tmp_path: Path) -> None:
    """A view is kept with its text and listed by type; get_partitions_by_expr (a
    serialised Java expression statlas cannot read) answers every partition, flagged."""
    client.create_table(sales_table(str(tmp_path / "sales")))
    client.add_partitions([partition(["2024-01-01", "1"]), partition(["2024-01-02", "2"])])
    view = hms.Table(
        tableName="recent",
        dbName="default",
        sd=hms.StorageDescriptor(cols=[hms.FieldSchema("id", "bigint")]),
        partitionKeys=[],
        parameters={},
        viewOriginalText="SELECT id FROM sales",
        viewExpandedText="SELECT `sales`.`id` FROM `default`.`sales`",
        tableType="VIRTUAL_VIEW",
    )
    client.create_table(view)
    assert client.get_tables_by_type("default", "*", "VIRTUAL_VIEW") == ["recent"]
    assert client.get_tables_by_type("default", ".*", "EXTERNAL_TABLE") == ["sales"]
    stored = client.get_table("default", "recent")
    assert stored.viewOriginalText == "SELECT id FROM sales"
    assert stored.tableType == "VIRTUAL_VIEW" and stored.sd.location is None
    answer = client.get_partitions_by_expr(
        hms.PartitionsByExprRequest(
            dbName="default", tblName="sales", expr=b"\x01kryo", maxParts=-1
        )
    )
    assert answer.hasUnknownPartitions is True
    assert [p.values for p in answer.partitions] == [["2024-01-01", "1"], ["2024-01-02", "2"]]
