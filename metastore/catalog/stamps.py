"""A table's *stamp*: what changes whenever the table, its partitions or its statistics do,
read in one indexed query. The statistics cache (metastore.statistics.cache) takes an entry only
under its table's current stamp; the Hive Metastore API serves a cached table
(metastore.hive.tables.table_stamp) only under it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, func, select

from metastore.models import CatalogTable, CollectionRun
from metastore.runs import SUCCEEDED


@dataclass(frozen=True)
class TableStamp:
    """A table's id; its version (every registration, and every change a Hive client makes
    to the table or its partitions, bumps it); its last successful collection run; and its
    creation time: a table dropped and created again, which SQLite may give the same id,
    has another."""

    table_id: int
    version: int
    last_run: int
    created_at: dt.datetime

    def newer_than(self, other: TableStamp | None) -> bool:
        """Ids, versions and run ids only grow, and a table created again under its old id
        was created later: the larger stamp is the later one."""
        return other is None or self._order() > other._order()

    def _order(self) -> tuple[int, dt.datetime, int, int]:
        return self.table_id, self.created_at, self.version, self.last_run


_LAST_RUN = (
    select(func.max(CollectionRun.id))
    .where(CollectionRun.table_id == CatalogTable.id, CollectionRun.status == SUCCEEDED)
    .scalar_subquery()
)

# built once: every request reads its tables' stamps (and Spark asks for a table a hundred
# times a query), and building a statement took 5 times as long as running it on SQLite
# (140 against 26 us)
STAMPS_STATEMENT = select(
    CatalogTable.name, CatalogTable.id, CatalogTable.version, _LAST_RUN, CatalogTable.created_at
).where(CatalogTable.name.in_(bindparam("names", expanding=True)))
STAMP_STATEMENT = select(
    CatalogTable.id, CatalogTable.version, _LAST_RUN, CatalogTable.created_at
).where(CatalogTable.name == bindparam("name"))


def table_stamps(conn: Connection, names: Sequence[str]) -> dict[str, TableStamp]:
    """The stamps of the named tables (unknown names are left out), in one query."""
    rows = conn.execute(STAMPS_STATEMENT, {"names": list(names)})
    return {
        name: TableStamp(tid, version, run or 0, created)
        for name, tid, version, run, created in rows
    }


def stamp_of(conn: Connection, name: str) -> TableStamp | None:
    """The stamp of one table (None: no such table), in one query."""
    row = conn.execute(STAMP_STATEMENT, {"name": name}).first()
    if row is None:
        return None
    return TableStamp(int(row[0]), int(row[1]), int(row[2] or 0), row[3])
