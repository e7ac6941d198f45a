"""Schemas that change between files: merged as Spark's `mergeSchema` merges them, and
widened where Spark's Parquet and ORC readers read the narrower type as the wider one
(docs/design.md#schemas-that-change).

Columns are matched by name, ignoring case unless `case_sensitive` (Spark's
`spark.sql.caseSensitive`); a column only some files have is in the merged schema, read as
NULL from the others; the merged column keeps the first spelling and position seen. Types
merge as Spark 4's readers widen them: a smaller integer into a larger one (tinyint <
smallint < int < bigint), float and the integers up to int into double, a decimal into one
with as many integer and fractional digits as both (at most 38), structs field by field.
Spark's own `mergeSchema` stops at the first of these (`CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE`
for int and bigint); reading with the merged schema given reads them all. Any other pair
(string and int, date and bigint) cannot be widened: the file or partition that brings it
is reported, and the rest is read.

>>> widened("int", "bigint"), widened("decimal(10,2)", "decimal(8,4)"), widened("int", "string")
('bigint', 'decimal(12,4)', None)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from metastore.catalog.column_names import fold, struct_fields
from metastore.catalog.discovery import Column

_INTEGERS = ("tinyint", "smallint", "int", "bigint")
MAX_DECIMAL_PRECISION = 38


def _decimal(type_name: str) -> tuple[int, int] | None:
    if type_name == "decimal":
        return 10, 0
    if not type_name.startswith("decimal(") or not type_name.endswith(")"):
        return None
    precision, _, scale = type_name[len("decimal(") : -1].partition(",")
    return int(precision), int(scale or 0)


def widened(a: str, b: str, case_sensitive: bool = False) -> str | None:
    """The type both `a` and `b` are read as, or None when neither widens to the other."""
    if a == b:
        return a
    if a in _INTEGERS and b in _INTEGERS:
        return max(a, b, key=_INTEGERS.index)
    fractional = {a, b} <= {"float", "double", *_INTEGERS[:3]} and "bigint" not in (a, b)
    if fractional and {a, b} & {"float", "double"}:
        return "double"
    da, db = _decimal(a), _decimal(b)
    if da is not None and db is not None:
        scale = max(da[1], db[1])
        precision = max(da[0] - da[1], db[0] - db[1]) + scale
        return f"decimal({precision},{scale})" if precision <= MAX_DECIMAL_PRECISION else None
    fields_a, fields_b = struct_fields(a), struct_fields(b)
    if fields_a is not None and fields_b is not None:
        merged = merge_fields(fields_a, fields_b, case_sensitive)
        if merged is None:
            return None
        return "struct<" + ",".join(f"{name}:{type_name}" for name, type_name in merged) + ">"
    return None


def merge_fields(
    a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]], case_sensitive: bool = False
) -> list[tuple[str, str]] | None:
    """Two lists of (name, type) merged by name (see the module docstring); None when a
    field's types cannot be widened."""
    merged = list(a)
    where = {_key(name, case_sensitive): i for i, (name, _) in enumerate(merged)}
    for name, type_name in b:
        at = where.get(_key(name, case_sensitive))
        if at is None:
            where[_key(name, case_sensitive)] = len(merged)
            merged.append((name, type_name))
            continue
        common = widened(merged[at][1], type_name, case_sensitive)
        if common is None:
            return None
        merged[at] = (merged[at][0], common)
    return merged


def _key(name: str, case_sensitive: bool) -> str:
    return name if case_sensitive else fold(name)


@dataclass(frozen=True)
class Conflict:
    """A column whose type in one schema cannot be widened to its type in the other."""

    column: str
    type: str
    other_type: str

    def __str__(self) -> str:
        return f"column {self.column} is {self.other_type} here but {self.type} in the table"


def merge_columns(
    base: Sequence[Column], other: Sequence[Column], case_sensitive: bool = False
) -> tuple[list[Column], list[Conflict]]:
    """`base` with `other`'s columns merged in (widened types, new columns appended), and
    the columns of `other` that could not be (their `base` type kept). A column of `other`
    is `base`'s of the same name, else the one `base` column equal to it ignoring case
    (unless `case_sensitive`): names differing only by case in one file stay apart."""
    merged = list(base)
    exact = {c.name: i for i, c in enumerate(base)}
    folded: dict[str, list[int]] = {}
    for i, c in enumerate(base):
        folded.setdefault(_key(c.name, case_sensitive), []).append(i)
    conflicts = []
    for column in other:  # matched with `base`'s columns only: `other`'s names are one file's
        at = exact.get(column.name)
        if at is None:
            matches = folded.get(_key(column.name, case_sensitive), [])
            at = matches[0] if len(matches) == 1 else None
        if at is None:
            merged.append(column)
            continue
        kept = merged[at]
        common = widened(kept.type, column.type, case_sensitive)
        if common is None:
            conflicts.append(Conflict(kept.name, kept.type, column.type))
            continue
        merged[at] = Column(kept.name, common, kept.nullable or column.nullable)
    return merged, conflicts
