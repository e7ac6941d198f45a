"""Statistics engines write through the Hive Metastore API: which table and partition
parameters are statistics (Spark's ANALYZE, Hive's numRows), and the column statistics
engines write (one JSON document per column: metastore.models.HiveColumnStatistics).

It imports nothing of the catalog: metastore.catalog.tables drops what Hive clients kept of
vanished or dropped partitions (`forget_statistics`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from metastore.models import HiveColumnStatistics, utcnow
from metastore.partitions.store import id_in
from metastore.times import aware

TABLE_LEVEL = 0  # HiveColumnStatistics.partition_id of a table's own statistics


def statistics_of(parameters: Mapping[str, str] | None) -> dict[str, str]:
    """The statistics among a table's or partition's parameters (Spark's
    spark.sql.statistics.*, Hive's numRows and rawDataSize)."""
    return {
        k: v
        for k, v in (parameters or {}).items()
        if k.startswith("spark.sql.statistics.") or k in ("numRows", "rawDataSize")
    }


def has_statistics(parameters: Mapping[str, str] | None) -> bool:
    """Whether a client's parameters write statistics."""
    return bool(statistics_of(parameters))


def statistics_changed(old: Mapping[str, str], new: Mapping[str, str]) -> bool:
    """Whether a client's new table parameters write statistics (Spark's ANALYZE)."""
    return has_statistics(new) and statistics_of(old) != statistics_of(new)


# --- column statistics written by engines -------------------------------------------------


def write_column_statistics(
    conn: Connection,
    table_id: int,
    partition_id: int,
    statistics: Mapping[str, Mapping[str, Any]],
    engine: str | None,
) -> None:
    """Keep the column statistics an engine wrote (one JSON document per column), replacing
    what it wrote before for the same columns."""
    if not statistics:
        return
    conn.execute(
        delete(HiveColumnStatistics).where(
            HiveColumnStatistics.table_id == table_id,
            HiveColumnStatistics.partition_id == partition_id,
            HiveColumnStatistics.column_name.in_(list(statistics)),
        )
    )
    now = utcnow()
    conn.execute(
        insert(HiveColumnStatistics),
        [
            {
                "table_id": table_id,
                "partition_id": partition_id,
                "column_name": column,
                "engine": engine,
                "statistics": dict(document),
                "written_at": now,
            }
            for column, document in statistics.items()
        ],
    )


def read_column_statistics(
    conn: Connection, table_id: int, partition_ids: Sequence[int], columns: Sequence[str]
) -> dict[int, dict[str, tuple[dict[str, Any], dt.datetime]]]:
    """{partition id: {column: (document, written at)}} of engine-written statistics."""
    if not partition_ids or not columns:
        return {}
    rows = conn.execute(
        select(
            HiveColumnStatistics.partition_id,
            HiveColumnStatistics.column_name,
            HiveColumnStatistics.statistics,
            HiveColumnStatistics.written_at,
        ).where(
            HiveColumnStatistics.table_id == table_id,
            id_in(conn, HiveColumnStatistics.partition_id, list(partition_ids)),  # type: ignore[arg-type]
            HiveColumnStatistics.column_name.in_([c.lower() for c in columns]),
        )
    ).all()
    result: dict[int, dict[str, tuple[dict[str, Any], dt.datetime]]] = {}
    for pid, column, document, written in rows:
        result.setdefault(pid, {})[column] = (dict(document), aware(written))
    return result


def delete_column_statistics(
    conn: Connection, table_id: int, partition_id: int, column: str | None
) -> int:
    statement = delete(HiveColumnStatistics).where(
        HiveColumnStatistics.table_id == table_id,
        HiveColumnStatistics.partition_id == partition_id,
    )
    if column:
        statement = statement.where(HiveColumnStatistics.column_name == column.lower())
    return conn.execute(statement).rowcount or 0
