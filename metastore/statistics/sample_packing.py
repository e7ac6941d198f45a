"""A row sample's columns packed for storage (docs/design.md#sizes), losslessly, in fewer
bytes than Arrow's record batch message: before Zstandard (metastore.statistics.samples
compresses what this returns), each column is written as the bytes that compress best.

- doubles (every number of a sample: metastore.statistics.samples.sample_kind) that are all
  integers once scaled by 10^s for some s from 0 to 6 (keys, dates as days, prices in cents,
  TPC-H's discounts), and 64-bit integers (a pooled sample's partition ids): as their
  differences from the least, in the fewest whole bytes that hold the largest, byte plane by
  byte plane (the high bytes of all rows, mostly equal, then the next...); the others as
  their IEEE bytes, byte plane by byte plane. NaN (a NULL) is a bit in a mask (and reads
  back as NumPy's NaN, whatever its payload was).
- strings: their lengths (as integers above), then their UTF-8 bytes one after another.

A record batch message spends about 700 bytes of metadata and 8-byte alignment on a sample
of 16 columns, and 8 bytes on every number: lineitem's samples of about 27 rows took 2,070
bytes each compressed, 1,560 so packed. Columns of any other type, or with Arrow NULLs, are
not packed (`packed` returns None: the sample is stored as a record batch, as before).
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa

RAW, SCALED, LONGS, STRINGS = 0, 1, 2, 3  # each column's first byte: how it is packed
MAX_SCALE = 6  # decimals of at most six digits are packed as integers
EXACT = 2.0**53  # integers a double holds exactly


def packed(table: pa.Table) -> bytes | None:
    """The table's rows packed column by column (see the module), or None where a column is
    of a type not packed here or holds an Arrow NULL."""
    parts = [table.num_rows.to_bytes(4, "little")]
    for column in table.columns:
        array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if array.null_count:
            return None
        if pa.types.is_float64(array.type):
            parts.append(_doubles(array.to_numpy(zero_copy_only=False)))
        elif pa.types.is_int64(array.type):
            values = array.to_numpy(zero_copy_only=False)
            parts.append(bytes([LONGS]) + _integers(values))
        elif pa.types.is_string(array.type):
            parts.append(_strings(array))
        else:
            return None
    return b"".join(parts)


def unpacked(body: bytes, schema: pa.Schema) -> pa.Table:
    """`packed`'s bytes back to the table of `schema` (its columns' names and types)."""
    rows = int.from_bytes(body[:4], "little")
    at, arrays = 4, []
    for _ in schema:
        array, at = _column(body, at, rows)
        arrays.append(array)
    if at != len(body):
        raise ValueError(f"a packed sample of {len(body)} bytes held {at}")
    return pa.Table.from_arrays(arrays, schema=schema)


def _doubles(values: np.ndarray) -> bytes:
    """A column of doubles: SCALED where every number is an integer times 10^-s, else RAW."""
    present = ~np.isnan(values)
    mask = b"" if present.all() else np.packbits(present, bitorder="little").tobytes()
    head = bytes([1 if mask else 0]) + mask
    kept = values[present]
    scale = _scale(kept)
    if scale is None:
        planes = _planes(kept.astype("<f8").view(np.uint8).reshape(-1, 8))
        return bytes([RAW]) + head + planes
    integers = np.rint(kept * 10.0**scale).astype(np.int64)
    return bytes([SCALED, scale]) + head + _integers(integers)


def _scale(values: np.ndarray) -> int | None:
    """The least s from 0 to MAX_SCALE with every value an integer over 10^s that reads back
    as the same double (and no -0.0, which would read back as 0.0); None if there is none."""
    if values.size == 0:
        return 0
    if not np.isfinite(values).all() or np.signbit(values[values == 0]).any():
        return None
    for scale in range(MAX_SCALE + 1):
        scaled = np.rint(values * 10.0**scale)
        if np.abs(scaled).max() >= EXACT:
            return None
        if np.array_equal(scaled / 10.0**scale, values):
            return scale
    return None


def _integers(values: np.ndarray) -> bytes:
    """64-bit integers as their least, the width in bytes of their differences from it, and
    those differences byte plane by byte plane."""
    if values.size == 0:
        return (0).to_bytes(8, "little", signed=True) + bytes([0])
    least = int(values.min())
    # the differences, of up to 2**64 - 1, in unsigned arithmetic (modulo 2**64)
    spread = values.astype(np.int64).view(np.uint64) - np.int64(least).view(np.uint64)
    top = int(spread.max())
    width = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4 if top < 1 << 32 else 8
    narrow = spread.astype(f"<u{width}").view(np.uint8).reshape(-1, width)
    return least.to_bytes(8, "little", signed=True) + bytes([width]) + _planes(narrow)


def _strings(array: pa.Array) -> bytes:
    """Strings: their UTF-8 lengths (as `_integers`), then their bytes."""
    everyone = np.frombuffer(array.buffers()[1], dtype=np.int32)
    offsets = everyone[array.offset : array.offset + len(array) + 1]
    data = array.buffers()[2]
    start, end = int(offsets[0]), int(offsets[-1])
    text = b"" if data is None else data.to_pybytes()[start:end]
    return bytes([STRINGS]) + _integers(np.diff(offsets).astype(np.int64)) + text


def _planes(rows: np.ndarray) -> bytes:
    """Each row's bytes (a row per value), as the first bytes of all rows, then the seconds..."""
    return np.ascontiguousarray(rows.T).tobytes()


def _column(body: bytes, at: int, rows: int) -> tuple[pa.Array, int]:
    """The column packed at `at` and where the next one begins."""
    kind = body[at]
    if kind == LONGS:
        values, at = _read_integers(body, at + 1, rows)
        return pa.array(values, type=pa.int64()), at
    if kind == STRINGS:
        lengths, at = _read_integers(body, at + 1, rows)
        offsets = np.zeros(rows + 1, dtype=np.int32)
        np.cumsum(lengths, out=offsets[1:])
        end = at + int(offsets[-1])
        if end > len(body):
            raise ValueError("a packed sample ends within a column")
        text = pa.py_buffer(body[at:end])
        return pa.StringArray.from_buffers(rows, pa.py_buffer(offsets), text), end
    scale = 0
    if kind == SCALED:
        scale, at = body[at + 1], at + 1
    elif kind != RAW:
        raise ValueError(f"a packed sample's column of unknown kind {kind}")
    present = None
    if body[at + 1]:
        size = (rows + 7) // 8
        bits = np.frombuffer(body, np.uint8, size, at + 2)
        present = np.unpackbits(bits, count=rows, bitorder="little").astype(bool)
        at += size
    at += 2
    count = rows if present is None else int(present.sum())
    if kind == SCALED:
        integers, at = _read_integers(body, at, count)
        kept = integers / 10.0**scale
    else:
        kept, at = _read_planes(body, at, count, 8)
        kept = kept.view("<f8").reshape(-1)
    if present is None:
        return pa.array(kept, type=pa.float64()), at
    values = np.full(rows, np.nan)
    values[present] = kept
    return pa.array(values, type=pa.float64()), at


def _read_integers(body: bytes, at: int, count: int) -> tuple[np.ndarray, int]:
    """`_integers`' bytes at `at` back to the integers, and where they end."""
    least, width = _LEAST_AND_WIDTH.unpack_from(body, at)
    at += _LEAST_AND_WIDTH.size
    if count == 0:
        return np.zeros(0, dtype=np.int64), at
    spread, at = _read_planes(body, at, count, width)
    wide = spread.view(f"<u{width}").reshape(-1).astype(np.uint64)
    return (wide + np.int64(least).view(np.uint64)).view(np.int64), at


def _read_planes(body: bytes, at: int, count: int, width: int) -> tuple[np.ndarray, int]:
    """`count` rows of `width` bytes stored byte plane by byte plane, as rows again."""
    end = at + count * width
    if end > len(body):
        raise ValueError("a packed sample ends within a column")
    planes = np.frombuffer(body, np.uint8, count * width, at)
    if width == 1:
        return planes.reshape(count, 1), end
    return np.ascontiguousarray(planes.reshape(width, count).T), end


_LEAST_AND_WIDTH = struct.Struct("<qB")
