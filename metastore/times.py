"""Times as statlas prints them: UTC, ISO 8601 to the second, `Z` for the zone (the CLI,
the HTTP API and the daemon's schedules alike)."""

from __future__ import annotations

import datetime as dt


def utc(moment: dt.datetime) -> dt.datetime:
    """`moment` in UTC; a naive one is taken as UTC (SQLite gives back naive datetimes,
    written in UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def aware(moment: dt.datetime) -> dt.datetime:
    """`moment` with a time zone: a naive one taken as UTC (SQLite's), an aware one
    unchanged (in the zone the database gave it)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)


def utc_text(moment: dt.datetime) -> str:
    """ISO 8601 in UTC to the second, `Z` for the zone: every time statlas prints."""
    return utc(moment).isoformat(timespec="seconds").replace("+00:00", "Z")
