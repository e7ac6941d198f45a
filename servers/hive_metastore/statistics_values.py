"""The value forms the engines' statistics share (spark_parameters, spark_histogram and
hive_statistics): the Spark type a column's statistics are kept as, a sketch's NDV as a
count, and the dates and timestamps of min/max values."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from metastore.column_type import ColumnType

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = EPOCH.date()
VARCHAR = re.compile(r"(var)?char\(\s*\d+\s*\)")


def distinct_count(ndv: float, non_null: int) -> int:
    """A sketch's NDV estimate as a count: rounded, at most the non-null rows, at least 1
    where there is a value (the estimate can stray on either side of the truth)."""
    if non_null <= 0:
        return 0
    return max(1, min(round(ndv), non_null))


def spark_type(type_: str) -> str | None:
    """The Spark type name statistics are kept for (char/varchar read as string)."""
    if VARCHAR.fullmatch(type_):
        return "string"
    if (
        ColumnType.of(type_).width is not None
        or type_ in ("string", "binary")
        or type_.startswith("decimal")
    ):
        return type_
    return None


def as_date(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def as_datetime(value: Any) -> dt.datetime:
    """A timestamp as a naive datetime (statlas's collector runs Spark in UTC: a naive
    timestamp is UTC; an aware one is converted to UTC)."""
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
    return moment
