"""A partition filter: one typed value for every way a selection of partitions is asked
for (docs/design.md#partition-filters). The CLI's `--in`/`--tuples`/`--where`, the HTTP
API, the optimizer's partition-key conjuncts and Hive's `get_partitions_by_filter` strings
each produce one; metastore.partitions.filter_sql compiles it, once, to the typed partition index.

Keys are partition-key names as the table spells them (lower case); values are of the
key's type (metastore.types.KeyType), never NULL except where a node says so. Truth is
SQL's three-valued logic over a partition's key values, NULL being the default partition:

- Compare(k, op, v): `k op v`, unknown when k is NULL.
- InList(k, vs): k is one of vs; a None in vs matches the NULL key (a lookup's list), so
  InList is never unknown.
- TupleIn(ks, rows): the keys' values together are one of rows, None matching NULL.
- IsNull(k): k is NULL.
- Like(k, pieces): a string key matches the pattern of literal text and wildcards.
- NullComparison(): a comparison with a NULL literal: unknown for every partition.
- And(parts), Or(parts), Not(part): AND of none is true, OR of none false.
- Unknown(reason): what the index cannot express (true for every partition to the index;
  the front end that made it filters the index's answer itself, see filter_sql).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from metastore.types import KeyValue

Operator = Literal["=", "!=", "<", "<=", ">", ">="]
FLIPPED: dict[Operator, Operator] = {
    "=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="
}  # fmt: skip
"""`v op k` is `k FLIPPED[op] v`."""


@dataclass(frozen=True)
class Wildcard:
    """A LIKE wildcard as SQL LIKE, SQLite's GLOB and a Python regex spell it."""

    like: str
    glob: str
    regex: str


ANY_CHARACTER = Wildcard("_", "?", ".")
ANY_SEQUENCE = Wildcard("%", "*", ".*")


@dataclass(frozen=True)
class Compare:
    key: str
    op: Operator
    value: KeyValue


@dataclass(frozen=True)
class InList:
    key: str
    values: tuple[KeyValue, ...]


@dataclass(frozen=True)
class TupleIn:
    keys: tuple[str, ...]
    rows: tuple[tuple[KeyValue, ...], ...]


@dataclass(frozen=True)
class IsNull:
    key: str


@dataclass(frozen=True)
class Like:
    key: str
    pieces: tuple[str | Wildcard, ...]


@dataclass(frozen=True)
class NullComparison:
    """`k op NULL`: neither true nor false, for every partition."""


@dataclass(frozen=True)
class And:
    parts: tuple[PartitionFilter, ...]


@dataclass(frozen=True)
class Or:
    parts: tuple[PartitionFilter, ...]


@dataclass(frozen=True)
class Not:
    part: PartitionFilter


@dataclass(frozen=True)
class Unknown:
    reason: str


PartitionFilter = (
    Compare | InList | TupleIn | IsNull | Like | NullComparison | And | Or | Not | Unknown
)

EVERY_PARTITION: PartitionFilter = And(())
NO_PARTITION: PartitionFilter = Or(())


def all_of(parts: Iterable[PartitionFilter]) -> PartitionFilter:
    """AND of `parts`, nested ANDs flattened (one part stands for itself)."""
    return _junction(And, parts)


def any_of(parts: Iterable[PartitionFilter]) -> PartitionFilter:
    """OR of `parts`, nested ORs flattened (one part stands for itself)."""
    return _junction(Or, parts)


def _junction(kind: type[And] | type[Or], parts: Iterable[PartitionFilter]) -> PartitionFilter:
    flat: list[PartitionFilter] = []
    for part in parts:
        if isinstance(part, kind):
            flat.extend(part.parts)
        else:
            flat.append(part)
    return flat[0] if len(flat) == 1 else kind(tuple(flat))


def negation(part: PartitionFilter) -> PartitionFilter:
    """NOT `part`; NOT NOT x is x in three-valued logic too."""
    return part.part if isinstance(part, Not) else Not(part)
