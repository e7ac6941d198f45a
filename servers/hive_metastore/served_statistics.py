"""Which statistics a Hive client gets: statlas's collected ones or an engine's own.

An engine may write statistics through the metastore (Spark's ANALYZE as table and
partition parameters, Trino's and Hive's column-statistics calls); statlas collects its
own. For each table, partition and column the fresher of the two is served: statlas's
figures when its last successful collection finished after the engine last wrote, else
the engine's, kept as given. `statlas stats` says which
(metastore.hive.catalog.statistics_source).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from datasketches import kll_doubles_sketch
from hive_metastore import ttypes as hms
from sqlalchemy import Engine, func, select

from metastore.catalog.column_names import fold
from metastore.catalog.lookup import PartitionQuery, TupleList
from metastore.engine import run_read
from metastore.errors import StatlasError
from metastore.hive import catalog as hc
from metastore.hive.catalog import StoredPartition, StoredTable, statlas_is_fresher
from metastore.models import PartitionStats
from metastore.statistics.histograms import KLL_K
from metastore.statistics.summaries import (
    ColumnSummary,
    PartitionRows,
    TableSummary,
    partition_rows,
    table_statistics,
)
from servers.hive_metastore.engine_statistics import (
    column_statistics_from_json,
    column_statistics_to_json,
    hive_column_statistics_objects,
    partition_basic_parameters,
    spark_statistics_parameters,
)

SPARK_PREFIX = "spark.sql.statistics."
BASIC = ("numRows", "numFiles", "totalSize", "rawDataSize", "COLUMN_STATS_ACCURATE")
CACHED_SUMMARIES = 64
# timestamps are served as longStats (seconds), as Hive 3 wrote them: Trino and Hive 2/3
# clients fail a table's statistics on Hive 4's timestampStats, which they do not know


@dataclass(frozen=True)
class _Summary:
    summary: TableSummary
    files: int
    bytes: int
    keys: dict[str, ColumnSummary]  # the partition keys' (key_column_summaries)


class ServedStatistics:
    """Builds the statistics parameters and objects served, caching each table's merged
    summary per collection (a table's figures change only when a collection commits)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._summaries: dict[tuple[int, dt.datetime], _Summary] = {}
        self._lock = threading.Lock()

    def _summary(self, stored: StoredTable) -> _Summary | None:
        if stored.collected_at is None:
            return None
        key = (stored.info.id, stored.collected_at)
        with self._lock:
            cached = self._summaries.get(key)
        if cached is not None:
            return cached
        try:
            summary = table_statistics(self.engine, stored.info.name, buckets=254)
        except StatlasError:
            return None

        def sizes(conn: Any) -> tuple[int, int]:
            files, size = conn.execute(
                select(
                    func.coalesce(func.sum(PartitionStats.file_count), 0),
                    func.coalesce(func.sum(PartitionStats.total_bytes), 0),
                ).where(PartitionStats.table_id == stored.info.id)
            ).one()
            return int(files), int(size)

        files, size = run_read(self.engine, sizes)
        keys = key_column_summaries(
            partition_rows(self.engine, stored.info.name),
            [(k.name, k.type) for k in stored.definition.partition_keys],
        )
        built = _Summary(summary, files, size, keys)
        with self._lock:
            if len(self._summaries) >= CACHED_SUMMARIES:
                self._summaries.clear()
            self._summaries[key] = built
        return built

    # --- parameters ---------------------------------------------------------------------

    def table_parameters(self, stored: StoredTable) -> dict[str, str]:
        parameters = dict(stored.definition.parameters)
        if not statlas_is_fresher(stored.collected_at, stored.statistics_written_at):
            return parameters
        built = self._summary(stored)
        if built is None:
            return parameters
        for key in list(parameters):
            if key.startswith(SPARK_PREFIX) or key in BASIC:
                del parameters[key]
        with_keys = TableSummary(
            built.summary.table,
            built.summary.partitions,
            built.summary.row_count,
            {**built.summary.columns, **built.keys},
        )
        parameters.update(spark_statistics_parameters(with_keys, built.bytes))
        parameters.update(
            partition_basic_parameters(built.summary.row_count, built.files, built.bytes)
        )
        return parameters

    def partition_parameters(self, partition: StoredPartition) -> dict[str, str]:
        parameters = dict(partition.parameters)
        if partition.row_count is None or not statlas_is_fresher(
            partition.collected_at, partition.statistics_written_at
        ):
            return parameters
        for key in list(parameters):
            if key.startswith(SPARK_PREFIX) or key in BASIC:
                del parameters[key]
        parameters.update(
            partition_basic_parameters(
                partition.row_count, partition.file_count, partition.total_bytes
            )
        )
        return parameters

    # --- column statistics --------------------------------------------------------------

    def _hive_types(self, stored: StoredTable) -> dict[str, str]:
        return {c.name: c.type for c in stored.definition.columns}

    def table_column_statistics(
        self, stored: StoredTable, columns: Sequence[str]
    ) -> list[hms.ColumnStatisticsObj]:
        wanted = [c.lower() for c in columns]
        written = run_read(
            self.engine,
            lambda conn: hc.read_column_statistics(conn, stored.info.id, [hc.TABLE_LEVEL], wanted),
        ).get(hc.TABLE_LEVEL, {})
        ours: dict[str, hms.ColumnStatisticsObj] = {}
        built = self._summary(stored)
        if built is not None:
            summary = _only(built.summary, wanted)
            ours = {
                fold(o.colName): o  # clients name columns in lower case
                for o in hive_column_statistics_objects(
                    summary, self._hive_types(stored), timestamps_as_long=True
                )
            }
        return _fresher(wanted, ours, stored.collected_at, written)

    def partition_column_statistics(
        self, stored: StoredTable, partitions: Sequence[StoredPartition], columns: Sequence[str]
    ) -> dict[str, list[hms.ColumnStatisticsObj]]:
        wanted = [c.lower() for c in columns]
        written = run_read(
            self.engine,
            lambda conn: hc.read_column_statistics(
                conn, stored.info.id, [p.id for p in partitions], wanted
            ),
        )
        keys = tuple(k.name for k in stored.info.partition_keys)
        result: dict[str, list[hms.ColumnStatisticsObj]] = {}
        for partition in partitions:
            ours: dict[str, hms.ColumnStatisticsObj] = {}
            if partition.row_count is not None and None not in partition.values and keys:
                query = PartitionQuery(tuples=(TupleList(keys, [list(partition.values)]),))
                try:
                    summary = table_statistics(
                        self.engine, stored.info.name, query, wanted or None, mcv_limit=0
                    )
                except StatlasError:
                    summary = None
                if summary is not None:
                    ours = {
                        fold(o.colName): o  # clients name columns in lower case
                        for o in hive_column_statistics_objects(
                            summary, self._hive_types(stored), timestamps_as_long=True
                        )
                    }
            found = _fresher(wanted, ours, partition.collected_at, written.get(partition.id, {}))
            if found:
                result[partition.name] = found
        return result

    def document_of(self, obj: hms.ColumnStatisticsObj) -> dict[str, Any]:
        return column_statistics_to_json(obj)


KEY_SKETCH_ROWS = 200_000  # weighted values a partition key's KLL sketch is fed
_EPOCH = dt.date(1970, 1, 1)


def key_column_summaries(
    rows: Sequence[PartitionRows], keys: Sequence[tuple[str, str]]
) -> dict[str, ColumnSummary]:
    """Statistics of the partition keys from the collected rows of each partition, which
    is their exact distribution: null count, distinct values, min and max, lengths, and a
    KLL sketch fed every value in proportion to its rows (Spark's ANALYZE ... FOR ALL
    COLUMNS keeps the same figures of its partition columns; docs/hive-metastore.md)."""
    total = sum(r.rows for r in rows)
    summaries: dict[str, ColumnSummary] = {}
    for position, (name, type_) in enumerate(keys):
        by_value: dict[Any, int] = {}
        nulls = 0
        for row in rows:
            value = row.values[position]
            if value is None:
                nulls += row.rows
            elif row.rows:
                by_value[value] = by_value.get(value, 0) + row.rows
        values = sorted(by_value)
        lengths = [(len(str(v)), n) for v, n in by_value.items()]
        counted = sum(n for _, n in lengths)
        summaries[name] = ColumnSummary(
            name=name,
            type=type_,
            null_count=nulls,
            min=values[0] if values else None,
            max=values[-1] if values else None,
            ndv=float(len(values)),
            ndv_source="partition listing",
            avg_len=sum(length * n for length, n in lengths) / counted if counted else None,
            max_len=max((length for length, _ in lengths), default=None),
            mcv=[],
            equi_depth=None,
            equi_width=None,
            uniform=None,
            kll=_weighted_kll(by_value, total),
        )
    return summaries


def _weighted_kll(by_value: Mapping[Any, int], total: int) -> Any:
    """A KLL sketch of values weighted by their rows (scaled to KEY_SKETCH_ROWS), in the
    encoding collect's sketches use: days for dates, microseconds for timestamps."""
    if not by_value or total <= 0:
        return None
    first = next(iter(by_value))
    if isinstance(first, bool | str):
        return None
    scale = min(1.0, KEY_SKETCH_ROWS / total)
    numbers, weights = [], []
    for value, rows in by_value.items():
        if isinstance(value, dt.datetime):
            number = (value - dt.datetime(1970, 1, 1)).total_seconds() * 1_000_000
        elif isinstance(value, dt.date):
            number = float((value - _EPOCH).days)
        else:
            number = float(value)
        numbers.append(number)
        weights.append(max(1, round(rows * scale)))
    sketch = kll_doubles_sketch(KLL_K)
    sketch.update(np.repeat(np.array(numbers, dtype=float), weights))
    return sketch


def _only(summary: TableSummary, columns: Sequence[str]) -> TableSummary:
    if not columns:
        return summary
    return TableSummary(
        summary.table,
        summary.partitions,
        summary.row_count,
        {n: c for n, c in summary.columns.items() if fold(n) in columns},
    )


def _fresher(
    wanted: Sequence[str],
    ours: Mapping[str, hms.ColumnStatisticsObj],
    collected_at: dt.datetime | None,
    written: Mapping[str, tuple[dict[str, Any], dt.datetime]],
) -> list[hms.ColumnStatisticsObj]:
    result = []
    for column in wanted or sorted({*ours, *written}):
        engine_written = written.get(column)
        if column in ours and (
            engine_written is None or statlas_is_fresher(collected_at, engine_written[1])
        ):
            result.append(ours[column])
        elif engine_written is not None:
            result.append(column_statistics_from_json(engine_written[0]))
    return result
