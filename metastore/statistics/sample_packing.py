"""A row sample's columns packed for storage (docs/design.md#sizes), losslessly, in fewer
bytes than Arrow's record batch message: before Zstandard (metastore.statistics.samples
compresses what this returns), each column is written as the bytes that compress best.

- doubles (every number of a sample: metastore.statistics.samples.sample_kind) that are all
  integers once scaled by 10^s for some s from 0 to 6 (keys, dates as days, prices in cents,
  TPC-H's discounts), and 64-bit integers (a pooled sample's partition ids): as their
  differences from the least, in the fewest whole bytes that hold the largest, byte plane by
  byte plane (the high bytes of all rows, mostly equal, then the next...); other doubles as
  their IEEE bytes, byte plane by byte plane. NaN (a NULL) is a bit in a mask (and reads
  back as NumPy's NaN, whatever its payload was).
- strings: their UTF-8 lengths (as integers above), their bytes after every column's planes.

The layout: the row count (4 bytes); a descriptor per column (DESCRIPTOR: its kind, scale,
width in bytes and whether it has a mask, and the least value); the masks; the columns'
byte planes, grouped by width (all 1-byte columns, then the 2-, 4- and 8-byte ones, each in
column order), so that each group is encoded and decoded by a few array operations for all
its columns; then the strings' bytes. A record batch message spends about 700 bytes of
metadata and alignment on a sample of 16 columns, and 8 bytes on every number: lineitem's
samples of about 27 rows took 2,070 bytes each compressed, 1,350 so packed. Columns of any
other type, or with Arrow NULLs, are not packed (`packed` returns None: the sample is then
stored as a record batch, as before).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

SCALED, RAW, LONGS, STRINGS = 0, 1, 2, 3  # a column's kind
MAX_SCALE = 6  # decimals of at most six digits are packed as integers
EXACT = 2.0**53  # integers a double holds exactly
DESCRIPTOR = np.dtype(
    [("kind", "u1"), ("scale", "u1"), ("width", "u1"), ("masked", "u1"), ("least", "<i8")]
)
WIDTHS = (1, 2, 4, 8)
_POWERS = 10.0 ** np.arange(MAX_SCALE + 1)


def packed(table: pa.Table) -> bytes | None:
    """The table's rows packed column by column (see the module), or None where a column is
    of a type not packed here or holds an Arrow NULL."""
    rows = table.num_rows
    arrays = [_array(column) for column in table.columns]
    if any(a.null_count for a in arrays):
        return None
    kinds = [_kind(a.type) for a in arrays]
    if None in kinds:
        return None
    count = len(arrays)
    kind = np.array(kinds, dtype=np.uint8)
    scale = np.zeros(count, dtype=np.uint8)
    masked = np.zeros(count, dtype=np.uint8)
    values = np.zeros((rows, count), dtype=np.int64)  # what is stored as differences
    masks: list[bytes] = []
    texts: list[bytes] = []
    doubles = np.flatnonzero(kind == SCALED)
    if doubles.size:
        matrix = np.column_stack([arrays[i].to_numpy(zero_copy_only=False) for i in doubles])
        found, integers, present = _doubles(matrix)
        kind[doubles[found < 0]] = RAW
        scale[doubles[found >= 0]] = found[found >= 0]
        values[:, doubles] = integers
        partial = np.flatnonzero(~present.all(axis=0))
        masked[doubles[partial]] = 1
        masks = [np.packbits(present[:, j], bitorder="little").tobytes() for j in partial]
    for i in np.flatnonzero(kind == LONGS).tolist():
        values[:, i] = arrays[i].to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(kind == STRINGS).tolist():
        values[:, i], text = _string_parts(arrays[i])
        texts.append(text)
    least = values.min(axis=0) if rows else np.zeros(count, dtype=np.int64)
    least[kind == RAW] = 0  # IEEE bits: as they are
    spreads = values.view(np.uint64) - least.view(np.uint64)  # modulo 2**64: unsigned
    top = spreads.max(axis=0) if rows else np.zeros(count, dtype=np.uint64)
    widths = np.select([top < 1 << 8, top < 1 << 16, top < 1 << 32], [1, 2, 4], 8).astype("u1")
    descriptors = np.zeros(count, dtype=DESCRIPTOR)
    descriptors["kind"], descriptors["scale"], descriptors["width"] = kind, scale, widths
    descriptors["masked"], descriptors["least"] = masked, least
    parts = [rows.to_bytes(4, "little"), descriptors.tobytes(), *masks]
    for width in WIDTHS:
        group = np.flatnonzero(widths == width)
        if group.size:
            narrow = spreads[:, group].astype(f"<u{width}", order="C")  # rows x columns
            planes = narrow.view(np.uint8).reshape(rows, group.size, width).transpose(1, 2, 0)
            parts.append(np.ascontiguousarray(planes).tobytes())
    return b"".join(parts + texts)


def unpacked(body: bytes, schema: pa.Schema) -> pa.Table:
    """`packed`'s bytes back to the table of `schema` (its columns' names and types)."""
    count = len(schema)
    rows = int.from_bytes(body[:4], "little")
    at = 4 + count * DESCRIPTOR.itemsize
    if at > len(body):
        raise ValueError("a packed sample ends within its descriptors")
    descriptors = np.frombuffer(body, DESCRIPTOR, count, 4)
    masked = np.flatnonzero(descriptors["masked"])
    mask_size = (rows + 7) // 8
    present = {}
    for i in masked.tolist():
        bits = np.frombuffer(_take(body, at, mask_size), dtype=np.uint8)
        present[i] = np.unpackbits(bits, count=rows, bitorder="little").astype(bool)
        at += mask_size
    values = np.zeros((count, rows), dtype=np.uint64)
    for width in WIDTHS:
        group = np.flatnonzero(descriptors["width"] == width)
        if group.size:
            size = group.size * width * rows
            planes = np.frombuffer(_take(body, at, size), dtype=np.uint8)
            narrow = planes.reshape(group.size, width, rows).transpose(0, 2, 1)
            values[group] = np.ascontiguousarray(narrow).view(f"<u{width}")[..., 0]
            at += size
    values += descriptors["least"].astype(np.int64).view(np.uint64)[:, None]
    arrays: list[pa.Array] = []
    kinds, scales = descriptors["kind"].tolist(), descriptors["scale"].tolist()
    for i, (kind, scale) in enumerate(zip(kinds, scales, strict=True)):
        if kind == LONGS:
            arrays.append(pa.array(values[i].view(np.int64), type=pa.int64()))
        elif kind == STRINGS:
            offsets = np.zeros(rows + 1, dtype=np.int32)
            np.cumsum(values[i].view(np.int64), out=offsets[1:])
            text = _take(body, at, int(offsets[-1]))
            at += len(text)
            buffers = pa.py_buffer(offsets), pa.py_buffer(text)
            arrays.append(pa.StringArray.from_buffers(rows, *buffers))
        else:
            if kind == RAW:
                numbers = values[i].view(np.float64).copy()
            else:
                numbers = values[i].view(np.int64) / _POWERS[scale]
            if i in present:
                numbers[~present[i]] = np.nan
            arrays.append(pa.array(numbers, type=pa.float64()))
    if at != len(body):
        raise ValueError(f"a packed sample of {len(body)} bytes held {at}")
    return pa.Table.from_arrays(arrays, schema=schema)


def _array(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    """A column as one array (a chunked column of one chunk: that chunk, not a copy)."""
    if not isinstance(column, pa.ChunkedArray):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _kind(type_: pa.DataType) -> int | None:
    if pa.types.is_float64(type_):
        return SCALED  # or RAW: decided by _pack_doubles
    if pa.types.is_int64(type_):
        return LONGS
    if pa.types.is_string(type_):
        return STRINGS
    return None


def _doubles(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Double columns (rows x columns), all at once: per column the least s from 0 to
    MAX_SCALE with every present value an integer over 10^s that reads back as the same
    double (and no -0.0, which would read back as 0.0), -1 where there is none (RAW); the
    columns as those integers, or as their IEEE bits where RAW; and which values are present
    (not NaN). A missing value's row holds its column's least present value."""
    rows, columns = matrix.shape
    present = ~np.isnan(matrix)
    found = np.full(columns, -1)
    if not rows:
        return np.zeros(columns, dtype=np.int64), np.zeros((0, columns), np.int64), present
    least = np.where(present, matrix, np.inf).min(axis=0)
    filled = np.where(present, matrix, np.where(np.isfinite(least), least, 0.0))
    negative_zero = ((filled == 0) & np.signbit(filled)).any(axis=0)
    remaining = np.isfinite(filled).all(axis=0) & ~negative_zero
    integers = np.ascontiguousarray(filled).view(np.int64).copy()  # RAW: the bits
    for power, factor in enumerate(_POWERS):  # the columns left, a scale at a time
        candidates = np.flatnonzero(remaining)
        if not candidates.size:
            break
        values = filled[:, candidates]
        with np.errstate(over="ignore", invalid="ignore"):  # too large: not integers here
            scaled = np.rint(values * factor)
            small = (np.abs(scaled) < EXACT).all(axis=0)
        exact = small & (scaled / factor == values).all(axis=0)
        done = candidates[exact]
        found[done] = power
        integers[:, done] = scaled[:, exact].astype(np.int64)
        remaining[done] = False
    return found, integers, present


def _string_parts(array: pa.Array) -> tuple[np.ndarray, bytes]:
    """A string column's UTF-8 lengths and bytes."""
    everyone = np.frombuffer(array.buffers()[1], dtype=np.int32)
    offsets = everyone[array.offset : array.offset + len(array) + 1]
    data = array.buffers()[2]
    start, end = int(offsets[0]), int(offsets[-1])
    text = b"" if data is None else data.to_pybytes()[start:end]
    return np.diff(offsets).astype(np.int64), text


def _take(body: bytes, at: int, size: int) -> bytes:
    """`size` bytes of `body` from `at`: an error where it ends before them."""
    if at + size > len(body):
        raise ValueError("a packed sample ends within a column")
    return body[at : at + size]
