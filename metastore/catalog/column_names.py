"""Column names as the files spell them, found as Spark and Hive find them.

A table keeps each column's name exactly as its files spell it (`CreationDate`, `order id`,
`prix €`), so that statistics, `table show` and the Hive Metastore API show it so. A name a
user gives (`stats --column`, a query's column, a table property) is resolved the way
Spark resolves one with `spark.sql.caseSensitive=false` (its default) and Hive always does:
the column spelled exactly so if there is one, else the one column whose name equals it
ignoring case. Two columns that differ only by case (possible in a Parquet file, and in
Spark with `spark.sql.caseSensitive=true`) are each found by their exact spelling; another
spelling of them is ambiguous and says so.

A struct column's leaf fields are described too (docs/design.md#nested-columns), named by
their path: `address.city`, `a.b.c`.

>>> resolve(["Id", "CreationDate"], "creationdate", "posts")
'CreationDate'
>>> leaf_columns("address", "struct<city:string,geo:struct<lat:double,lon:double>>")
[('address.city', 'string'), ('address.geo.lat', 'double'), ('address.geo.lon', 'double')]
"""

from __future__ import annotations

from collections.abc import Iterable

from metastore.errors import UnknownColumn


class AmbiguousColumn(UnknownColumn):
    """A name that matches several columns ignoring case, and none exactly (an invalid
    request, not an unknown column, to a client: servers.http.errors)."""


def fold(name: str) -> str:
    """The case-insensitive form of a name (Spark compares `name.toLowerCase(Locale.ROOT)`)."""
    return name.lower()


def resolve(names: Iterable[str], wanted: str, table: str) -> str:
    """The column of `names` that `wanted` names: its exact spelling, else the only one
    equal to it ignoring case. UnknownColumn when none is, AmbiguousColumn when several are."""
    listed = list(names)
    if wanted in listed:
        return wanted
    folded = fold(wanted)
    matches = [name for name in listed if fold(name) == folded]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousColumn(
            f"column {wanted!r} of table {table} is ambiguous: it could be "
            + ", ".join(repr(m) for m in matches)
            + " (give its exact spelling)"
        )
    raise UnknownColumn(f"unknown column {wanted!r} of table {table}")


def resolve_all(names: Iterable[str], wanted: Iterable[str], table: str) -> list[str]:
    """`resolve` of each of `wanted`, in order."""
    listed = list(names)
    return [resolve(listed, name, table) for name in wanted]


def case_clashes(names: Iterable[str]) -> dict[str, list[str]]:
    """The names that equal another ignoring case, by their folded form."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(fold(name), []).append(name)
    return {key: group for key, group in groups.items() if len(group) > 1}


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """`text` split on the separators outside <...> and (...): a struct's fields."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p]


def struct_fields(type_name: str) -> list[tuple[str, str]] | None:
    """The (name, type) fields of a `struct<a:int,b:string>` type name; None for another type."""
    if not type_name.startswith("struct<") or not type_name.endswith(">"):
        return None
    fields = []
    for item in split_top_level(type_name[len("struct<") : -1]):
        name, _, field_type = item.partition(":")
        fields.append((name, field_type))
    return fields


def leaf_paths(name: str, type_name: str) -> list[tuple[tuple[str, ...], str]]:
    """The leaf fields of a struct column as (field path, type), nested structs followed
    (arrays and maps are leaves: their elements are not described); [] for a non-struct."""
    fields = struct_fields(type_name)
    if fields is None:
        return []
    leaves: list[tuple[tuple[str, ...], str]] = []
    for field_name, field_type in fields:
        inner = leaf_paths(field_name, field_type)
        if struct_fields(field_type) is None:
            leaves.append(((name, field_name), field_type))
        else:
            leaves.extend(((name, *path), leaf_type) for path, leaf_type in inner)
    return leaves


def leaf_columns(name: str, type_name: str) -> list[tuple[str, str]]:
    """The leaf fields of a struct column named by their dotted paths (`a.b.c`), with types."""
    return [(".".join(path), leaf_type) for path, leaf_type in leaf_paths(name, type_name)]
