"""The collection scan's input for an Iceberg table: the data files of the partitions to
collect, read by Spark as Parquet with the table's columns, each row given its partition's
key values by its file (Spark's `_metadata.file_path`, joined with the snapshot's list of
files): the same frame a directory table's partition discovery gives."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from collectors.file_schemas import spark_ddl
from collectors.iceberg.listing import DataFile, local_path
from metastore.catalog.discovery import Column

_FILE = "__statlas_file"


def iceberg_frame(
    spark: Any,
    columns: Sequence[Column],
    keys: Sequence[str],
    partitions: Iterable[tuple[tuple[str | None, ...], Sequence[DataFile]]],
) -> Any:
    """A frame of `columns` and the partition `keys` over the files of `partitions`, each a
    partition's raw key values (collectors.iceberg.listing) with its data files."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    by_file: dict[str, tuple[str | None, ...]] = {}
    for values, files in partitions:
        for data_file in files:
            by_file[local_path(data_file.path)] = values
    reader = spark.read.format("parquet")
    if columns:
        reader = reader.schema(spark_ddl(columns))
    frame = reader.load(sorted(by_file)) if by_file else None
    if frame is None:
        return spark.createDataFrame(
            [], spark_ddl([*columns, *(Column(k, "string") for k in keys)])
        )
    if not keys:
        return frame
    files = spark.createDataFrame(
        [(path, *values) for path, values in by_file.items()],
        T.StructType(
            [T.StructField(_FILE, T.StringType(), False)]
            + [T.StructField(k, T.StringType(), True) for k in keys]
        ),
    )
    with_file = frame.select(
        "*", F.regexp_replace(F.col("_metadata.file_path"), "^file:/+", "/").alias(_FILE)
    )
    joined = with_file.join(F.broadcast(files), _FILE, "inner")
    return joined.select(*[F.col(f"`{c.name}`") for c in columns], *[F.col(f"`{k}`") for k in keys])
