"""The Hive Metastore Thrift API over statlas's metastore: the calls Spark's built-in Hive
client and Trino make (docs/hive-metastore.md lists them), each one transaction.

Partition lookups go through the typed partition index: `get_partitions_by_filter`
compiles Hive's filter strings (servers.hive_metastore.filters) into the same index query as
`statlas partitions --where`; a filter it cannot compile answers a superset (clients
re-apply their filter) and is logged. Statistics statlas collected are served in the
parameters Spark's optimizer and Hive's and Trino's read (servers.hive_metastore.served_statistics).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from hive_metastore import ttypes as hms
from sqlalchemy import Connection, Engine, create_engine

from metastore import hive_catalog as hc
from metastore import hive_functions as functions
from metastore.engine import run_write, with_reconnect
from metastore.hive_catalog import StoredPartition, StoredTable
from metastore.hive_locks import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from servers.hive_metastore import managed_data, objects
from servers.hive_metastore import notification_calls as events
from servers.hive_metastore.encoding import PartitionEncoder, chunks, encode_struct
from servers.hive_metastore.filters import compile_filter
from servers.hive_metastore.function_calls import FunctionCalls
from servers.hive_metastore.listing_calls import ListingCalls
from servers.hive_metastore.lock_calls import LockCalls
from servers.hive_metastore.notification_calls import NotificationCalls
from servers.hive_metastore.served_statistics import ServedStatistics
from servers.hive_metastore.session_calls import SessionCalls
from servers.hive_metastore.statistics_calls import StatisticsCalls
from servers.hive_metastore.thrift_errors import thrift_errors

log = logging.getLogger("statlas.hms")

CACHED_TABLES = 1024  # tables whose catalog entry a handler keeps (checked by stamp)

T = TypeVar("T")


def _matcher(pattern: str | None) -> Callable[[str], bool]:
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


def _limit(max_parts: int | None) -> int | None:
    return None if max_parts is None or max_parts < 0 else int(max_parts)


class HiveMetastoreHandler(
    SessionCalls, LockCalls, NotificationCalls, FunctionCalls, ListingCalls, StatisticsCalls
):
    """The ThriftHiveMetastore interface. Methods not defined here answer UNKNOWN_METHOD
    (servers.hive_metastore.server), so clients fall back to the older calls they know."""

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

    def _partitions(
        self,
        db: str,
        tbl: str,
        where: Callable[[Connection, StoredTable], Any] | None = None,
        names: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[hms.Partition]:
        stored, found = self._select(db, tbl, where, names, limit)
        return self._partition_objects(stored, found)

    def _encoder(self, stored: StoredTable) -> PartitionEncoder:
        key = (stored.info.id, stored.info.version, stored.info.name)
        encoder = self._encoders.get(key)
        if encoder is None:
            template = objects.partition_object(
                stored,
                StoredPartition(0, "", (), "", None, {}, 0, None, None, 0, 0, None),
                {},
            )
            encoder = PartitionEncoder(template)
            if len(self._encoders) > 256:
                self._encoders.clear()
            self._encoders[key] = encoder
        return encoder

    def partitions_reply(self, method: str, args: Any) -> tuple[int, Iterator[bytes]]:
        """The partitions a partition-list call answers, as (count, encoded chunks): the
        streamed form of get_partitions*, get_partitions_ps*, get_partitions_by_filter and
        get_partitions_by_names (servers.hive_metastore.server writes the chunks as they come)."""
        db, tbl = args.db_name, args.tbl_name
        if method == "get_partitions_by_filter":
            stored, found = self._select(
                db, tbl, self._filter(db, tbl, args.filter), limit=_limit(args.max_parts)
            )
        elif method == "get_partitions_by_names":
            stored, found = self._select(db, tbl, names=list(args.names or []))
        elif method in ("get_partitions_ps", "get_partitions_ps_with_auth"):
            values = list(args.part_vals or [])
            stored, found = self._select(
                db,
                tbl,
                lambda conn, s: hc.prefix_predicate(conn, s.info, values),
                limit=_limit(args.max_parts),
            )
        else:  # get_partitions, get_partitions_with_auth
            stored, found = self._select(db, tbl, limit=_limit(args.max_parts))
        encoder = self._encoder(stored)
        served = self.statistics.partition_parameters

        def encoded() -> Iterator[bytes]:
            for partition in found:
                if partition.storage is not None:
                    yield encode_struct(
                        objects.partition_object(stored, partition, served(partition))
                    )
                else:
                    yield encoder.encode(
                        partition.values,
                        partition.create_time,
                        objects.hadoop_location(partition.location) or "",
                        served(partition),
                    )

        return len(found), chunks(encoded())

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

    # --- databases ----------------------------------------------------------------------

    @thrift_errors
    def get_database(self, name: str) -> hms.Database:
        database = self._read(lambda conn: hc.get_database(conn, name or ""))
        return objects.database_object(database, self.warehouse)

    @thrift_errors
    def get_databases(self, pattern: str) -> list[str]:
        matches = _matcher(pattern)
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
    def drop_database(self, name: str, deleteData: bool, cascade: bool) -> None:  # noqa: N803
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

    # --- tables -------------------------------------------------------------------------

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
        matches = _matcher(pattern)
        names = self._read(lambda conn: _tables_of(conn, db_name))
        return [t for t in names if matches(t)]

    @thrift_errors
    def get_all_tables(self, db_name: str) -> list[str]:
        result: list[str] = self._read(lambda conn: _tables_of(conn, db_name))
        return result

    @thrift_errors
    def get_tables_by_type(self, db_name: str, pattern: str, tableType: str) -> list[str]:  # noqa: N803
        matches = _matcher(pattern)
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
    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:  # noqa: N803
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
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self.drop_table(dbname, name, deleteData)

    # --- partitions: reading ------------------------------------------------------------

    @thrift_errors
    def get_partition_names(self, db_name: str, tbl_name: str, max_parts: int) -> list[str]:
        def read(conn: Connection) -> list[str]:
            stored = self._table(conn, db_name, tbl_name)
            return hc.partition_names(conn, stored.info, _limit(max_parts))

        result: list[str] = self._read(read)
        return result

    @thrift_errors
    def get_partition_names_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> list[str]:
        def read(conn: Connection) -> list[str]:
            stored = self._table(conn, db_name, tbl_name)
            where = hc.prefix_predicate(conn, stored.info, part_vals or [])
            found = hc.read_partitions(conn, stored.info, where, limit=_limit(max_parts))
            return [p.name for p in found]

        result: list[str] = self._read(read)
        return result

    @thrift_errors
    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> list[hms.Partition]:
        return self._partitions(db_name, tbl_name, limit=_limit(max_parts))

    @thrift_errors
    def get_partitions_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        max_parts: int,
        user_name: str,
        group_names: list[str],
    ) -> list[hms.Partition]:
        return self.get_partitions(db_name, tbl_name, max_parts)

    @thrift_errors
    def get_partitions_ps(
        self, db_name: str, tbl_name: str, part_vals: list[str], max_parts: int
    ) -> list[hms.Partition]:
        return self._partitions(
            db_name,
            tbl_name,
            lambda conn, stored: hc.prefix_predicate(conn, stored.info, part_vals or []),
            limit=_limit(max_parts),
        )

    @thrift_errors
    def get_partitions_ps_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        max_parts: int,
        user_name: str,
        group_names: list[str],
    ) -> list[hms.Partition]:
        return self.get_partitions_ps(db_name, tbl_name, part_vals, max_parts)

    @thrift_errors
    def get_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        def where(conn: Connection, stored: StoredTable) -> Any:
            hc.typed_values(stored.info, [_raw(v) for v in part_vals or []])
            return hc.prefix_predicate(conn, stored.info, part_vals or [])

        found = self._partitions(db_name, tbl_name, where)
        exact = [p for p in found if list(p.values) == list(part_vals or [])]
        if not exact:
            raise hms.NoSuchObjectException(
                message=f"partition {part_vals} of {db_name}.{tbl_name} does not exist"
            )
        return exact[0]

    @thrift_errors
    def get_partition_with_auth(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        user_name: str,
        group_names: list[str],
    ) -> hms.Partition:
        return self.get_partition(db_name, tbl_name, part_vals)

    @thrift_errors
    def get_partition_by_name(self, db_name: str, tbl_name: str, part_name: str) -> hms.Partition:
        found = self._partitions(db_name, tbl_name, names=[part_name])
        if not found:
            raise hms.NoSuchObjectException(
                message=f"partition {part_name} of {db_name}.{tbl_name} does not exist"
            )
        return found[0]

    @thrift_errors
    def get_partitions_by_names(
        self, db_name: str, tbl_name: str, names: list[str]
    ) -> list[hms.Partition]:
        return self._partitions(db_name, tbl_name, names=list(names or []))

    @thrift_errors
    def get_partitions_by_names_req(
        self, req: hms.GetPartitionsByNamesRequest
    ) -> hms.GetPartitionsByNamesResult:
        return hms.GetPartitionsByNamesResult(
            partitions=self.get_partitions_by_names(req.db_name, req.tbl_name, req.names)
        )

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

    @thrift_errors
    def get_partitions_by_filter(
        self, db_name: str, tbl_name: str, filter: str, max_parts: int
    ) -> list[hms.Partition]:
        return self._partitions(
            db_name, tbl_name, self._filter(db_name, tbl_name, filter), limit=_limit(max_parts)
        )

    @thrift_errors
    def get_num_partitions_by_filter(self, db_name: str, tbl_name: str, filter: str) -> int:
        return len(self.get_partitions_by_filter(db_name, tbl_name, filter, -1))

    @thrift_errors
    def get_partitions_by_expr(
        self, req: hms.PartitionsByExprRequest
    ) -> hms.PartitionsByExprResult:
        """A Kryo-serialised Java expression statlas cannot read: every partition, marked
        as possibly more than the expression selects."""
        partitions = self._partitions(req.dbName, req.tblName, limit=_limit(req.maxParts))
        return hms.PartitionsByExprResult(partitions=partitions, hasUnknownPartitions=True)

    # --- partitions: writing ------------------------------------------------------------

    def _add(
        self, db: str, tbl: str, parts: Sequence[hms.Partition], if_not_exists: bool
    ) -> list[hms.Partition]:
        def write(conn: Connection) -> list[hms.Partition]:
            stored = self._table(conn, db, tbl)
            definitions = [objects.partition_of(p, stored) for p in parts]
            added = hc.add_partitions(
                conn, stored.info, definitions, if_not_exists, stored.definition.storage
            )
            names = [hc.partition_name_of(stored.info, d.values) for d in added]
            found = hc.read_partitions(conn, stored.info, names=names) if names else []
            result = self._partition_objects(stored, found)
            if result:
                table = self._table_object(stored)
                message = events.partitions_message(table, result, added=True)
                events.notify(conn, events.ADD_PARTITION, table.dbName, table.tableName, message)
            return result

        result: list[hms.Partition] = self._write(write)
        return result

    @thrift_errors
    def add_partition(self, new_part: hms.Partition) -> hms.Partition:
        return self._add(new_part.dbName, new_part.tableName, [new_part], False)[0]

    @thrift_errors
    def add_partition_with_environment_context(
        self, new_part: hms.Partition, environment_context: hms.EnvironmentContext
    ) -> hms.Partition:
        return self.add_partition(new_part)

    @thrift_errors
    def add_partitions(self, new_parts: list[hms.Partition]) -> int:
        if not new_parts:
            return 0
        first = new_parts[0]
        return len(self._add(first.dbName, first.tableName, new_parts, False))

    @thrift_errors
    def add_partitions_req(self, request: hms.AddPartitionsRequest) -> hms.AddPartitionsResult:
        added = self._add(
            request.dbName, request.tblName, list(request.parts or []), bool(request.ifNotExists)
        )
        return hms.AddPartitionsResult(partitions=added if request.needResult else None)

    @thrift_errors
    def append_partition(self, db_name: str, tbl_name: str, part_vals: list[str]) -> hms.Partition:
        part = hms.Partition(values=part_vals, dbName=db_name, tableName=tbl_name)
        return self._add(db_name, tbl_name, [part], False)[0]

    def _alter(self, db: str, tbl: str, parts: Sequence[hms.Partition]) -> None:
        def write(conn: Connection) -> None:
            stored = self._table(conn, db, tbl)
            definitions = [objects.partition_of(p, stored) for p in parts]
            names = [hc.partition_name_of(stored.info, d.values) for d in definitions]
            old = hc.read_partitions(conn, stored.info, names=names)
            before = {tuple(p.values): p for p in self._partition_objects(stored, old)}
            hc.alter_partitions(conn, stored.info, definitions, stored.definition.storage)
            table = self._table_object(stored)
            for after in self._partition_objects(
                stored, hc.read_partitions(conn, stored.info, names=names)
            ):
                message = events.alter_partition_message(
                    table, before.get(tuple(after.values)), after
                )
                events.notify(conn, events.ALTER_PARTITION, table.dbName, table.tableName, message)

        self._write(write)

    @thrift_errors
    def alter_partition(self, db_name: str, tbl_name: str, new_part: hms.Partition) -> None:
        self._alter(db_name, tbl_name, [new_part])

    @thrift_errors
    def alter_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        new_part: hms.Partition,
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self._alter(db_name, tbl_name, [new_part])

    @thrift_errors
    def alter_partitions(self, db_name: str, tbl_name: str, new_parts: list[hms.Partition]) -> None:
        self._alter(db_name, tbl_name, list(new_parts or []))

    @thrift_errors
    def alter_partitions_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        new_parts: list[hms.Partition],
        environment_context: hms.EnvironmentContext,
    ) -> None:
        self._alter(db_name, tbl_name, list(new_parts or []))

    @thrift_errors
    def alter_partitions_req(self, req: hms.AlterPartitionsRequest) -> hms.AlterPartitionsResponse:
        self._alter(req.dbName, req.tableName, list(req.partitions or []))
        return hms.AlterPartitionsResponse()

    def _drop(
        self, db: str, tbl: str, names: Sequence[str], delete_data: bool, must_exist: bool
    ) -> list[hms.Partition]:
        def write(conn: Connection) -> tuple[StoredTable, list[StoredPartition]]:
            stored = self._table(conn, db, tbl)
            found = hc.read_partitions(conn, stored.info, names=list(names))
            if must_exist and len(found) < len(set(names)):
                missing = sorted(set(names) - {p.name for p in found})
                raise hc.NoSuchObject(f"partition {missing[0]} of {db}.{tbl} does not exist")
            hc.drop_partitions(conn, stored.info, [p.id for p in found])
            if found:
                table = self._table_object(stored)
                message = events.partitions_message(
                    table, self._partition_objects(stored, found), added=False
                )
                events.notify(conn, events.DROP_PARTITION, table.dbName, table.tableName, message)
            roots.append(self._database_location(conn, stored.definition.database))
            kept.extend(self._protected(conn))
            return stored, found

        roots: list[str | None] = []
        kept: list[str] = []
        stored, found = self._write(write)
        if delete_data and stored.definition.table_type == hc.MANAGED_TABLE:
            roots = [self.warehouse, stored.info.location, *roots[-1:]]
            for partition in found:
                managed_data.delete_directory(partition.location, roots, kept)
        result: list[hms.Partition] = self._partition_objects(stored, found)
        return result

    @thrift_errors
    def rename_partition(
        self, db_name: str, tbl_name: str, part_vals: list[str], new_part: hms.Partition
    ) -> None:
        """New values for a partition (ALTER TABLE ... PARTITION ... RENAME TO); a managed
        table's partition at its default location moves to the new name's, with its
        directory, as Hive's metastore does."""
        old_values = [_raw(v) for v in part_vals or []]
        new_values = [_raw(v) for v in new_part.values or []]
        moves: list[tuple[str, str]] = []

        def write(conn: Connection) -> None:
            moves.clear()
            stored = self._table(conn, db_name, tbl_name)
            info = stored.info
            old_name = hc.partition_name_of(info, old_values)
            found = hc.read_partitions(conn, info, names=[old_name])
            if not found:
                raise hc.InvalidOperation(f"partition {old_name} of {info.name} does not exist")
            before = self._partition_objects(stored, found)[0]
            new_name = hc.partition_name_of(info, new_values)
            base = (info.location or "").rstrip("/")
            default = f"{base}/{old_name}"
            move = None
            if stored.definition.table_type == hc.MANAGED_TABLE and found[0].location == default:
                move = (default, f"{base}/{new_name}")
            hc.rename_partition(conn, info, old_values, new_values, move and move[1])
            after = self._partition_objects(
                stored, hc.read_partitions(conn, info, names=[new_name])
            )[0]
            table = self._table_object(stored)
            message = events.alter_partition_message(table, before, after)
            events.notify(conn, events.ALTER_PARTITION, table.dbName, table.tableName, message)
            if move is not None and managed_data.move_directory(*move, f"{info.name}/{new_name}"):
                moves.append(move)

        try:
            self._write(write)
        except Exception:
            for source, target in moves:
                managed_data.move_directory(target, source, f"{db_name}.{tbl_name}")
            raise

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

    def _name_of_values(self, db: str, tbl: str, part_vals: list[str]) -> str:
        def read(conn: Connection) -> str:
            stored = self._table(conn, db, tbl)
            values = [_raw(v) for v in part_vals or []]
            hc.typed_values(stored.info, values)
            return hc.partition_name_of(stored.info, values)

        result: str = self._read(read)
        return result

    @thrift_errors
    def drop_partition(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,  # noqa: N803
    ) -> bool:
        name = self._name_of_values(db_name, tbl_name, part_vals)
        return bool(self._drop(db_name, tbl_name, [name], deleteData, True))

    @thrift_errors
    def drop_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext,
    ) -> bool:
        return self.drop_partition(db_name, tbl_name, part_vals, deleteData)

    @thrift_errors
    def drop_partition_by_name(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,  # noqa: N803
    ) -> bool:
        return bool(self._drop(db_name, tbl_name, [part_name], deleteData, True))

    @thrift_errors
    def drop_partition_by_name_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,  # noqa: N803
        environment_context: hms.EnvironmentContext,
    ) -> bool:
        return self.drop_partition_by_name(db_name, tbl_name, part_name, deleteData)

    @thrift_errors
    def drop_partitions_req(self, req: hms.DropPartitionsRequest) -> hms.DropPartitionsResult:
        parts = req.parts
        names = list(parts.names or []) if parts is not None and parts.names else []
        if parts is not None and parts.exprs:
            raise hc.InvalidOperation("dropping partitions by expression is not supported")
        dropped = self._drop(req.dbName, req.tblName, names, bool(req.deleteData), not req.ifExists)
        return hms.DropPartitionsResult(partitions=dropped if req.needResult else None)

    # --- functions (statlas keeps none) -------------------------------------------------


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


def _short(text: str | None, limit: int = 300) -> str:
    """A filter as logged: long IN lists cut to `limit` characters."""
    text = text or ""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _raw(value: str | None) -> str | None:
    return None if value is None or value == "__HIVE_DEFAULT_PARTITION__" else value
