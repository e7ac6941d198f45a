"""Row samples: a uniform random sample of every partition's rows, drawn in the collection
scan itself (Bernoulli, one rate per run: `sample_rate`), stored with the partition's
statistics and pooled for any set of partitions (`table_sample`).

Sketches describe one column at a time; a sample keeps the rows together, so a conjunction
over correlated columns (l_returnflag = 'R' AND l_linestatus = 'O' never holds in TPC-H) can
be counted on it instead of multiplied. Values are stored per column in one Arrow IPC
stream per partition and decoded in Arrow's native code: numbers, dates (days since the
epoch), timestamps (microseconds) and booleans as doubles, strings as text; binary and
nested columns are not sampled. A table's `sample_rows` property sets the
target sample size per table (0: no sample); the default is 100,000 rows, and a scan of at
most 250,000 rows (a dimension table) is then kept whole.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import zlib
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
from pyarrow import ipc
from sqlalchemy import Connection, Engine

from metastore.catalog import TableInfo, get_table
from metastore.engine import run_read
from metastore.errors import InvalidValue
from metastore.lookup import PartitionQuery, build_predicate

T = TypeVar("T")

SAMPLE_ROWS = "sample_rows"
DEFAULT_SAMPLE_ROWS = 100_000
# without a sample_rows property, a scan of at most this many rows is sampled whole: a small
# (dimension) table is then known row by row, so a join's heavy keys find their rows
WHOLE_TABLE_ROWS = 250_000
BYTES_PER_ROW_GUESS = 32.0  # before a table's first collection: its rows per file byte
NUMBER, STRING = "number", "string"
EPOCH = dt.datetime(1970, 1, 1)
PARTITION_ID, WEIGHT = "__partition_id", "__weight"  # columns of pooled samples (rollups)
# Arrow IPC's buffer compression of stored samples of at least COMPRESS_ROWS rows (a smaller
# one decodes faster uncompressed: a decompression per buffer costs more than it saves)
SAMPLE_COMPRESSION, COMPRESS_ROWS = "lz4", 2048
NUMERIC_TYPES = ("tinyint", "smallint", "int", "bigint", "float", "double", "boolean")


def sample_kind(type_: str) -> str | None:
    """How a column's values are sampled: as numbers, as strings, or not at all."""
    if type_ in NUMERIC_TYPES or type_.startswith("decimal"):
        return NUMBER
    if type_ in ("date", "timestamp", "timestamp_ntz"):
        return NUMBER
    if type_ == "string" or type_.startswith(("varchar", "char")):
        return STRING
    return None


def as_number(value: Any) -> float | None:
    """A sampled value as a double: dates as days, timestamps as microseconds."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return (value.replace(tzinfo=None) - EPOCH) / dt.timedelta(microseconds=1)
    if isinstance(value, dt.date):
        return float((value - EPOCH.date()).days)
    if isinstance(value, bool | int | float | Decimal):
        return float(value)
    raise TypeError(f"not a sampled number: {value!r}")


def from_number(value: float, type_: str) -> Any:
    """A sampled number back as a value of `type_` (the inverse of `as_number`)."""
    if type_ == "date":
        return EPOCH.date() + dt.timedelta(days=round(value))
    if type_.startswith("timestamp"):
        return EPOCH + dt.timedelta(microseconds=round(value))
    if type_ == "boolean":
        return bool(value)
    if type_ in ("tinyint", "smallint", "int", "bigint"):
        return int(value)
    if type_.startswith("decimal"):
        return Decimal(repr(value))
    return value


def target_rows(info: TableInfo) -> int:
    """The table's `sample_rows` property (default 100,000; 0 disables sampling)."""
    configured = info.properties.get(SAMPLE_ROWS, DEFAULT_SAMPLE_ROWS)
    try:
        target = int(str(configured))
    except ValueError:
        raise InvalidValue(
            f"table property {SAMPLE_ROWS} of {info.name} must be a whole number, "
            f"got {configured!r}"
        ) from None
    if target < 0:
        raise InvalidValue(f"table property {SAMPLE_ROWS} of {info.name} must not be negative")
    return target


def whole_table_rows(info: TableInfo) -> int:
    """Up to how many scanned rows every row is sampled: WHOLE_TABLE_ROWS unless the table
    sets `sample_rows` (then that is the target, exactly)."""
    return 0 if SAMPLE_ROWS in info.properties else WHOLE_TABLE_ROWS


def sample_rate(
    target: int, scanned_bytes: int, rows_per_byte: float | None, whole_below: int = 0
) -> float:
    """The Bernoulli rate that draws about `target` rows from the scanned files, given the
    table's rows per file byte from its earlier statistics (a guess before the first); all
    of them when they are at most `whole_below` rows."""
    if target <= 0:
        return 0.0
    expected_rows = scanned_bytes * (rows_per_byte or 1.0 / BYTES_PER_ROW_GUESS)
    if expected_rows <= max(target, whole_below):
        return 1.0
    return target / expected_rows


def encode_sample(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]) -> bytes:
    """One partition's sampled rows (values in `columns` order) as stored bytes: one Arrow
    IPC stream, a column each (doubles with NaN for NULL, or strings), compressed."""
    kinds = [sample_kind(type_) for _, type_ in columns]
    values: list[list[Any]] = [[] for _ in columns]
    for row in rows:
        for position, kind in enumerate(kinds):
            value = row[position]
            values[position].append(as_number(value) if kind == NUMBER else value)
    arrays = [
        pa.array(
            [math.nan if v is None else v for v in column] if kind == NUMBER else column,
            type=pa.float64() if kind == NUMBER else pa.string(),
        )
        for kind, column in zip(kinds, values, strict=True)
    ]
    return encode_table(pa.table(arrays, names=[name for name, _ in columns]))


def encode_table(table: pa.Table) -> bytes:
    """Sampled rows as stored: one Arrow IPC stream, its buffers compressed."""
    sink = pa.BufferOutputStream()
    compression = SAMPLE_COMPRESSION if table.num_rows >= COMPRESS_ROWS else None
    options = ipc.IpcWriteOptions(compression=compression)
    with ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table.combine_chunks())
    return bytes(sink.getvalue().to_pybytes())


def decode_sample(blob: bytes) -> dict[str, np.ndarray]:
    """Stored bytes back to one array per column: doubles (NaN for NULL) or objects."""
    table = sample_table(blob)
    return {name: _as_numpy(table.column(name)) for name in table.column_names}


def sample_table(blob: bytes) -> pa.Table:
    """A stored sample as an Arrow table: the Arrow IPC form, or the zlib'd JSON form
    samples collected before were stored in."""
    if blob[:1] == b"\x78":  # zlib's header: the JSON form
        payload = json.loads(zlib.decompress(blob))
        arrays = [
            pa.array(
                [math.nan if v is None else v for v in values] if kind == NUMBER else values,
                type=pa.float64() if kind == NUMBER else pa.string(),
            )
            for kind, values in zip(payload["kinds"], payload["values"], strict=True)
        ]
        return pa.table(arrays, names=payload["columns"])
    return ipc.open_stream(pa.py_buffer(blob)).read_all()


def _as_numpy(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Doubles as a float64 array (NaN: NULL), strings as an object array (None: NULL),
    converted in Arrow's native code."""
    if pa.types.is_floating(column.type):
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)


@dataclass(frozen=True)
class Sample:
    """Pooled sample of a set of partitions: per column the values, per sampled row the
    number of rows of its partition it stands for (partition rows / partition sample)."""

    columns: dict[str, np.ndarray]
    weights: np.ndarray
    partitions: int  # partitions whose rows the sample covers
    # what estimates derive from the sample, kept with it: a cached sample is read by many
    _derived: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def size(self) -> int:
        return int(self.weights.shape[0])

    def derived(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()` once per sample (the columns are never changed)."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]  # type: ignore[no-any-return]

    def nulls(self, name: str) -> np.ndarray:
        """Which sampled rows hold NULL in column `name`."""
        values = self.columns[name]
        if values.dtype != object:
            return self.derived(("nulls", name), lambda: np.isnan(values))
        return self.derived(("nulls", name), lambda: np.asarray(values == None, dtype=bool))  # noqa: E711

    def arrow(self, name: str) -> pa.Array:
        """A string column as an Arrow array, for Arrow's vectorised string functions."""
        return self.derived(("arrow", name), lambda: pa.array(self.columns[name], type=pa.string()))


# the selected partitions' ids (sorted) and, per partition key, their values in that order
KeyColumns = tuple[np.ndarray, list[list[Any]]]


def table_sample(engine: Engine, table: str, query: PartitionQuery | None = None) -> Sample | None:
    """The pooled sample of the partitions `query` selects (None: no partition has one),
    read from the table's pre-merged blocks where whole ones are selected
    (metastore.rollups). Partition key columns are filled in from each partition's key
    values."""
    from metastore.rollups import sample_pieces, select_partitions

    def read(conn: Connection) -> Sample | None:
        info = get_table(conn, table)
        store = info.store()
        predicate = build_predicate(conn.dialect.name, info, query or PartitionQuery())
        selection = select_partitions(conn, info.id, store, predicate, keys=True)
        return pool(info, sample_pieces(conn, info.id, selection), selection.keys)

    return run_read(engine, read)


def pool(info: TableInfo, tables: list[pa.Table], keys: KeyColumns) -> Sample | None:
    """Samples (Arrow tables with PARTITION_ID and WEIGHT columns) as one: a column some of
    them lack (added later) is left out; each partition key is filled in from `keys` (the
    selected partitions' ids, sorted, and each key's values in that order)."""
    if not tables:
        return None
    common = set(tables[0].column_names).intersection(*(t.column_names for t in tables[1:]))
    names = [n for n in tables[0].column_names if n in common]
    pooled = pa.concat_tables([t.select(names) for t in tables])
    ids = pooled.column(PARTITION_ID).to_numpy()
    columns = {
        name: _as_numpy(pooled.column(name)) for name in names if name not in (PARTITION_ID, WEIGHT)
    }
    ids_sorted, key_values = keys
    at = np.searchsorted(ids_sorted, ids)
    for key, values in zip(info.partition_keys, key_values, strict=True):
        if sample_kind(str(key.type)) == NUMBER:
            numbers = np.array([math.nan if v is None else as_number(v) for v in values])
            columns[key.name] = numbers[at] if numbers.size else numbers
        else:
            strings = np.array(values, dtype=object)
            columns[key.name] = strings[at] if strings.size else strings
    weights = np.asarray(pooled.column(WEIGHT).to_numpy(), dtype=np.float64)
    return Sample(columns, weights, int(np.unique(ids).size))
