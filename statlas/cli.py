"""The `statlas` command line. Errors are one line on stderr and exit code 2 (3 when the
metastore cannot be reached).

Each command imports what it runs when it runs (the optimizer, Spark's client, the
statistics readers), so that a lookup does not load them: importing this module takes
about 0.5 s, with all of them about 1 s."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from metastore import Metastore, TupleList
from metastore.catalog.lookup import PartitionQuery, read_tuple_file, read_value_file
from metastore.catalog.tables import (
    list_tables,
)
from metastore.errors import InvalidLookup, InvalidValue, StatlasError
from statlas.daemon_commands import add_daemon_commands
from statlas.exit_codes import exit_code
from statlas.options import add_spark_options, key_value_pair, print_json, spark_conf
from statlas.settings import Settings
from statlas.table_commands import add_table_commands

if TYPE_CHECKING:
    from collectors.collect import CollectionReport


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # py4j logs a traceback when the JVM dies mid-call; the error is reported as one line
    logging.getLogger("py4j").setLevel(logging.CRITICAL)
    logging.getLogger().addHandler(logging.NullHandler())
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    try:
        settings = Settings.load(db_url=args.db)
        code: int = args.handler(args, settings)
        return code
    except StatlasError as error:
        print(f"statlas: error: {error}", file=sys.stderr)
        return exit_code(error)
    except KeyboardInterrupt:
        print("statlas: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def build_parser() -> argparse.ArgumentParser:
    db_help = "metastore database URL (default: $STATLAS_DB_URL, else sqlite:///statlas.db)"
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: a --db given before the command is not reset by the command's own default
    common.add_argument("--db", metavar="URL", default=argparse.SUPPRESS, help=db_help)
    parser = argparse.ArgumentParser(
        prog="statlas",
        description="Mergeable per-partition statistics and partition lookups for data lakes.",
    )
    parser.add_argument("--db", metavar="URL", default=None, help=db_help)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    db = commands.add_parser("db", help="manage the metastore schema").add_subparsers(
        title="db commands", metavar="COMMAND"
    )
    upgrade = db.add_parser("upgrade", parents=[common], help="create or upgrade the schema")
    upgrade.add_argument("--revision", default="head", help="target revision (default: head)")
    upgrade.set_defaults(handler=cmd_db_upgrade)
    db.add_parser("current", parents=[common], help="print the schema revision").set_defaults(
        handler=cmd_db_current
    )

    add_table_commands(commands, common)

    partitions = commands.add_parser(
        "partitions",
        parents=[common],
        help="look up partitions by key values",
        description="All partitions of NAME matching every condition given: per-key IN "
        "lists, exact multi-key tuples, and a --where expression on keys. "
        "__HIVE_DEFAULT_PARTITION__ (or null in a tuple) matches the default "
        "partition.",
    )
    partitions.add_argument("name")
    add_partition_filters(partitions)
    partitions.add_argument(
        "--offset",
        type=int,
        metavar="N",
        help="page the partitions ordered by key values: skip the first N (default 0)",
    )
    partitions.add_argument(
        "--limit",
        type=int,
        metavar="M",
        help="page the partitions ordered by key values: at most M of them (1-1000, "
        "default 50), with each one's files, bytes, rows and staleness",
    )
    partitions.add_argument("--json", action="store_true", help="print JSON")
    partitions.set_defaults(handler=cmd_partitions)

    collect = commands.add_parser(
        "collect",
        parents=[common],
        help="collect statistics with Spark (incremental)",
        description="Lists each table again where it was registered from (its directory, "
        "or the Spark catalog table it came from: new partitions added, vanished ones "
        "removed with their statistics), then one Spark scan computes every statistic of "
        "every new or changed partition; each table's result is written in one "
        "transaction. Several tables share one Spark session; a failed table does not stop "
        "the others, and the exit code is non-zero if any failed.",
    )
    collect.add_argument("names", nargs="*", metavar="NAME", help="the tables to collect")
    collect.add_argument("--all", action="store_true", help="every registered table")
    collect.add_argument("--full", action="store_true", help="rescan every partition")
    collect.add_argument(
        "--no-refresh",
        dest="refresh",
        action="store_false",
        help="do not list the tables again: scan what the metastore already lists",
    )
    add_spark_options(collect)
    collect.add_argument(
        "--json", action="store_true", help="print one JSON object per table, a line each"
    )
    collect.set_defaults(handler=cmd_collect)

    stats = commands.add_parser(
        "stats",
        parents=[common],
        help="statistics of a table or of some of its partitions",
        description="Rolls up the collected statistics of the partitions selected (all by "
        "default) by merging their sketches.",
    )
    stats.add_argument("name")
    add_partition_filters(stats)
    stats.add_argument("--column", action="append", default=[], help="only these columns")
    stats.add_argument("--buckets", type=int, default=64, help="histogram buckets (64)")
    stats.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw the histograms of the one --column given as a PNG",
    )
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(handler=cmd_stats)

    estimate = commands.add_parser(
        "estimate",
        parents=[common],
        help="estimate a query's rows, node by node",
        description="Plans the query against the registered tables and estimates every "
        "node's rows, row size and per-column statistics from the collected statistics.",
    )
    estimate.add_argument("--sql", required=True, help="the query (a SELECT)")
    estimate.add_argument("--dialect", choices=["spark", "hive"], default="spark")
    estimate.add_argument(
        "--level",
        choices=["basic", "histogram", "sketch", "sketch-independent"],
        default="sketch",
        help="basic: the Hive CBO proposal's formulas; histogram: + MCVs and histograms; "
        "sketch (default): + Theta key overlap, heavy hitters, row samples and join keys' "
        "degrees; sketch-independent: sketch with join fan-outs taken as independent",
    )
    estimate.add_argument("--json", action="store_true", help="print JSON")
    estimate.set_defaults(handler=cmd_estimate)

    explain = commands.add_parser(
        "explain",
        parents=[common],
        help="the cost-based physical plan of a query",
        description="Orders the query's joins, chooses each join's algorithm (common, map, "
        "bucket_map, smb, skew), places the shuffles, removes the unnecessary ones "
        "(correlation optimizer) and prints the plan with its costs, jobs, shuffles and "
        "table scans before and after; --emit spark prints the query as Spark SQL with the "
        "chosen join order and hints.",
    )
    explain.add_argument("--sql", required=True, help="the query (a SELECT)")
    explain.add_argument("--dialect", choices=["spark", "hive"], default="spark")
    explain.add_argument("--json", action="store_true", help="print JSON")
    explain.add_argument(
        "--level",
        choices=["basic", "histogram", "sketch", "sketch-independent"],
        default="sketch",
        help="the estimates planned with, as `statlas estimate --level` (default: sketch)",
    )
    explain.add_argument(
        "--emit", choices=["spark"], help="print the query as Spark SQL with join hints"
    )
    explain.add_argument(
        "--config",
        nargs="+",
        action="extend",
        metavar="KEY=VALUE",
        help="cost variables and thresholds: CPUc, NEt, Lw, Lr, Hw, Hr, map_join_threshold, "
        "split_bytes, bytes_per_reducer, max_reducers, skew_share, big_table_policy "
        "(avg_partition_size|leftmost|table_size), greedy_above, bushy (0|1), common_hint "
        "(none|merge|shuffle_hash)",
    )
    explain.set_defaults(handler=cmd_explain)

    prune = commands.add_parser(
        "prune",
        parents=[common],
        help="map-join partition pruning of a query's big table",
        description="Finds the query's map joins whose small sides can prune the big "
        "table's partitions, collects the small sides' key values with Spark and asks the "
        "metastore which partitions can match.",
    )
    prune.add_argument("--sql", required=True, help="the query (a SELECT)")
    prune.add_argument("--dialect", choices=["spark", "hive"], default="spark")
    prune.add_argument(
        "--run", action="store_true", help="also run the pruned query on Spark (adds rows)"
    )
    prune.add_argument(
        "--map-join-threshold",
        type=int,
        default=None,
        metavar="BYTES",
        help="explain's map_join_threshold: the largest estimated small side of a map join "
        "(default 10,000,000)",
    )
    prune.add_argument(
        "--max-values",
        type=int,
        default=None,
        metavar="N",
        help="distinct values per key before falling back to a [min, max] range (default 10,000)",
    )
    add_spark_options(prune)
    prune.add_argument("--json", action="store_true", help="print JSON")
    prune.set_defaults(handler=cmd_prune)
    add_daemon_commands(commands, common)
    return parser


def add_partition_filters(parser: argparse.ArgumentParser) -> None:
    """The options that select partitions (`partitions` and `stats` share them)."""
    parser.add_argument(
        "--in",
        dest="in_lists",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="values of one key (repeatable)",
    )
    parser.add_argument(
        "--in-file",
        action="append",
        default=[],
        metavar="KEY=PATH",
        help="values of one key, one per line ('-' for stdin)",
    )
    parser.add_argument(
        "--tuples",
        action="append",
        default=[],
        metavar="KEY1,KEY2=PATH",
        help="exact (KEY1, KEY2) IN (...) rows, one JSON array per line",
    )
    parser.add_argument(
        "--where", metavar="EXPR", help="SQL condition on keys, e.g. \"dt >= '2024-01-01'\""
    )


def _metastore(settings: Settings) -> Metastore:
    return Metastore(settings.db_url)


def cmd_db_upgrade(args: argparse.Namespace, settings: Settings) -> int:
    revision = _metastore(settings).upgrade(args.revision)
    print(f"metastore schema at {revision or 'base'}")
    return 0


def cmd_db_current(args: argparse.Namespace, settings: Settings) -> int:
    print(_metastore(settings).current_revision() or "none")
    return 0


def partition_query(args: argparse.Namespace) -> PartitionQuery:
    in_lists: list[tuple[str, Sequence[Any]]] = []
    for item in args.in_lists:
        key, values = key_value_pair(item, "--in")
        in_lists.append((key, values.split(",") if values else []))
    for item in args.in_file:
        key, path = key_value_pair(item, "--in-file")
        values_from_file = read_value_file(path)
        if not values_from_file:
            raise InvalidLookup(f"{path} holds no values for key {key}")
        in_lists.append((key, values_from_file))
    tuples = []
    for item in args.tuples:
        keys, path = key_value_pair(item, "--tuples")
        rows = read_tuple_file(path)
        if not rows:
            raise InvalidLookup(f"{path} holds no tuples")
        tuples.append(TupleList(tuple(k.strip() for k in keys.split(",")), rows))
    return PartitionQuery(tuple(in_lists), tuple(tuples), args.where)


def _partition_page(args: argparse.Namespace, settings: Settings) -> int:
    from metastore.catalog.pages import DEFAULT_PAGE, check_page, partition_page

    offset = 0 if args.offset is None else args.offset
    limit = DEFAULT_PAGE if args.limit is None else args.limit
    check_page(offset, limit)  # before any query
    query = partition_query(args)
    page = partition_page(_metastore(settings).ready(), args.name, query, offset, limit)
    if args.json:
        print_json(page.as_json())
        return 0
    shown = f"{offset + 1}-{offset + len(page.partitions)}" if page.partitions else "none"
    print(f"{page.table}: partitions {shown} of {page.total}")
    header = ("partition", "files", "bytes", "rows", "modified", "collected", "stale")
    lines = [header]
    for p in page.partitions:
        data = p.as_json()
        lines.append(
            (
                p.name or "(unpartitioned)",
                str(p.files),
                f"{p.bytes:,}",
                "-" if p.rows is None else f"{p.rows:,}",
                data["modified"],
                data["collected"] or "-",
                "yes" if p.stale else "no",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip())
    return 0


def cmd_partitions(args: argparse.Namespace, settings: Settings) -> int:
    if args.offset is not None or args.limit is not None:
        return _partition_page(args, settings)
    result = _metastore(settings).lookup(args.name, partition_query(args))
    if args.json:
        print_json(result.as_json())
        return 0
    out = sys.stdout
    for name in result.names():
        out.write((name or "(unpartitioned)") + "\n")
    return 0


def cmd_collect(args: argparse.Namespace, settings: Settings) -> int:
    from collectors.collect import collect_tables
    from collectors.progress import console_progress
    from collectors.spark_session import LazySession

    if args.all == bool(args.names):
        raise InvalidValue("name the tables to collect, or give --all")
    engine = _metastore(settings).ready()
    names = [t.name for t in list_tables(engine)] if args.all else args.names
    failed: list[StatlasError] = []
    partial = False  # a table's partitions not all read: exit 1
    outcomes = collect_tables(
        engine,
        names,
        spark=LazySession(args.master, spark_conf(args)),
        progress=lambda table: console_progress(f"collect {table}"),
        full=args.full,
        refresh=args.refresh,
    )
    for outcome in outcomes:
        if args.json:
            print_json(outcome.as_json())
        elif outcome.report is not None:
            print(_collected_line(outcome.report), flush=True)
            for column, reason in outcome.report.columns_skipped.items():
                print(f"  column {column}: {reason}")
            published = outcome.report.published
            if published is not None:
                print(
                    f"  published the NDV of {len(published['ndv'])} columns for Iceberg snapshot "
                    f"{published['snapshot_id']}: {published['statistics_path']}"
                )
        failures = outcome.report.partitions_failed if outcome.report is not None else {}
        for partition, reason in failures.items():
            partial = True
            print(
                f"statlas: warning: {outcome.table} partition {partition} not collected: {reason}",
                file=sys.stderr,
                flush=True,
            )
        if outcome.error is not None:
            failed.append(outcome.error)
            print(f"statlas: error: {outcome.error}", file=sys.stderr, flush=True)
    return max((exit_code(error) for error in failed), default=int(partial))


def _collected_line(report: CollectionReport) -> str:
    from collectors.forced_keys import forced_count

    added = f", {report.partitions_added} new" if report.partitions_added else ""
    if report.partitions_scanned == 0:
        return (
            f"{report.table}: nothing to scan ({report.partitions_skipped} partitions "
            f"unchanged, {report.partitions_removed} removed)"
        )
    forced = (
        f"; its sample kept the rows of {forced_count(report.forced)} values"
        f" heavy elsewhere ({', '.join(keys.column for keys in report.forced)})"
        if report.forced
        else ""
    )
    return (
        f"{report.table}: scanned {report.partitions_scanned} partitions{added} "
        f"({report.rows:,} rows, {report.bytes:,} bytes) in {report.seconds:.1f} s; "
        f"{report.partitions_skipped} unchanged, {report.partitions_removed} removed{forced}"
    )


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    from metastore.hive.catalog import served_statistics_source
    from metastore.statistics.summaries import table_statistics
    from statlas.charts import bar_chart, plot_histograms

    if args.buckets < 1:
        raise InvalidValue("--buckets must be at least 1")
    if args.plot and len(args.column) != 1:
        raise InvalidValue("--plot draws one column: give exactly one --column")
    ms = _metastore(settings)
    summary = table_statistics(
        ms.ready(), args.name, partition_query(args), args.column or None, args.buckets
    )
    if args.plot:
        [(name, column)] = summary.columns.items()
        data = column.as_json()
        plot_histograms(
            args.plot,
            f"{summary.table}.{name}: {summary.row_count:,} rows, {summary.partitions} partitions",
            name,
            data["equi_depth"],
            data["equi_width"],
        )
    served = served_statistics_source(ms.ready(), args.name)
    if args.json:
        print_json({**summary.as_json(), "served_to_engines": served})
        return 0
    print(f"{summary.table}: {summary.partitions} partitions, {summary.row_count:,} rows")
    print(f"statistics served to engines (Hive Metastore API): {served}")
    for name, column in summary.columns.items():
        data = column.as_json()
        ndv = "-" if data["ndv"] is None else f"{data['ndv']:,}"
        print(
            f"\n{name} {column.type}: nulls {column.null_count:,}, ndv {ndv}, "
            f"min {data['min']}, max {data['max']}"
            + (f", avg length {column.avg_len:.1f}" if column.avg_len is not None else "")
            + (f", max length {column.max_len}" if column.max_len is not None else "")
        )
        if not column.collected_partitions and summary.partitions:
            print("  not collected (collect's report says why)")
        if column.absent_partitions:
            print(
                f"  nulls include every row of {column.absent_partitions:,} partition(s) whose "
                "files lack the column"
            )
        if data["mcv"]:
            common = ", ".join(f"{value} ({count:,})" for value, count in data["mcv"][:5])
            print(f"  most common: {common}")
        histogram = data["equi_width"] or data["uniform"]
        if histogram and histogram["counts"]:
            kind = "equi-width" if data["equi_width"] else "uniform (Hive)"
            print(f"  {kind} histogram:")
            for line in bar_chart(histogram):
                print(f"    {line}")
    if args.plot:
        print(f"\nplot written to {args.plot}")
    return 0


def cmd_estimate(args: argparse.Namespace, settings: Settings) -> int:
    from optimizer.estimate.api import estimated
    from optimizer.estimate.explain import estimate_json, estimate_text

    engine = _metastore(settings).ready()
    if args.json:
        print_json(estimated(engine, args.sql, estimate_json, args.level, args.dialect))
    else:
        print(estimated(engine, args.sql, estimate_text, args.level, args.dialect))
    return 0


def cmd_explain(args: argparse.Namespace, settings: Settings) -> int:
    from optimizer.cost.params import parse_settings
    from optimizer.physical.api import emit, explain_json, explain_text, plan_query

    config = parse_settings(args.config)
    plan = plan_query(
        _metastore(settings).ready(), args.sql, args.dialect, config, level=args.level
    )
    if args.emit:
        print(emit(plan))
    elif args.json:
        print_json(explain_json(plan))
    else:
        print(explain_text(plan))
    return 0


def cmd_prune(args: argparse.Namespace, settings: Settings) -> int:
    from optimizer.cost.params import CostParams
    from pruner.prune import MAX_VALUES, prune

    threshold = (
        args.map_join_threshold
        if args.map_join_threshold is not None
        else CostParams.map_join_threshold  # the one setting `statlas explain` plans with
    )
    max_values = args.max_values if args.max_values is not None else MAX_VALUES
    if threshold < 0:
        raise InvalidValue("--map-join-threshold must not be negative")
    if max_values < 1:
        raise InvalidValue("--max-values must be at least 1")
    report = prune(
        _metastore(settings).ready(),
        args.sql,
        master=args.master,
        spark_conf=spark_conf(args),
        dialect=args.dialect,
        threshold=threshold,
        max_values=max_values,
        run=args.run,
    )
    if args.json:
        print_json(report.as_json())
    else:
        print(report.as_text())  # not pruned: a line that says so, and each join's reason
    return 0


if __name__ == "__main__":
    sys.exit(main())
