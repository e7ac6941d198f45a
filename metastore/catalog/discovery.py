"""Partition discovery: list a dataset directory once and find its `key=value` partitions.

Follows Spark's and Hive's conventions: names starting with `.` or `_` (without `=`) are
hidden (`_SUCCESS`, `.crc`, `_temporary`), every data directory must carry the same keys in
the same order, `__HIVE_DEFAULT_PARTITION__` is NULL, and values are unescaped as Hive
escapes them. Listing goes through pyarrow's filesystems, so local paths and any URI
pyarrow understands (s3://, gs://, hdfs://) work alike.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from metastore.catalog.column_names import fold
from metastore.errors import InvalidValue, RegistrationError
from metastore.partitions.names import split_partition_component
from metastore.types import KeyType, KeyValue, infer_key_type

FORMATS = ("parquet", "orc")


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool = True


@dataclass
class DirectoryStats:
    file_count: int = 0
    total_bytes: int = 0
    modified_ns: int = 0


@dataclass(frozen=True)
class DiscoveredPartition:
    name: str
    raw_values: tuple[str | None, ...]
    location: str
    file_count: int
    total_bytes: int
    modified_ns: int


@dataclass
class DiscoveredDataset:
    location: str
    format: str
    keys: list[str]
    partitions: list[DiscoveredPartition]
    sample_file: str
    columns: list[Column] = field(default_factory=list)


def is_hidden(name: str) -> bool:
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def normalise_location(path: str) -> str:
    """Absolute local paths; URIs unchanged (without a trailing slash)."""
    if "://" in path:
        return path.rstrip("/")
    return os.path.abspath(os.path.expanduser(path))


def discover(path: str, data_format: str | None = None) -> DiscoveredDataset:
    """List `path` recursively and group its data files into partitions."""
    from pyarrow import fs as pafs

    location = normalise_location(path)
    try:
        filesystem, root = (
            pafs.FileSystem.from_uri(location)
            if "://" in location
            else (pafs.LocalFileSystem(), location)
        )
        root_info = filesystem.get_file_info(root)
    except (OSError, ValueError) as error:
        raise RegistrationError(f"cannot list {path}: {error}") from None
    if root_info.type != pafs.FileType.Directory:
        raise RegistrationError(f"{path} is not a directory")
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(root, recursive=True))
    except OSError as error:
        raise RegistrationError(f"cannot list {path}: {error}") from None

    prefix = len(root.rstrip("/")) + 1
    directories: dict[str, DirectoryStats] = {}
    hidden_parents: set[str] = set()  # (each directory's components checked once)
    sample: str | None = None
    for info in infos:
        if not info.is_file:
            continue
        relative = info.path[prefix:]
        parent, _, base = relative.rpartition("/")
        if is_hidden(base) or parent in hidden_parents:
            continue
        stats = directories.get(parent)
        if stats is None:
            if parent and any(is_hidden(c) for c in parent.split("/")):
                hidden_parents.add(parent)
                continue
            stats = directories[parent] = DirectoryStats()
        stats.file_count += 1
        stats.total_bytes += info.size or 0
        stats.modified_ns = max(stats.modified_ns, info.mtime_ns or 0)
        if (sample is None or info.path < sample) and info.size:  # an empty file: no schema
            sample = info.path
    if sample is None:
        raise RegistrationError(f"no data files under {path}")

    keys, partitions = _partitions(location, directories)
    chosen = data_format or _format_of(sample)
    if chosen not in FORMATS:
        raise RegistrationError(f"unknown format {chosen!r}: use parquet or orc")
    dataset = DiscoveredDataset(location, chosen, keys, partitions, sample)
    folded_keys = {fold(k) for k in keys}
    dataset.columns = [
        c for c in read_schema(filesystem, sample, chosen) if fold(c.name) not in folded_keys
    ]
    return dataset


def _partitions(
    location: str, directories: dict[str, DirectoryStats]
) -> tuple[list[str], list[DiscoveredPartition]]:
    keys: list[str] | None = None
    first_dir = ""
    partitions: list[DiscoveredPartition] = []
    for directory in sorted(directories):
        components = directory.split("/") if directory else []
        parsed = [split_partition_component(c) for c in components]
        if any(p is None for p in parsed):
            raise RegistrationError(
                f"{location}/{directory} holds data files but is not a key=value partition path"
            )
        these = [p[0] for p in parsed if p is not None]
        if keys is None:
            keys, first_dir = these, directory
        elif these != keys:
            raise RegistrationError(
                f"inconsistent partition layout: {first_dir or '(root)'} has keys "
                f"{keys or 'none'} but {directory or '(root)'} has {these or 'none'}"
            )
        if len(set(these)) != len(these):
            raise RegistrationError(f"{directory} repeats a partition key")
        stats = directories[directory]
        partitions.append(
            DiscoveredPartition(
                name=directory,
                raw_values=tuple(p[1] for p in parsed if p is not None),
                location=f"{location}/{directory}" if directory else location,
                file_count=stats.file_count,
                total_bytes=stats.total_bytes,
                modified_ns=stats.modified_ns,
            )
        )
    return keys or [], partitions


def key_types(
    keys: Sequence[str],
    partitions: Sequence[DiscoveredPartition],
    overrides: dict[str, KeyType],
) -> list[KeyType]:
    """Each key's type: the override if given, else inferred from all its values."""
    unknown = set(overrides) - set(keys)
    if unknown:
        raise RegistrationError(
            f"--partition-types names {', '.join(sorted(unknown))}, not a partition key "
            f"(keys: {', '.join(keys) or 'none'})"
        )
    return [
        overrides[key]
        if key in overrides
        else infer_key_type([p.raw_values[i] for p in partitions])
        for i, key in enumerate(keys)
    ]


def typed_values(
    keys: Sequence[str], types: Sequence[KeyType], partition: DiscoveredPartition
) -> tuple[KeyValue, ...]:
    values: list[KeyValue] = []
    for key, key_type, raw in zip(keys, types, partition.raw_values, strict=True):
        if raw is None:
            values.append(None)
            continue
        try:
            values.append(key_type.parse(raw))
        except InvalidValue as error:
            raise RegistrationError(f"partition {partition.name}: {error} for key {key}") from None
    return tuple(values)


def _format_of(path: str) -> str:
    lowered = path.lower()
    if lowered.endswith(".orc"):
        return "orc"
    return "parquet"


def read_schema(filesystem: object, path: str, data_format: str) -> list[Column]:
    """The data columns of one file, named as the file spells them, with Spark/Hive type
    names: a Parquet timestamp not adjusted to UTC is Spark's timestamp_ntz, an INT96 one
    (older Spark and Hive writers) a timestamp. A Parquet file's footer is read by Arrow's
    dataset reader (no Python wrapper per file: a collection reads every partition's)."""
    int96: frozenset[str] = frozenset()
    try:
        if data_format == "orc":
            from pyarrow import orc

            with filesystem.open_input_file(path) as handle:  # type: ignore[attr-defined]
                schema = orc.ORCFile(handle).schema
        else:
            from pyarrow import dataset, parquet

            with filesystem.open_input_file(path) as handle:  # type: ignore[attr-defined]
                schema = dataset.ParquetFileFormat().inspect(handle)  # the footer alone
                if _has_naive_timestamp(schema):  # INT96 reads as one
                    handle.seek(0)
                    columns = parquet.read_metadata(handle).schema
                    int96 = frozenset(
                        columns.column(i).path
                        for i in range(len(columns))
                        if columns.column(i).physical_type == "INT96"
                    )
    except Exception as error:  # pyarrow raises many kinds for a bad file
        raise RegistrationError(
            f"cannot read the {data_format} schema of {path}: {' '.join(str(error).split())}"
        ) from None
    return list(_columns_of(schema, int96, data_format == "parquet"))


@functools.lru_cache(maxsize=256)  # a table's files repeat a few schemas: each looked at once
def _has_naive_timestamp(schema: Any) -> bool:
    return any(_naive_timestamp(f.type) for f in schema)


@functools.lru_cache(maxsize=256)
def _columns_of(schema: Any, int96: frozenset[str], ntz: bool) -> tuple[Column, ...]:
    """A file's Arrow schema as columns (read_schema)."""
    return tuple(
        Column(f.name, "timestamp" if f.name in int96 else arrow_type_name(f.type, ntz), f.nullable)
        for f in schema
    )


def _naive_timestamp(arrow_type: object) -> bool:
    from pyarrow import types as t

    return bool(t.is_timestamp(arrow_type) and arrow_type.tz is None)  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=4096)  # a table's files repeat a few types: each named once
def arrow_type_name(arrow_type: object, timestamp_ntz: bool = False) -> str:
    """Spark/Hive type name of an Arrow type (int, bigint, decimal(p,s), array<...>, ...);
    `timestamp_ntz`: a timestamp without a time zone is timestamp_ntz (as Spark reads a
    Parquet timestamp with isAdjustedToUTC=false), else timestamp."""
    import pyarrow as pa
    from pyarrow import types as t

    assert isinstance(arrow_type, pa.DataType)
    simple = [
        (t.is_boolean, "boolean"),
        (t.is_int8, "tinyint"),
        (t.is_int16, "smallint"),
        (t.is_int32, "int"),
        (t.is_int64, "bigint"),
        (t.is_uint8, "smallint"),
        (t.is_uint16, "int"),
        (t.is_uint32, "bigint"),
        (t.is_uint64, "decimal(20,0)"),
        (t.is_float16, "float"),
        (t.is_float32, "float"),
        (t.is_float64, "double"),
        (t.is_string, "string"),
        (t.is_large_string, "string"),
        (t.is_binary, "binary"),
        (t.is_large_binary, "binary"),
        (t.is_fixed_size_binary, "binary"),
        (t.is_date, "date"),
        (t.is_null, "void"),
    ]
    if hasattr(t, "is_string_view"):
        simple += [(t.is_string_view, "string"), (t.is_binary_view, "binary")]
    for check, name in simple:
        if check(arrow_type):
            return name
    if t.is_timestamp(arrow_type):
        naive = arrow_type.tz is None
        return "timestamp_ntz" if naive and timestamp_ntz else "timestamp"
    if t.is_decimal(arrow_type):
        return f"decimal({arrow_type.precision},{arrow_type.scale})"
    if t.is_map(arrow_type):
        return (
            f"map<{arrow_type_name(arrow_type.key_type, timestamp_ntz)},"
            f"{arrow_type_name(arrow_type.item_type, timestamp_ntz)}>"
        )
    if t.is_list(arrow_type) or t.is_large_list(arrow_type) or t.is_fixed_size_list(arrow_type):
        return f"array<{arrow_type_name(arrow_type.value_type, timestamp_ntz)}>"
    if t.is_struct(arrow_type):
        fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
        inner = ",".join(f"{f.name}:{arrow_type_name(f.type, timestamp_ntz)}" for f in fields)
        return f"struct<{inner}>"
    return str(arrow_type)
