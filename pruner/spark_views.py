"""Registered tables as Spark DataFrames and temporary views, and queries rewritten onto
those views: what pruning runs on.

A table's frame reads its directory (or only the given partition directories) with the
partition keys typed as the metastore types them (Spark's own inference is switched off
while the files are listed, so `n=01` stays the metastore's 1 and strings stay strings).
One read of a table (a table name under one alias) may be pinned to a view of its own, such
as the pruned partitions of a big table, while the table's other reads keep the whole table.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlglot import exp

from collectors.file_schemas import case_sensitive, read_layout, spark_ddl
from metastore.catalog.tables import TableInfo
from optimizer.sql_to_plan import parse, referenced_tables

INFERENCE = "spark.sql.sources.partitionColumnTypeInference.enabled"


Read = tuple[str, str]  # (table name, alias) of one table reference of a query


def view_name(table: str) -> str:
    """The temporary view a registered table is read through (`db.t` -> `statlas_db__t`)."""
    return "statlas_" + table.replace(".", "__")


def pinned_view_name(table: str) -> str:
    """The temporary view one read of a table is pinned to (`statlas_pinned_db__t`)."""
    return "statlas_pinned_" + table.replace(".", "__")


@contextmanager
def _no_type_inference(spark: Any) -> Iterator[None]:
    before = spark.conf.get(INFERENCE)
    spark.conf.set(INFERENCE, "false")
    try:
        yield
    finally:
        spark.conf.set(INFERENCE, before)


def table_frame(spark: Any, info: TableInfo, locations: Sequence[str] | None = None) -> Any:
    """The table as a DataFrame; with `locations`, only those partition directories (none:
    an empty frame of the table's schema)."""
    from pyspark.sql import functions as F

    reader = spark.read.format(info.format)
    readable = read_layout(info.columns, None, case_sensitive(spark)).readable()
    if readable:  # the table's columns, as collected: partitions' schemas may differ
        reader = reader.schema(spark_ddl(readable))
    if info.partition_keys:
        reader = reader.option("basePath", info.location)
    with _no_type_inference(spark):
        if locations is None or not info.partition_keys:
            frame = reader.load(info.location)
        elif locations:
            frame = reader.load(list(locations))
        else:
            frame = reader.load(info.location).where(F.lit(False))
    for key in info.partition_keys:
        frame = frame.withColumn(key.name, F.col(f"`{key.name}`").cast(str(key.type)))
    return frame


def register_views(
    spark: Any, tables: Mapping[str, TableInfo], frames: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """A temporary view per table (`frames` replaces some tables' frames); name -> view."""
    views = {}
    for name, info in tables.items():
        frame = (frames or {}).get(name)
        if frame is None:
            frame = table_frame(spark, info)
        frame.createOrReplaceTempView(view_name(name))
        views[name] = view_name(name)
    return views


def reads(sql: str, dialect: str = "spark") -> list[Read]:
    """(table, alias) of every reference the query makes to a catalog table, in order (CTE
    names and the relations of join hints excluded; the alias is the table's name when the
    query gives none)."""
    return [(name, alias) for _, name, alias in _references(parse(sql, dialect))]


def rewrite_onto_views(
    sql: str,
    views: Mapping[str, str],
    dialect: str = "spark",
    pinned: Mapping[Read, str] | None = None,
) -> str:
    """The query with every registered table it reads replaced by its view (aliases kept,
    so qualified columns still resolve); a read in `pinned` by the view given there."""
    statement = parse(sql, dialect)
    for table, name, alias in _references(statement):
        view = (pinned or {}).get((name, alias), views.get(name))
        if view is None:
            continue
        replacement = exp.to_table(view)
        replacement.set("alias", exp.TableAlias(this=exp.to_identifier(table.alias or table.name)))
        if table.args.get("joins"):  # a parenthesised join `(a JOIN b ...)` hangs on `a`
            replacement.set("joins", table.args["joins"])
        table.replace(replacement)
    return statement.sql(dialect="spark")


def _references(statement: exp.Expr) -> list[tuple[exp.Table, str, str]]:
    """The catalog tables' references of a statement: the node, the table's name, its alias
    (lower case)."""
    known = set(referenced_tables(statement))
    found = []
    for table in statement.find_all(exp.Table):
        name = ".".join(p.name for p in table.parts).lower()
        if name in known and not table.find_ancestor(exp.Hint):
            found.append((table, name, (table.alias or table.name).lower()))
    return found
