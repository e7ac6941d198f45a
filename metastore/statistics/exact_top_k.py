"""A partition's heavy hitters that never purged, stored as their items and counts
(docs/design.md#sizes): a discount's 11 values and counts in about 40 bytes, against about
110 as DataSketches' frequent-items sketch deflated. The collection scan's JVM writes them
(Sketches.storedTopK, where smaller); read, they are the sketch again (`expanded`: the same
items, counts and stream length, never purged), so every reader of heavy hitters reads them.

Layout: EXACT_TOP_K; the items' kind ('L' longs, 'D' doubles, 'S' strings); for doubles a
scale s (the items are integers times 10^-s; 0xFF: their IEEE bytes instead); the number of
items; the items sorted (integers as zigzag LEB128 differences from the one before, doubles
of no scale as 8 little-endian bytes, strings as their UTF-8 length then bytes); then each
item's count, in the same order, as LEB128 varints.
"""

from __future__ import annotations

import struct

from datasketches import (
    PyDoublesSerDe,
    PyLongsSerDe,
    frequent_items_sketch,
    frequent_strings_sketch,
)

EXACT_TOP_K = 0x46
NO_SCALE = 0xFF
LG_MAX_MAP = 8  # the scan's heavy hitters' map of 256 (jvm_scan.top_k_map_size)


def _varint(blob: bytes, at: int) -> tuple[int, int]:
    """An unsigned LEB128 varint at `at`: (value, where the next begins)."""
    value, shift = 0, 0
    while True:
        byte = blob[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def _signed(value: int) -> int:
    """A zigzag-encoded integer's value."""
    return (value >> 1) ^ -(value & 1)


def exact_items(blob: bytes) -> list[tuple[object, int]]:
    """The items and counts of an EXACT_TOP_K blob."""
    kind = chr(blob[1])
    at, scale = 2, None
    if kind == "D":
        scale, at = blob[2], 3
    count, at = _varint(blob, at)
    items: list[object] = []
    if kind == "S":
        for _ in range(count):
            size, at = _varint(blob, at)
            items.append(blob[at : at + size].decode("utf-8"))
            at += size
    elif kind == "D" and scale == NO_SCALE:
        items = list(struct.unpack_from(f"<{count}d", blob, at))
        at += 8 * count
    else:
        value = 0
        for _ in range(count):
            step, at = _varint(blob, at)
            value += _signed(step)
            items.append(value)
        if kind == "D":
            assert scale is not None
            items = [v / 10.0**scale for v in items]  # type: ignore[operator]
    counts = []
    for _ in range(count):
        weight, at = _varint(blob, at)
        counts.append(weight)
    return list(zip(items, counts, strict=True))


def expanded(blob: bytes) -> bytes | None:
    """An EXACT_TOP_K blob as DataSketches' frequent-items sketch (its items' own serde);
    None for any other blob."""
    if blob[:1] != bytes([EXACT_TOP_K]):
        return None
    kind = chr(blob[1])
    if kind == "S":
        strings = frequent_strings_sketch(LG_MAX_MAP)
        for item, weight in exact_items(blob):
            strings.update(item, weight)
        return bytes(strings.serialize())
    sketch = frequent_items_sketch(LG_MAX_MAP)
    for item, weight in exact_items(blob):
        sketch.update(item, weight)
    return bytes(sketch.serialize(PyLongsSerDe() if kind == "L" else PyDoublesSerDe()))
