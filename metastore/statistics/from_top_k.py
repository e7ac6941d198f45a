"""A partition's KLL or Theta sketch that its heavy hitters stand for (docs/design.md#sizes).
Where a partition's stored heavy hitters never purged, they name every value with its exact
count (a discount's 11 values, a ship mode's 7), and the collection scan's JVM stores a
one-byte mark (`FROM_TOP_K`, Sketches.FROM_TOP_K) in place of:

- its KLL sketch, where they count every value the sketch was fed: read, those values,
  each as often as counted, are fed to a KLL sketch (a distribution known exactly, not
  about a hundred bytes of sketch a column and partition);
- its Theta sketch, where that sketch is exact and holds the hashes of exactly those
  values (the JVM checks): read, a Theta sketch is built from them.

Read, a KLL mark becomes the values and their counts (`counted_form`, a form only memory
holds: `COUNTED`), which histograms.inflated turns into a KLL sketch and histograms.merge_kll
feeds to a merge; stored again, they are the mark (`stored_kll`). A Theta mark becomes the
compact sketch (`read_theta`), and stays one.
"""

from __future__ import annotations

import functools

import numpy as np
from datasketches import frequent_items_error_type, frequent_strings_sketch, update_theta_sketch

FROM_TOP_K = 0x45
"""The stored mark: the partition's heavy hitters (top_k, never purged) stand for the sketch."""

COUNTED = 0x57
"""The first byte of a KLL sketch's values as read: the values (8-byte doubles), then their
counts (8-byte integers), as many of each."""

# DataSketches' frequent-items serial form: a preamble of `preamble longs` 8-byte words (the
# low 6 bits of byte 0; 1 when empty), the number of active items at byte 8, then one
# 8-byte weight per item, then the items as their serde writes them
NUMBER_ITEMS = {"longs": np.dtype("<i8"), "doubles": np.dtype("<f8")}


def items_layout(blob: bytes) -> tuple[int, int]:
    """(items, where the items begin) of a serialised frequent-items sketch."""
    preamble = blob[0] & 0x3F
    if preamble == 1:
        return 0, len(blob)
    count = int.from_bytes(blob[8:12], "little")
    return count, preamble * 8 + count * 8


def _numbers(top_k: bytes, items: str | None) -> tuple[np.ndarray, np.ndarray] | None:
    """The items (as numbers) and counts of heavy hitters `top_k` (DataSketches'
    frequent-items form, inflated) of longs or doubles; None for other items, or none."""
    dtype = NUMBER_ITEMS.get(items or "")
    count, start = items_layout(top_k)
    if dtype is None or not count:
        return None
    weights = np.frombuffer(top_k, dtype="<i8", count=count, offset=start - 8 * count)
    values = np.frombuffer(top_k, dtype=dtype, count=count, offset=start)
    return values, weights


def counted_form(top_k: bytes, items: str | None) -> bytes | None:
    """The values of heavy hitters `top_k` as the KLL sketch was fed them (doubles) with
    their counts; None where they are not longs or doubles."""
    found = _numbers(top_k, items)
    if found is None:
        return None
    values, weights = found
    return bytes([COUNTED]) + values.astype("<f8").tobytes() + weights.tobytes()


def counted_values(blob: bytes) -> np.ndarray | None:
    """Every value a counted KLL sketch stands for, each as often as counted (doubles); None
    for a sketch."""
    if blob[:1] != bytes([COUNTED]):
        return None
    count = (len(blob) - 1) // 16
    values = np.frombuffer(blob, dtype="<f8", count=count, offset=1)
    weights = np.frombuffer(blob, dtype="<i8", count=count, offset=1 + 8 * count)
    return np.repeat(values, weights)


def _marked(blob: bytes | None) -> bool:
    return blob is not None and blob[:1] == bytes([FROM_TOP_K])


def read_kll(kll: bytes | None, top_k: bytes | None, items: str | None) -> bytes | None:
    """A partition's stored KLL sketch as read: the mark as its heavy hitters' counted form,
    anything else as it is (None: a mark without heavy hitters to read it from)."""
    if not _marked(kll):
        return kll
    return None if top_k is None else counted_form(top_k, items)


def read_theta(theta: bytes | None, top_k: bytes | None, items: str | None) -> bytes | None:
    """A partition's stored Theta sketch as read: the mark as the compact sketch of its
    heavy hitters' items (integers as longs, strings as their UTF-8 bytes, as the scan fed
    them), anything else as it is."""
    if not _marked(theta):
        return theta
    if top_k is None:
        return None
    found = _numbers(top_k, items)
    if found is not None:
        return _theta_of(tuple(sorted(int(v) for v in found[0].tolist())))
    strings = frequent_strings_sketch.deserialize(top_k)
    error = frequent_items_error_type.NO_FALSE_NEGATIVES
    return _theta_of(tuple(sorted(item for item, *_ in strings.get_frequent_items(error, 0))))


@functools.lru_cache(maxsize=4096)
def _theta_of(values: tuple[int, ...] | tuple[str, ...]) -> bytes:
    """The compact Theta sketch of a few values (a table's partitions mostly repeat the same
    few: a ship mode's 7), built once per set of them."""
    sketch = update_theta_sketch()
    for value in values:
        sketch.update(value)
    return bytes(sketch.compact().serialize())


def stored_kll(kll: bytes | None) -> bytes | None:
    """A KLL sketch as stored: a counted form as the mark again."""
    if kll is not None and kll[:1] == bytes([COUNTED]):
        return bytes([FROM_TOP_K])
    return kll
