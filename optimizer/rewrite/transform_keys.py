"""Filters on a column an Iceberg partition key is derived from, projected onto that key
(Iceberg spec, "Scan Planning": inclusive projection), so that a scan of an Iceberg table
reads the statistics of the partitions its filters can touch, as a directory table's key
filters choose its partitions (docs/iceberg.md#queries).

A key is a transform of a source column: identity, year, month, day, hour, bucket[N] or
truncate[W] (Iceberg spec, "Partition Transforms"). A comparison, BETWEEN or IN of the
source column with literals gives the key's condition that holds for every row the filter
keeps: the ordered transforms keep =, IN and BETWEEN and make < and > inclusive (but
identity, and the day of a date, which keep them strict), bucket keeps only = and IN. The
filter itself stays where it was; the projection only narrows the partitions.

>>> from sqlglot import parse_one
>>> day = TransformKey("d_day", "day", "d", "date")
>>> projected(parse_one("e.d BETWEEN DATE '2024-01-02' AND '2024-01-05'"), "e", day).sql()
"e.d_day BETWEEN '2024-01-02' AND '2024-01-05'"
>>> bucket = TransformKey("b", "bucket[4]", "id", "bigint")
>>> projected(parse_one("e.id IN (1, 34)"), "e", bucket).sql()
'e.b IN (0, 3)'
>>> month = TransformKey("m", "month", "ts", "timestamp")
>>> projected(parse_one("e.ts > '2024-03-01 10:00:00'"), "e", month).sql()
'e.m >= 650'
"""

from __future__ import annotations

import datetime as dt
import re
import struct
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from sqlglot import exp

from metastore.catalog.transform_keys import TransformKey

_EPOCH = dt.datetime(1970, 1, 1)
_BUCKET = re.compile(r"bucket\[(\d+)\]")
_TRUNCATE = re.compile(r"truncate\[(\d+)\]")
_OPERATORS: dict[type[exp.Binary], str] = {
    exp.EQ: "=",
    exp.LT: "<",
    exp.LTE: "<=",
    exp.GT: ">",
    exp.GTE: ">=",
}
_EXACT = {op: node for node, op in _OPERATORS.items()}
# an ordered transform keeps the value's own partition on either side of a strict bound
_INCLUSIVE = {"=": exp.EQ, "<": exp.LTE, "<=": exp.LTE, ">": exp.GTE, ">=": exp.GTE}
_MIRRORED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def projected(predicate: exp.Expr, alias: str, key: TransformKey) -> exp.Expr | None:
    """`predicate`'s projection onto `key` of the scan `alias`, or None where it has none."""
    transform = _transform(key)
    if transform is None or (
        key.transform.startswith("truncate") and key.source_type.startswith("decimal")
    ):
        return None  # (a decimal's truncation is of its unscaled value: not projected)
    column = exp.column(key.key, table=alias)
    ordered = not key.transform.startswith("bucket")
    if isinstance(predicate, exp.In) and _is_source(predicate.this, alias, key):
        values = [_value(v, key.source_type) for v in predicate.expressions]
        if any(v is None for v in values) or predicate.args.get("query"):
            return None
        keys = list(dict.fromkeys(transform(v) for v in values))
        return exp.In(this=column, expressions=[_literal(k) for k in keys])
    if isinstance(predicate, exp.Between) and ordered and _is_source(predicate.this, alias, key):
        low = _value(predicate.args["low"], key.source_type)
        high = _value(predicate.args["high"], key.source_type)
        if low is None or high is None:
            return None
        return exp.Between(
            this=column, low=_literal(transform(low)), high=_literal(transform(high))
        )
    if not isinstance(predicate, exp.Binary) or type(predicate) not in _OPERATORS:
        return None
    operator = _OPERATORS[type(predicate)]
    left, right = predicate.left, predicate.right
    if _is_source(right, alias, key):
        left, right, operator = right, left, _MIRRORED[operator]
    if not _is_source(left, alias, key):
        return None
    value = _value(right, key.source_type)
    if value is None or (operator != "=" and not ordered):
        return None
    # identity, and the day of a date, keep a strict bound strict
    exact = key.transform == "identity" or (key.transform == "day" and key.source_type == "date")
    made = _EXACT[operator] if exact else _INCLUSIVE[operator]
    return made(this=column, expression=_literal(transform(value)))


def _is_source(node: Any, alias: str, key: TransformKey) -> bool:
    return (
        isinstance(node, exp.Column)
        and node.name.lower() == key.source
        and (node.table or "").lower() == alias
    )


def _value(node: Any, source_type: str) -> Any:
    """A literal (or a typed literal, DATE '...') as a value of the source column's type."""
    while isinstance(node, exp.Cast):
        node = node.this
    if not isinstance(node, exp.Literal):
        return None
    text = node.this
    try:
        if source_type == "date":
            return dt.date.fromisoformat(text.strip()[:10])
        if source_type.startswith("timestamp"):
            moment = dt.datetime.fromisoformat(text.strip())
            return moment.astimezone(dt.UTC).replace(tzinfo=None) if moment.tzinfo else moment
        if source_type in ("tinyint", "smallint", "int", "bigint"):
            return int(text)
        if source_type.startswith("decimal"):
            return Decimal(text)
        if source_type in ("string", "binary"):
            return text if node.is_string else None
    except ValueError:
        return None
    return None


def _literal(value: Any) -> exp.Expr:
    if isinstance(value, str):
        return exp.Literal.string(value)
    if isinstance(value, dt.date):
        return exp.Literal.string(value.isoformat())
    return exp.Literal.number(value)


def _transform(key: TransformKey) -> Callable[[Any], Any] | None:
    """The partition value of a source value (Iceberg spec, "Partition Transforms")."""
    name = key.transform
    if name == "identity":
        return lambda v: v
    if name in ("year", "month", "day", "hour"):
        return {"year": _year, "month": _month, "day": _day, "hour": _hour}[name]
    bucket = _BUCKET.fullmatch(name)
    if bucket:
        buckets = int(bucket.group(1))
        return lambda v: (_murmur3(_bucket_bytes(v)) & 0x7FFFFFFF) % buckets
    truncate = _TRUNCATE.fullmatch(name)
    if truncate:
        width = int(truncate.group(1))
        return lambda v: v[:width] if isinstance(v, str) else v - v % width  # floor, as Iceberg
    return None


def _year(v: dt.date) -> int:
    return v.year - 1970


def _month(v: dt.date) -> int:
    return (v.year - 1970) * 12 + v.month - 1


def _day(v: dt.date) -> dt.date:
    return v.date() if isinstance(v, dt.datetime) else v


def _hour(v: dt.datetime) -> int:
    return int((v - _EPOCH).total_seconds() // 3600)


def _bucket_bytes(value: Any) -> bytes:
    """The bytes Iceberg's bucket transform hashes: ints, longs, dates (days) and timestamps
    (microseconds) as an 8-byte little-endian long, strings as UTF-8, decimals as their
    unscaled value's big-endian two's complement."""
    if isinstance(value, dt.datetime):
        return struct.pack("<q", (value - _EPOCH) // dt.timedelta(microseconds=1))
    if isinstance(value, dt.date):
        return struct.pack("<q", (value - _EPOCH.date()).days)
    if isinstance(value, int):
        return struct.pack("<q", value)
    if isinstance(value, Decimal):
        unscaled = int(value.scaleb(-value.as_tuple().exponent))  # type: ignore[operator]
        return unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)
    return str(value).encode()


def _murmur3(data: bytes) -> int:
    """MurmurHash3 x86 32-bit with seed 0, as a signed int (Iceberg's bucket hash)."""
    import mmh3

    return int(mmh3.hash(data, 0, signed=True))
