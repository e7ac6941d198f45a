"""A table's partitions a page at a time (`GET /tables/{name}/partitions/page`, `statlas
partitions --offset/--limit`): ordered by their key values in key order, each with its
fingerprint, its rows and when its statistics were collected, and whether they are stale.

Two statements: the count of the partitions selected, and the page itself, an ordered
LIMIT/OFFSET over the partitions table alone (which walks the index on all keys in order,
so a first page of 1,000,000 partitions reads only its rows) joined afterwards with
partition_stats and collection_runs. NULL key values (default partitions) sort as each
database sorts them in that index: first on SQLite, last on PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, and_, func, select

from metastore.catalog.lookup import PartitionQuery, build_predicate
from metastore.catalog.staleness import stale_condition
from metastore.catalog.tables import get_table
from metastore.engine import run_read
from metastore.errors import InvalidValue
from metastore.models import CollectionRun, PartitionStats
from metastore.times import utc_text
from metastore.types import KeyValue, json_value

MAX_PAGE = 1_000  # partitions one page may hold
DEFAULT_PAGE = 50
MAX_OFFSET = 2**63 - 1  # the largest OFFSET a database takes (a signed 64-bit integer)


@dataclass(frozen=True)
class PagedPartition:
    name: str
    values: tuple[KeyValue, ...]
    location: str
    files: int
    bytes: int
    modified_ns: int
    rows: int | None  # None: no statistics
    collected: dt.datetime | None  # the end of the run that wrote its statistics
    stale: bool  # no statistics, or its fingerprint changed since they were taken

    def as_json(self) -> dict[str, Any]:
        modified = dt.datetime.fromtimestamp(self.modified_ns // 1_000_000_000, dt.UTC)
        return {
            "name": self.name,
            "values": [json_value(v) for v in self.values],
            "location": self.location,
            "files": self.files,
            "bytes": self.bytes,
            "modified": utc_text(modified),
            "rows": self.rows,
            "collected": None if self.collected is None else utc_text(self.collected),
            "stale": self.stale,
        }


@dataclass(frozen=True)
class PartitionPage:
    table: str
    keys: tuple[str, ...]
    total: int  # partitions the selection picks
    offset: int
    limit: int
    partitions: tuple[PagedPartition, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "keys": list(self.keys),
            "total": self.total,
            "offset": self.offset,
            "limit": self.limit,
            "partitions": [p.as_json() for p in self.partitions],
        }


def check_page(offset: int, limit: int) -> None:
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidValue(f"offset must be from 0 to {MAX_OFFSET}, got {offset}")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidValue(f"limit must be from 1 to {MAX_PAGE}, got {limit}")


def partition_page(
    engine: Engine,
    table: str,
    query: PartitionQuery | None = None,
    offset: int = 0,
    limit: int = DEFAULT_PAGE,
) -> PartitionPage:
    """The partitions of `table` that `query` selects (all by default), from the
    `offset`th (by key values) on, at most `limit` of them, and how many it selects."""
    check_page(offset, limit)
    chosen = query if query is not None else PartitionQuery()
    return run_read(engine, lambda conn: _page(conn, table, chosen, offset, limit))


def _page(
    conn: Connection, table: str, query: PartitionQuery, offset: int, limit: int
) -> PartitionPage:
    info = get_table(conn, table)
    store = info.store()
    partitions = store.table
    predicate = build_predicate(conn.dialect.name, info, query)
    counted = select(func.count()).select_from(partitions)
    # the keys in order, as the index on all keys holds them (the name: unpartitioned)
    order = store.key_columns or [partitions.c.name]
    paged = select(partitions).order_by(*order).offset(offset).limit(limit)
    if predicate is not None:
        counted = counted.where(predicate)
        paged = paged.where(predicate)
    total = conn.execute(counted).scalar_one()
    page = paged.subquery("page")
    p = page.c
    s, r = PartitionStats.__table__.c, CollectionRun.__table__.c
    keys = [p[c.name] for c in store.key_columns]
    statement = (
        select(
            p.name,
            p.location,
            p.file_count,
            p.total_bytes,
            p.modified_ns,
            s.row_count,
            r.finished_at,
            stale_condition(p, s).label("stale"),
            *keys,
        )
        .select_from(
            page.outerjoin(
                PartitionStats.__table__, and_(s.table_id == info.id, s.partition_id == p.id)
            ).outerjoin(CollectionRun.__table__, r.id == s.run_id)
        )
        .order_by(*(keys or [p.name]))
    )
    found = tuple(
        PagedPartition(
            row.name,
            tuple(row[8:]),
            row.location,
            row.file_count,
            row.total_bytes,
            row.modified_ns,
            row.row_count,
            row.finished_at,
            bool(row.stale),
        )
        for row in conn.execute(statement)
    )
    return PartitionPage(info.name, tuple(info.key_names), total, offset, limit, found)
