"""A partition key joined through the partition listing: the fact side's rows per key value
(exact, from the listing) met by the other side's filtered row sample (`listed_key_join`;
docs/estimator.md, the rules table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from metastore.statistics.samples import as_number
from optimizer.estimate.scan_sample import ScanSample


@dataclass(frozen=True)
class ListedJoin:
    """A partition key's join with a sampled column (`listed_key_join`): its rows, and
    which sampled rows of the other side met a listed key (among those its filter kept)."""

    rows: float
    matched: np.ndarray


def listed_key_join(
    listed: tuple[tuple[Any, float], ...],
    listed_rows: float,
    other: ScanSample,
    other_key: str,
    other_rows: float,
) -> ListedJoin | None:
    """An equi-join of a partition key, whose rows per value the partition listing gives
    exactly (`listed`: value, fraction of its side's `listed_rows`), with a scanned column
    whose filtered row sample says which of its values survive: each sampled row of the
    other side that passed its filter stands for its share of `other_rows` and meets the
    listed rows of its key (None when the sample cannot say). Unlike a distinct-count
    formula it sees which keys the two sides share: a fact table partitioned by day joined
    with a year of a calendar dimension meets that year's partitions, not 1/365 of all."""
    loaded = other.rows()
    if loaded is None or not listed:
        return None
    sample, passed = loaded
    if not sample.numeric(other_key):
        return None
    keys = sample.columns[other_key]
    numbers: list[float] = []
    counts: list[float] = []
    for value, fraction in listed:
        try:
            number = as_number(value)
        except TypeError:
            return None
        if number is not None:
            numbers.append(number)
            counts.append(fraction * listed_rows)
    weights = np.where(passed, sample.weights, 0.0)
    total = float(weights.sum())
    if not numbers or total <= 0:
        return ListedJoin(0.0, np.zeros(sample.size, dtype=bool)) if numbers else None
    wanted, rows = np.asarray(numbers), np.asarray(counts)
    order = np.argsort(wanted)
    wanted, rows = wanted[order], rows[order]
    at = np.clip(np.searchsorted(wanted, keys), 0, len(wanted) - 1)
    meets = np.where(wanted[at] == keys, rows[at], 0.0)
    joined = float((weights * meets).sum()) * other_rows / total
    return ListedJoin(joined, passed & (meets > 0))
