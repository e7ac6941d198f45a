"""The Hive Metastore's partition changing calls: add (add_partition*, append_partition),
alter (alter_partition*), rename_partition (a managed table's partition at its default
location moves with its directory) and drop (drop_partition*, with deleteData the managed
directories), each with its notification event."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection

from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredPartition, StoredTable
from servers.hive_metastore import managed_data, objects
from servers.hive_metastore import notification_calls as events
from servers.hive_metastore.partition_read_calls import raw_value
from servers.hive_metastore.thrift_errors import thrift_errors


class PartitionWriteCalls:
    """Mixed into the handler: needs `warehouse`, its transactions, `_table`,
    `_table_object`, `_partition_objects` and its directory helpers."""

    warehouse: str
    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]
    _table: Callable[[Connection, str, str], StoredTable]
    _table_object: Callable[[StoredTable], hms.Table]
    _partition_objects: Callable[[StoredTable, Sequence[StoredPartition]], list[hms.Partition]]
    _database_location: Callable[[Connection, str], str | None]
    _protected: Callable[[Connection], list[str]]

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
        old_values = [raw_value(v) for v in part_vals or []]
        new_values = [raw_value(v) for v in new_part.values or []]
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

    def _name_of_values(self, db: str, tbl: str, part_vals: list[str]) -> str:
        def read(conn: Connection) -> str:
            stored = self._table(conn, db, tbl)
            values = [raw_value(v) for v in part_vals or []]
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
        deleteData: bool,
    ) -> bool:
        name = self._name_of_values(db_name, tbl_name, part_vals)
        return bool(self._drop(db_name, tbl_name, [name], deleteData, True))

    @thrift_errors
    def drop_partition_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,
        environment_context: hms.EnvironmentContext,
    ) -> bool:
        return self.drop_partition(db_name, tbl_name, part_vals, deleteData)

    @thrift_errors
    def drop_partition_by_name(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,
    ) -> bool:
        return bool(self._drop(db_name, tbl_name, [part_name], deleteData, True))

    @thrift_errors
    def drop_partition_by_name_with_environment_context(
        self,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,
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
