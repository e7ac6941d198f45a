"""Partition key types: strict parsing, coercion of user values, Spark-like inference."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from metastore.errors import InvalidValue
from metastore.types import KeyType, format_value, infer_key_type, json_value, parse_key_type

INT, BIGINT, DATE, TS, STRING, BOOL = (
    KeyType(n) for n in ("int", "bigint", "date", "timestamp", "string", "boolean")
)


def test_int_accepts_leading_zeros_and_signs() -> None:
    assert INT.parse("01") == 1
    assert INT.parse("-7") == -7
    assert INT.coerce(5) == 5


@pytest.mark.parametrize("text", ["1.5", "x", "", "2147483648", "1e3"])
def test_int_rejects(text: str) -> None:
    with pytest.raises(InvalidValue):
        INT.parse(text)


def test_bigint_range() -> None:
    assert BIGINT.parse("9223372036854775807") == 2**63 - 1
    with pytest.raises(InvalidValue):
        BIGINT.parse("9223372036854775808")


@pytest.mark.parametrize("text", ["2024-1-5", "2024-02-30", "20240105", "2024-01-05x"])
def test_date_is_strict(text: str) -> None:
    with pytest.raises(InvalidValue, match="not a valid date"):
        DATE.parse(text)


def test_date_and_timestamp() -> None:
    assert DATE.parse("2024-01-05") == dt.date(2024, 1, 5)
    assert TS.parse("2024-01-05 10:11:12") == dt.datetime(2024, 1, 5, 10, 11, 12)
    assert TS.parse("2024-01-05T10:11:12.5") == dt.datetime(2024, 1, 5, 10, 11, 12, 500000)
    with pytest.raises(InvalidValue):
        TS.parse("2024-01-05")
    with pytest.raises(InvalidValue):
        DATE.coerce(dt.datetime(2024, 1, 1))


def test_decimal_exactness() -> None:
    dec = parse_key_type("decimal(5,2)")
    assert dec.parse("1.5") == Decimal("1.50")
    assert dec.coerce(3) == Decimal("3.00")
    with pytest.raises(InvalidValue, match="decimal places"):
        dec.parse("1.234")
    with pytest.raises(InvalidValue, match="does not fit"):
        dec.parse("12345.6")


def test_boolean_and_string() -> None:
    assert BOOL.parse("TRUE") is True
    assert BOOL.coerce(False) is False
    with pytest.raises(InvalidValue):
        BOOL.parse("yes")
    with pytest.raises(InvalidValue):
        INT.coerce(True)
    assert STRING.parse(" a ") == " a "
    assert STRING.coerce(7) == "7"


def test_parse_key_type_names() -> None:
    assert str(parse_key_type("DECIMAL(10, 2)")) == "decimal(10,2)"
    assert parse_key_type("long") == BIGINT
    with pytest.raises(InvalidValue, match="unknown partition key type"):
        parse_key_type("float")
    with pytest.raises(InvalidValue):
        parse_key_type("decimal(3,5)")


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "02", None], "int"),
        (["1", "3000000000"], "bigint"),
        (["1.5", "20", "-0.25"], "decimal(4,2)"),
        (["2024-01-01", None], "date"),
        (["2024-01-01 00:00:00", "2024-01-02 10:00:00"], "timestamp"),
        (["2024-01-01", "2024-01-02 10:00:00"], "string"),
        (["emea", "1"], "string"),
        ([None], "string"),
        (["true", "false"], "string"),
    ],
)
def test_inference(values: list[str | None], expected: str) -> None:
    assert str(infer_key_type(values)) == expected


def test_formatting_for_json() -> None:
    assert json_value(Decimal("1.50")) == "1.50"
    assert json_value(dt.date(2024, 1, 1)) == "2024-01-01"
    assert json_value(None) is None
    assert json_value(3) == 3
    assert format_value(True) == "true"
