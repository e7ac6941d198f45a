"""The Hive Metastore Thrift API over statlas's metastore: the calls Spark's built-in Hive
client and Trino make (docs/hive-metastore.md lists them), each one transaction.

Partition lookups go through the typed partition index: `get_partitions_by_filter`
compiles Hive's filter strings (servers.hive_metastore.filters) into the same index query as
`statlas partitions --where`; a filter it cannot compile answers a superset (clients
re-apply their filter) and is logged. Statistics statlas collected are served in the
parameters Spark's optimizer and Hive's and Trino's read (servers.hive_metastore.served_statistics).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection, Engine, create_engine

from metastore.engine import run_write, with_reconnect
from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredPartition, StoredTable
from metastore.hive.locks import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from servers.hive_metastore import managed_data, objects
from servers.hive_metastore.database_calls import DatabaseCalls
from servers.hive_metastore.encoding import PartitionEncoder
from servers.hive_metastore.filters import compile_filter
from servers.hive_metastore.function_calls import FunctionCalls
from servers.hive_metastore.listing_calls import ListingCalls
from servers.hive_metastore.lock_calls import LockCalls
from servers.hive_metastore.notification_calls import NotificationCalls
from servers.hive_metastore.partition_read_calls import PartitionReadCalls
from servers.hive_metastore.partition_write_calls import PartitionWriteCalls
from servers.hive_metastore.served_statistics import ServedStatistics
from servers.hive_metastore.session_calls import SessionCalls
from servers.hive_metastore.statistics_calls import StatisticsCalls
from servers.hive_metastore.table_calls import TableCalls

log = logging.getLogger("statlas.hms")

CACHED_TABLES = 1024  # tables whose catalog entry a handler keeps (checked by stamp)


class HiveMetastoreHandler(
    SessionCalls,
    LockCalls,
    NotificationCalls,
    FunctionCalls,
    DatabaseCalls,
    TableCalls,
    PartitionReadCalls,
    PartitionWriteCalls,
    ListingCalls,
    StatisticsCalls,
):
    """The ThriftHiveMetastore interface, composed of the calls' mixins (each module's
    `*Calls` class) over the plumbing they share here: the engine and its transactions, the
    table cache, partition selection, the warehouse and its directories. Methods not defined
    answer UNKNOWN_METHOD (servers.hive_metastore.server), so clients fall back to the older
    calls they know."""

    def __init__(
        self, engine: Engine, warehouse: str, lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    ) -> None:
        self.engine = engine
        self.lock_timeout = lock_timeout
        # single statements run on their own (PostgreSQL: connections kept in autocommit,
        # no BEGIN and COMMIT round trips; SQLite: the same engine)
        self.autocommit = (
            create_engine(engine.url, isolation_level="AUTOCOMMIT", pool_size=8)
            if engine.dialect.name == "postgresql"
            else engine
        )
        self.warehouse = os.path.abspath(warehouse)
        self.statistics = ServedStatistics(engine)
        self._encoders: dict[tuple[int, int, str], PartitionEncoder] = {}
        self._tables: dict[tuple[str, str], tuple[hc.TableStamp, StoredTable]] = {}
        self._table_objects: dict[int, tuple[StoredTable, hms.Table]] = {}

    # --- helpers ------------------------------------------------------------------------

    def _read(self, work: Callable[[Connection], Any]) -> Any:
        """Run `work` in one read transaction (a plain BEGIN: switching PostgreSQL
        connections to autocommit and back costs more round trips than it saves here)."""

        def attempt() -> Any:
            with self.engine.connect() as conn, conn.begin():
                return work(conn)

        return with_reconnect(self.engine, attempt)

    def _write(self, work: Callable[[Connection], Any]) -> Any:
        return run_write(self.engine, work)

    def _table(self, conn: Connection, db: str, tbl: str) -> StoredTable:
        """The table, from the cache when its stamp (one indexed query) is unchanged."""
        db, tbl = (db or hc.DEFAULT_DATABASE).lower(), (tbl or "").lower()
        stamp = hc.table_stamp(conn, db, tbl)
        cached = self._tables.get((db, tbl))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        stored = hc.get_stored_table(conn, db, tbl)
        if len(self._tables) > CACHED_TABLES:
            self._tables.clear()
        self._tables[(db, tbl)] = (stamp, stored)
        return stored

    def _table_object(self, stored: StoredTable) -> hms.Table:
        """The Thrift table of a cached StoredTable, built once per StoredTable (a table
        whose stamp changed is a new StoredTable, so a table dropped and created again with
        the same id is never served as the old one)."""
        cached = self._table_objects.get(stored.info.id)
        if cached is not None and cached[0] is stored:
            return cached[1]
        table = objects.table_object(stored, self.statistics.table_parameters(stored))
        if len(self._table_objects) > CACHED_TABLES:
            self._table_objects.clear()
        self._table_objects[stored.info.id] = (stored, table)
        return table

    def _partition_objects(
        self, stored: StoredTable, partitions: Sequence[StoredPartition]
    ) -> list[hms.Partition]:
        return [
            objects.partition_object(stored, p, self.statistics.partition_parameters(p))
            for p in partitions
        ]

    def _select(
        self,
        db: str,
        tbl: str,
        where: Callable[[Connection, StoredTable], Any] | None = None,
        names: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> tuple[StoredTable, list[StoredPartition]]:
        def read(conn: Connection) -> tuple[StoredTable, list[StoredPartition]]:
            stored = self._table(conn, db, tbl)
            chosen = None if where is None else where(conn, stored)
            # a filter's where gives (predicate, matches): the index's answer, and the test of
            # what the index cannot express, run on the partitions the index selects
            predicate, matches = chosen if isinstance(chosen, tuple) else (chosen, None)
            found = hc.read_partitions(
                conn,
                stored.info,
                predicate,
                names,
                limit if matches is None else None,
                with_parameters=stored.partitions_have_parameters,
                with_statistics=stored.partitions_have_statistics,
            )
            if matches is not None:
                found = [p for p in found if matches(p.values)][:limit]
            return stored, found

        result: tuple[StoredTable, list[StoredPartition]] = self._read(read)
        return result

    def _database_location(self, conn: Connection, database: str) -> str | None:
        """A database's directory (its own, or its default under the warehouse)."""
        found = hc.get_database(conn, database)
        return hc.local_location(objects.database_object(found, self.warehouse).locationUri)

    def _delete_data(
        self, path: str | None, database_location: str | None, protected: list[str]
    ) -> None:
        """Delete a managed table's directory, only inside the warehouse or its database's
        directory, never one that is or holds the warehouse or a database's directory
        (servers.hive_metastore.managed_data)."""
        managed_data.delete_directory(path, [self.warehouse, database_location], protected)

    def _protected(self, conn: Connection) -> list[str]:
        """The directories no drop deletes: the warehouse and every database's."""
        kept = [self.warehouse]
        for name in hc.list_databases(conn):
            database = objects.database_object(hc.get_database(conn, name), self.warehouse)
            location = hc.local_location(database.locationUri)
            if location:
                kept.append(location)
        return kept

    def _current_object(self, conn: Connection, db: str, tbl: str) -> hms.Table:
        """The table as a client reads it, inside a change's transaction (for its event)."""
        stored = hc.get_stored_table(conn, db.lower(), tbl.lower())
        return objects.table_object(stored, self.statistics.table_parameters(stored))

    def _filter(
        self, db_name: str, tbl_name: str, text: str
    ) -> Callable[[Connection, StoredTable], Any]:
        """A partition filter string, compiled to the typed index's predicate and, where the
        index cannot express all of it, the test the index's candidates must pass (both
        logged). A filter that does not parse or names a column that is not a partition key
        raises InvalidFilter (Hive's MetaException): raw clients do not filter again."""

        def where(conn: Connection, stored: StoredTable) -> tuple[Any, Any]:
            compiled = compile_filter(text or "", stored.info.store(), conn.dialect.name)
            how = (
                "answered from the index"
                if compiled.exact
                else f"the index's candidates tested ({compiled.reason})"
            )
            log.info("get_partitions_by_filter %s.%s %r: %s", db_name, tbl_name, _short(text), how)
            return compiled.predicate, compiled.matches

        return where


def _short(text: str | None, limit: int = 300) -> str:
    """A filter as logged: long IN lists cut to `limit` characters."""
    text = text or ""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
