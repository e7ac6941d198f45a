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

MAX_POINTS = 400  # points kept of the cumulative distribution (a coarser grid above)


def group_size_points(mean: float) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(counts, P(count <= c)) of a zero-truncated Poisson law with the given mean rows per
    group (the mean of the untruncated law solves lambda / (1 - e^-lambda) = mean); None
    when a group has about one row (the count is 1)."""
    if not math.isfinite(mean) or mean <= 1.0 + 1e-9:
        return None
    lam = _poisson_mean(mean)
    top = math.ceil(lam + 10.0 * math.sqrt(lam) + 10.0)
    step = max(1, math.ceil(top / MAX_POINTS))
    kept = 1.0 - math.exp(-lam)
    counts: list[float] = []
    cumulative: list[float] = []
    log_pmf = -lam  # log P(X = 0)
    total = 0.0
    for k in range(1, top + 1):
        log_pmf += math.log(lam) - math.log(k)
        total += math.exp(log_pmf) / kept
        if k % step == 0 or k == top:
            counts.append(float(k))
            cumulative.append(min(1.0, total))
    cumulative[-1] = 1.0
    return tuple(counts), tuple(cumulative)


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
