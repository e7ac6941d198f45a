"""KLL sketches packed for storage (docs/design.md#sizes): the same sketch, its items written
as small integers that deflate well, about half the bytes of the deflated sketch.

A KLL sketch (DataSketches' serialised form, full preamble) is its header (preamble, the
start of each level, min and max) and its items, level by level; an item of level h stands
for 2**h rows, and the order of items within a level carries nothing (Karnin, Lang and
Liberty, Optimal Quantile Approximation in Streams, 2016). Packed, each level's items are
sorted, written as integers (the items times 10**scale when every item is such a decimal
exactly, else their IEEE bits in an order-keeping form), then as differences from the item
before within the level, the eight bytes of those differences by byte plane, and the whole
deflated:

    MARK, scale (NO_SCALE: IEEE bits), zlib(header + byte planes of the differences)

The scan's JVM writes the same form (collectors/jvm Sketches.packKll). Sketches of one item
or none (a short preamble) are deflated as they are.
"""

from __future__ import annotations

import itertools
import zlib
from typing import Final

import numpy as np

MARK: Final = 0x4B  # the first byte of a packed sketch; a KLL sketch begins with 2 or 5
NO_SCALE: Final = 0xFF
MAX_SCALE: Final = 6
FULL_PREAMBLE: Final = 5  # preamble ints of a sketch of two items or more
_HEADER: Final = 20  # bytes of the full preamble; the levels follow, then min and max
_EXACT: Final = 2.0**53  # integers a double holds exactly


def packed_kll(serialized: bytes) -> bytes:
    """A serialised KLL sketch as stored: packed, or deflated if it has fewer than two
    items."""
    layout = _layout(serialized)
    if layout is None:
        return zlib.compress(serialized, 1)
    header, segments = layout
    items = np.frombuffer(serialized, "<f8", offset=header)
    ordered = np.concatenate([np.sort(items[a:b]) for a, b in segments])
    scale, integers = _as_integers(ordered)
    differences = integers.copy()
    for a, b in segments:
        differences[a + 1 : b] = np.diff(integers[a:b])
    planes = differences.astype("<i8").view(np.uint8).reshape(-1, 8).T.tobytes()
    return bytes([MARK, scale]) + zlib.compress(serialized[:header] + planes, 1)


def unpacked_kll(blob: bytes) -> bytes:
    """packed_kll's form back to the serialised sketch (its levels' items in sorted order)."""
    scale, raw = blob[1], zlib.decompress(blob[2:])
    layout = _layout(raw)
    if layout is None:
        raise ValueError("a packed KLL sketch without its full preamble")
    header, segments = layout
    count = (len(raw) - header) // 8
    planes = np.frombuffer(raw, np.uint8, count=8 * count, offset=header)
    differences = planes.reshape(8, count).T.copy().view("<i8").ravel()
    integers = _level_sums(differences, segments)
    items: np.ndarray
    if scale == NO_SCALE:
        items = (integers ^ ((integers >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))).view("<f8")
    else:
        items = integers.astype(np.float64) / 10.0**scale
    return bytes(raw[:header]) + bytes(items.astype("<f8").tobytes())


def _level_sums(differences: np.ndarray, segments: list[tuple[int, int]]) -> np.ndarray:
    """Each level's running sums of its differences (the items again), in one pass: the
    running sum over all levels, less where each level's own begins (integers wrap as the
    items' differences did)."""
    sums = np.cumsum(differences)
    if len(segments) > 1:
        starts = np.array([a for a, _ in segments])
        before = np.concatenate(([0], sums[starts[1:] - 1]))
        sums -= np.repeat(before, [b - a for a, b in segments])
    return sums


def _layout(serialized: bytes) -> tuple[int, list[tuple[int, int]]] | None:
    """Where a full sketch's items begin, and each level's items as [start, end) among
    them; None for a sketch of fewer than two items."""
    if len(serialized) < _HEADER or serialized[0] != FULL_PREAMBLE:
        return None
    levels = serialized[18]
    header = _HEADER + 4 * levels + 16
    starts = np.frombuffer(serialized, "<u4", count=levels, offset=_HEADER).astype(np.int64)
    count = (len(serialized) - header) // 8
    bounds = [*(starts - starts[0]).tolist(), count]
    return header, [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _as_integers(items: np.ndarray) -> tuple[int, np.ndarray]:
    """The items as integers: times 10**scale for the least scale at which every item is a
    decimal exactly, else their IEEE bits with the sign's order kept."""
    finite = bool(np.all(np.isfinite(items)))
    for scale in range(MAX_SCALE + 1) if finite else ():
        power = 10.0**scale
        scaled = np.round(items * power)
        if np.all(np.abs(scaled) < _EXACT) and np.array_equal(scaled / power, items):
            return scale, scaled.astype(np.int64)
    bits = items.view("<i8")
    return NO_SCALE, bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))
