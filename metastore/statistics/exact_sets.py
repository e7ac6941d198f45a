"""A partition's HLL sketch stored as the distinct values it was fed (docs/design.md#sizes):
where the partition's heavy hitters never purged, they name every value of the column, and
those values are often far fewer bytes than the sketch (a ship date's 170 commit dates: 25
bytes, not 700 of coupons). The collection scan's JVM writes them (Sketches.storedHll);
read, they are hashed into an HLL sketch exactly as the scan hashed them, so they merge
with sketches of every other partition, and a partition's own distinct count is exact.
"""

from __future__ import annotations

import zlib

import numpy as np
import xxhash
from datasketches import hll_sketch, tgt_hll_type

XXHASH_SEED = 42  # Spark's xxhash64 seed, which the scan feeds decimals' HLL sketches through


def hashed_values(values: np.ndarray) -> np.ndarray:
    """Spark's xxhash64 (seed 42) of each decimal's unscaled value (its 8 little-endian
    bytes), as the scan feeds a decimal column's HLL sketch (precision up to 18)."""
    hashes = [
        xxhash.xxh64_intdigest(v.to_bytes(8, "little", signed=True), seed=XXHASH_SEED)
        for v in values.tolist()
    ]
    return np.array(hashes, dtype=np.uint64).view(np.int64)


EXACT_SET, HASHED_SET = 0x53, 0x58
"""The first byte of a partition's distinct values stored whole in place of its HLL sketch
(the collection scan's Sketches.storedHll: a column whose heavy hitters never purged and so
named every value): the least as 8 little-endian bytes, then zlib over each value's
difference from the one before as an unsigned LEB128 varint (0 for the first). EXACT_SET:
values the scan fed the sketch (integers, dates as days, timestamps as microseconds);
HASHED_SET: a decimal column's unscaled values, which it fed through xxhash64 (`_hashed`)."""


def exact_values(blob: bytes) -> np.ndarray | None:
    """What the scan fed the HLL sketch a stored exact set stands for (int64): hashed into
    an HLL sketch (hll_sketch.update of each int), they give the scan's own sketch. None for
    a sketch."""
    values = set_values(blob)
    if values is None or blob[:1] == bytes([EXACT_SET]):
        return values
    return hashed_values(values)


def set_values(blob: bytes) -> np.ndarray | None:
    """An exact set's values as stored (a decimal column's unscaled values, not yet hashed:
    exact_values), sorted; None for a sketch."""
    if blob[:1] not in (bytes([EXACT_SET]), bytes([HASHED_SET])):
        return None
    return _set_values(blob)


def exact_count(blob: bytes) -> int | None:
    """How many values a stored exact set holds (each varint's last byte is the one without
    a continuation bit), without decoding them; None for a sketch."""
    if blob[:1] not in (bytes([EXACT_SET]), bytes([HASHED_SET])):
        return None
    data = np.frombuffer(zlib.decompress(blob[9:]), dtype=np.uint8)
    return int(np.count_nonzero(data < 0x80))


def _set_values(blob: bytes) -> np.ndarray:
    """An exact set's values (EXACT_SET's layout), sorted."""
    least = np.int64(int.from_bytes(blob[1:9], "little", signed=True)).view(np.uint64)
    data = np.frombuffer(zlib.decompress(blob[9:]), dtype=np.uint8)
    if data.size and int(data.max()) < 0x80:  # every difference in one byte (dates, small keys)
        return (data.cumsum(dtype=np.uint64) + least).view(np.int64)
    ends = np.flatnonzero(data < 0x80)  # a varint's last byte has no continuation bit
    starts = np.concatenate(([0], ends[:-1] + 1))
    steps = np.zeros(ends.size, dtype=np.uint64)
    for shift in range(10):  # an unsigned 64-bit varint has at most ten bytes
        position = starts + shift
        within = position <= ends
        if not within.any():
            break
        chunk = (data[position[within]] & 0x7F).astype(np.uint64)
        steps[within] |= chunk << np.uint64(7 * shift)
    return (steps.cumsum() + least).view(np.int64)


def exact_hll(values: np.ndarray, lg_k: int) -> hll_sketch:
    """An HLL sketch of the values as the scan builds it (4-bit registers)."""
    sketch = hll_sketch(lg_k, tgt_hll_type.HLL_4)
    for value in values.tolist():
        sketch.update(value)
    return sketch
