"""Typed partition-key values: the types, parsing raw text, and coercing user values.

Partition values are stored typed (not as Hive's varchar compared through casts), so each
key type knows how to parse a directory's text and how to accept a value a user passes.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from metastore.errors import InvalidValue

KeyValue = int | Decimal | dt.date | dt.datetime | str | bool | None

INT_RANGE = (-(2**31), 2**31 - 1)
BIGINT_RANGE = (-(2**63), 2**63 - 1)
MAX_DECIMAL_PRECISION = 38

_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_DECIMAL_TYPE = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_SIMPLE_TYPES = ("int", "bigint", "date", "timestamp", "string", "boolean")


@dataclass(frozen=True)
class KeyType:
    """A partition key type: int, bigint, decimal(p,s), date, timestamp, string or boolean."""

    name: str
    precision: int = 0
    scale: int = 0

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        return self.name

    @property
    def is_numeric(self) -> bool:
        return self.name in ("int", "bigint", "decimal")

    def parse(self, text: str) -> KeyValue:
        """Parse text (a directory value or a CLI argument) strictly as this type."""
        try:
            return _PARSERS[self.name](self, text.strip() if self.name != "string" else text)
        except (ValueError, InvalidOperation, OverflowError):
            raise InvalidValue(f"{text!r} is not a valid {self}") from None

    def coerce(self, value: Any) -> KeyValue:
        """Accept a Python or JSON value (or text) as a value of this type; None stays NULL."""
        if value is None:
            return None
        if isinstance(value, str):
            return self.parse(value)
        name = self.name
        if name == "boolean" and isinstance(value, bool):
            return value
        if isinstance(value, bool):
            raise InvalidValue(f"{value!r} is not a valid {self}")
        if name in ("int", "bigint") and isinstance(value, int):
            return _check_range(self, value)
        if name == "decimal" and isinstance(value, int | Decimal | float):
            return _decimal(self, Decimal(str(value)) if isinstance(value, float) else value)
        if name == "string" and isinstance(value, int | Decimal):
            return str(value)
        if name == "timestamp" and isinstance(value, dt.datetime):
            return value.replace(tzinfo=None)
        if name == "date" and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        raise InvalidValue(f"{value!r} is not a valid {self}")

    def coerce_many(self, values: Sequence[Any]) -> list[KeyValue]:
        """coerce() over a list, without per-value work when the values already have this
        type's Python type (a list of 100,000 dates costs one pass over their types)."""
        kinds = {type(v) for v in values}
        native = _NATIVE.get(self.name)
        if native is not None and kinds <= {native, type(None)}:
            if self.name in ("int", "bigint"):
                present = [v for v in values if v is not None]
                if present:
                    _check_range(self, min(present))
                    _check_range(self, max(present))
            return list(values)
        return [self.coerce(v) for v in values]


def parse_key_type(text: str) -> KeyType:
    """`int`, `bigint`, `decimal(10,2)`, `date`, `timestamp`, `string` or `boolean`."""
    name = text.strip().lower()
    aliases = {"integer": "int", "long": "bigint", "varchar": "string", "bool": "boolean"}
    name = aliases.get(name, name)
    if name in _SIMPLE_TYPES:
        return KeyType(name)
    if name == "decimal":
        return KeyType("decimal", 10, 0)
    match = _DECIMAL_TYPE.fullmatch(name)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if not 1 <= precision <= MAX_DECIMAL_PRECISION or scale > precision:
            raise InvalidValue(f"invalid decimal type {text!r}")
        return KeyType("decimal", precision, scale)
    raise InvalidValue(
        f"unknown partition key type {text!r} (use int, bigint, decimal(p,s), date, "
        "timestamp, string or boolean)"
    )


def infer_key_type(raw_values: list[str | None]) -> KeyType:
    """Infer a key's type from its directory values, as Spark's partition discovery does:
    int, then bigint, then decimal, then date, then timestamp, else string. NULLs are ignored.
    """
    values = [v for v in raw_values if v is not None]
    if not values:
        return KeyType("string")
    if all(_INTEGER.fullmatch(v) for v in values):
        ints = [int(v) for v in values]
        if all(INT_RANGE[0] <= i <= INT_RANGE[1] for i in ints):
            return KeyType("int")
        if all(BIGINT_RANGE[0] <= i <= BIGINT_RANGE[1] for i in ints):
            return KeyType("bigint")
    if all(_DECIMAL.fullmatch(v) for v in values):
        decimals = [Decimal(v) for v in values]
        scale = max(max(-d.as_tuple().exponent, 0) for d in decimals)  # type: ignore[operator]
        integral = max(len(str(abs(int(d)))) if int(d) else 1 for d in decimals)
        if integral + scale <= MAX_DECIMAL_PRECISION:
            return KeyType("decimal", max(integral + scale, 1), scale)
    for candidate in (KeyType("date"), KeyType("timestamp")):
        try:
            for v in values:
                candidate.parse(v)
        except InvalidValue:
            continue
        return candidate
    return KeyType("string")


def format_value(value: KeyValue) -> str | None:
    """The canonical text of a typed value (None for NULL)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def json_value(value: KeyValue) -> str | int | bool | None:
    """A typed value as JSON: integers as numbers, booleans as booleans, the rest as strings
    (decimals too, so that no digit is lost)."""
    if value is None or isinstance(value, bool | int):
        return value
    return format_value(value)


def _check_range(key_type: KeyType, value: int) -> int:
    low, high = INT_RANGE if key_type.name == "int" else BIGINT_RANGE
    if not low <= value <= high:
        raise InvalidValue(f"{value} is out of range for {key_type}")
    return value


def _parse_integer(key_type: KeyType, text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError(text)
    return _check_range(key_type, int(text))


def _decimal(key_type: KeyType, value: int | Decimal) -> Decimal:
    number = Decimal(value)
    if not number.is_finite():
        raise InvalidValue(f"{value} is not a valid {key_type}")
    quantum = Decimal(1).scaleb(-key_type.scale)
    scaled = number.quantize(quantum)
    if scaled != number:
        raise InvalidValue(f"{value} has more than {key_type.scale} decimal places for {key_type}")
    if len(scaled.as_tuple().digits) > key_type.precision and scaled != 0:
        raise InvalidValue(f"{value} does not fit {key_type}")
    return scaled


def _parse_decimal(key_type: KeyType, text: str) -> Decimal:
    if not _DECIMAL.fullmatch(text):
        raise ValueError(text)
    return _decimal(key_type, Decimal(text))


def _parse_date(key_type: KeyType, text: str) -> dt.date:
    if not _DATE.fullmatch(text):
        raise ValueError(text)
    return dt.date.fromisoformat(text)


def _parse_timestamp(key_type: KeyType, text: str) -> dt.datetime:
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        raise ValueError(text)
    day, hour, minute, second, fraction = match.groups()
    fraction = (fraction or "0")[:6].ljust(6, "0")
    return dt.datetime.combine(
        dt.date.fromisoformat(day), dt.time(int(hour), int(minute), int(second), int(fraction))
    )


def _parse_boolean(key_type: KeyType, text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError(text)
    return lowered == "true"


_NATIVE: dict[str, type] = {
    "int": int,
    "bigint": int,
    "date": dt.date,
    "timestamp": dt.datetime,
    "string": str,
    "boolean": bool,
}

_PARSERS: dict[str, Callable[[KeyType, str], KeyValue]] = {
    "int": _parse_integer,
    "bigint": _parse_integer,
    "decimal": _parse_decimal,
    "date": _parse_date,
    "timestamp": _parse_timestamp,
    "string": lambda key_type, text: text,
    "boolean": _parse_boolean,
}
