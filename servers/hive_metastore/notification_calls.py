"""The Hive Metastore's notification calls (get_next_notification,
get_current_notificationEventId, get_notification_events_count) over statlas's notification
log (metastore.hive.notifications), and the events the handler writes with each change
(docs/hive-metastore.md#notifications).

Messages are JSON as Hive 2.3's JSON message factory writes them ("json-0.2"): the database
and table, the time, and the Thrift objects concerned in Thrift's JSON protocol
(`tableObjJson`, `partitionListJson`, ...), which a Hive replication or cache client decodes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection, Engine
from thrift.protocol.TJSONProtocol import TJSONProtocolFactory
from thrift.TSerialization import serialize

from metastore.engine import run_read
from metastore.hive import notifications as notes
from servers.hive_metastore.thrift_errors import thrift_errors

CREATE_DATABASE, ALTER_DATABASE, DROP_DATABASE = (
    "CREATE_DATABASE",
    "ALTER_DATABASE",
    "DROP_DATABASE",
)
CREATE_TABLE, ALTER_TABLE, DROP_TABLE = "CREATE_TABLE", "ALTER_TABLE", "DROP_TABLE"
ADD_PARTITION, ALTER_PARTITION, DROP_PARTITION = (
    "ADD_PARTITION",
    "ALTER_PARTITION",
    "DROP_PARTITION",
)
INSERT = "INSERT"

_JSON = TJSONProtocolFactory()


def thrift_json(obj: Any) -> str:
    """A Thrift object in Thrift's JSON protocol (Hive's TSerializer(TJSONProtocol))."""
    encoded: bytes = serialize(obj, _JSON)
    return encoded.decode("utf-8")


def _base(database: str | None, table: hms.Table | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"server": "", "servicePrincipal": "", "db": database}
    if table is not None:
        message["table"] = table.tableName
        message["tableType"] = table.tableType
    message["timestamp"] = int(time.time())
    return message


def _key_values(table: hms.Table, partition: hms.Partition) -> dict[str, str]:
    keys = [k.name for k in table.partitionKeys or []]
    return dict(zip(keys, partition.values or [], strict=False))


def database_message(database: str) -> str:
    return json.dumps(_base(database))


def table_message(table: hms.Table) -> str:
    """CREATE_TABLE's and DROP_TABLE's message."""
    message = _base(table.dbName, table)
    message["tableObjJson"] = thrift_json(table)
    message["files"] = []
    return json.dumps(message)


def alter_table_message(before: hms.Table, after: hms.Table) -> str:
    message = _base(before.dbName, before)
    message["tableObjBeforeJson"] = thrift_json(before)
    message["tableObjAfterJson"] = thrift_json(after)
    message["isTruncateOp"] = "false"
    return json.dumps(message)


def partitions_message(table: hms.Table, partitions: Sequence[hms.Partition], added: bool) -> str:
    """ADD_PARTITION's (added) and DROP_PARTITION's message."""
    message = _base(table.dbName, table)
    message["tableObjJson"] = thrift_json(table)
    message["partitions"] = [_key_values(table, p) for p in partitions]
    if added:
        message["partitionListJson"] = [thrift_json(p) for p in partitions]
        message["partitionFiles"] = []
    return json.dumps(message)


def alter_partition_message(
    table: hms.Table, before: hms.Partition | None, after: hms.Partition
) -> str:
    message = _base(table.dbName, table)
    message["keyValues"] = _key_values(table, after)
    message["tableObjJson"] = thrift_json(table)
    if before is not None:
        message["partitionObjBeforeJson"] = thrift_json(before)
    message["partitionObjAfterJson"] = thrift_json(after)
    message["isTruncateOp"] = "false"
    return json.dumps(message)


def insert_message(
    table: hms.Table, partition_values: Sequence[str], files: Sequence[str], replace: bool
) -> str:
    """INSERT's message: the files a client wrote into a table or partition."""
    message = _base(table.dbName, table)
    keys = [k.name for k in table.partitionKeys or []]
    message["partKeyVals"] = dict(zip(keys, partition_values, strict=False))
    message["files"] = list(files)
    message["replace"] = "true" if replace else "false"
    message["tableObjJson"] = thrift_json(table)
    return json.dumps(message)


def notify(
    conn: Connection, event_type: str, database: str | None, table: str | None, message: str
) -> int:
    """Write an event in the change's transaction."""
    return notes.record(conn, event_type, database, table, message)


def _event(event: notes.Event) -> hms.NotificationEvent:
    return hms.NotificationEvent(
        eventId=event.event_id,
        eventTime=event.event_time,
        eventType=event.event_type,
        dbName=event.database,
        tableName=event.table,
        message=event.message,
        messageFormat=event.message_format,
        catName="hive",
    )


class NotificationCalls:
    """Mixed into the handler: needs `engine`."""

    engine: Engine

    @thrift_errors
    def get_current_notificationEventId(self) -> hms.CurrentNotificationEventId:
        event_id = run_read(self.engine, notes.current_event_id)
        return hms.CurrentNotificationEventId(eventId=event_id)

    @thrift_errors
    def get_next_notification(
        self, rqst: hms.NotificationEventRequest
    ) -> hms.NotificationEventResponse:
        last = int(rqst.lastEvent or 0)
        skip = list(rqst.eventTypeSkipList or [])
        events = run_read(
            self.engine, lambda conn: notes.events_after(conn, last, rqst.maxEvents, skip)
        )
        return hms.NotificationEventResponse(events=[_event(e) for e in events])

    @thrift_errors
    def get_notification_events_count(
        self, rqst: hms.NotificationEventsCountRequest
    ) -> hms.NotificationEventsCountResponse:
        count = run_read(
            self.engine,
            lambda conn: notes.count_events(
                conn, int(rqst.fromEventId or 0), rqst.dbName, rqst.toEventId, rqst.limit
            ),
        )
        return hms.NotificationEventsCountResponse(eventsCount=count)
