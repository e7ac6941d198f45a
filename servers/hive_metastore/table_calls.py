"""The Hive Metastore's table calls: get_table (from the handler's cache while the
table's stamp is unchanged) and its variants, the table name lists, create_table,
alter_table (a renamed managed table moves with its directory; Hive 4's check-and-swap of a
parameter), drop_table, and fire_listener_event (a client's INSERT event on a table)."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection, Engine

from metastore.engine import with_reconnect
from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredTable
from servers.hive_metastore import managed_data, objects
from servers.hive_metastore import notification_calls as events
from servers.hive_metastore.database_calls import pattern_matcher
from servers.hive_metastore.served_statistics import ServedStatistics
from servers.hive_metastore.thrift_errors import thrift_errors

log = logging.getLogger("statlas.hms")


class TableCalls:
    """Mixed into the handler: needs `warehouse`, `autocommit`, `statistics`, its table
    cache (`_tables`, `_table`, `_table_object`), its transactions and its directory helpers."""

    warehouse: str
    autocommit: Engine  # PostgreSQL: connections in autocommit; SQLite: the handler's engine
    statistics: ServedStatistics
    _tables: dict[tuple[str, str], tuple[hc.TableStamp, StoredTable]]
    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]
    _table: Callable[[Connection, str, str], StoredTable]
    _table_object: Callable[[StoredTable], hms.Table]
    _current_object: Callable[[Connection, str, str], hms.Table]
    _database_location: Callable[[Connection, str], str | None]
    _protected: Callable[[Connection], list[str]]
    _delete_data: Callable[[str | None, str | None, list[str]], None]

    @thrift_errors
    def get_table(self, dbname: str, tbl_name: str) -> hms.Table:
        """From the cache when the table's stamp is unchanged: one statement, on its own
        (a statement is its own transaction), as Spark calls this a hundred times a query."""
        key = ((dbname or hc.DEFAULT_DATABASE).lower(), (tbl_name or "").lower())
        cached = self._tables.get(key)
        if cached is not None:
            stamp = with_reconnect(self.autocommit, lambda: self._stamp(*key))
            if stamp == cached[0]:
                return self._table_object(cached[1])
        stored = self._read(lambda conn: self._table(conn, dbname, tbl_name))
        return self._table_object(stored)

    def _stamp(self, database: str, table: str) -> hc.TableStamp:
        with self.autocommit.connect() as conn:
            return hc.table_stamp(conn, database, table)

    @thrift_errors
    def get_table_req(self, req: hms.GetTableRequest) -> hms.GetTableResult:
        return hms.GetTableResult(table=self.get_table(req.dbName, req.tblName))

    @thrift_errors
    def get_table_objects_by_name(self, dbname: str, tbl_names: list[str]) -> list[hms.Table]:
        def read(conn: Connection) -> list[StoredTable]:
            found = []
            for name in tbl_names or []:
                try:
                    found.append(self._table(conn, dbname, name))
                except hc.NoSuchObject:
                    continue
            return found

        return [self._table_object(s) for s in self._read(read)]

    @thrift_errors
    def get_table_objects_by_name_req(self, req: hms.GetTablesRequest) -> hms.GetTablesResult:
        return hms.GetTablesResult(
            tables=self.get_table_objects_by_name(req.dbName, list(req.tblNames or []))
        )

    @thrift_errors
    def get_tables(self, db_name: str, pattern: str) -> list[str]:
        matches = pattern_matcher(pattern)
        names = self._read(lambda conn: _tables_of(conn, db_name))
        return [t for t in names if matches(t)]

    @thrift_errors
    def get_all_tables(self, db_name: str) -> list[str]:
        result: list[str] = self._read(lambda conn: _tables_of(conn, db_name))
        return result

    @thrift_errors
    def get_tables_by_type(self, db_name: str, pattern: str, tableType: str) -> list[str]:
        matches = pattern_matcher(pattern)
        names = self._read(lambda conn: hc.table_names(conn, db_name, tableType or None))
        return [t for t in names if matches(t)]

    @thrift_errors
    def get_fields(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        return list(self.get_table(db_name, table_name).sd.cols)

    @thrift_errors
    def get_schema(self, db_name: str, table_name: str) -> list[hms.FieldSchema]:
        table = self.get_table(db_name, table_name)
        return [*table.sd.cols, *table.partitionKeys]

    @thrift_errors
    def create_table(self, tbl: hms.Table) -> None:
        definition = objects.table_of(tbl)
        if definition.location is None and definition.table_type != hc.VIRTUAL_VIEW:
            definition = self._default_location(definition)

        def write(conn: Connection) -> None:
            hc.create_table(conn, definition)
            created = self._current_object(conn, definition.database, definition.name)
            events.notify(
                conn,
                events.CREATE_TABLE,
                definition.database,
                definition.name,
                events.table_message(created),
            )

        # Hive makes every table's directory (but a view's) as it creates the table
        location = None if definition.table_type == hc.VIRTUAL_VIEW else definition.location
        made = managed_data.make_directory(hc.local_location(location))
        try:
            self._write(write)
        except Exception:
            managed_data.remove_made(hc.local_location(location), made)
            raise
        log.info("created table %s.%s", definition.database, definition.name)

    def _default_location(self, definition: hc.TableDefinition) -> hc.TableDefinition:
        def read(conn: Connection) -> str:
            database = hc.get_database(conn, definition.database)
            return objects.database_object(database, self.warehouse).locationUri or ""

        base = hc.local_location(self._read(read)) or self.warehouse
        location = f"{base.rstrip('/')}/{definition.name}"
        return dataclasses.replace(definition, location=location)

    @thrift_errors
    def create_table_with_environment_context(
        self, tbl: hms.Table, environment_context: hms.EnvironmentContext
    ) -> None:
        self.create_table(tbl)

    @thrift_errors
    def alter_table(
        self,
        dbname: str,
        tbl_name: str,
        new_tbl: hms.Table,
        environment_context: hms.EnvironmentContext | None = None,
    ) -> None:
        """Change a table. A managed table renamed at its default location moves there with
        its directory and its partitions' locations (as Hive's metastore does); with the
        environment context's expected_parameter_key and _value (Hive 4, HIVE-26882), only
        if the table's parameter still has that value, decided in the same transaction."""
        definition = objects.table_of(new_tbl, dbname)
        expected = _expected_parameter(environment_context)
        db, tbl = (dbname or hc.DEFAULT_DATABASE).lower(), (tbl_name or "").lower()
        moves: list[tuple[str, str]] = []

        def write(conn: Connection) -> None:
            moves.clear()
            stored = self._table(conn, db, tbl)
            served = self.statistics.table_parameters(stored)
            before = objects.table_object(stored, served)
            written = hc.statistics_changed(served, definition.parameters)
            change, move = self._renamed_location(conn, stored, definition)
            hc.alter_table(conn, db, tbl, change, written, expected)
            if move is not None:
                hc.relocate_partitions(conn, stored.info, *move)
            after = self._current_object(conn, change.database or db, change.name or tbl)
            events.notify(
                conn, events.ALTER_TABLE, db, tbl, events.alter_table_message(before, after)
            )
            if move is not None:  # last: a failure before it changes no file
                what = f"{after.dbName}.{after.tableName}"
                if managed_data.move_directory(move[0], move[1], what):
                    moves.append(move)

        try:
            self._write(write)
        except Exception:
            for source, target in moves:  # the transaction did not commit: move back
                managed_data.move_directory(target, source, f"{db}.{tbl}")
            raise

    def _renamed_location(
        self, conn: Connection, stored: StoredTable, definition: hc.TableDefinition
    ) -> tuple[hc.TableDefinition, tuple[str, str] | None]:
        """The change with a renamed managed table's new default location, and the move of
        its directory (old, new); unchanged and None for anything else."""
        old_db, old_name = hc.hive_name(stored.info.name)
        new_db = (definition.database or old_db).lower()
        new_name = (definition.name or old_name).lower()
        old_location = stored.info.location
        if (
            (new_db, new_name) == (old_db, old_name)
            or stored.definition.table_type != hc.MANAGED_TABLE
            or not old_location
            or hc.local_location(definition.location) not in (None, old_location)
        ):
            return definition, None
        old_base = self._database_location(conn, old_db) or self.warehouse
        if os.path.normpath(old_location) != os.path.normpath(f"{old_base}/{old_name}"):
            return definition, None  # a location the client chose stays where it is
        new_base = self._database_location(conn, new_db) or self.warehouse
        new_location = os.path.normpath(f"{new_base}/{new_name}")
        changed = dataclasses.replace(definition, location=new_location)
        return changed, (os.path.normpath(old_location), new_location)

    @thrift_errors
    def alter_table_with_environment_context(
        self,
        dbname: str,
        tbl_name: str,
        new_tbl: hms.Table,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self.alter_table(dbname, tbl_name, new_tbl, environment_context)

    @thrift_errors
    def alter_table_with_cascade(
        self, dbname: str, tbl_name: str, new_tbl: hms.Table, cascade: bool
    ) -> None:
        self.alter_table(dbname, tbl_name, new_tbl)

    @thrift_errors
    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:
        db, tbl = (dbname or hc.DEFAULT_DATABASE).lower(), (name or "").lower()

        def write(conn: Connection) -> tuple[StoredTable, str | None, list[str]]:
            dropped = self._current_object(conn, db, tbl)
            stored = hc.drop_table(conn, db, tbl)
            events.notify(conn, events.DROP_TABLE, db, tbl, events.table_message(dropped))
            return stored, self._database_location(conn, db), self._protected(conn)

        stored, database_location, protected = self._write(write)
        log.info("dropped table %s.%s", db, tbl)
        if deleteData and stored.definition.table_type == hc.MANAGED_TABLE:
            self._delete_data(stored.info.location, database_location, protected)

    @thrift_errors
    def drop_table_with_environment_context(
        self,
        dbname: str,
        name: str,
        deleteData: bool,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self.drop_table(dbname, name, deleteData)

    @thrift_errors
    def fire_listener_event(self, rqst: hms.FireEventRequest) -> hms.FireEventResponse:
        """A client's INSERT event (Spark sends one with hive.metastore.dml.events): written
        to the notification log, as Hive's DbNotificationListener does."""
        db, tbl = (rqst.dbName or hc.DEFAULT_DATABASE).lower(), (rqst.tableName or "").lower()

        def write(conn: Connection) -> int:
            table = self._current_object(conn, db, tbl)
            insert = rqst.data.insertData if rqst.data is not None else None
            message = events.insert_message(
                table,
                list(rqst.partitionVals or []),
                list(insert.filesAdded or []) if insert is not None else [],
                bool(insert.replace) if insert is not None else False,
            )
            return events.notify(conn, events.INSERT, db, tbl, message)

        event_id = self._write(write)
        return hms.FireEventResponse(eventIds=[event_id])


def _expected_parameter(context: hms.EnvironmentContext | None) -> tuple[str, str] | None:
    """Hive 4's check-and-swap in an environment context (HIVE-26882), if asked for."""
    properties = (context.properties if context is not None else None) or {}
    key = properties.get("expected_parameter_key")
    if key is None or "expected_parameter_value" not in properties:
        return None
    return key, properties["expected_parameter_value"]


def _tables_of(conn: Connection, database: str) -> list[str]:
    hc.get_database(conn, database or hc.DEFAULT_DATABASE)
    return hc.database_tables(conn, database or hc.DEFAULT_DATABASE)
