"""A column's type as the catalog names it (Hive and Spark type names, lower case): its
family and, for fixed-width types, its width, read once from the name.

>>> ColumnType.of("bigint")
ColumnType(name='bigint', family='integral', width=8)
>>> ColumnType.of("varchar(10)").family, ColumnType.of("decimal(10,2)").width
('string', None)

Names are taken exactly as stored: aliases ("integer", "long") and other spellings are
the family "other", so a caller that accepts them says so itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Family = Literal[
    "integral", "fractional", "decimal", "string", "date", "timestamp", "boolean", "other"
]

# Spark's DataType.defaultSize of the fixed-width types (sql/api .../types/*Type.scala)
_FIXED: dict[str, tuple[Family, int]] = {
    "tinyint": ("integral", 1),
    "smallint": ("integral", 2),
    "int": ("integral", 4),
    "bigint": ("integral", 8),
    "float": ("fractional", 4),
    "double": ("fractional", 8),
    "boolean": ("boolean", 1),
    "date": ("date", 4),
    "timestamp": ("timestamp", 8),
    "timestamp_ntz": ("timestamp", 8),
}


@dataclass(frozen=True)
class ColumnType:
    name: str
    family: Family
    width: int | None  # bytes of a value of a fixed-width type; None for the others

    @staticmethod
    @lru_cache(maxsize=1024)  # a planner asks for the same few names thousands of times
    def of(name: str) -> ColumnType:
        fixed = _FIXED.get(name)
        if fixed is not None:
            return ColumnType(name, *fixed)
        if name.startswith("decimal"):
            return ColumnType(name, "decimal", None)
        if name == "string" or name.startswith(("varchar", "char")):
            return ColumnType(name, "string", None)
        return ColumnType(name, "other", None)

    @property
    def integral(self) -> bool:
        return self.family == "integral"
