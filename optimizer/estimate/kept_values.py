"""Per value of a sampled column, the share of its sampled rows a scan's filter kept: a join
asks it of every heavy key of the other side, since a hot key the filter drops matches
nothing (the heavy keys of docs/design.md#join-cardinality). Counted once per sample and
filter for every value of a numeric column at once (its value codes, kept with the sample;
the kept rows per code, kept with the filter's count, as the count is kept with its sample),
so a request looks a value up rather than compares the whole column with it.

>>> import numpy as np
>>> from metastore.samples import Sample
>>> from optimizer.estimate.sample_filter import SampleCount
>>> sample = Sample({"k": np.array([1.0, 1.0, 2.0, 3.0])}, np.ones(4), 1)
>>> count = SampleCount(3, 4, 0.75, passed=np.array([True, False, True, True]))
>>> [kept_share(sample, count, "k", v) for v in (1.0, 2.0, 9.0)]
[0.5, 1.0, None]
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metastore.samples import Sample
from optimizer.estimate.key_lookup import value_codes
from optimizer.estimate.sample_filter import SampleCount


def kept_share(sample: Sample, count: SampleCount, name: str, probe: Any) -> float | None:
    """Of the sampled rows whose column `name` holds `probe` (a number as a double, or a
    string), the share `count`'s filter kept; None when no sampled row holds it (a value of
    another type than the column's included)."""
    numeric = sample.numeric(name)
    if numeric is None or numeric == isinstance(probe, str):
        return None
    if not numeric:
        return _string_share(sample, count, name, probe)
    figures = count.kept_per_value.get(name)
    if figures is None:
        figures = count.kept_per_value[name] = _numeric_rows(sample, count.passed, name)
    distinct, seen, kept = figures
    at = int(np.searchsorted(distinct, probe))
    if at >= len(distinct) or distinct[at] != probe:
        return None
    return float(kept[at]) / float(seen[at])


def _numeric_rows(
    sample: Sample, passed: np.ndarray, name: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A numeric column's distinct values (sorted), its sampled rows per value (kept with
    the sample) and the rows among them `passed` kept."""
    distinct, codes = sample.derived(
        ("value codes", name), partial(value_codes, sample.columns[name])
    )
    seen = sample.derived(("rows per value", name), partial(_rows_per_code, codes, len(distinct)))
    return distinct, seen, _rows_per_code(codes[passed], len(distinct))


def _rows_per_code(codes: np.ndarray, distinct: int) -> np.ndarray:
    """Rows per value code (-1, NULL, left out)."""
    return np.bincount(codes[codes >= 0], minlength=distinct)


def _string_share(sample: Sample, count: SampleCount, name: str, probe: str) -> float | None:
    """`kept_share` of a string column, one value at a time in Arrow (kept with the count)."""
    key = (name, probe)
    if key not in count.kept_per_value:
        holds = pc.equal(sample.arrow(name), pa.scalar(probe)).fill_null(False)
        seen = int(pc.sum(holds).as_py() or 0)
        kept = int(pc.sum(pc.and_(holds, pa.array(count.passed))).as_py() or 0)
        count.kept_per_value[key] = kept / seen if seen else None
    share: float | None = count.kept_per_value[key]
    return share
