"""The Hive Metastore's database calls: get_database, get_databases, get_all_databases,
create_database, alter_database and drop_database (docs/hive-metastore.md)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection

from metastore.hive import catalog as hc
from metastore.hive import functions as functions
from metastore.hive.catalog import StoredTable
from servers.hive_metastore import managed_data, objects
from servers.hive_metastore import notification_calls as events
from servers.hive_metastore.thrift_errors import thrift_errors


def pattern_matcher(pattern: str | None) -> Callable[[str], bool]:
    """Hive's name patterns: `*` any characters, `|` alternatives (Trino sends `.*`)."""
    if not pattern or pattern in ("*", ".*"):
        return lambda _name: True
    alternatives = []
    for part in pattern.lower().split("|"):
        regex = part if ".*" in part else re.escape(part).replace(r"\*", ".*")
        alternatives.append(regex)
    try:
        compiled = re.compile("(?:" + "|".join(alternatives) + ")")
    except re.error:
        return lambda name: name == pattern.lower()
    return lambda name: compiled.fullmatch(name) is not None


class DatabaseCalls:
    """Mixed into the handler: needs `warehouse`, its transactions and its directory helpers
    (a database's location, the directories no drop deletes, a managed table's deletion)."""

    warehouse: str
    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]
    _database_location: Callable[[Connection, str], str | None]
    _protected: Callable[[Connection], list[str]]
    _delete_data: Callable[[str | None, str | None, list[str]], None]

    @thrift_errors
    def get_database(self, name: str) -> hms.Database:
        database = self._read(lambda conn: hc.get_database(conn, name or ""))
        return objects.database_object(database, self.warehouse)

    @thrift_errors
    def get_databases(self, pattern: str) -> list[str]:
        matches = pattern_matcher(pattern)
        return [d for d in self._read(hc.list_databases) if matches(d)]

    @thrift_errors
    def get_all_databases(self) -> list[str]:
        result: list[str] = self._read(hc.list_databases)
        return result

    @thrift_errors
    def create_database(self, database: hms.Database) -> None:
        definition = objects.database_of(database)
        location = hc.local_location(
            objects.database_object(definition, self.warehouse).locationUri
        )

        def write(conn: Connection) -> None:
            hc.create_database(conn, definition)
            events.notify(
                conn,
                events.CREATE_DATABASE,
                definition.name,
                None,
                events.database_message(definition.name),
            )

        made = managed_data.make_directory(location)
        try:
            self._write(write)
        except Exception:
            managed_data.remove_made(location, made)
            raise

    @thrift_errors
    def alter_database(self, dbname: str, db: hms.Database) -> None:
        def write(conn: Connection) -> None:
            hc.alter_database(conn, dbname, objects.database_of(db))
            name = (dbname or "").lower()
            events.notify(conn, events.ALTER_DATABASE, name, None, events.database_message(name))

        self._write(write)

    @thrift_errors
    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:
        database = (name or "").lower()

        def write(conn: Connection) -> tuple[list[StoredTable], str | None, list[str]]:
            location = self._database_location(conn, database)
            protected = self._protected(conn)
            dropped = hc.drop_database(conn, database, cascade)
            if not cascade and functions.list_functions(conn, database):
                raise hc.InvalidOperation(f"database {database} is not empty: it has functions")
            functions.drop_database_functions(conn, database)
            events.notify(
                conn, events.DROP_DATABASE, database, None, events.database_message(database)
            )
            return dropped, location, protected

        dropped, location, protected = self._write(write)
        if deleteData:
            for stored in dropped:
                if stored.definition.table_type == hc.MANAGED_TABLE:
                    self._delete_data(stored.info.location, location, protected)
            if location and os.path.isdir(location) and not os.listdir(location):
                os.rmdir(location)  # Hive deletes the database's directory; only an empty one
