"""`statlas table register|list|show|drop`: their options and commands (as
statlas.daemon_commands for the daemon's). Commands import what they run when they run."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from metastore import Metastore
from metastore.catalog.tables import (
    BucketSpec,
    RegistrationReport,
    TableInfo,
    parse_partition_types,
)
from metastore.errors import InvalidValue, StatlasError
from statlas.exit_codes import exit_code
from statlas.options import add_spark_options, key_value_pair, print_json, spark_conf
from statlas.settings import Settings


def add_table_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """`statlas table register|list|show|drop`."""
    table = commands.add_parser("table", help="register, list, show and drop tables")
    tables = table.add_subparsers(title="table commands", metavar="COMMAND")
    register = tables.add_parser(
        "register",
        parents=[common],
        help="register a dataset directory (or refresh its partitions)",
        description="Discover key=value partitions under --path, infer key types, read the "
        "schema, and record every partition with its fingerprint. Run again to "
        "add new partitions and remove vanished ones.",
    )
    register.add_argument(
        "name",
        nargs="?",
        help="the statlas table (with --spark-table: default the Spark table's name, "
        "without a `default.` database)",
    )
    source = register.add_mutually_exclusive_group(required=True)
    source.add_argument("--path", help="dataset directory or URI")
    source.add_argument(
        "--spark-table",
        nargs="+",
        metavar="DB.TABLE",
        help="table(s) of the Spark catalog (location, format and partition keys from the "
        "catalog); several share one Spark session, each registered under its own name",
    )
    source.add_argument(
        "--iceberg-table",
        metavar="NS.TABLE",
        help="an Iceberg table: its current snapshot's partitions, typed by the partition "
        "spec's transforms (docs/iceberg.md); from --iceberg-catalog, else from statlas's own "
        "Hive Metastore API",
    )
    register.add_argument(
        "--iceberg-catalog",
        metavar="URI",
        help="the Iceberg table's catalog: a SQLAlchemy URL (pyiceberg's SQL catalog) or "
        "thrift://HOST:PORT (a Hive Metastore)",
    )
    register.add_argument(
        "--iceberg-catalog-name",
        metavar="NAME",
        help="the SQL catalog's name (default: default)",
    )
    register.add_argument(
        "--format",
        choices=["parquet", "orc"],
        help="data format (default: from the file names, else parquet)",
    )
    register.add_argument(
        "--partition-types",
        metavar="KEY:TYPE,...",
        help="key types instead of inferred ones: int, bigint, "
        "decimal(p,s), date, timestamp, string, boolean",
    )
    register.add_argument("--bucket-by", metavar="COL,...", help="bucketing columns")
    register.add_argument("--buckets", type=int, metavar="N", help="number of buckets")
    register.add_argument(
        "--sort-by", metavar="COL[:asc|desc],...", help="sort columns within buckets"
    )
    register.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a table property (repeatable)",
    )
    add_spark_options(register)
    register.add_argument("--json", action="store_true", help="print the report as JSON")
    register.set_defaults(handler=cmd_table_register)

    listing = tables.add_parser("list", parents=[common], help="list registered tables")
    listing.add_argument("--json", action="store_true")
    listing.add_argument(
        "--summary",
        action="store_true",
        help="add each table's rows, bytes, files, collected and stale partitions and runs",
    )
    listing.set_defaults(handler=cmd_table_list)
    show = tables.add_parser("show", parents=[common], help="describe a table")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=cmd_table_show)
    drop = tables.add_parser("drop", parents=[common], help="drop a table and its partitions")
    drop.add_argument("name")
    drop.set_defaults(handler=cmd_table_drop)


def _metastore(settings: Settings) -> Metastore:
    return Metastore(settings.db_url)


def _bucket_spec(args: argparse.Namespace) -> BucketSpec | None:
    if args.bucket_by is None and args.buckets is None and args.sort_by is None:
        return None
    if not args.bucket_by or not args.buckets:
        raise InvalidValue("bucketing needs both --bucket-by and --buckets")
    sort: list[tuple[str, str]] = []
    for item in (args.sort_by or "").split(","):
        if not item.strip():
            continue
        column, _, direction = item.strip().partition(":")
        direction = (direction or "asc").lower()
        if direction not in ("asc", "desc"):
            raise InvalidValue(f"--sort-by direction must be asc or desc, got {direction!r}")
        sort.append((column.lower(), direction))
    columns = tuple(c.strip().lower() for c in args.bucket_by.split(",") if c.strip())
    return BucketSpec(args.buckets, columns, tuple(sort))


def cmd_table_register(args: argparse.Namespace, settings: Settings) -> int:
    properties = dict(key_value_pair(p, "--property") for p in args.property) or None
    if args.spark_table:
        return _register_spark_tables(args, settings, properties)
    if args.iceberg_table:
        return _register_iceberg_table(args, settings, properties)
    if args.iceberg_catalog or args.iceberg_catalog_name:
        raise InvalidValue("--iceberg-catalog goes with --iceberg-table")
    if not args.name:
        raise InvalidValue("table register wants a NAME with --path")
    report = _metastore(settings).register_table(
        args.name,
        args.path,
        args.format,
        parse_partition_types(args.partition_types),
        _bucket_spec(args),
        properties,
    )
    _print_registration(report, args.json)
    return 0


def _print_registration(report: RegistrationReport, as_json: bool) -> None:
    if as_json:
        print_json(report.as_json())
        return
    keys = ", ".join(f"{k.name}:{k.type}" for k in report.partition_keys) or "none"
    verb = "registered" if report.created else "refreshed"
    print(
        f"{verb} {report.table}: {report.partitions} partitions ({report.added} added, "
        f"{report.removed} removed, {report.changed} changed), keys {keys}"
        + (", schema changed" if report.schema_changed else ""),
        flush=True,
    )


def _register_iceberg_table(
    args: argparse.Namespace, settings: Settings, properties: dict[str, str] | None
) -> int:
    from collectors.iceberg.register import register_iceberg_table
    from collectors.iceberg.source import DEFAULT_CATALOG_NAME, IcebergSource

    for option in ("format", "partition_types", "bucket_by", "buckets", "sort_by"):
        if getattr(args, option):
            flag = "--" + option.replace("_", "-")
            raise InvalidValue(f"{flag} comes from the Iceberg table with --iceberg-table")
    if not args.name:
        raise InvalidValue("table register wants a NAME with --iceberg-table")
    source = IcebergSource(
        args.iceberg_table, args.iceberg_catalog, args.iceberg_catalog_name or DEFAULT_CATALOG_NAME
    )
    report = register_iceberg_table(_metastore(settings).ready(), args.name, source, properties)
    _print_registration(report, args.json)
    return 0


def _register_spark_tables(
    args: argparse.Namespace, settings: Settings, properties: dict[str, str] | None
) -> int:
    """Each --spark-table registered in turn on one Spark session; a failure is reported
    and the next one registered."""
    from collectors.spark_session import spark_session
    from collectors.spark_tables import register_spark_table, statlas_name

    for option in ("format", "partition_types", "bucket_by", "buckets", "sort_by"):
        if getattr(args, option):
            flag = "--" + option.replace("_", "-")
            raise InvalidValue(f"{flag} comes from the Spark catalog with --spark-table")
    identifiers = list(dict.fromkeys(args.spark_table))
    if args.name and len(identifiers) > 1:
        raise InvalidValue(
            "give no NAME with several --spark-table: each is registered under its Spark name"
        )
    engine = _metastore(settings).ready()
    spark = spark_session(args.master, spark_conf(args))
    failed: list[StatlasError] = []
    for identifier in identifiers:
        try:
            name = args.name or statlas_name(identifier)
            report = register_spark_table(engine, name, spark, identifier, properties)
        except StatlasError as error:
            failed.append(error)
            if args.json:
                print_json({"spark_table": identifier, "status": "failed", "error": str(error)})
            print(f"statlas: error: {error}", file=sys.stderr, flush=True)
            continue
        _print_registration(report, args.json)
    return max((exit_code(error) for error in failed), default=0)


def cmd_table_list(args: argparse.Namespace, settings: Settings) -> int:
    if args.summary:
        return _table_summaries(args, settings)
    tables = _metastore(settings).tables()
    if args.json:
        print_json([t.as_json() for t in tables])
        return 0
    for info in tables:
        keys = ",".join(info.key_names) or "-"
        print(
            f"{info.name}\t{info.format}\t{info.partition_count} partitions\tkeys {keys}\t"
            f"{info.location}"
        )
    return 0


def _table_summaries(args: argparse.Namespace, settings: Settings) -> int:
    from metastore.hive.summaries import summarised_tables

    summarised = summarised_tables(_metastore(settings).ready())
    if args.json:
        print_json([{**t.as_json(), "summary": s.as_json()} for t, s in summarised])
        return 0
    for info, summary in summarised:
        rows = "-" if summary.rows is None else f"{summary.rows:,}"
        last = summary.as_json()["last_collection"] or "never"
        print(
            f"{info.name}\t{summary.database}\t{info.partition_count} partitions\t"
            f"{summary.collected_partitions} collected\t{summary.stale_partitions} stale\t"
            f"rows {rows}\t{summary.bytes:,} bytes\t{summary.files} files\t"
            f"last collection {last} ({summary.last_run_status or 'no run'})"
        )
    return 0


def cmd_table_show(args: argparse.Namespace, settings: Settings) -> int:
    info = _metastore(settings).table(args.name)
    if args.json:
        print_json(info.as_json())
        return 0
    print(_describe(info))
    return 0


def _describe(info: TableInfo) -> str:
    lines = [
        f"Table:      {info.name}",
        f"Location:   {info.location}",
        f"Format:     {info.format}",
        f"Partitions: {info.partition_count}",
    ]
    width = max(
        [len(c.name) for c in info.columns] + [len(k.name) for k in info.partition_keys] + [4]
    )
    lines.append("Partition keys:" if info.partition_keys else "Partition keys: none")
    lines += [f"  {k.name:<{width}}  {k.type}" for k in info.partition_keys]
    lines.append("Columns:")
    lines += [
        f"  {c.name:<{width}}  {c.type}{'' if c.nullable else ' not null'}" for c in info.columns
    ]
    if info.bucketing:
        sort = ", ".join(f"{c} {d}" for c, d in info.bucketing.sort_columns)
        lines.append(
            f"Bucketing:  {info.bucketing.num_buckets} buckets by "
            f"{', '.join(info.bucketing.columns)}" + (f", sorted by {sort}" if sort else "")
        )
    for key, value in sorted(info.properties.items()):
        lines.append(f"Property:   {key}={value}")
    return "\n".join(lines)


def cmd_table_drop(args: argparse.Namespace, settings: Settings) -> int:
    count = _metastore(settings).drop_table(args.name)
    print(f"dropped {args.name.lower()} ({count} partitions)")
    return 0
