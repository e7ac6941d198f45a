"""The heavy-hitters rule of the collection scan's JVM (collectors/jvm LiveState.informative),
written again in Python from docs/design.md#sizes: the oracle the JVM's kept sketches are
checked against, on Spark's own sketches of the same partitions (test_jvm_scan)."""

from __future__ import annotations

import math

from datasketches import frequent_items_error_type, frequent_strings_sketch

from metastore.statistics.histograms import inflated, text_form

FEW_VALUES = 16  # a partition's exact heavy hitters over at most this many values are kept


def heavy_hitters_inform(top_k: bytes, items: str | None) -> bool:
    """Whether a partition's heavy hitters (serialised as Spark writes them) are worth
    keeping, as the scan's JVM decides: a sketch that purged names a value above its own
    error; one that never did counts every value exactly, and is kept over at most
    FEW_VALUES values, or where its heaviest value holds at least twice the average count
    and four standard deviations of a uniform draw more."""
    sketch = frequent_strings_sketch.deserialize(text_form(inflated(top_k), items))
    found = sketch.get_frequent_items(frequent_items_error_type.NO_FALSE_POSITIVES)
    if not found:
        return False
    error = max(int(estimate - lower) for _, estimate, lower, _ in found)
    active = sketch.num_active_items
    if error > 0 or active <= FEW_VALUES:
        return True
    mean = sketch.total_weight / active
    return bool(max(int(estimate) for _, estimate, _, _ in found) >= 2 * mean + 4 * math.sqrt(mean))
