"""The calls ordinary Hive Metastore clients make beyond Spark's, on SQLite and PostgreSQL:
get_table_meta (Trino's table listing), get_table_names_by_filter, get_partition_values,
setMetaConf/getMetaConf per connection, functions, rename_partition, and the notification
log, through the generated client and through hmsclient and hive-metastore-client, two
Python clients nobody here wrote."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hive_metastore import ttypes as hms
from hive_metastore_client import HiveMetastoreClient
from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore.ttypes import MetaException as RawMetaException
from thrift.protocol.TJSONProtocol import TJSONProtocolFactory
from thrift.TSerialization import deserialize

from servers.hive_metastore.server import ThriftService
from tests.support.hms_daemon import ThriftClient

PARQUET = hms.SerDeInfo(
    serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
)


def table(
    name: str,
    db: str = "default",
    keys: tuple[str, ...] = ("dt", "h"),
    location: str | None = None,
    table_type: str = "MANAGED_TABLE",
    parameters: dict[str, str] | None = None,
) -> hms.Table:
    return hms.Table(
        tableName=name,
        dbName=db,
        owner="alice",
        tableType=table_type,
        sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema("id", "bigint"), hms.FieldSchema("amount", "double")],
            location=location,
            serdeInfo=PARQUET,
        ),
        partitionKeys=[hms.FieldSchema(k, "string" if k == "dt" else "int") for k in keys],
        parameters=parameters or {},
    )


def local(location: str) -> str:
    """A location as served (file:/...) as a local path."""
    return location.removeprefix("file:")


def add(client: ThriftClient, name: str, *values: list[str]) -> None:
    client.add_partitions(
        [hms.Partition(values=v, dbName="default", tableName=name) for v in values]
    )


def test_get_table_meta_lists_tables_by_pattern_and_type(client: ThriftClient) -> None:
    client.create_database(hms.Database(name="sales"))
    client.create_table(table("orders", parameters={"comment": "all orders"}))
    client.create_table(
        table(
            "Order_Items".lower(),
            db="sales",
            table_type="EXTERNAL_TABLE",
            location="/tmp/statlas-test-items",
        )
    )
    client.create_table(
        hms.Table(
            tableName="v",
            dbName="sales",
            tableType="VIRTUAL_VIEW",
            sd=hms.StorageDescriptor(cols=[hms.FieldSchema("id", "bigint")]),
            partitionKeys=[],
            viewOriginalText="select 1",
            viewExpandedText="select 1",
        )
    )
    metas = client.get_table_meta("*", "*", [])
    assert sorted((m.dbName, m.tableName, m.tableType) for m in metas) == [
        ("default", "orders", "MANAGED_TABLE"),
        ("sales", "order_items", "EXTERNAL_TABLE"),
        ("sales", "v", "VIRTUAL_VIEW"),
    ]
    orders = next(m for m in metas if m.tableName == "orders")
    assert orders.comments == "all orders"
    assert [m.tableName for m in client.get_table_meta("SAL*", "ORDER*", [])] == ["order_items"]
    assert [m.tableName for m in client.get_table_meta("*", "*", ["VIRTUAL_VIEW"])] == ["v"]
    assert [m.tableName for m in client.get_table_meta("default|nope", "x|orders", [])] == [
        "orders"
    ]
    assert client.get_table_meta("nothing", "*", []) == []


def test_get_table_names_by_filter(client: ThriftClient) -> None:
    client.create_table(table("a", parameters={"table_type": "ICEBERG", "k": "1"}))
    client.create_table(table("b", parameters={"table_type": "HIVE", "k": "2"}))
    client.create_table(table("c"))
    names = client.get_table_names_by_filter
    assert names("default", 'hive_filter_field_params__table_type = "ICEBERG"', -1) == ["a"]
    assert names("default", 'hive_filter_field_params__table_type like "ICE.*"', -1) == ["a"]
    assert names("default", 'hive_filter_field_params__k <> "1"', -1) == ["b"]
    both = 'hive_filter_field_params__k = "1" or (hive_filter_field_owner__ = "alice" and hive_filter_field_params__k = "2")'  # noqa: E501
    assert names("default", both, -1) == ["a", "b"]
    assert names("default", 'hive_filter_field_owner__ = "alice"', 2) == ["a", "b"]
    with pytest.raises(hms.MetaException, match="Error parsing table filter"):
        names("default", "hive_filter_field_params__k ==", -1)
    with pytest.raises(hms.MetaException, match="Invalid key name"):
        names("default", 'colour = "red"', -1)


def test_get_partition_values(client: ThriftClient) -> None:
    client.create_table(table("p"))
    add(client, "p", ["2024-01-01", "1"], ["2024-01-01", "2"], ["2024-01-02", "1"])
    add(client, "p", ["2024-01-03", "__HIVE_DEFAULT_PARTITION__"])
    request = hms.PartitionValuesRequest(
        dbName="default", tblName="p", partitionKeys=[hms.FieldSchema("dt", "string")]
    )
    rows = [r.row for r in client.get_partition_values(request).partitionValues]
    assert sorted(rows) == [["2024-01-01"], ["2024-01-02"], ["2024-01-03"]]
    request.applyDistinct = False
    assert len(client.get_partition_values(request).partitionValues) == 4
    request.partitionKeys = [hms.FieldSchema("h", "int"), hms.FieldSchema("dt", "string")]
    request.applyDistinct = True
    rows = [r.row for r in client.get_partition_values(request).partitionValues]
    assert ["__HIVE_DEFAULT_PARTITION__", "2024-01-03"] in rows
    filtered = hms.PartitionValuesRequest(
        dbName="default",
        tblName="p",
        partitionKeys=[hms.FieldSchema("dt", "string")],
        filter='dt >= "2024-01-02"',
        ascending=False,
    )
    rows = [r.row for r in client.get_partition_values(filtered).partitionValues]
    assert rows == [["2024-01-03", "__HIVE_DEFAULT_PARTITION__"], ["2024-01-02", "1"]]
    with pytest.raises(hms.MetaException, match="Error retrieving partition values"):
        client.get_partition_values(
            hms.PartitionValuesRequest(dbName="default", tblName="nope", partitionKeys=[])
        )


def test_meta_conf_is_per_connection(service: ThriftService) -> None:
    one, two = ThriftClient(service.port), ThriftClient(service.port)
    key = "hive.metastore.disallow.incompatible.col.type.changes"
    try:
        assert one.getMetaConf(key) == "true"
        one.setMetaConf(key, "false")
        assert one.getMetaConf(key) == "false"
        assert two.getMetaConf(key) == "true"
        with pytest.raises(hms.MetaException, match="Invalid configuration key"):
            one.setMetaConf("hive.exec.scratchdir", "/tmp")
        assert one.get_config_value("hive.metastore.warehouse.dir", "x").endswith("warehouse")
        assert one.get_config_value("no.such.setting", "fallback") == "fallback"
    finally:
        one.close()
        two.close()


def test_hive_metastore_client_package(service: ThriftService, tmp_path: Path) -> None:
    """hive-metastore-client drops columns with setMetaConf then alter_table, and reads
    partition values with get_partition_values."""
    setup = ThriftClient(service.port)
    try:
        setup.create_table(table("events", location=str(tmp_path / "events")))
        add(setup, "events", ["2024-01-01", "1"], ["2024-01-02", "3"])
    finally:
        setup.close()
    with HiveMetastoreClient("127.0.0.1", service.port) as other:
        other.drop_columns_from_table("default", "events", ["amount"])
        assert [c.name for c in other.get_table("default", "events").sd.cols] == ["id"]
        values = other.get_partition_values_from_table("default", "events")
        assert sorted(values) == [["2024-01-01", "1"], ["2024-01-02", "3"]]


def test_functions(client: ThriftClient) -> None:
    function = hms.Function(
        functionName="Upper2",
        dbName="default",
        className="com.example.Upper",
        ownerName="alice",
        ownerType=hms.PrincipalType.USER,
        functionType=hms.FunctionType.JAVA,
        resourceUris=[hms.ResourceUri(hms.ResourceType.JAR, "/jars/u.jar")],
    )
    client.create_function(function)
    found = client.get_function("default", "upper2")
    assert (found.functionName, found.className) == ("upper2", "com.example.Upper")
    assert found.resourceUris[0].uri == "/jars/u.jar"
    with pytest.raises(hms.AlreadyExistsException):
        client.create_function(function)
    assert client.get_functions("default", "up*") == ["upper2"]
    assert [f.functionName for f in client.get_all_functions().functions] == ["upper2"]
    function.className = "com.example.Upper3"
    client.alter_function("default", "upper2", function)
    assert client.get_function("default", "upper2").className == "com.example.Upper3"
    client.create_database(hms.Database(name="fns"))
    function.dbName = "fns"
    client.create_function(function)
    with pytest.raises(hms.InvalidOperationException, match="functions"):
        client.drop_database("fns", False, False)
    client.drop_database("fns", False, True)
    client.drop_function("default", "upper2")
    with pytest.raises(hms.NoSuchObjectException, match="does not exist"):
        client.get_function("default", "upper2")
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_function("default", "upper2")


def test_rename_partition_moves_a_managed_partitions_directory(
    client: ThriftClient, tmp_path: Path
) -> None:
    client.create_table(table("r"))
    add(client, "r", ["2024-01-01", "1"], ["2024-01-02", "1"])
    old = local(client.get_partition("default", "r", ["2024-01-01", "1"]).sd.location)
    os.makedirs(old)
    Path(old, "part-0.parquet").write_bytes(b"rows")
    renamed = hms.Partition(values=["2024-01-05", "7"], dbName="default", tableName="r")
    client.rename_partition("default", "r", ["2024-01-01", "1"], renamed)
    assert sorted(client.get_partition_names("default", "r", -1)) == [
        "dt=2024-01-02/h=1",
        "dt=2024-01-05/h=7",
    ]
    new = local(client.get_partition("default", "r", ["2024-01-05", "7"]).sd.location)
    assert new.endswith("/r/dt=2024-01-05/h=7")
    assert Path(new, "part-0.parquet").read_bytes() == b"rows"
    assert not os.path.exists(old)
    # the typed index answers the new values
    assert len(client.get_partitions_by_filter("default", "r", "h = 7", -1)) == 1
    with pytest.raises(hms.InvalidOperationException, match="already exists"):
        client.rename_partition("default", "r", ["2024-01-02", "1"], renamed)
    with pytest.raises(hms.InvalidOperationException, match="does not exist"):
        client.rename_partition("default", "r", ["2030-01-01", "1"], renamed)


def _table_of(text: str) -> hms.Table:
    return deserialize(hms.Table(), text.encode(), TJSONProtocolFactory())


def test_notification_log(client: ThriftClient, service: ThriftService, tmp_path: Path) -> None:
    start = client.get_current_notificationEventId().eventId
    client.create_database(hms.Database(name="logged"))
    client.create_table(table("n", db="logged"))
    client.add_partitions(
        [hms.Partition(values=["2024-01-01", "1"], dbName="logged", tableName="n")]
    )
    altered = client.get_table("logged", "n")
    altered.parameters["owner_note"] = "x"
    client.alter_table("logged", "n", altered)
    client.drop_partition("logged", "n", ["2024-01-01", "1"], False)
    client.drop_table("logged", "n", True)
    client.drop_database("logged", True, False)
    events = client.get_next_notification(hms.NotificationEventRequest(lastEvent=start)).events
    assert [e.eventType for e in events] == [
        "CREATE_DATABASE",
        "CREATE_TABLE",
        "ADD_PARTITION",
        "ALTER_TABLE",
        "DROP_PARTITION",
        "DROP_TABLE",
        "DROP_DATABASE",
    ]
    ids = [e.eventId for e in events]
    assert ids == sorted(ids)
    assert ids[0] > start
    assert client.get_current_notificationEventId().eventId == ids[-1]
    assert {e.dbName for e in events} == {"logged"}
    assert events[0].messageFormat == "json-0.2"
    created = json.loads(events[1].message)
    assert _table_of(created["tableObjJson"]).tableName == "n"
    added = json.loads(events[2].message)
    assert added["partitions"] == [{"dt": "2024-01-01", "h": "1"}]
    after = _table_of(json.loads(events[3].message)["tableObjAfterJson"])
    assert after.parameters["owner_note"] == "x"
    # lastEvent is exclusive, maxEvents limits, a skip list skips
    two = client.get_next_notification(
        hms.NotificationEventRequest(lastEvent=ids[0], maxEvents=2)
    ).events
    assert [e.eventId for e in two] == ids[1:3]
    skipped = client.get_next_notification(
        hms.NotificationEventRequest(lastEvent=start, eventTypeSkipList=["ADD_PARTITION"])
    ).events
    assert "ADD_PARTITION" not in [e.eventType for e in skipped]
    count = client.get_notification_events_count(
        hms.NotificationEventsCountRequest(fromEventId=start, dbName="logged")
    )
    assert count.eventsCount == 7
    # a change that fails writes no event
    with pytest.raises(hms.NoSuchObjectException):
        client.drop_table("logged", "n", True)
    assert client.get_current_notificationEventId().eventId == ids[-1]
    # hmsclient, a client nobody here wrote, reads the same id
    with hmsclient.HMSClient(host="127.0.0.1", port=service.port) as other:
        assert other.get_current_notification_id() == ids[-1]


def test_filters_answer_exactly_or_refuse(service: ThriftService, client: ThriftClient) -> None:
    """Raw clients (hmsclient) do not filter again: a filter that parses and names only
    partition keys is answered exactly, even where the index cannot express it, with
    max_parts counted after; anything else is Hive's MetaException."""
    client.create_table(table("f"))
    add(client, "f", *[[f"2024-01-0{d}", str(h)] for d in range(1, 4) for h in (1, 2, 10)])
    add(client, "f", ["2024-01-04", "__HIVE_DEFAULT_PARTITION__"])
    with hmsclient.HMSClient(host="127.0.0.1", port=service.port) as raw:

        def names(text: str, limit: int = -1) -> list[str]:
            found = raw.get_partitions_by_filter("default", "f", text, limit)
            return sorted("/".join(p.values) for p in found)

        # a Java regular expression with no SQL LIKE form, on an int key's text
        assert names('h like "1[0-9]"') == [f"2024-01-0{d}/10" for d in range(1, 4)]
        # a literal outside the key's type: 2.5 is no int, the comparison still numeric
        assert names('h < 2.5 and dt = "2024-01-02"') == ["2024-01-02/1", "2024-01-02/2"]
        assert names('h like "1[0-9]"', 2) == ["2024-01-01/10", "2024-01-02/10"]
        assert names('not (h like "1[0-9]")') == sorted(
            f"2024-01-0{d}/{h}" for d in range(1, 4) for h in (1, 2)
        )
        assert raw.get_num_partitions_by_filter("default", "f", 'h like "1[0-9]"') == 3
        with pytest.raises(RawMetaException, match="Specified key <amount> is not a partitioning"):
            raw.get_partitions_by_filter("default", "f", 'dt = "2024-01-01" and amount > 3', -1)
        with pytest.raises(RawMetaException, match="Error parsing partition filter"):
            raw.get_partitions_by_filter("default", "f", 'dt = = "2024-01-01"', -1)
