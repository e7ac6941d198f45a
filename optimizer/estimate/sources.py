"""Where estimates read statistics: `StatisticsSource` (the interface, also for tests) and
`MetastoreSource` (the metastore's figures of exactly the partitions a scan selects, each
table's figures of one committed state, cached across requests under the table's stamp)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from metastore.catalog.lookup import PartitionQuery, build_predicate
from metastore.catalog.tables import TableInfo, describe_table
from metastore.engine import Snapshot, current_snapshot, one_snapshot, run_read
from metastore.errors import ConcurrentModification
from metastore.statistics.block_reads import Selection, sample_pieces, select_partitions
from metastore.statistics.cache import TableStamp, cache_for, table_stamps
from metastore.statistics.forced_keys import read_forced_keys
from metastore.statistics.samples import Sample, pool
from metastore.statistics.summaries import (
    PartitionRows,
    TableSummary,
    rows_of_selection,
    summarise_selection,
    table_statistics,
)
from optimizer.estimate.column import ColumnEstimate, encode
from optimizer.estimate.values import EXACT, Estimate

T = TypeVar("T")

MCV_LIMIT = 100  # heavy hitters kept per column of a selection
LISTING = "partition listing"  # the source of a partition key's exact figures
ATTEMPTS = 3  # reads of a request started over when a table's statistics change meanwhile


class StatisticsChanged(ConcurrentModification):
    """A table's statistics changed (a collection or registration committed) while one
    request read them; `consistently` starts the request over."""


def consistently(source: StatisticsSource, work: Callable[[], T], attempts: int = ATTEMPTS) -> T:
    """`work()`, which reads `source`, started over with fresh reads when a table's
    statistics change halfway (StatisticsChanged), at most `attempts` times in all."""
    for attempt in range(1, attempts + 1):
        try:
            return work()
        except StatisticsChanged as changed:
            if attempt == attempts:
                raise StatisticsChanged(
                    f"{changed} {attempts} times in a row: collections keep committing; try again"
                ) from None
            source.forget()
    raise AssertionError("unreachable")


class StatisticsSource:
    """What the metastore knows about a table's partitions (an interface for tests too)."""

    def table(self, name: str) -> TableInfo:
        raise NotImplementedError

    def prepare(self, names: list[str]) -> None:
        """Told the tables a query reads before they are looked up one by one (a source
        may read what they share at once); nothing by default."""

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        raise NotImplementedError

    def partitions(self, name: str, query: PartitionQuery) -> list[PartitionRows]:
        raise NotImplementedError

    def sample(self, name: str, query: PartitionQuery) -> Sample | None:
        """The pooled row sample of the selected partitions (None: none collected)."""
        return None

    def forget(self) -> None:
        """Drop anything read so far (a source that keeps nothing has nothing to drop)."""

    def key_columns(
        self, name: str, query: PartitionQuery, types: tuple[str, ...], rows: float
    ) -> list[ColumnEstimate]:
        """Each partition key of the selected partitions, exactly (`listed_key_column`)."""
        partitions = self.partitions(name, query)
        return [
            listed_key_column(type_, [(p.values[i], p.rows) for p in partitions], rows)
            for i, type_ in enumerate(types)
        ]


class MetastoreSource(StatisticsSource):
    """The metastore's statistics; with `memo`, each (table, partition selection) is read
    and merged once (for a caller estimating many queries over unchanged statistics); with
    `mcv_limit` 0, without heavy hitters, and with `sketch_rows`, without any sketch for
    selections of more rows than that (cheaper, for coarse decisions such as map joins).

    What is read is also kept in the process-wide cache of the engine's database
    (metastore.statistics.cache), under each table's stamp, read once per source: a source is
    made per request, so a collection committed by any process is seen by the next one.
    A table's partition selection is read once (its partitions, rows, keys and stored
    blocks in one statement) and shared by its summary (then one statement of column
    pieces), its sample (one statement of sample pieces) and its partitions (none)."""

    def __init__(
        self,
        engine: Any,
        memo: bool = False,
        mcv_limit: int = MCV_LIMIT,
        sketch_rows: float | None = None,
    ) -> None:
        self.engine, self.mcv_limit, self.sketch_rows = engine, mcv_limit, sketch_rows
        self._memo: dict[tuple[str, str, PartitionQuery], Any] | None = {} if memo else None
        self._cache = cache_for(engine)
        self._stamps: dict[str, TableStamp] = {}
        self._folded: dict[str, tuple[TableInfo, TableInfo]] = {}  # table: (spelled, folded)

    def prepare(self, names: list[str]) -> None:
        """The stamps of the tables a query reads, in one statement (not one per table as
        each is first read), unless a snapshot is open (its reads check their own)."""
        missing = [name for name in names if name not in self._stamps]
        if missing and current_snapshot(self.engine) is None:
            self._stamps.update(self._current_stamps(missing))

    def _current_stamps(self, names: list[str]) -> dict[str, TableStamp]:
        return run_read(self.engine, lambda conn: table_stamps(conn, names))

    def _remember(self, key: tuple[str, str, PartitionQuery], compute: Callable[[], Any]) -> Any:
        """The value of `key`: from the memo, the cache or `compute()`. Every read of one
        value is made in one snapshot of the database (metastore.engine.one_snapshot) that
        holds the stamp the source first read of the table, so that the figures a request
        gets of a table are all of one committed state: a collection or registration
        commits its pieces and a new stamp together. A snapshot holding another stamp
        raises StatisticsChanged, and `consistently` starts the request over."""
        if self._memo is not None and key in self._memo:
            return self._memo[key]
        name = key[1]
        if name not in self._stamps and current_snapshot(self.engine) is None:
            # a statement on its own (no BEGIN and COMMIT): a cached value needs no more
            self._stamps.update(self._current_stamps([name]))
        value = one_snapshot(self.engine, partial(self._fetch, key, compute))
        if self._memo is not None:
            self._memo[key] = value
        return value

    def _fetch(
        self, key: tuple[str, str, PartitionQuery], compute: Callable[[], Any], snapshot: Snapshot
    ) -> Any:
        kind, name, query = key
        if name not in self._stamps:  # first read inside another value's snapshot
            self._stamps.update(self._current_stamps([name]))
            snapshot.checked.add(name)
        stamp = self._stamps.get(name)
        if stamp is None:  # an unknown table: computing says so
            return compute()
        if name not in snapshot.checked:  # checked by the snapshot's first read, if any
            snapshot.checked.add(name)
            check = partial(self._check_stamp, name, stamp)
            if snapshot.begun:
                check(snapshot.connection())
            else:
                snapshot.on_begin.append(check)
        if not self._cache.max_bytes:
            return compute()
        cache_key = (kind, query, self.mcv_limit, self.sketch_rows)
        return self._cache.get_or_compute(name, stamp, cache_key, compute)

    @staticmethod
    def _check_stamp(name: str, stamp: TableStamp, conn: Any) -> None:
        if table_stamps(conn, [name]).get(name) != stamp:
            raise StatisticsChanged(f"the statistics of table {name!r} changed while read")

    def forget(self) -> None:
        """Drop what this source read (its stamps and memo): its next reads see the newest
        state of every table."""
        self._stamps.clear()
        if self._memo is not None:
            self._memo.clear()

    def table(self, name: str) -> TableInfo:
        """The table as the planner names its columns: folded, as Spark's and Hive's SQL
        match them (TableInfo.folded); its summary and sample are keyed so too."""
        spelled = self._spelled(name)
        known = self._folded.get(name)
        if known is None or known[0] is not spelled:  # folded once per table read
            known = self._folded[name] = (spelled, spelled.folded())
        return known[1]

    def _spelled(self, name: str) -> TableInfo:
        """The table with its columns named as its files spell them (the statistics' keys)."""
        return self._remember(  # type: ignore[no-any-return]
            ("table", name, PartitionQuery()), lambda: describe_table(self.engine, name)
        )

    def _selection(self, name: str, query: PartitionQuery) -> tuple[TableInfo, Selection]:
        """The table and the partitions `query` selects with their rows and keys, covered
        by blocks (one statement), shared by the summary, the sample and the partitions."""

        def compute() -> tuple[TableInfo, Selection]:
            info = self._spelled(name)

            def read(conn: Any) -> Selection:
                predicate = build_predicate(conn.dialect.name, info, query)
                return select_partitions(conn, info.id, info.store(), predicate, keys=True)

            return info, run_read(self.engine, read)

        return self._remember(("selection", name, query), compute)  # type: ignore[no-any-return]

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        def compute() -> TableSummary:
            spelled, selection = self._selection(name, query)
            if self.sketch_rows is not None and selection.rows > self.sketch_rows:
                summary = table_statistics(
                    self.engine, name, query, mcv_limit=self.mcv_limit, sketches=False
                )
            else:
                summary = run_read(
                    self.engine,
                    lambda conn: summarise_selection(
                        conn, spelled, selection, mcv_limit=self.mcv_limit
                    ),
                )
            rename = spelled.folded_names().get  # the planner's names
            folded = ((rename(n), c) for n, c in summary.columns.items())
            return replace(summary, columns={n: c for n, c in folded if n is not None})

        return self._remember(("summary", name, query), compute)  # type: ignore[no-any-return]

    def partitions(self, name: str, query: PartitionQuery) -> list[PartitionRows]:
        return self._remember(  # type: ignore[no-any-return]
            ("partitions", name, query), lambda: rows_of_selection(self._selection(name, query)[1])
        )

    def sample(self, name: str, query: PartitionQuery) -> Sample | None:
        def compute() -> Sample | None:
            info, selection = self._selection(name, query)
            if not selection.ids.size:
                return None
            rename = info.folded_names().get  # the planner's names
            return run_read(
                self.engine,
                lambda conn: pool(
                    info,
                    sample_pieces(conn, info.id, selection),
                    selection.keys,
                    rename,
                    read_forced_keys(conn, info.id),
                ),
            )

        return self._remember(("sample", name, query), compute)  # type: ignore[no-any-return]

    def key_columns(
        self, name: str, query: PartitionQuery, types: tuple[str, ...], rows: float
    ) -> list[ColumnEstimate]:
        # the types and rows follow from the table and the selection under the same stamp
        return self._remember(  # type: ignore[no-any-return]
            ("keys", name, query),
            lambda: super(MetastoreSource, self).key_columns(name, query, types, rows),
        )


def listed_key_column(type_: str, values: list[tuple[Any, int]], rows: float) -> ColumnEstimate:
    """A partition key, described exactly by the selected partitions' row counts: every
    value with its frequency, and its exact distribution."""
    counts: Counter[Any] = Counter()
    for value, count in values:
        counts[value] += count
    nulls = counts.pop(None, 0)
    present = sorted(v for v in counts if counts[v] > 0)
    non_null = sum(counts[v] for v in present)
    codes, cumulative, running = [], [], 0
    for value in present:
        code = encode(value)
        if code is None:
            break
        running += counts[value]
        codes.append(code)
        cumulative.append(running / non_null)
    points = (tuple(codes), tuple(cumulative)) if len(codes) == len(present) and present else None
    return ColumnEstimate(
        type_,
        Estimate(float(len(present)), EXACT, LISTING),
        null_fraction=(nulls / rows) if rows else 0.0,
        low=present[0] if present else None,
        high=present[-1] if present else None,
        mcv=tuple((v, counts[v] / rows) for v in present) if rows else (),
        width=8.0,
        points=points,
    )
