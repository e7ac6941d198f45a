"""`statlas collect`: incremental, all-or-nothing collection of a table's statistics.

The table's listing is refreshed first (collectors.refresh: new partitions added, vanished
ones removed with their statistics, changed fingerprints updated). Then only partitions
that are new, or whose fingerprint (files, bytes, newest modification time) changed since
their statistics were taken, are scanned (`full` rescans all); the scan is ONE pass over
the data grouped by the partition keys (collectors.jvm_scan: the one-pass JVM scan, or one
aggregation of Spark's aggregates); its result is written in ONE transaction after the
scan. A failed or killed job leaves the previous statistics as they were and the run
recorded as failed. A second collection of a table while one is running is refused.
`collect_tables` collects several tables on one Spark session.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine

from collectors.aggregations import (
    SAMPLE_SEED,
    aggregate,
    column_records,
    forcing,
    plan_columns,
    sample_record,
)
from collectors.blocks_ahead import BlocksAhead
from collectors.driver_rows import arrow_records, driver_rows
from collectors.file_schemas import (
    ReadLayout,
    case_sensitive,
    partition_schemas,
    read_layout,
    spark_ddl,
)
from collectors.forced_keys import (
    ForcedKeys,
    forced_count,
    forced_keys,
    looks_for_forced_keys,
    stored_forced_keys,
)
from collectors.iceberg.collection import (
    IcebergRead,
    plan_read,
    publish_collected,
    record_collected,
)
from collectors.iceberg.sketches import with_iceberg_sketches
from collectors.iceberg.source import IcebergUnavailable, source_of
from collectors.jvm_scan import scan as jvm_scan
from collectors.jvm_scan import scan_method
from collectors.progress import ProgressSink, watch_spark_job
from collectors.refresh import refresh_listing
from collectors.scan_plan import ListedPartition, plan_scan
from collectors.scanned import ScannedPartition
from collectors.spark_session import LazySession, listing_settings, session_settings
from collectors.streamed_write import StreamedWrite
from metastore import runs
from metastore.bulk_insert import bulk_insert
from metastore.catalog.discovery import Column
from metastore.catalog.tables import TableInfo, forget_statistics, get_table, replace_columns
from metastore.engine import run_read, run_write
from metastore.errors import StatlasError, UnknownColumn
from metastore.models import ColumnStats, PartitionStats
from metastore.partitions.block_tree import FANOUT, levels_for
from metastore.runs import CollectionRunning as CollectionRunning  # refused: one is running
from metastore.statistics.forced_keys import write_forced_keys
from metastore.statistics.histograms import (
    partition_kll_k,
    partition_theta_lg_k,
    sparse_theta_lg_k,
)
from metastore.statistics.partition_samples import HOLDING_LEVEL, restore
from metastore.statistics.rollups import BuiltBlock, PartitionPiece, refresh_blocks, stored_sample
from metastore.statistics.samples import sample_rate, target_rows, whole_table_rows
from metastore.types import KeyValue

THETA_COLUMNS = "theta_columns"
# a table's first collection counts its rows first (file footers: cheap on small tables)
# when its files are at most this big, so that its sample rate is not a guess: a dimension
# of up to WHOLE_TABLE_ROWS rows is then sampled whole
COUNT_FIRST_BYTES = 64 * 1024 * 1024
# a scan that would be sampled whole on the strength of rows per byte measured on other
# partitions is counted first when its files are bigger than this: a partition far denser
# than the table's earlier ones must not be collected whole into the driver
WHOLE_CHECK_BYTES = 4 * 1024 * 1024
# the scan's result partitions are kept small: adaptive execution coalesces them to its
# advisory size (64 MB by default) of COMPRESSED shuffle bytes, and the rows of such a
# partition (sketches, samples) came to more than the 100 MB a task result may carry
# directly; beyond that Spark hands it over through the block manager, where a busy local
# driver was seen to lose it (TaskResultLost: a full collection of TPC-H SF 1 failed)
SCAN_SETTINGS = {"spark.sql.adaptive.advisoryPartitionSizeInBytes": str(16 * 1024 * 1024)}
# dates and timestamps before 1582 in Parquet files of writers other than Spark (pyarrow,
# Hive, Impala) are read as they are written, proleptic Gregorian, not refused (Spark's
# default, EXCEPTION); files Spark wrote say which calendar they use, whatever this says.
# A setting the session has already is kept.
READ_SETTINGS = {
    "spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInRead": "CORRECTED",
}


class CollectionFailed(StatlasError):
    """The Spark job failed or was killed; the previous statistics are intact."""


@dataclass
class CollectionReport:
    table: str
    partitions_scanned: int = 0
    partitions_skipped: int = 0
    partitions_removed: int = 0
    partitions_added: int = 0  # by the listing's refresh (scanned too)
    rows: int = 0
    bytes: int = 0
    seconds: float = 0.0
    run_id: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    # partitions not read (a corrupt file, a type that cannot be widened), by name: why
    partitions_failed: dict[str, str] = field(default_factory=dict)
    # columns (and struct leaves) not described or described in part: why
    columns_skipped: dict[str, str] = field(default_factory=dict)
    columns_added: list[str] = field(default_factory=list)  # by partitions' newer schemas
    # an Iceberg table's statistics file committed after the collection (collectors.iceberg)
    published: dict[str, Any] | None = None
    forcing_looked: bool = False  # whether its scan looked for forced keys (looks_for_forced_keys)
    forced: tuple[ForcedKeys, ...] = ()  # per column, the keys its sample kept whatever the draw

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "partitions_scanned": self.partitions_scanned,
            "partitions_skipped": self.partitions_skipped,
            "partitions_removed": self.partitions_removed,
            "partitions_added": self.partitions_added,
            "partitions_failed": dict(self.partitions_failed),
            "columns_skipped": dict(self.columns_skipped),
            "columns_added": list(self.columns_added),
            "rows": self.rows,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            **({"forced_keys": forced_count(self.forced)} if self.forced else {}),
            **({"published": self.published} if self.published is not None else {}),
        }


def collect(
    engine: Engine,
    table: str,
    *,
    full: bool = False,
    refresh: bool = True,
    master: str | None = None,
    spark: Any = None,
    spark_conf: Mapping[str, str] | None = None,
    progress: ProgressSink | None = None,
    scan: str | None = None,
) -> CollectionReport:
    """Collect the statistics of `table`'s new and changed partitions (all with `full`),
    after listing the table again where it was registered from (collectors.refresh; not
    with `refresh=False`). `spark` is the caller's SparkSession, a LazySession shared by
    several collections, or None (one on `master` with `spark_conf`, started only if
    needed); `scan` (jvm, spark, auto) overrides STATLAS_SCAN (collectors.jvm_scan)."""
    started = time.perf_counter()
    sessions = LazySession.of(spark, master, spark_conf)
    info = run_read(engine, lambda conn: get_table(conn, table))
    report = CollectionReport(info.name)
    run_id = run_write(engine, lambda conn: runs.start(conn, info.id, info.name))
    report.run_id = run_id
    streamed: StreamedWrite | None = None  # into PostgreSQL, written while the scan runs
    iceberg = source_of(info.properties)  # an Iceberg table's catalog (collectors.iceberg)
    to_scan: list[ListedPartition] = []
    removed: list[int] = []
    try:
        if refresh:
            listing = refresh_listing(engine, info, sessions)
            report.partitions_added, report.partitions_removed = listing.added, listing.removed
        planned = run_read(engine, lambda conn: plan_scan(conn, table, full))
        info, to_scan, added, removed = (
            planned.info,
            planned.to_scan,
            planned.added,
            planned.removed,
        )
        partitions, rows_per_byte = planned.partitions, planned.rows_per_byte
        report.partitions_removed += len(removed)
        rows_by_values: dict[tuple[KeyValue, ...], ScannedPartition] = {}
        built_ahead: dict[tuple[int, int], BuiltBlock] = {}
        held = False  # partitions' samples left to their blocks (set where they are)
        layout, registered = ReadLayout(list(info.columns)), info
        # an Iceberg table's snapshot and files; refused, even with nothing to scan, when
        # its rows are not its data files' (deletes): its statistics would be published
        iceberg_read: IcebergRead | None = None
        if iceberg is not None:
            iceberg_read = plan_read(
                engine,
                info,
                iceberg,
                [(p.id, p.name) for p in to_scan],
                {p.id for p in to_scan} - added,  # those with statistics
                full,
            )
        if to_scan:
            session = sessions.get()
            if iceberg is None:  # (an Iceberg table's columns: its schema's, read by name)
                layout = _layout(session, info, to_scan)
            report.partitions_failed = {
                p.name or info.name: layout.failed[p.id] for p in to_scan if p.id in layout.failed
            }
            to_scan = [p for p in to_scan if p.id not in layout.failed]
            report.columns_added = [
                c.name for c in layout.columns if c.name not in {k.name for k in info.columns}
            ]
            info = dataclasses.replace(info, columns=tuple(layout.columns))
        report.partitions_scanned = len(to_scan)
        report.partitions_skipped = partitions - len(to_scan) - len(report.partitions_failed)
        report.bytes = sum(
            p.fingerprint[1]
            if iceberg_read is None
            else iceberg_read.bytes_of(p.name, p.fingerprint[1])
            for p in to_scan
        )
        if to_scan:
            every = len(to_scan) == partitions
            # a full collection's blocks, built while the scan runs
            ahead = (
                BlocksAhead(info.id, {p.values: p.id for p in to_scan}, info.described_columns())
                if every and len(to_scan) > 1
                else None
            )
            forgotten = [p.id for p in to_scan] + removed
            streamed = (
                StreamedWrite(
                    engine, lambda conn: forget_statistics(conn, info.id, forgotten, added)
                )
                if engine.dialect.name == "postgresql" and len(to_scan) > 1
                else None
            )
            by_values = {p.values: p for p in to_scan}
            # a full collection's blocks of HOLDING_LEVEL hold its partitions' samples
            held = ahead is not None and levels_for(max(by_values[v].id for v in by_values)) >= (
                HOLDING_LEVEL
            )

            def received(values: tuple[KeyValue, ...], piece: PartitionPiece) -> None:
                if ahead is not None:
                    ahead.add(values, piece)
                partition = by_values.get(values)
                if streamed is not None and partition is not None:
                    row = _partition_row(info.id, run_id, partition, piece, held)
                    streamed.add(partition.id, row, _column_rows(info.id, partition.id, piece))

            described = info.described_columns()
            absent = {p.values: layout.absent(p.id, described) for p in to_scan}
            with (
                watch_spark_job(session, f"collect-{info.name}-run-{run_id}", progress),
                session_settings(session, _read_settings(session)),
            ):
                # listed once, counted, scanned
                frame = (
                    _reader(session, info, to_scan, every, layout.readable())
                    if iceberg_read is None
                    else iceberg_read.frame(
                        session, info.key_names, layout.readable(), [p.name for p in to_scan]
                    )
                )
                target, whole = target_rows(info), whole_table_rows(info)
                rate = sample_rate(target, report.bytes, rows_per_byte, whole)
                guessed = rows_per_byte is None and 0 < report.bytes <= COUNT_FIRST_BYTES
                if guessed or (rate >= 1.0 and report.bytes > WHOLE_CHECK_BYTES):
                    rate = sample_rate(target, report.bytes, frame.count() / report.bytes, whole)
                if iceberg_read is None and looks_for_forced_keys(rate, len(to_scan), partitions):
                    report.forcing_looked = True
                    report.forced = forced_keys(engine, info)
                elif iceberg_read is None and 0 < rate < 1:  # those every partition was drawn with
                    report.forced = run_read(engine, lambda conn: stored_forced_keys(conn, info))

                def completed(
                    values: tuple[KeyValue, ...], scanned: ScannedPartition
                ) -> ScannedPartition:
                    """An appended Iceberg partition's statistics: its stored ones and its
                    added files' (collectors.iceberg.collection)."""
                    assert iceberg_read is not None
                    return ScannedPartition(
                        *iceberg_read.completed(
                            info, by_values[values].id, scanned.rows, scanned.columns,
                            scanned.encoded(), rate,
                        )
                    )  # fmt: skip

                try:
                    rows_by_values = _scan(
                        frame,
                        info,
                        len(to_scan),
                        rate=rate,
                        sink=progress,
                        method=scan,
                        received=received,
                        skipped=layout.skipped,
                        absent=absent,
                        completed=completed if iceberg_read and iceberg_read.stored else None,
                        forced=report.forced,
                        encode=not held or iceberg_read is not None,
                    )
                    built_ahead = {} if ahead is None else ahead.built()
                finally:
                    if ahead is not None:
                        ahead.close()
        report.timings["scan"] = time.perf_counter() - started
        report.rows = sum(scanned.rows for scanned in rows_by_values.values())
        if iceberg_read is not None:
            report.rows -= iceberg_read.stored_rows()  # described already, not read
        writes = progress if to_scan or removed else None
        if writes is not None:
            writes.update("write", 0, 1)

        report.columns_skipped = _skipped_columns(info, layout.skipped)

        # a sample of every partition replaces the keys they were drawn with (none if whole;
        # a scan that looked for them scanned every partition)
        keys_drawn = bool(to_scan) and len(to_scan) == partitions

        def write(conn: Connection, streamed_ids: AbstractSet[int] | None = None) -> None:
            replace_columns(conn, registered, layout.columns)
            if keys_drawn:
                write_forced_keys(conn, info.id, {k.column: k.values for k in report.forced})
            if iceberg is not None:  # the snapshot whose statistics these now are
                record_collected(conn, info)
            _write(
                conn,
                info,
                run_id,
                to_scan,
                removed,
                rows_by_values,
                report,
                built_ahead,
                streamed_ids,
                added,
                held,
            )

        if streamed is None or not streamed.finish(lambda conn: write(conn, streamed.written)):
            run_write(engine, write)
        report.timings["write"] = time.perf_counter() - started - report.timings["scan"]
        if writes is not None:
            writes.update("write", 1, 1)
    except BaseException as error:
        if streamed is not None:
            streamed.close()  # rolled back: the old statistics stay
        message = " ".join(str(error).split())[:500] or type(error).__name__
        if _jvm_gone(error):
            message = f"the Spark JVM went away (killed or crashed): {message}"
        run_write(engine, lambda conn: runs.fail(conn, run_id, report, message))
        if isinstance(error, StatlasError | KeyboardInterrupt):
            raise
        raise CollectionFailed(
            f"collection of {info.name} failed, previous statistics kept: "
            f"{message.splitlines()[0][:300]}"
        ) from error
    if iceberg is not None:  # the statistics are written: publishing is another commit
        publishing = time.perf_counter()
        try:
            report.published = publish_collected(
                engine, info.name, iceberg, bool(to_scan or removed)
            )
            report.timings["publish"] = time.perf_counter() - publishing
        except StatlasError as error:
            raise IcebergUnavailable(
                f"{info.name}: statistics collected, not published to {iceberg.describe()}: {error}"
            ) from None
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class TableOutcome:
    """One table's collection in a run over several: its report, or why it failed."""

    table: str
    report: CollectionReport | None = None
    error: StatlasError | None = None

    def as_json(self) -> dict[str, Any]:
        if self.report is not None:
            return {"status": "succeeded", **self.report.as_json()}
        return {"table": self.table, "status": "failed", "error": str(self.error)}


def collect_tables(
    engine: Engine,
    tables: Sequence[str],
    *,
    spark: LazySession,
    progress: Callable[[str], AbstractContextManager[ProgressSink | None]] | None = None,
    **options: Any,
) -> Iterator[TableOutcome]:
    """Collect each of `tables` in turn on ONE Spark session (`spark`, started by the first
    table that needs it), each in its own transaction with its own run record; a failed
    table is reported and the next one collected. `progress(table)` gives each collection
    its progress sink; `options` are collect's. Then a table whose scan looked for forced
    keys is sampled again, a full collection reported again, where the tables collected
    after it (a first collection) now hold heavily values its sample did not keep
    (collectors.forced_keys)."""

    def one(table: str, **more: Any) -> TableOutcome:
        with progress(table) if progress is not None else nullcontext() as sink:
            try:
                report = collect(engine, table, spark=spark, progress=sink, **{**options, **more})
            except StatlasError as error:
                return TableOutcome(table, error=error)
            return TableOutcome(report.table, report=report)

    looked: list[CollectionReport] = []  # sampled where forced keys were looked for
    for table in dict.fromkeys(tables):  # each once, in the order given
        outcome = one(table)
        if outcome.report is not None and outcome.report.forcing_looked:
            looked.append(outcome.report)
        yield outcome
    for report in looked:
        if _new_forced_keys(engine, report):
            yield one(report.table, full=True, refresh=False)


def _new_forced_keys(engine: Engine, report: CollectionReport) -> bool:
    """Whether the table's sample would now keep, whatever the draw, rows of keys its scan
    (`report`) did not: keys of tables collected after it."""
    try:
        now = forced_keys(engine, run_read(engine, lambda conn: get_table(conn, report.table)))
    except StatlasError:
        return False
    kept = {(keys.column, value) for keys in report.forced for value in keys.values}
    return any((keys.column, value) not in kept for keys in now for value in keys.values)


def _jvm_gone(error: BaseException) -> bool:
    """Whether py4j lost its connection to the JVM (a killed or crashed driver)."""
    chain: BaseException | None = error
    while chain is not None:
        if type(chain).__module__.startswith("py4j") and "Network" in type(chain).__name__:
            return True
        if isinstance(chain, ConnectionError):
            return True
        chain = chain.__cause__ or chain.__context__
    return False


def _layout(session: Any, info: TableInfo, partitions: list[ListedPartition]) -> ReadLayout:
    """The schema the partitions are read with, from their files' footers, and the
    partitions that cannot be read (collectors.file_schemas)."""
    matched_by_case = case_sensitive(session)
    locations = {p.id: p.location for p in partitions}
    schemas = partition_schemas(locations, info.format, matched_by_case)
    return read_layout(info.columns, schemas, matched_by_case, info.key_names)


def _read_settings(session: Any) -> dict[str, str]:
    """READ_SETTINGS but those the session sets itself."""
    return {k: v for k, v in READ_SETTINGS.items() if session.conf.get(k, None) is None}


def _skipped_columns(info: TableInfo, skipped: Mapping[str, str]) -> dict[str, str]:
    """Why each column left out of the read, or described only in part, is so."""
    reasons = dict(skipped)
    for column in info.columns:
        if column.name in skipped:
            continue
        for kind in ("array", "map"):
            if column.type.startswith(f"{kind}<"):
                reasons[column.name] = (
                    f"{kind} column: its counts and nulls only, its elements are not described"
                )
    return reasons


def _reader(
    spark: Any,
    info: TableInfo,
    partitions: list[ListedPartition],
    every: bool,
    columns: list[Column],
) -> Any:
    """The DataFrame over the given partitions' files (listed here, once), read with the
    `columns` given (collectors.file_schemas), not a schema Spark infers."""
    reader = spark.read.format(info.format)
    if columns:
        reader = reader.schema(spark_ddl(columns))
    with session_settings(spark, listing_settings(spark)):
        if info.partition_keys and not every:
            return reader.option("basePath", info.location).load([p.location for p in partitions])
        return reader.load(info.location)  # every partition: one listing of the table


def _scan(
    frame: Any,
    info: TableInfo,
    partitions: int,
    *,
    rate: float,
    sink: ProgressSink | None = None,
    method: str | None = None,
    received: Callable[[tuple[KeyValue, ...], PartitionPiece], None] | None = None,
    skipped: Mapping[str, str] | None = None,
    absent: Mapping[tuple[KeyValue, ...], AbstractSet[str]] | None = None,
    completed: Callable[[tuple[KeyValue, ...], ScannedPartition], ScannedPartition] | None = None,
    forced: Sequence[ForcedKeys] = (),
    encode: bool = True,
) -> dict[tuple[KeyValue, ...], ScannedPartition]:
    """ONE scan of the frame of the partitions to scan (`partitions` of them), grouped by
    the partition keys, drawing each partition's row sample at `rate` on the way: the
    one-pass JVM scan or Spark's aggregates (collectors.jvm_scan.scan_method). `received`
    is handed each partition's statistics as they arrive. Columns `skipped` are not read;
    the columns `absent` from a partition's files are recorded as absent there; `completed`
    turns what was scanned of a partition into its statistics (an Iceberg partition's added
    files merged with its stored statistics); a row of a `forced` key is sampled whatever
    its draw (collectors.forced_keys)."""
    plans = plan_columns(scan_columns(info, skipped or {}), theta_columns(info))
    if source_of(info.properties) is not None:
        plans = with_iceberg_sketches(plans)  # what its statistics file publishes
    # sized by the table's partitions, not this run's: every partition's alike
    table_partitions = max(info.partition_count, partitions)
    theta_lg_k, kll_k = partition_theta_lg_k(table_partitions), partition_kll_k(table_partitions)
    records: Iterator[Mapping[str, Any]]  # generators: they run in the settings below
    sizes = (theta_lg_k, kll_k)
    if scan_method(frame.sparkSession, plans, method) == "jvm":
        keys = [k.name for k in info.partition_keys]
        least = sparse_theta_lg_k(table_partitions)
        aggregated = jvm_scan(
            frame, keys, plans, rate, SAMPLE_SEED, partitions, *sizes, forced, theta_least=least
        )
        records = arrow_records(aggregated)  # scalars and sketches' bytes: as Arrow
    else:
        aggregated = aggregate(frame, info.key_names, plans, rate, *sizes, forced)  # nested
        records = (r.asDict() for r in driver_rows(aggregated))
    marked = forcing(plans, rate, forced)
    result: dict[tuple[KeyValue, ...], ScannedPartition] = {}
    with session_settings(frame.sparkSession, SCAN_SETTINGS):
        for row in records:
            values = tuple(
                None if row[k.name] is None else k.type.parse(str(row[k.name]))
                for k in info.partition_keys
            )
            rows, lacking = int(row["__rows"]), (absent or {}).get(values, ())
            columns = [
                r.as_absent(rows) if r.name in lacking else r for r in column_records(row, plans)
            ]
            got = ScannedPartition(rows, columns, sample_record(row, plans, marked, encode))
            if completed is not None:
                got = completed(values, got)
            result[values] = got
            if received is not None:
                received(values, got.piece())
            if sink is not None and (len(result) % 100 == 0 or len(result) == partitions):
                sink.update("receive", len(result), partitions)
    return result


def scan_columns(
    info: TableInfo, skipped: Mapping[str, str]
) -> list[tuple[str, str, tuple[str, ...]]]:
    """The columns a scan describes (TableInfo.described_paths), with the field path each
    is read from, but those of a skipped column."""
    return [
        (name, type_name, path)
        for name, (type_name, path) in info.described_paths().items()
        if path[0] not in skipped
    ]


def theta_columns(info: TableInfo) -> list[str] | None:
    """The table's `theta_columns` property (comma-separated, any case), as the columns are
    spelled; None for the default."""
    configured = info.properties.get(THETA_COLUMNS)
    if configured is None:
        return None
    names = [n.strip() for n in str(configured).split(",") if n.strip()]
    try:
        return [info.resolve_column(name) for name in names]
    except UnknownColumn as error:
        raise UnknownColumn(f"table property {THETA_COLUMNS} of {info.name}: {error}") from None


def _partition_row(
    table_id: int,
    run_id: int,
    partition: ListedPartition,
    piece: PartitionPiece,
    held: bool = False,
) -> dict[str, Any]:
    """The partition's partition_stats row; `held`: without the sample's bytes, which the
    block of HOLDING_LEVEL built over it is to hold (metastore.statistics.partition_samples;
    `_write` restores them where it does not)."""
    files, size, modified = partition.fingerprint
    return {
        "table_id": table_id,
        "partition_id": partition.id,
        "row_count": piece.rows,
        "file_count": files,
        "total_bytes": size,
        "modified_ns": modified,
        "run_id": run_id,
        "sample_size": piece.sample[0] if piece.sample else None,
        "sample": piece.sample[1] if piece.sample and not held else None,
    }


def _column_rows(table_id: int, pid: int, piece: PartitionPiece) -> list[dict[str, Any]]:
    """The partition's column_stats rows."""
    return [
        {
            "table_id": table_id,
            "partition_id": pid,
            "column_name": r.name,
            **r.figures(),
            "absent": r.absent,
            "iceberg_theta": r.iceberg_theta,
        }
        for r in piece.records
    ]


def _write(
    conn: Connection,
    info: TableInfo,
    run_id: int,
    scanned: list[ListedPartition],
    removed: list[int],
    rows_by_values: dict[tuple[KeyValue, ...], ScannedPartition],
    report: CollectionReport,
    built_ahead: Mapping[tuple[int, int], BuiltBlock],
    streamed: AbstractSet[int] | None = None,
    added: AbstractSet[int] = frozenset(),
    held: bool = False,
) -> None:
    """The collection's write; `streamed`: the partitions whose rows a StreamedWrite has
    put in this transaction, after dropping the old statistics of all (none to drop);
    `added`: the scanned partitions that had no statistics (no block merges them yet);
    `held`: partitions' rows written without their samples' bytes, for their blocks of
    HOLDING_LEVEL to hold (those it builds that cannot get theirs back)."""
    if streamed is None:
        forget_statistics(conn, info.id, [p.id for p in scanned] + removed, added)
    partition_rows, column_rows = [], []
    fresh: dict[int, PartitionPiece] = {}
    for partition in scanned:
        got = rows_by_values.get(partition.values, ScannedPartition(0, [], None))
        piece = fresh[partition.id] = got.piece()
        if streamed is not None and partition.id in streamed:
            continue
        partition_rows.append(_partition_row(info.id, run_id, partition, piece, held))
        column_rows += _column_rows(info.id, partition.id, piece)
    bulk_insert(conn, PartitionStats, partition_rows)
    bulk_insert(conn, ColumnStats, column_rows)
    # the pre-merged blocks over what changed, and any missing (metastore.statistics.rollups)
    holding: set[int] = set()
    types = {c.name: c.type for c in info.columns}
    refresh_blocks(conn, info.id, types, fresh, built_ahead, added, holding)
    if held:
        span = FANOUT**HOLDING_LEVEL
        restore(
            conn,
            info.id,
            {
                pid: stored_sample(piece)
                for pid, piece in fresh.items()
                if piece.sample and pid // span not in holding
            },
        )
    runs.succeed(conn, run_id, report)
