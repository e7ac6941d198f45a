"""Hive's notification log over the metastore database (docs/hive-metastore.md#notifications):
one event per change a Hive client makes, written in the change's own transaction, so that
an event is there exactly when its change is.

Event ids rise in commit order: the writer of an event holds a lock until its transaction
ends (PostgreSQL: a transaction-level advisory lock; SQLite: its single writer), so a reader
that has seen event n never later finds an event below n appear. Events older than the
time to live (Hive's hive.metastore.event.db.listener.timetolive, a day) are removed as
new ones are written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select, text

from metastore.models import HiveNotification

MESSAGE_FORMAT = "json-0.2"
"""The message format Hive 2.3's JSON message factory names."""

DEFAULT_TTL = 86_400
"""Seconds an event is kept."""

_SERIAL_KEY = 0x5747_4E54  # PostgreSQL advisory lock key of event writers ("SGNT")
_PRUNE_EVERY = 256  # events written between removals of expired ones


@dataclass(frozen=True)
class Event:
    event_id: int
    event_time: int  # seconds since the epoch
    event_type: str
    database: str | None
    table: str | None
    message: str
    message_format: str


def record(
    conn: Connection,
    event_type: str,
    database: str | None,
    table: str | None,
    message: str,
    ttl: int = DEFAULT_TTL,
) -> int:
    """Write one event in `conn`'s transaction; returns its id."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SERIAL_KEY})
    now = int(time.time())
    event_id = int(
        conn.execute(
            insert(HiveNotification)
            .values(
                event_time=now,
                event_type=event_type,
                database_name=database,
                table_name=table,
                message=message,
                message_format=MESSAGE_FORMAT,
            )
            .returning(HiveNotification.event_id)
        ).scalar_one()
    )
    if event_id % _PRUNE_EVERY == 0:
        conn.execute(delete(HiveNotification).where(HiveNotification.event_time < now - ttl))
    return event_id


def current_event_id(conn: Connection) -> int:
    """The id of the last event written (0: none yet)."""
    return int(conn.execute(select(func.max(HiveNotification.event_id))).scalar() or 0)


def events_after(
    conn: Connection,
    last_event: int,
    max_events: int | None = None,
    skip_types: Sequence[str] = (),
) -> list[Event]:
    """Events after `last_event`, oldest first, at most `max_events` (None or < 1: all)."""
    query = (
        select(*HiveNotification.__table__.c)
        .where(HiveNotification.event_id > last_event)
        .order_by(HiveNotification.event_id)
    )
    if skip_types:
        query = query.where(HiveNotification.event_type.not_in(list(skip_types)))
    if max_events is not None and max_events > 0:
        query = query.limit(max_events)
    return [
        Event(
            row.event_id,
            row.event_time,
            row.event_type,
            row.database_name,
            row.table_name,
            row.message,
            row.message_format,
        )
        for row in conn.execute(query)
    ]


def count_events(
    conn: Connection,
    from_event: int,
    database: str | None,
    to_event: int | None = None,
    limit: int | None = None,
) -> int:
    """How many events after `from_event` (up to `to_event`) concern `database`."""
    query = select(HiveNotification.event_id).where(HiveNotification.event_id > from_event)
    if database:
        query = query.where(func.lower(HiveNotification.database_name) == database.lower())
    if to_event is not None and to_event > 0:
        query = query.where(HiveNotification.event_id <= to_event)
    if limit is not None and limit > 0:
        query = query.limit(limit)
    return int(conn.execute(select(func.count()).select_from(query.subquery())).scalar_one())
