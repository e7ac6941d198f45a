"""Table summaries (`GET /tables?summary=true`, `statlas table list --summary`): per table,
its Hive database, the rows, bytes and files of its partitions, how many have statistics
and how many of those are stale, and its latest collection runs.

A few grouped statements whatever the number of partitions: per table one aggregate over
its partitions table outer-joined with partition_stats, and for all tables at once one
over collection_runs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, and_, case, func, over, select

from metastore.catalog.staleness import stale_condition
from metastore.catalog.tables import TableInfo, get_table, list_tables
from metastore.engine import one_snapshot, run_read
from metastore.hive.definitions import hive_name
from metastore.hive.tables import get_stored_table, statistics_source
from metastore.models import CollectionRun, PartitionStats
from metastore.runs import SUCCEEDED
from metastore.times import utc_text


@dataclass(frozen=True)
class TableSummary:
    """What one table holds and how current its statistics are."""

    database: str  # the Hive database the table is in (metastore.hive.definitions.hive_name)
    rows: int | None  # summed over the partitions with statistics; None when none has
    bytes: int
    files: int
    collected_partitions: int  # partitions with statistics
    stale_partitions: int  # without statistics, or changed since they were taken
    last_collection: dt.datetime | None  # the end of the latest succeeded collection run
    last_run_status: str | None  # that of the latest run, whatever it is
    statistics_served: str  # metastore.hive.tables.statistics_source

    def as_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "rows": self.rows,
            "bytes": self.bytes,
            "files": self.files,
            "collected_partitions": self.collected_partitions,
            "stale_partitions": self.stale_partitions,
            "last_collection": None
            if self.last_collection is None
            else utc_text(self.last_collection),
            "last_run_status": self.last_run_status,
            "statistics_served": self.statistics_served,
        }


def table_summaries(engine: Engine, tables: Sequence[TableInfo]) -> list[TableSummary]:
    """The summary of each of `tables`, in their order."""
    return run_read(engine, lambda conn: summaries_of(conn, tables))


def summarised_tables(engine: Engine) -> list[tuple[TableInfo, TableSummary]]:
    """Every registered table (as list_tables) with its summary, read in one snapshot."""

    def read(_: object) -> list[tuple[TableInfo, TableSummary]]:
        tables = list_tables(engine)
        return list(zip(tables, table_summaries(engine, tables), strict=True))

    return one_snapshot(engine, read)


def table_summary(engine: Engine, name: str) -> TableSummary:
    def read(conn: Connection) -> TableSummary:
        return summaries_of(conn, [get_table(conn, name)])[0]

    return run_read(engine, read)


def summaries_of(conn: Connection, tables: Sequence[TableInfo]) -> list[TableSummary]:
    runs = _latest_runs(conn, [t.id for t in tables])
    summaries = []
    for info in tables:
        figures = _partition_figures(conn, info)
        last_collection, last_status = runs.get(info.id, (None, None))
        database, table = hive_name(info.name)
        served = statistics_source(get_stored_table(conn, database, table))
        summaries.append(TableSummary(database, *figures, last_collection, last_status, served))
    return summaries


def _partition_figures(conn: Connection, info: TableInfo) -> tuple[int | None, int, int, int, int]:
    """(rows, bytes, files, collected, stale) of `info`'s partitions: one statement."""
    p = info.store().table.c
    s = PartitionStats.__table__.c
    statement = select(
        func.sum(s.row_count),
        func.coalesce(func.sum(p.total_bytes), 0),
        func.coalesce(func.sum(p.file_count), 0),
        func.count(s.partition_id),
        func.coalesce(func.sum(case((stale_condition(p, s), 1), else_=0)), 0),
    ).select_from(
        info.store().table.outerjoin(
            PartitionStats.__table__, and_(s.table_id == info.id, s.partition_id == p.id)
        )
    )
    rows, size, files, collected, stale = conn.execute(statement).one()
    return (
        None if collected == 0 else int(rows),
        int(size),
        int(files),
        int(collected),
        int(stale),
    )


def _latest_runs(
    conn: Connection, table_ids: Sequence[int]
) -> dict[int, tuple[dt.datetime | None, str | None]]:
    """Per table: the end of its latest succeeded run and the status of its latest run."""
    if not table_ids:
        return {}
    r = CollectionRun.__table__.c
    succeeded = dict(
        conn.execute(
            select(r.table_id, func.max(r.finished_at))
            .where(r.status == SUCCEEDED, r.table_id.in_(table_ids))
            .group_by(r.table_id)
        ).all()
    )
    ranked = (
        select(
            r.table_id,
            r.status,
            over(
                func.row_number(),
                partition_by=r.table_id,
                order_by=(r.started_at.desc(), r.id.desc()),
            ).label("rank"),
        )
        .where(r.table_id.in_(table_ids))
        .subquery()
    )
    latest = dict(
        conn.execute(select(ranked.c.table_id, ranked.c.status).where(ranked.c.rank == 1)).all()
    )
    return {t: (succeeded.get(t), latest.get(t)) for t in set(succeeded) | set(latest)}
