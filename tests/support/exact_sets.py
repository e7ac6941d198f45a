"""Exact sets of values as the collection scan's JVM writes them in place of an HLL sketch
(metastore.statistics.exact_sets: Sketches.storedHll), built here from docs/design.md#sizes."""

from __future__ import annotations

import zlib

from metastore.statistics.exact_sets import EXACT_SET


def exact_set(values: list[int], mark: int = EXACT_SET) -> bytes:
    """The layout EXACT_SET (or HASHED_SET) documents: the least as 8 little-endian bytes,
    then each step from the value before as an unsigned LEB128 varint (0 for the first),
    deflated."""
    ordered = sorted(values)
    varints = bytearray()
    for i, value in enumerate(ordered):
        step = 0 if i == 0 else value - ordered[i - 1]
        while step >= 0x80:
            varints.append(step & 0x7F | 0x80)
            step >>= 7
        varints.append(step)
    least = ordered[0].to_bytes(8, "little", signed=True)
    return bytes([mark]) + least + zlib.compress(bytes(varints), 1)
