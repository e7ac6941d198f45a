"""Row samples: a uniform random sample of every partition's rows, drawn in the collection
scan itself (Bernoulli, one rate per run: `sample_rate`), stored with the partition's
statistics and pooled for any set of partitions (`table_sample`).

Sketches describe one column at a time; a sample keeps the rows together, so a conjunction
over correlated columns (l_returnflag = 'R' AND l_linestatus = 'O' never holds in TPC-H) can
be counted on it instead of multiplied. Values are stored per column: numbers, dates (days
since the epoch), timestamps (microseconds) and booleans as doubles, strings as text;
binary and nested columns are not sampled. A table's `sample_rows` property sets the
target sample size per table (0: no sample); the default is 100,000 rows, and a scan of at
most 250,000 rows (a dimension table) is then kept whole.
"""

from __future__ import annotations

import datetime as dt
import json
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
from sqlalchemy import Connection, Engine, select

from metastore.catalog import TableInfo, get_table
from metastore.engine import run_read
from metastore.errors import InvalidValue
from metastore.lookup import PartitionQuery, build_predicate
from metastore.models import PartitionStats

SAMPLE_ROWS = "sample_rows"
DEFAULT_SAMPLE_ROWS = 100_000
# without a sample_rows property, a scan of at most this many rows is sampled whole: a small
# (dimension) table is then known row by row, so a join's heavy keys find their rows
WHOLE_TABLE_ROWS = 250_000
BYTES_PER_ROW_GUESS = 32.0  # before a table's first collection: its rows per file byte
NUMBER, STRING = "number", "string"
EPOCH = dt.datetime(1970, 1, 1)
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
    """One partition's sampled rows (values in `columns` order) as stored bytes."""
    kinds = [sample_kind(type_) for _, type_ in columns]
    values: list[list[Any]] = [[] for _ in columns]
    for row in rows:
        for position, kind in enumerate(kinds):
            value = row[position]
            values[position].append(as_number(value) if kind == NUMBER else value)
    payload = {"columns": [name for name, _ in columns], "kinds": kinds, "values": values}
    return zlib.compress(json.dumps(payload, separators=(",", ":")).encode(), 6)


def decode_sample(blob: bytes) -> dict[str, np.ndarray]:
    """Stored bytes back to one array per column: doubles (NaN for NULL) or objects."""
    payload = json.loads(zlib.decompress(blob))
    arrays = {}
    for name, kind, values in zip(
        payload["columns"], payload["kinds"], payload["values"], strict=True
    ):
        if kind == NUMBER:
            arrays[name] = np.array(values, dtype=np.float64)
        else:
            arrays[name] = np.array(values, dtype=object)
    return arrays


@dataclass(frozen=True)
class Sample:
    """Pooled sample of a set of partitions: per column the values, per sampled row the
    number of rows of its partition it stands for (partition rows / partition sample)."""

    columns: dict[str, np.ndarray]
    weights: np.ndarray
    partitions: int  # partitions whose rows the sample covers

    @property
    def size(self) -> int:
        return int(self.weights.shape[0])


def table_sample(engine: Engine, table: str, query: PartitionQuery | None = None) -> Sample | None:
    """The pooled sample of the partitions `query` selects (None: no partition has one).
    Partition key columns are filled in from each partition's key values."""

    def read(conn: Connection) -> Sample | None:
        info = get_table(conn, table)
        return _pool(info, _sampled_partitions(conn, info, query or PartitionQuery()))

    return run_read(engine, read)


def _sampled_partitions(
    conn: Connection, info: TableInfo, query: PartitionQuery
) -> list[tuple[tuple[Any, ...], int, int, bytes]]:
    store = info.store()
    parts = store.table
    p = PartitionStats.__table__.c
    selected = (
        select(*store.key_columns, p.row_count, p.sample_size, p.sample)
        .join(parts, parts.c.id == p.partition_id)
        .where(p.table_id == info.id, p.sample.is_not(None), p.sample_size > 0)
    )
    predicate = build_predicate(conn.dialect.name, info, query)
    if predicate is not None:
        selected = selected.where(predicate)
    width = len(info.partition_keys)
    return [
        (tuple(row[:width]), int(row[width]), int(row[width + 1]), bytes(row[width + 2]))
        for row in conn.execute(selected)
    ]


def _pool(
    info: TableInfo, partitions: list[tuple[tuple[Any, ...], int, int, bytes]]
) -> Sample | None:
    if not partitions:
        return None
    pieces: dict[str, list[np.ndarray]] = {}
    weights = []
    key_kinds = [sample_kind(str(key.type)) for key in info.partition_keys]
    for key_values, rows, size, blob in partitions:
        arrays = decode_sample(blob)
        for name, array in arrays.items():
            pieces.setdefault(name, []).append(array)
        for key, kind, value in zip(info.partition_keys, key_kinds, key_values, strict=True):
            if kind == NUMBER:
                number = as_number(value)
                filled = np.full(size, np.nan if number is None else number, dtype=np.float64)
            else:
                filled = np.full(size, value, dtype=object)
            pieces.setdefault(key.name, []).append(filled)
        weights.append(np.full(size, rows / size, dtype=np.float64))
    columns = {  # a column some partitions lack (added later) is left out
        name: np.concatenate(arrays)
        for name, arrays in pieces.items()
        if len(arrays) == len(partitions)
    }
    return Sample(columns, np.concatenate(weights), len(partitions))
