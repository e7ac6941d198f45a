"""The Hive Metastore's partition reading calls: partition names, the partition lists
(get_partitions*, get_partitions_ps*, get_partitions_by_names, get_partitions_by_filter,
get_partitions_by_expr), single partitions, and `partitions_reply`, the streamed form of the
lists (servers.hive_metastore.server writes its chunks as they come)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hive_metastore import ttypes as hms
from sqlalchemy import Connection

from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredPartition, StoredTable
from servers.hive_metastore import objects
from servers.hive_metastore.encoding import PartitionEncoder, chunks, encode_struct
from servers.hive_metastore.served_statistics import ServedStatistics
from servers.hive_metastore.thrift_errors import thrift_errors


def _limit(max_parts: int | None) -> int | None:
    return None if max_parts is None or max_parts < 0 else int(max_parts)


def raw_value(value: str | None) -> str | None:
    return None if value is None or value == "__HIVE_DEFAULT_PARTITION__" else value


class PartitionReadCalls:
    """Mixed into the handler: needs `statistics`, its encoders' cache (`_encoders`), its
    read transaction, `_table`, `_select` (the partitions a call selects), `_filter` (a
    compiled partition filter) and `_partition_objects`."""

    statistics: ServedStatistics
    _encoders: dict[tuple[int, int, str], PartitionEncoder]
    _read: Callable[[Callable[[Connection], Any]], Any]
    _table: Callable[[Connection, str, str], StoredTable]
    _select: Callable[..., tuple[StoredTable, list[StoredPartition]]]
    _filter: Callable[[str, str, str], Any]
    _partition_objects: Callable[[StoredTable, Sequence[StoredPartition]], list[hms.Partition]]

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
            hc.typed_values(stored.info, [raw_value(v) for v in part_vals or []])
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
