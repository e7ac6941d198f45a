"""How often a value outside the heavy hitters typically occurs, on a skewed column.

The histogram level spreads the rows outside the most-common values evenly over the other
distinct values (PostgreSQL's rule): right on average, but on a Zipf-skewed column the
average is carried by the few values just below the heavy hitters, while a typical value
of the tail occurs once or twice (TPC-H's Zipf-1.5 l_partkey: 140 rows on average, 1 for
the rarest key). statlas's own model (docs/estimator.md): the tail's frequencies follow a
power law continuous with the last heavy hitter, g(r) = max(1, c_m (r/m)^-s) for ranks
m < r <= D (every counted distinct value occurs at least once), with the exponent s
solved so the tail holds exactly the rows outside the heavy hitters. An equality on a
value of unknown rank is then estimated at the tail's geometric mean, the point that
minimises the expected log q-error over its values; `tail_ratio` gives it relative to the
average. Without skew (s = 0, or no provable heavy hitters) the ratio is 1 and nothing
changes.
"""

from __future__ import annotations

import math

MAX_EXPONENT = 20.0
_STEPS = 80  # bisection steps: s to within 20 / 2^80


def _tail_sum_and_log_mean(last: float, m: float, ndv: float, s: float) -> tuple[float, float]:
    """Rows in the tail (ranks m..ndv) under g(r) = max(1, last (r/m)^-s), and the mean of
    log g over the tail; integrals over continuous ranks."""
    span = ndv - m
    if s <= 0.0:
        return last * span, math.log(last)
    log_crossing = math.log(m) + math.log(last) / s  # the rank where g falls to one row
    b = ndv if log_crossing >= math.log(ndv) else math.exp(log_crossing)
    x = b / m
    if abs(1.0 - s) < 1e-9:
        power = last * m * math.log(x)
    else:
        power = last * m * (x ** (1.0 - s) - 1.0) / (1.0 - s)
    ones = max(0.0, ndv - b)
    log_integral = (b - m) * math.log(last) - s * m * (x * math.log(x) - x + 1.0)
    return power + ones, log_integral / span


def tail_ratio(heavy_counts: list[float], ndv: float, rest_rows: float) -> float:
    """Typical (geometric-mean) frequency of a value outside the heavy hitters over their
    average frequency `rest_rows / (ndv - m)`; in (0, 1]. `heavy_counts` are the provable
    heavy hitters' row counts, `ndv` the column's distinct values, `rest_rows` the non-null
    rows outside the heavy hitters."""
    m = float(len(heavy_counts))
    span = ndv - m
    if m == 0 or span < 1.0 or rest_rows <= 0:
        return 1.0
    average = rest_rows / span
    last = min(heavy_counts)
    if last <= average or average <= 1.0:  # no skew below the heavy hitters, or all ones
        return 1.0
    low, high = 0.0, MAX_EXPONENT  # the tail sum falls as s grows: bisect for rest_rows
    for _ in range(_STEPS):
        middle = (low + high) / 2.0
        total, _ = _tail_sum_and_log_mean(last, m, ndv, middle)
        if total > rest_rows:
            low = middle
        else:
            high = middle
    _, log_mean = _tail_sum_and_log_mean(last, m, ndv, (low + high) / 2.0)
    return min(1.0, math.exp(log_mean) / average)
