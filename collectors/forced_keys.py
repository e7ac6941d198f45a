"""Which rows a table's row sample keeps whatever its draw: those whose key other tables'
heavy values reference, or whose value of another column is heavy elsewhere and light in its
own (docs/estimator.md#forced-keys).

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

A sampled table's other integral columns (comments.c_owner) keep the rows of the values that
are heavy in a column of another table over the same values (posts.p_owner: the two ranges
within SPAN_SHARE of each other) and light in their own: an owner with 424 posts and one
comment meets that comment in every join through the owner, and a comment sampled one in six
is missed five times in six. A value heavy in its own column is drawn often enough; the
values are taken from the heaviest elsewhere down while their rows (their own count where
it is among the column's most common values, else its rows per distinct value) stay within
REFERENCE_ROWS_SHARE of the table's sample.

A collection of every partition chooses them; the collection stores them with the statistics
(metastore.statistics.forced_keys) and a collection of some partitions draws with the stored
ones, so every partition's sample holds all the rows of every forced key, which estimates
rely on (a forced key the sample does not show has no rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from sqlalchemy import Connection, Engine

from metastore.catalog.tables import TableInfo, all_tables
from metastore.column_type import ColumnType
from metastore.engine import run_read
from metastore.errors import StatlasError
from metastore.statistics.block_reads import table_sample
from metastore.statistics.forced_keys import read_forced_keys
from metastore.statistics.samples import Sample, target_rows
from metastore.statistics.summaries import ColumnSummary, table_statistics

KEY_SHARE = 0.9  # a key's distinct values: at least this share of its non-null rows
HEAVY_FACTOR = 10.0  # a heavy value: at least this many times its column's rows per value
MAX_FORCED = 2000  # keys forced in at most (the heaviest kept)
SPAN_SHARE = 0.9  # a referencing column's values span at least this share of the key's range
TOP_VALUES = 100  # most common values read per column (the collected heavy hitters' count)
REFERENCE_ROWS_SHARE = 0.2  # a referencing column's forced rows: at most this share of the sample


@dataclass(frozen=True)
class ForcedKeys:
    """A column and the values of it whose rows a sample keeps whatever the draw."""

    column: str
    values: tuple[int, ...]  # sorted


def forced_count(forced: tuple[ForcedKeys, ...]) -> int:
    """How many values put rows in the sample, over every column."""
    return sum(len(keys.values) for keys in forced)


def looks_for_forced_keys(sample_rate: float, scanned: int, partitions: int) -> bool:
    """Whether a scan of `scanned` of a table's `partitions` partitions, sampled at
    `sample_rate`, chooses the table's forced keys anew: a sample drawn at a rate below one
    of every partition (a first or full collection). Every partition's sample is drawn with
    the same keys, so that an estimate may take a key's rows to be all in the table's
    sample; a scan of some of them draws with the keys stored (`stored_forced_keys`)."""
    return 0 < sample_rate < 1 and scanned == partitions


def stored_forced_keys(conn: Connection, info: TableInfo) -> tuple[ForcedKeys, ...]:
    """The forced keys the table's partitions were drawn with, per column in the table's
    order (metastore.statistics.forced_keys)."""
    stored = read_forced_keys(conn, info.id)
    return tuple(ForcedKeys(c.name, stored[c.name]) for c in info.columns if c.name in stored)


def forced_keys(engine: Engine, info: TableInfo) -> tuple[ForcedKeys, ...]:
    """Per column of `info`, the values whose rows its row sample keeps whatever the draw
    (none where the table has no statistics yet, or no other table of its database holds a
    value heavily): its key's values other tables reference heavily, and its other integral
    columns' values heavy in another table's column of the same values and light in their
    own."""
    others = _database_tables(engine, info)
    if not others:
        return ()
    own = _integral_columns(engine, info)
    if not own:
        return ()
    elsewhere = [found for other in others for found in _integral_columns(engine, other)]
    key = _key_column(own)
    budget = REFERENCE_ROWS_SHARE * target_rows(info)
    sample = _LazySample(engine, info.name)
    forced = []
    for column, rows in own:
        if key is not None and column.name == key.name:
            values = _referenced_keys(key, elsewhere)
        else:
            values = _shared_heavy_values(column, rows, elsewhere, budget, sample)
        if values:
            forced.append(ForcedKeys(column.name, values))
    return tuple(forced)


class _LazySample:
    """The table's stored row sample, read when a column first asks for its counts."""

    def __init__(self, engine: Engine, table: str) -> None:
        self.engine, self.table = engine, table

    @cached_property
    def sample(self) -> Sample | None:
        return table_sample(self.engine, self.table)

    def counts(self, name: str) -> dict[int, float]:
        """Per value of the column, the rows its sampled rows stand for (their weights)."""
        sample = self.sample
        if sample is None or name not in sample.columns:
            return {}
        values = np.asarray(sample.columns[name], dtype=np.float64)
        known = ~np.isnan(values)
        found, at = np.unique(values[known], return_inverse=True)
        weights = np.bincount(at, weights=sample.weights[known], minlength=len(found))
        return dict(zip(found.astype(np.int64).tolist(), weights.tolist(), strict=True))


def _referenced_keys(
    key: ColumnSummary, elsewhere: list[tuple[ColumnSummary, int]]
) -> tuple[int, ...]:
    """The key's values other tables' columns spanning its range hold heavily (the
    MAX_FORCED heaviest)."""
    weights: dict[int, float] = {}
    for column, rows in elsewhere:
        if _spans(column, key):
            _add_heavy(weights, column, rows, key.min, key.max)
    heaviest = sorted(weights, key=lambda v: (-weights[v], v))[:MAX_FORCED]
    return tuple(sorted(heaviest))


def _shared_heavy_values(
    column: ColumnSummary,
    rows: int,
    elsewhere: list[tuple[ColumnSummary, int]],
    budget: float,
    sample: _LazySample,
) -> tuple[int, ...]:
    """The values of `column` (of `rows` non-null rows) heavy in another table's column of
    the same values and light in `column` (by its most common values, or else its row
    sample: a merged heavy-hitters sketch names few of a long tail), from the heaviest
    elsewhere down while their rows stay within `budget`."""
    if not column.ndv or not rows or column.min is None:
        return ()
    weights: dict[int, float] = {}
    for other, other_rows in elsewhere:
        if _spans(other, column) and _spans(column, other):
            _add_heavy(weights, other, other_rows, column.min, column.max)
    if not weights:
        return ()
    per_value = rows / column.ndv
    own = sample.counts(column.name)
    for value, listed in column.mcv:
        own[int(value)] = max(own.get(int(value), 0.0), float(listed))
    kept: list[int] = []
    spent = 0.0
    for value in sorted(weights, key=lambda v: (-weights[v], v)):
        rows_here = own.get(value, 0.0)
        if rows_here >= HEAVY_FACTOR * per_value:
            continue  # heavy here too: drawn often enough
        if spent + rows_here > budget or len(kept) == MAX_FORCED:
            break
        kept.append(value)
        spent += rows_here
    return tuple(sorted(kept))


def _add_heavy(
    weights: dict[int, float], column: ColumnSummary, rows: int, low: int, high: int
) -> None:
    """Adds to `weights` the column's values within [low, high] at least HEAVY_FACTOR times
    its rows per distinct value, each weighing its largest count."""
    if not column.ndv or not column.mcv:
        return
    per_value = rows / column.ndv
    for value, count in column.mcv:
        if count >= HEAVY_FACTOR * per_value and low <= value <= high:
            weights[int(value)] = max(weights.get(int(value), 0.0), float(count))


def _spans(column: ColumnSummary, key: ColumnSummary) -> bool:
    """Whether `column`'s values span at least SPAN_SHARE of the key's range, as a column
    referencing the key does (an owner id does not reference a comment id it happens to
    equal)."""
    if column.min is None or column.max is None:
        return False
    return bool(column.max - column.min >= SPAN_SHARE * (key.max - key.min))


def _key_column(columns: list[tuple[ColumnSummary, int]]) -> ColumnSummary | None:
    """The column with the most distinct values per non-null row, if they are at least
    KEY_SHARE of them."""
    best: tuple[float, ColumnSummary] | None = None
    for column, rows in columns:
        if not rows or column.ndv is None or column.min is None:
            continue
        share = column.ndv / rows
        if share >= KEY_SHARE and (best is None or share > best[0]):
            best = (share, column)
    return None if best is None else best[1]


def _integral_columns(engine: Engine, info: TableInfo) -> list[tuple[ColumnSummary, int]]:
    """The summaries of the table's top-level integral columns that were collected, with
    their TOP_VALUES most common values, each with its non-null rows."""
    names = [c.name for c in info.columns if ColumnType.of(c.type).family == "integral"]
    if not names:
        return []
    try:
        summary = table_statistics(engine, info.name, columns=names, mcv_limit=TOP_VALUES)
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
