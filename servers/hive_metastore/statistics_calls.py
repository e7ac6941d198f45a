"""The Hive Metastore's column-statistics calls: what Trino and Hive read (statlas's own
statistics where fresher, servers.hive_metastore.served_statistics) and what engines write (kept as
given, metastore.hive.catalog)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection

from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredPartition, StoredTable
from servers.hive_metastore.served_statistics import ServedStatistics
from servers.hive_metastore.thrift_errors import thrift_errors


class StatisticsCalls:
    """Mixed into the handler: needs its `statistics`, `_read`, `_write` and `_table`."""

    statistics: ServedStatistics
    _read: Callable[[Callable[[Connection], Any]], Any]
    _write: Callable[[Callable[[Connection], Any]], Any]
    _table: Callable[[Connection, str, str], StoredTable]

    @thrift_errors
    def get_table_statistics_req(self, request: hms.TableStatsRequest) -> hms.TableStatsResult:
        stored = self._read(lambda conn: self._table(conn, request.dbName, request.tblName))
        objects_ = self.statistics.table_column_statistics(stored, list(request.colNames or []))
        return hms.TableStatsResult(tableStats=objects_)

    @thrift_errors
    def get_partitions_statistics_req(
        self, request: hms.PartitionsStatsRequest
    ) -> hms.PartitionsStatsResult:
        def read(conn: Connection) -> tuple[StoredTable, list[StoredPartition]]:
            stored = self._table(conn, request.dbName, request.tblName)
            names = list(request.partNames or [])
            return stored, hc.read_partitions(conn, stored.info, names=names)

        stored, found = self._read(read)
        by_name = self.statistics.partition_column_statistics(
            stored, found, list(request.colNames or [])
        )
        return hms.PartitionsStatsResult(partStats=by_name)

    @thrift_errors
    def get_table_column_statistics(
        self, db_name: str, tbl_name: str, col_name: str
    ) -> hms.ColumnStatistics:
        stored = self._read(lambda conn: self._table(conn, db_name, tbl_name))
        found = self.statistics.table_column_statistics(stored, [col_name])
        if not found:
            raise hms.NoSuchObjectException(
                message=f"no statistics of column {col_name} of {db_name}.{tbl_name}"
            )
        return hms.ColumnStatistics(
            statsDesc=hms.ColumnStatisticsDesc(isTblLevel=True, dbName=db_name, tableName=tbl_name),
            statsObj=found,
        )

    @thrift_errors
    def get_partition_column_statistics(
        self, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> hms.ColumnStatistics:
        request = hms.PartitionsStatsRequest(
            dbName=db_name, tblName=tbl_name, colNames=[col_name], partNames=[part_name]
        )
        found = self.get_partitions_statistics_req(request).partStats.get(part_name) or []
        if not found:
            raise hms.NoSuchObjectException(
                message=f"no statistics of column {col_name} of partition {part_name}"
            )
        return hms.ColumnStatistics(
            statsDesc=hms.ColumnStatisticsDesc(
                isTblLevel=False, dbName=db_name, tableName=tbl_name, partName=part_name
            ),
            statsObj=found,
        )

    def _write_statistics(self, stats: hms.ColumnStatistics) -> bool:
        desc = stats.statsDesc
        if desc is None:
            raise hc.InvalidObject("column statistics without a description")

        def write(conn: Connection) -> None:
            stored = self._table(conn, desc.dbName, desc.tableName)
            partition_id = hc.TABLE_LEVEL
            if not desc.isTblLevel:
                found = hc.read_partitions(conn, stored.info, names=[desc.partName or ""])
                if not found:
                    raise hc.NoSuchObject(f"partition {desc.partName} does not exist")
                partition_id = found[0].id
            known = {c.name for c in stored.definition.columns}
            documents = {}
            for obj in stats.statsObj or []:
                column = (obj.colName or "").lower()
                if column not in known:
                    raise hc.InvalidObject(f"unknown column {obj.colName!r}")
                documents[column] = self.statistics.document_of(obj)
            hc.write_column_statistics(
                conn, stored.info.id, partition_id, documents, stats.engine or "hive"
            )

        self._write(write)
        return True

    @thrift_errors
    def update_table_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        return self._write_statistics(stats_obj)

    @thrift_errors
    def update_partition_column_statistics(self, stats_obj: hms.ColumnStatistics) -> bool:
        return self._write_statistics(stats_obj)

    @thrift_errors
    def set_aggr_stats_for(self, request: hms.SetPartitionsStatsRequest) -> bool:
        for stats in request.colStats or []:
            self._write_statistics(stats)
        return True

    def _delete_statistics(self, db: str, tbl: str, part_name: str | None, column: str) -> bool:
        def write(conn: Connection) -> int:
            stored = self._table(conn, db, tbl)
            partition_id = hc.TABLE_LEVEL
            if part_name is not None:
                found = hc.read_partitions(conn, stored.info, names=[part_name])
                if not found:
                    raise hc.NoSuchObject(f"partition {part_name} does not exist")
                partition_id = found[0].id
            return hc.delete_column_statistics(conn, stored.info.id, partition_id, column)

        return bool(self._write(write) >= 0)

    @thrift_errors
    def delete_table_column_statistics(
        self, db_name: str, tbl_name: str, col_name: str, engine: str = "hive"
    ) -> bool:
        return self._delete_statistics(db_name, tbl_name, None, col_name)

    @thrift_errors
    def delete_partition_column_statistics(
        self, db_name: str, tbl_name: str, part_name: str, col_name: str, engine: str = "hive"
    ) -> bool:
        return self._delete_statistics(db_name, tbl_name, part_name, col_name)
