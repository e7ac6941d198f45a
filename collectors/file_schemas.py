"""What a collection reads, decided from the files' own schemas before Spark reads them.

Every partition to scan is listed and each data file's footer read (pyarrow; in threads
from a remote store):
its columns as the file spells and types them. Files Spark skips are skipped here too
(hidden names such as `_SUCCESS` and `.crc`, and empty files, which Spark gives no split).
A file whose footer does not read (corrupt, truncated, a stray CSV among Parquet files)
fails its partition, as do files of one partition whose types cannot be widened to one
another; the other partitions are read. The partitions' schemas are merged into the
table's (metastore.catalog.schema_merge, matching names as `spark.sql.caseSensitive` says); a
partition that brings a type the table's cannot be widened to fails, with the column named.

Spark then reads the partitions with the merged schema given (no inference, and every
widening Spark's readers make); a column some partitions lack reads as NULL there, and the
collection records it as absent from those partitions (metastore.models.ColumnStats).
Columns Spark cannot read are left out of the read, each with its reason: two columns whose
names differ only by case when Spark matches names ignoring case, and types Spark has no
name for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from collectors.jvm_scan import SCALAR_TYPES
from metastore.catalog.column_names import case_clashes, fold, leaf_columns, split_top_level
from metastore.catalog.discovery import Column, is_hidden, read_schema
from metastore.catalog.schema_merge import merge_columns
from metastore.errors import RegistrationError

# footers of a remote store are read in parallel (latency-bound); local ones in one
# thread, faster than several held by the GIL (TPC-H lineitem's 2,526: 0.6 s, 1.1 s in 16)
REMOTE_FOOTER_THREADS = 16
# the type names Spark's DDL reads (and the nested types made of them)
_SPARK_SCALARS = (*SCALAR_TYPES, "void")


CASE_SENSITIVE = "spark.sql.caseSensitive"


def case_sensitive(session: Any) -> bool:
    """Whether the Spark session matches column names by case (spark.sql.caseSensitive)."""
    return str(session.conf.get(CASE_SENSITIVE, "false")).lower() == "true"


@dataclass(frozen=True)
class PartitionSchema:
    """One partition's columns merged over its files, or why it cannot be read."""

    columns: tuple[Column, ...] = ()
    error: str | None = None


@dataclass
class ReadLayout:
    """The merged schema a collection reads with, and what it decided per partition."""

    columns: list[Column]  # the table's columns with every readable partition's merged in
    failed: dict[int, str] = field(default_factory=dict)  # partition id -> why not read
    skipped: dict[str, str] = field(default_factory=dict)  # column -> why not described
    present: dict[int, set[str]] = field(default_factory=dict)  # partition -> its columns
    case_sensitive: bool = False

    def readable(self) -> list[Column]:
        """The columns Spark reads (the merged ones but the skipped)."""
        return [c for c in self.columns if c.name not in self.skipped]

    def absent(self, partition_id: int, described: Iterable[str]) -> set[str]:
        """The described columns (and struct leaves) partition `partition_id`'s files lack;
        none when its files were not read."""
        present = self.present.get(partition_id)
        if present is None:
            return set()
        return {name for name in described if self._key(name) not in present}

    def _key(self, name: str) -> str:
        return name if self.case_sensitive else fold(name)

    def note_present(self, partition_id: int, columns: Sequence[Column]) -> None:
        names = set()
        for column in columns:
            names.add(self._key(column.name))
            names.update(self._key(path) for path, _ in leaf_columns(column.name, column.type))
        self.present[partition_id] = names


def partition_schemas(
    locations: Mapping[int, str], data_format: str, case_sensitive: bool
) -> dict[int, PartitionSchema] | None:
    """Each partition's schema (by id, from its location's files); None when the files'
    filesystem cannot be opened here (the read then trusts the table's columns)."""
    from pyarrow import fs as pafs

    if not locations:
        return {}
    first = next(iter(locations.values()))
    try:
        filesystem = (
            pafs.FileSystem.from_uri(first)[0] if "://" in first else pafs.LocalFileSystem()
        )
    except (OSError, ValueError):
        return None

    def path_of(location: str) -> str:  # a URI's path as its filesystem takes it
        return location.split("://", 1)[1] if "://" in location else location

    def one(location: str) -> PartitionSchema:
        return _partition_schema(filesystem, path_of(location), data_format, case_sensitive)

    if isinstance(filesystem, pafs.LocalFileSystem):
        return {pid: one(location) for pid, location in locations.items()}
    with ThreadPoolExecutor(REMOTE_FOOTER_THREADS) as pool:
        found = pool.map(one, locations.values())
        return dict(zip(locations, found, strict=True))


def _partition_schema(
    filesystem: Any, directory: str, data_format: str, case_sensitive: bool
) -> PartitionSchema:
    from pyarrow import fs as pafs

    try:
        infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=False))
    except OSError as error:
        return PartitionSchema(error=f"cannot list {directory}: {' '.join(str(error).split())}")
    merged: list[Column] = []
    for info in sorted(infos, key=lambda i: i.path):
        name = info.path.rsplit("/", 1)[-1]
        if info.type != pafs.FileType.File or is_hidden(name) or not info.size:
            continue  # as Spark: hidden files skipped, an empty file gives no split
        try:
            columns = read_schema(filesystem, info.path, data_format)
        except RegistrationError:
            return PartitionSchema(error=f"file {name} is not a readable {data_format} file")
        merged, conflicts = merge_columns(merged, columns, case_sensitive)
        if conflicts:
            return PartitionSchema(error=f"file {name}: {conflicts[0]} of its partition")
    return PartitionSchema(tuple(merged))


def read_layout(
    table_columns: Sequence[Column],
    schemas: Mapping[int, PartitionSchema] | None,
    case_sensitive: bool,
    keys: Sequence[str] = (),
) -> ReadLayout:
    """The merged schema of the table and its partitions' schemas (partitions in id order,
    the table's columns first), with each partition's failure or columns. A file's column
    named as a partition key (some writers keep it in the files) is the key's, not data."""
    layout = ReadLayout(list(table_columns), case_sensitive=case_sensitive)
    folded_keys = {fold(k) for k in keys}
    for pid, schema in sorted((schemas or {}).items()):
        if schema.error is not None:
            layout.failed[pid] = schema.error
            continue
        columns = [c for c in schema.columns if fold(c.name) not in folded_keys]
        merged, conflicts = merge_columns(layout.columns, columns, case_sensitive)
        if conflicts:
            layout.failed[pid] = "; ".join(str(c) for c in conflicts)
            continue
        layout.columns = merged
        layout.note_present(pid, columns)
    if not case_sensitive:
        for group in case_clashes(c.name for c in layout.columns).values():
            for name in group:
                layout.skipped[name] = (
                    f"its name differs only by case from {', '.join(n for n in group if n != name)}"
                    ", which Spark cannot tell apart with spark.sql.caseSensitive=false"
                )
    for column in layout.columns:
        if column.name not in layout.skipped and not spark_readable(column.type):
            layout.skipped[column.name] = f"Spark reads no type {column.type}"
    return layout


def spark_readable(type_name: str) -> bool:
    """Whether Spark's DDL names the type (nested types: all their parts)."""
    if type_name in _SPARK_SCALARS or type_name.startswith(("decimal", "varchar(", "char(")):
        return True
    for kind in ("array<", "map<"):
        if type_name.startswith(kind) and type_name.endswith(">"):
            return all(spark_readable(t) for t in split_top_level(type_name[len(kind) : -1]))
    if type_name.startswith("struct<") and type_name.endswith(">"):
        fields = split_top_level(type_name[len("struct<") : -1])
        return all(spark_readable(f.partition(":")[2]) for f in fields)
    return False


def spark_ddl(columns: Sequence[Column]) -> str:
    """The columns as a Spark DDL schema (`DataFrameReader.schema`), names quoted so that
    any name reads, struct fields too."""
    return ", ".join(f"{_quote(c.name)} {_ddl_type(c.type)}" for c in columns)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _ddl_type(type_name: str) -> str:
    for kind in ("array<", "map<"):
        if type_name.startswith(kind) and type_name.endswith(">"):
            inner = split_top_level(type_name[len(kind) : -1])
            return kind + ",".join(_ddl_type(t) for t in inner) + ">"
    if type_name.startswith("struct<") and type_name.endswith(">"):
        fields = [f.partition(":") for f in split_top_level(type_name[len("struct<") : -1])]
        return "struct<" + ",".join(f"{_quote(n)}:{_ddl_type(t)}" for n, _, t in fields) + ">"
    return type_name
