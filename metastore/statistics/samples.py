"""Row samples: a uniform random sample of every partition's rows, drawn in the collection
scan itself (Bernoulli, one rate per run: `sample_rate`), stored with the partition's
statistics and pooled for any set of partitions (`metastore.statistics.block_reads.table_sample`).

Sketches describe one column at a time; a sample keeps the rows together, so a conjunction
over correlated columns (l_returnflag = 'R' AND l_linestatus = 'O' never holds in TPC-H) can
be counted on it instead of multiplied. Values are kept per column as Arrow arrays and
stored packed column by column (metastore.statistics.sample_packing): numbers, dates (days
since the epoch), timestamps (microseconds) and booleans as doubles, strings as text; binary
and nested columns are not sampled. A table's `sample_rows` property sets the
target sample size per table (0: no sample); the default is 100,000 rows, and a scan of at
most 250,000 rows (a dimension table) is then kept whole.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import math
import threading
import zlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import ipc

from metastore.catalog.tables import TableInfo
from metastore.column_type import ColumnType
from metastore.errors import InvalidValue
from metastore.statistics.cache import approximate_size
from metastore.statistics.sample_packing import packed as packed_columns
from metastore.statistics.sample_packing import unpacked as unpacked_columns

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
# a partition sample's column: 1 for a row kept whatever the draw (its key is one another
# table's heavy values reference: collectors/forced_keys.py), 0 for a row drawn
FORCED = "__forced"
# the stored form (docs/design.md#sizes): this mark, the length of what follows once
# inflated, then Zstandard over COLUMNAR, the columns' names and types (JSON) and the columns
# packed (metastore.statistics.sample_packing); samples stored before, and columns that
# form does not pack, hold one Arrow record batch message instead, without COLUMNAR (Arrow's
# own stream repeats its schema's 1.5 KB in every partition's sample)
PACKED_MARK = b"STS1"
COLUMNAR = b"\xff\xff\xff\xff"  # where a frame's header length would be: it never is this
# a sample appended to: frames of the packed form, each with its compressed length
FRAMED_MARK = b"STS2"
MAX_FRAMES = 16  # frames a sample is appended to at most before it is encoded again whole
PACKED_LEVEL = 3  # Zstandard's level: within 10% of level 15's bytes at a fourteenth of its time
NUMERIC_FAMILIES = ("integral", "fractional", "decimal", "boolean")  # sampled as numbers


def sample_kind(type_: str) -> str | None:
    """How a column's values are sampled: as numbers, as strings, or not at all."""
    if ColumnType.of(type_).family in NUMERIC_FAMILIES:
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
    if ColumnType.of(type_).integral:
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


def partition_weights(table: pa.Table, rows: int) -> np.ndarray:
    """The rows of its partition each sampled row of a partition of `rows` rows stands for:
    one for a row forced in (FORCED), the rest of the partition's rows shared among the rows
    drawn (the ratio estimator; without forced rows, rows / sample size for every row)."""
    size = table.num_rows
    if FORCED not in table.column_names:
        return np.full(size, rows / size if size else 0.0, dtype=np.float64)
    forced = np.asarray(table.column(FORCED).to_numpy(zero_copy_only=False)) > 0.5
    drawn = size - int(forced.sum())
    share = (rows - (size - drawn)) / drawn if drawn else 0.0
    return np.where(forced, 1.0, share)


def encode_sample(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]) -> bytes:
    """One partition's sampled rows (values in `columns` order) as stored bytes: one Arrow
    IPC stream, a column each (doubles with NaN for NULL, or strings), compressed."""
    return encode_table(sample_of_rows(columns, rows))


def sample_of_rows(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[Any]]) -> pa.Table:
    """Sampled rows (values in `columns` order) as the table encode_table stores."""
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
    return pa.table(arrays, names=[name for name, _ in columns])


def unpack_sample(packed: bytes, columns: Sequence[tuple[str, str]]) -> pa.Table:
    """A partition's sampled rows packed by column, as the one-pass scan hands them over
    (collectors/jvm SampleColumns: the row count, then per column one little-endian double
    per row, NaN for NULL, or for a string column one int32 length per row, -1 for NULL,
    then the UTF-8 bytes), as the table encode_sample builds from rows: no Python per value."""
    rows, at = int.from_bytes(packed[:4], "little"), 4
    arrays: list[pa.Array] = []
    for _, type_ in columns:
        if sample_kind(type_) == NUMBER:
            arrays.append(pa.array(np.frombuffer(packed, "<f8", rows, at), type=pa.float64()))
            at += 8 * rows
            continue
        lengths = np.frombuffer(packed, "<i4", rows, at).astype(np.int64)
        at += 4 * rows
        valid = lengths >= 0
        offsets = np.zeros(rows + 1, dtype=np.int32)
        np.cumsum(np.where(valid, lengths, 0), out=offsets[1:])
        size = int(offsets[-1])
        nulls = rows - int(valid.sum())
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little").tobytes()) if nulls else None
        arrays.append(
            pa.StringArray.from_buffers(
                rows,
                pa.py_buffer(offsets.tobytes()),
                pa.py_buffer(packed[at : at + size]),
                bitmap,
                nulls,
            )
        )
        at += size
    if at != len(packed):
        raise ValueError(f"a packed sample of {len(packed)} bytes held {at}")
    return pa.table(arrays, names=[name for name, _ in columns])


def appended(blob: bytes, table: pa.Table) -> bytes | None:
    """A stored sample (encode_table's form, or this one's) with `table`'s rows after its
    own, without compressing its rows again: its frames, then `table`'s, each framed with
    FRAMED_MARK and its lengths. None where the columns or their types differ, or the sample
    is of an earlier form or holds MAX_FRAMES frames already (to be encoded again whole)."""
    frames = _frames(blob)
    if frames is None or len(frames) >= MAX_FRAMES:
        return None
    if _inflated(*frames[0])[0] != _header(table):
        return None
    frames += _frames(encode_table(table)) or []
    return b"".join(
        FRAMED_MARK + size.to_bytes(4, "little") + len(data).to_bytes(4, "little") + bytes(data)
        for size, data in frames
    )


def _frames(blob: bytes) -> list[tuple[int, bytes]] | None:
    """A stored sample's compressed frames (raw size, bytes); None for an earlier form."""
    if blob[:4] == PACKED_MARK:
        return [(int.from_bytes(blob[4:8], "little"), blob[8:])]
    if blob[:4] != FRAMED_MARK:
        return None
    frames, at = [], 0
    while at < len(blob):
        if blob[at : at + 4] != FRAMED_MARK:
            raise ValueError(f"a framed sample without its mark at byte {at}")
        size = int.from_bytes(blob[at + 4 : at + 8], "little")
        length = int.from_bytes(blob[at + 8 : at + 12], "little")
        frames.append((size, blob[at + 12 : at + 12 + length]))
        at += 12 + length
    return frames


def _header(table: pa.Table) -> bytes:
    """The packed form's header: the columns' names and types, as JSON."""
    return json.dumps([[f.name, str(f.type)] for f in table.schema]).encode()


def encode_table(table: pa.Table) -> bytes:
    """Sampled rows as stored: PACKED_MARK, then the columns packed (sample_packing; else the
    record batch) and their names and types, compressed as one (a sample of 20 rows of 17
    columns: 1.5 KB instead of 4.8 KB in Arrow's stream form as a record batch, 1.1 KB
    packed)."""
    header = _header(table)
    columns = packed_columns(table)
    if columns is not None:
        raw = COLUMNAR + len(header).to_bytes(4, "little") + header + columns
    else:
        combined = table.combine_chunks()
        batches = combined.to_batches()
        batch = batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)
        message = batch.serialize()
        raw = len(header).to_bytes(4, "little") + header + message.to_pybytes()
    packed = pa.Codec("zstd", PACKED_LEVEL).compress(raw, asbytes=True)
    return PACKED_MARK + len(raw).to_bytes(4, "little") + bytes(packed)


def decode_sample(blob: bytes) -> dict[str, np.ndarray]:
    """Stored bytes back to one array per column: doubles (NaN for NULL) or objects."""
    table = sample_table(blob)
    return {name: _as_numpy(table.column(name)) for name in table.column_names}


def sample_table(blob: bytes) -> pa.Table:
    """A stored sample as an Arrow table: the packed form (encode_table), or those samples
    collected before were stored in: an Arrow IPC stream, or zlib'd JSON."""
    frames = _frames(blob)  # the packed form: one frame; appended to (`appended`): several
    if frames is not None:
        tables = [_unpacked(size, data) for size, data in frames]
        return tables[0] if len(tables) == 1 else pa.concat_tables(tables)
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


def _inflated(size: int, data: bytes) -> tuple[bytes, pa.Buffer, bool]:
    """A frame of the packed form (`size` bytes once inflated) as its header (the columns'
    names and types, JSON), its columns (packed, or a record batch message) and whether
    they are packed (sample_packing)."""
    raw = pa.Codec("zstd").decompress(data, decompressed_size=size)
    columnar = raw[:4].to_pybytes() == COLUMNAR
    at = 4 if columnar else 0
    length = int.from_bytes(raw[at : at + 4].to_pybytes(), "little")
    return raw[at + 4 : at + 4 + length].to_pybytes(), raw[at + 4 + length :], columnar


def _unpacked(size: int, data: bytes) -> pa.Table:
    """A frame of encode_table's form back to the table."""
    header, body, columnar = _inflated(size, data)
    if columnar:
        return unpacked_columns(body.to_pybytes(), _schema(header))
    return pa.Table.from_batches([ipc.read_record_batch(body, _schema(header))])


@functools.lru_cache(maxsize=1024)
def _schema(header: bytes) -> pa.Schema:
    """The Arrow schema of a packed sample's header (its columns' names and types, JSON),
    parsed once: a selection's pieces of one table share it."""
    fields = json.loads(header)
    return pa.schema([pa.field(name, pa.type_for_alias(type_)) for name, type_ in fields])


def _as_numpy(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Doubles as a float64 array (NaN: NULL), strings as an object array (None: NULL),
    converted in Arrow's native code."""
    if pa.types.is_floating(column.type):
        return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=object)


class SampleColumns(Mapping[str, np.ndarray]):
    """A pooled sample's columns, kept as Arrow arrays (numbers as doubles with NaN for NULL,
    strings as UTF-8) and each turned into a numpy array (float64, or objects with None for
    NULL) only when it is first read, then kept: an estimate reads the few columns its
    predicates and join keys name, and a cached sample holds the rest compactly. A
    partition key is kept as its values per selected partition and each sampled row's
    position among them. Growth is reported (`watch`), so that a cache holding the sample
    counts what its readers added to it."""

    def __init__(
        self,
        arrays: Mapping[str, pa.Array],
        keys: Mapping[str, np.ndarray] | None = None,
        positions: np.ndarray | None = None,
    ) -> None:
        self._arrays = dict(arrays)
        self._keys = dict(keys or {})  # key name -> its value per selected partition
        self._positions = positions  # per sampled row, its partition among the selected
        self._names = list(self._arrays) + [k for k in self._keys if k not in self._arrays]
        self._ready: dict[str, np.ndarray] = {}
        self._grown: dict[str, int] = {}  # what each materialised column added
        self._lock = threading.Lock()
        self._watchers: list[Callable[[int], None]] = []

    def __getitem__(self, name: str) -> np.ndarray:
        found = self._ready.get(name)
        if found is not None:
            return found
        stored = self._arrays.get(name)
        if stored is not None and not pa.types.is_floating(stored.type):
            values, grown = _strings(stored)
        elif stored is not None:
            values, grown = _as_numpy(stored), HEADER_BYTES  # a view of Arrow's buffer
        elif name in self._keys and self._positions is not None:
            # the partitions' values repeated: a pointer per row to objects `keys` holds
            values, grown = self._keys[name][self._positions], self.materialised_bytes(name)
        else:
            raise KeyError(name)
        return self._keep(name, values, grown)

    def __contains__(self, name: object) -> bool:
        return name in self._arrays or name in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def stored(self, name: str) -> pa.Array | None:
        """A column as the Arrow array it is kept in (None: a partition key, kept apart)."""
        return self._arrays.get(name)

    def materialised(self) -> list[str]:
        """The columns read as numpy arrays so far."""
        return list(self._ready)

    def materialised_bytes(self, name: str) -> int:
        """What turning column `name` into a numpy array adds (once read: what it added),
        an upper bound: nothing but a header for doubles read in place from Arrow's
        buffer; for strings a pointer per row and each distinct string once (its header
        and characters, `_strings`); for a partition key a pointer per row."""
        grown = self._grown.get(name)
        if grown is not None:
            return grown
        stored = self._arrays.get(name)
        if stored is None:
            rows = 0 if self._positions is None else int(self._positions.shape[0])
            return HEADER_BYTES + rows * 8
        if pa.types.is_floating(stored.type):
            return HEADER_BYTES
        return HEADER_BYTES + len(stored) * 8 + _string_bytes(stored)

    def _keep(self, name: str, values: np.ndarray, grown: int) -> np.ndarray:
        with self._lock:
            found = self._ready.get(name)
            if found is not None:
                return found
            self._ready[name] = values
            self._grown[name] = grown
            watchers = list(self._watchers)
        for report in watchers:
            report(grown)
        return values

    def watch(self, report: Callable[[int], None]) -> None:
        """Call `report(bytes)` whenever a column is materialised from now on."""
        with self._lock:
            self._watchers.append(report)

    def cache_bytes(self) -> int:
        """Bytes held: the Arrow arrays, the partition keys and what was materialised."""
        stored = sum(int(a.nbytes) + ARROW_ARRAY_BYTES for a in self._arrays.values())
        keys = sum(approximate_size(v) for v in self._keys.values())
        positions = 0 if self._positions is None else int(self._positions.nbytes)
        return stored + keys + positions + sum(self.materialised_bytes(n) for n in self._ready)


def _strings(stored: pa.Array) -> tuple[np.ndarray, int]:
    """A string column as an object array (None: NULL) whose equal values share one Python
    string (decoded once per distinct value through Arrow's dictionary encoding: a
    column of few values costs a pointer a row), and the bytes it holds."""
    encoded = stored.dictionary_encode()
    distinct = encoded.dictionary
    table = np.empty(len(distinct) + 1, dtype=object)  # the last one: NULL
    table[:-1] = distinct.to_numpy(zero_copy_only=False)
    codes = encoded.indices.fill_null(len(distinct)).to_numpy(zero_copy_only=False)
    values = table[np.asarray(codes, dtype=np.int64)]
    return values, HEADER_BYTES * 2 + len(values) * 8 + table.size * 8 + _string_bytes(distinct)


def _string_bytes(strings: pa.Array) -> int:
    """An upper bound of the Python strings of an Arrow string array's values: Python's
    string header and characters (1 byte each when every string is ASCII, else up to 4
    bytes per UTF-8 byte) per value."""
    text = max(0, int(strings.nbytes) - 4 * (len(strings) + 1))  # not the offsets
    ascii_only = bool(pc.all(pc.string_is_ascii(strings)).as_py() is not False)
    header = STR_HEADER_BYTES if ascii_only else WIDE_STR_HEADER_BYTES
    return len(strings) * header + text * (1 if ascii_only else 4)


HEADER_BYTES = 256  # an array's own object and its place in the sample
# a stored Arrow array's objects (C++ and Python) and its buffers' 64-byte padding
ARROW_ARRAY_BYTES = 1024
# the sample's own objects: the Sample, its columns' mapping, their dictionaries and lock
# (measured: ~3.3 KB of a pooled sample's live bytes beyond its arrays)
SAMPLE_OBJECT_BYTES = 4096
# a string's own object: sys.getsizeof("") is 49 bytes for ASCII, up to 76 for wider
# characters, and the allocator rounds each up to 16 bytes
STR_HEADER_BYTES, WIDE_STR_HEADER_BYTES = 64, 96
_TOKENS = itertools.count()


@dataclass(frozen=True)
class Sample:
    """Pooled sample of a set of partitions: per column the values, per sampled row the
    number of rows of its partition it stands for (partition rows / partition sample).
    `columns` is a mapping of numpy arrays (a pooled sample's SampleColumns materialises
    each on first read)."""

    columns: Mapping[str, np.ndarray]
    weights: np.ndarray
    partitions: int  # partitions whose rows the sample covers
    # per column, its forced keys (sorted doubles): values whose every row the sample holds,
    # so one it does not show has none (metastore.statistics.forced_keys)
    complete: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    # this sample among every one the process loads (never reused): what is derived of a
    # pair of samples is kept with one of them under the other's token
    token: int = field(default_factory=lambda: next(_TOKENS), compare=False, repr=False)
    # what estimates derive from the sample, kept with it: a cached sample is read by many
    _derived: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)
    _watchers: list[Callable[[int], None]] = field(default_factory=list, compare=False, repr=False)

    @property
    def size(self) -> int:
        return int(self.weights.shape[0])

    def derived(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()` once per sample (the columns are never changed); what it keeps is
        reported to the watchers as growth."""
        if key in self._derived:
            return self._derived[key]  # type: ignore[no-any-return]
        value = compute()
        with self._lock:
            if key in self._derived:
                return self._derived[key]  # type: ignore[no-any-return]
            self._derived[key] = value
            watchers = list(self._watchers)
        grown = approximate_size(value) + approximate_size(key)
        for report in watchers:
            report(grown)
        return value

    def watch(self, report: Callable[[int], None]) -> None:
        """Call `report(bytes)` whenever the sample grows from now on (a column read as a
        numpy array, something derived): how a cache keeps counting what it holds."""
        with self._lock:
            self._watchers.append(report)
        if isinstance(self.columns, SampleColumns):
            self.columns.watch(report)

    def cache_bytes(self) -> int:
        """Bytes held: columns, weights and what was derived so far."""
        columns = (
            self.columns.cache_bytes()
            if isinstance(self.columns, SampleColumns)
            else approximate_size(dict(self.columns))
        )
        derived = sum(approximate_size(k) + approximate_size(v) for k, v in self._derived.items())
        return SAMPLE_OBJECT_BYTES + columns + approximate_size(self.weights) + derived

    def nulls(self, name: str) -> np.ndarray:
        """Which sampled rows hold NULL in column `name`."""
        stored = self.columns.stored(name) if isinstance(self.columns, SampleColumns) else None
        if stored is not None and not pa.types.is_floating(stored.type):
            return self.derived(
                ("nulls", name),
                lambda: np.asarray(stored.is_null().to_numpy(zero_copy_only=False), dtype=bool),
            )
        values = self.columns[name]
        if values.dtype != object:
            return self.derived(("nulls", name), lambda: np.isnan(values))
        return self.derived(("nulls", name), lambda: np.asarray(values == None, dtype=bool))  # noqa: E711

    def numeric(self, name: str) -> bool | None:
        """Whether column `name` holds numbers (doubles), None when the sample has no such
        column; a stored string column is not turned into Python strings to tell."""
        if name not in self.columns:
            return None
        stored = self.columns.stored(name) if isinstance(self.columns, SampleColumns) else None
        if stored is not None:
            return bool(pa.types.is_floating(stored.type))
        return bool(self.columns[name].dtype == np.float64)

    def arrow(self, name: str) -> pa.Array:
        """A string column as an Arrow array, for Arrow's vectorised string functions: the
        array the column is kept in, without a copy, where it is one."""
        stored = self.columns.stored(name) if isinstance(self.columns, SampleColumns) else None
        if stored is not None and pa.types.is_string(stored.type):
            return stored
        return self.derived(("arrow", name), lambda: pa.array(self.columns[name], type=pa.string()))


# the selected partitions' ids (sorted) and, per partition key, their values in that order
KeyColumns = tuple[np.ndarray, list[list[Any]]]


def pool(
    info: TableInfo,
    tables: list[pa.Table],
    keys: KeyColumns,
    rename: Callable[[str], str | None] | None = None,
    forced: Mapping[str, Sequence[int]] | None = None,
) -> Sample | None:
    """Samples (Arrow tables with PARTITION_ID and WEIGHT columns) as one: a column some of
    them lack (added later) is left out; each partition key is filled in from `keys` (the
    selected partitions' ids, sorted, and each key's values in that order). The columns
    stay in Arrow (one contiguous array each) until read (SampleColumns). `rename` gives
    each column the name the sample has it under (None: left out). `forced`: the table's
    forced keys per column (Sample.complete)."""
    if not tables:
        return None
    common = set(tables[0].column_names).intersection(*(t.column_names for t in tables[1:]))
    names = [n for n in tables[0].column_names if n in common]
    pooled = pa.concat_tables([t.select(names) for t in tables]).combine_chunks()
    ids = pooled.column(PARTITION_ID).to_numpy()
    arrays = {
        name: pooled.column(name).chunk(0)
        if pooled.num_rows
        else pa.array([], pooled.column(name).type)
        for name in names
        if name not in (PARTITION_ID, WEIGHT)
    }
    if rename is not None:
        renamed = {rename(name): array for name, array in arrays.items()}
        arrays = {name: array for name, array in renamed.items() if name is not None}
    ids_sorted, key_values = keys
    positions = np.searchsorted(ids_sorted, ids).astype(np.int32)
    per_partition = {}
    for key, values in zip(info.partition_keys, key_values, strict=True):
        if sample_kind(str(key.type)) == NUMBER:
            per_partition[key.name] = np.array(
                [math.nan if v is None else as_number(v) for v in values], dtype=np.float64
            )
        else:
            per_partition[key.name] = np.array(values, dtype=object)
    weights = np.array(pooled.column(WEIGHT).to_numpy(), dtype=np.float64)
    columns = SampleColumns(arrays, per_partition, positions)
    complete = {}
    for name, forced_values in (forced or {}).items():
        named = rename(name) if rename is not None else name
        if named is not None and named in arrays:
            complete[named] = np.asarray(sorted(forced_values), dtype=np.float64)
    return Sample(columns, weights, int(np.unique(ids).size), complete)
