"""Per value of a sampled column, the share of its sampled rows a scan's filter kept: a join
asks it of every heavy key of the other side, since a hot key the filter drops matches
nothing (the heavy keys of docs/design.md#join-cardinality). For a numeric column, every
value's rows at once: the column's value codes and rows per value, kept with the sample, and
the kept rows per value, counted once per request (one pass over the kept rows), so a value
is looked up rather than the whole column compared with it.

>>> import numpy as np
>>> from metastore.statistics.samples import Sample
>>> sample = Sample({"k": np.array([1.0, 1.0, 2.0, 3.0])}, np.ones(4), 1)
>>> shares = KeptShares(sample, np.array([True, False, True, True]), "k")
>>> [shares(v) for v in (1.0, 2.0, 9.0)]
[0.5, 1.0, None]
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metastore.statistics.samples import Sample
from optimizer.estimate.scan_sample import value_codes


class KeptShares:
    """Of the sampled rows whose column `name` holds a value (a number as a double, or a
    string), the share the filter kept (`passed`, per sampled row); None when no sampled row
    holds it (a value of another type than the column's included). One request's: what it
    counts of the kept rows is dropped with it (the sample keeps only what no filter
    changes)."""

    def __init__(self, sample: Sample, passed: np.ndarray, name: str) -> None:
        self.sample, self.passed, self.name = sample, passed, name
        self._numbers: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._strings: dict[str, float | None] = {}

    def __call__(self, probe: float | str) -> float | None:
        numeric = self.sample.numeric(self.name)
        if numeric is None or numeric == isinstance(probe, str):
            return None
        if isinstance(probe, str):
            if probe not in self._strings:
                self._strings[probe] = self._string_share(probe)
            return self._strings[probe]
        if self._numbers is None:
            self._numbers = self._numeric_rows()
        distinct, seen, kept = self._numbers
        at = int(np.searchsorted(distinct, probe))
        if at >= len(distinct) or distinct[at] != probe:
            return None
        return float(kept[at]) / float(seen[at])

    def _numeric_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The column's distinct values (sorted) and rows per value (kept with the sample),
        and the rows among them the filter kept."""
        sample, name = self.sample, self.name
        distinct, codes = sample.derived(
            ("value codes", name), partial(value_codes, sample.columns[name])
        )
        seen = sample.derived(
            ("rows per value", name), partial(_rows_per_code, codes, len(distinct))
        )
        return distinct, seen, _rows_per_code(codes[self.passed], len(distinct))

    def _string_share(self, probe: str) -> float | None:
        holds = pc.equal(self.sample.arrow(self.name), pa.scalar(probe)).fill_null(False)
        seen = int(pc.sum(holds).as_py() or 0)
        kept = int(pc.sum(pc.and_(holds, pa.array(self.passed))).as_py() or 0)
        return kept / seen if seen else None


def _rows_per_code(codes: np.ndarray, distinct: int) -> np.ndarray:
    """Rows per value code (-1, NULL, left out)."""
    return np.bincount(codes[codes >= 0], minlength=distinct)
