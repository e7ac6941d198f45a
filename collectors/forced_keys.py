"""Which rows a table's row sample keeps whatever its draw: those whose key other tables'
heavy values reference (docs/estimator.md#forced-keys).

A sampled table's key (posts.p_id: as many distinct values as rows) tells, through the
sampled rows, what each key's row holds (the post's owner). A key that another table
references heavily (the post with 77,775 of the 600,000 votes) carries that table's rows
along any join through it, and a Bernoulli sample drew it or not: sampled one in three,
the owner of an eighth of the votes is unknown two times in three. Such keys' rows are
kept in the sample with weight one, the others drawn as before and weighted by the rest of
the partition's rows (metastore.statistics.samples.partition_weights): end-biased sampling
(Estan and Naughton, "End-biased samples for join cardinality estimation", ICDE 2006), the
bias decided by the other tables' heavy hitters rather than the row's own frequency, which
a key does not have.

The key is the table's integral column with the most distinct values, if they are at least
KEY_SHARE of its non-null rows (from its statistics: a table collected for the first time has
none, and is sampled without; `collect_tables` samples it again once the others are known).
The heavy values are the most common values, at least HEAVY_FACTOR times their column's rows
per distinct value and within the key's range, of the integral columns of the other tables
of its database whose values span SPAN_SHARE of the key's range (as a column referencing
the key does); the MAX_FORCED most frequent are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from metastore.catalog.tables import TableInfo, all_tables
from metastore.column_type import ColumnType
from metastore.engine import run_read
from metastore.errors import StatlasError
from metastore.statistics.summaries import ColumnSummary, table_statistics

KEY_SHARE = 0.9  # a key's distinct values: at least this share of its non-null rows
HEAVY_FACTOR = 10.0  # a heavy value: at least this many times its column's rows per value
MAX_FORCED = 2000  # keys forced in at most (the heaviest kept)
SPAN_SHARE = 0.9  # a referencing column's values span at least this share of the key's range
TOP_VALUES = 100  # most common values read per column (the collected heavy hitters' count)
SCAN_SHARE = 0.1  # a scan of at least this share of its table's partitions looks for them


@dataclass(frozen=True)
class ForcedKeys:
    """The key column and the values of it whose rows a sample keeps whatever the draw."""

    column: str
    values: tuple[int, ...]  # sorted


def worth_forcing(sample_rate: float, scanned: int, partitions: int) -> bool:
    """Whether a scan of `scanned` of a table's `partitions` partitions, sampled at
    `sample_rate`, looks for forced keys: a sample drawn at a rate below one, over at least
    SCAN_SHARE of the table (a first or full collection). An appended partition's keys are
    new, and referenced heavily only later; looking costs a collection of one partition
    what its scan costs (30 to 180 ms in TPC-H's metastore)."""
    return 0 < sample_rate < 1 and scanned >= SCAN_SHARE * partitions


def forced_keys(engine: Engine, info: TableInfo) -> ForcedKeys | None:
    """The keys `info`'s row sample keeps whatever the draw; None when the table has no key
    (or no statistics yet) or no other table of its database references one heavily."""
    others = _database_tables(engine, info)
    key = _key_column(engine, info) if others else None
    if key is None:
        return None
    low, high = key.min, key.max
    weights: dict[int, float] = {}
    for other in others:
        for column, rows in _integral_columns(engine, other):
            if not column.ndv or not column.mcv or not _spans(column, key):
                continue
            per_value = rows / column.ndv
            for value, count in column.mcv:
                if count >= HEAVY_FACTOR * per_value and low <= value <= high:
                    weights[int(value)] = max(weights.get(int(value), 0.0), float(count))
    if not weights:
        return None
    heaviest = sorted(weights, key=lambda v: (-weights[v], v))[:MAX_FORCED]
    return ForcedKeys(key.name, tuple(sorted(heaviest)))


def _spans(column: ColumnSummary, key: ColumnSummary) -> bool:
    """Whether `column`'s values span at least SPAN_SHARE of the key's range, as a column
    referencing the key does (an owner id does not reference a comment id it happens to
    equal)."""
    if column.min is None or column.max is None:
        return False
    return bool(column.max - column.min >= SPAN_SHARE * (key.max - key.min))


def _key_column(engine: Engine, info: TableInfo) -> ColumnSummary | None:
    """The table's integral column with the most distinct values per non-null row, if they
    are at least KEY_SHARE of them."""
    best: tuple[float, ColumnSummary] | None = None
    for column, rows in _integral_columns(engine, info, heavy=False):
        if not rows or column.ndv is None or column.min is None:
            continue
        share = column.ndv / rows
        if share >= KEY_SHARE and (best is None or share > best[0]):
            best = (share, column)
    return None if best is None else best[1]


def _integral_columns(
    engine: Engine, info: TableInfo, heavy: bool = True
) -> list[tuple[ColumnSummary, int]]:
    """The summaries of the table's top-level integral columns that were collected (with
    their TOP_VALUES most common values when `heavy`), each with its non-null rows."""
    names = [c.name for c in info.columns if ColumnType.of(c.type).family == "integral"]
    if not names:
        return []
    try:
        summary = table_statistics(
            engine, info.name, columns=names, mcv_limit=TOP_VALUES if heavy else 0
        )
    except StatlasError:
        return []
    return [
        (column, summary.row_count - column.null_count)
        for column in summary.columns.values()
        if column.collected_partitions
    ]


def _database_tables(engine: Engine, info: TableInfo) -> list[TableInfo]:
    """The other tables of `info`'s database (the part of its name before the dot; the
    tables without one for a name without one)."""
    database = info.name.rpartition(".")[0]
    return [
        other
        for other in run_read(engine, all_tables)
        if other.id != info.id and other.name.rpartition(".")[0] == database
    ]
