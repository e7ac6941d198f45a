"""The distribution of COUNT(*) over the groups of a GROUP BY, for predicates on it
(`HAVING COUNT(*) > 4`, `WHERE cnt BETWEEN 15 AND 20` over a derived table).

docs/design.md#group-by (Hive's CBO has no figure for a predicate on an aggregate; Hive, Spark and
PostgreSQL use a default of 1/3): rows fall into groups independently, so the rows of a
group follow a Poisson law with mean rows / groups, truncated at one row (a group has at
least one). The law is kept as an exact distribution (ColumnEstimate.points), so ranges on
the count use the ordinary range machinery.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

MAX_POINTS = 400  # points kept of the cumulative distribution (a coarser grid above)


@lru_cache(maxsize=1024)
def group_size_points(mean: float) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(counts, P(count <= c)) of a zero-truncated Poisson law with the given mean rows per
    group (the mean of the untruncated law solves lambda / (1 - e^-lambda) = mean); None
    when a group has about one row (the count is 1). The mass is summed from 10 standard
    deviations below lambda (below, it is under e^-50): sqrt(lambda) terms, not lambda."""
    if not math.isfinite(mean) or mean <= 1.0 + 1e-9:
        return None
    lam = _poisson_mean(mean)
    spread = 10.0 * math.sqrt(lam) + 10.0
    top = math.ceil(lam + spread)
    low = max(1, math.floor(lam - spread))
    step = max(1, math.ceil(top / MAX_POINTS))
    kept = 1.0 - math.exp(-lam)
    ks = np.arange(low, top + 1, dtype=np.float64)
    # log P(X = k) = k log(lambda) - lambda - log(k!)
    log_pmf = ks * math.log(lam) - lam - (math.lgamma(low) + np.cumsum(np.log(ks)))
    cumulative = np.minimum(1.0, np.cumsum(np.exp(log_pmf) / kept))
    grid = np.arange(step, top + 1, step, dtype=np.int64)
    if not len(grid) or grid[-1] != top:
        grid = np.append(grid, top)
    at = grid - low
    values = np.where(at >= 0, cumulative[np.clip(at, 0, None)], 0.0)
    values[-1] = 1.0
    return tuple(float(k) for k in grid), tuple(float(v) for v in values)


def _poisson_mean(mean: float) -> float:
    """lambda with lambda / (1 - e^-lambda) = mean (the truncated law's mean), by Newton."""
    lam = mean
    for _ in range(50):
        kept = 1.0 - math.exp(-lam)
        value = lam / kept - mean
        derivative = (kept - lam * math.exp(-lam)) / (kept * kept)
        step = value / derivative
        lam = max(lam - step, 1e-9)
        if abs(step) < 1e-9:
            break
    return lam
