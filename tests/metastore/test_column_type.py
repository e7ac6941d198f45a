"""ColumnType over every type name the code base tests: each name's family and width, as
the tuples and tables it replaced had them."""

import doctest

import pytest

from metastore import column_type
from metastore.column_type import ColumnType

NAMES = [
    ("tinyint", "integral", 1),
    ("smallint", "integral", 2),
    ("int", "integral", 4),
    ("bigint", "integral", 8),
    ("float", "fractional", 4),
    ("double", "fractional", 8),
    ("boolean", "boolean", 1),
    ("date", "date", 4),
    ("timestamp", "timestamp", 8),
    ("timestamp_ntz", "timestamp", 8),
    ("decimal", "decimal", None),
    ("decimal(10,2)", "decimal", None),
    ("decimal(38,0)", "decimal", None),
    ("string", "string", None),
    ("varchar(10)", "string", None),
    ("char(3)", "string", None),
    ("binary", "other", None),
    ("timestamp_ltz", "other", None),
    # aliases and other spellings are not read: the callers that accept them name them
    ("integer", "other", None),
    ("long", "other", None),
    ("byte", "other", None),
    ("short", "other", None),
    ("INT", "other", None),
    ("array<int>", "other", None),
]


@pytest.mark.parametrize(("name", "family", "width"), NAMES)
def test_family_and_width(name: str, family: str, width: int | None) -> None:
    kind = ColumnType.of(name)
    assert (kind.name, kind.family, kind.width) == (name, family, width)
    assert kind.integral == (name in ("tinyint", "smallint", "int", "bigint"))


def test_docstring_examples() -> None:
    assert doctest.testmod(column_type).failed == 0
