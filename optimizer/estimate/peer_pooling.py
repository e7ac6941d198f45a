"""Pooling a sampled side's per-value figures among their peers before two sides' degrees
multiply (docs/estimator.md#key-degrees; optimizer.estimate.key_degrees): the values the
other side holds about as many rows of, each figure drawn towards its group's average as far
as sampling explains the group's spread (Efron and Morris, *Data analysis using Stein's
estimator and its generalizations*, 1975: empirical Bayes within strata)."""

from __future__ import annotations

from typing import Final

import numpy as np

POOL_LEAST: Final = 8  # the fewest values a sampled side's figures are pooled among
# the fewest sampled rows per value of a group its figures are pooled over: sparser, a
# group's spread says nothing of its noise (a filtered side's few sampled rows)
POOL_SUPPORT_LEAST: Final = 0.05


def pooled(
    rows: np.ndarray, support: np.ndarray, noise: np.ndarray, other: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One sampled side's figures per value drawn towards the average of their peers: the
    values the other side holds rows of, grouped by the power of two of those rows (a group
    of POOL_LEAST values or more; `groups`), each figure shrunk as far as sampling
    explains its group's spread (`trust_in_groups`; Efron and Morris 1973: empirical Bayes within
    strata of the other side's degree, so a correlation of the two sides' degrees is kept).
    Returns the pooled rows, support and variance, and per value the trust in its own
    figure and its group's average (1 and 0 outside any group)."""
    trust, mean = np.ones(len(rows)), np.zeros(len(rows))
    if other is None:  # not pooled
        return rows, support, noise, trust, mean
    held = np.flatnonzero(other > 0)
    found = groups(np.floor(np.log2(other[held])).astype(np.int64))
    if found is None:
        return rows, support, noise, trust, mean
    members, group = held[found >= 0], found[found >= 0]
    # a figure whose every sampled row stands for itself (forced in: weight one) is known,
    # not drawn: it keeps its figure, and its group's spread and noise are the others'
    drawn = (noise[members] > 0) | (support[members] <= 0)
    members, group = members[drawn], group[drawn]
    if len(members) == 0:
        return rows, support, noise, trust, mean
    group_trust, group_mean, group_support = trust_in_groups(
        group, rows[members], support[members], noise[members]
    )
    trust[members], mean[members] = group_trust[group], group_mean[group]
    pooled_rows = mean + trust * (rows - mean)
    pooled_support = support.copy()
    pooled_support[members] = (
        trust[members] * support[members] + (1.0 - trust[members]) * group_support[group]
    )
    return pooled_rows, pooled_support, trust * noise, trust, mean


def groups(powers: np.ndarray) -> np.ndarray | None:
    """Per value, its group (-1: none), by the power of two of its rows on the other side
    (`powers`), from the most rows down: a group closes where the power changes once it
    has POOL_LEAST members; the last group, if smaller, joins the one before. None where
    there are fewer values than one group needs."""
    if len(powers) < POOL_LEAST:
        return None
    found, counts = np.unique(powers, return_counts=True)  # ascending powers
    of_power, group, size = np.empty(len(found), dtype=np.int64), 0, 0
    for at in range(len(found) - 1, -1, -1):  # the heaviest first
        if size >= POOL_LEAST:
            group, size = group + 1, 0
        of_power[at] = group
        size += int(counts[at])
    if size < POOL_LEAST and group > 0:  # the last group joins the one before
        of_power[of_power == group] = group - 1
    return of_power[np.searchsorted(found, powers)]


def trust_in_groups(
    group: np.ndarray, rows: np.ndarray, support: np.ndarray, noise: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of values (`group`: each value's), the share of the spread of its figures
    that their sampling variance (`noise`; for a value no sampled row shows, at least the
    variance a figure of the group's average would have, drawn at the group's rows per
    sampled row) does not explain (1 where the group has fewer than POOL_SUPPORT_LEAST
    sampled rows per value: too sparse to tell noise from spread), their average, and their
    average support. One share for the whole group, so the group's rows are its figures'
    sum (KeyDegrees.shrinkage within a group)."""
    count = np.bincount(group).astype(np.float64)  # a group may have no member left
    total = np.bincount(group, weights=rows)
    sampled = np.bincount(group, weights=support)
    mean = _per_member(total, count)
    spread = _per_member(np.bincount(group, weights=rows * rows), count) - mean * mean
    per_sample = np.divide(total, sampled, out=np.ones(len(total)), where=sampled > 0)
    floor = mean * np.maximum(per_sample - 1.0, 0.0)
    own = _per_member(np.bincount(group, weights=np.maximum(noise, floor[group])), count)
    share = np.divide(
        np.maximum(spread - own, 0.0), spread, out=np.zeros(len(spread)), where=spread > 0
    )
    kept = (mean <= 0) | (sampled < POOL_SUPPORT_LEAST * count)
    return np.where(kept, 1.0, share), mean, _per_member(sampled, count)


def _per_member(sums: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per group, `sums` over its members (`count`; 0 for a group without any)."""
    averaged: np.ndarray = np.divide(sums, count, out=np.zeros(len(sums)), where=count > 0)
    return averaged
