"""The row sample behind a scan (`ScanSample`), and its columns read as integer codes or as an
Arrow table: what the sample-based rules (heavy_keys_carried, heavy_keys_surviving,
listed_join, sample_distinct, sample_join) share. Codes are kept with the sample
(`Sample.derived`), so each column is coded once however many rules read it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from metastore.statistics.samples import Sample


@dataclass(frozen=True, eq=False)
class ScanSample:
    """The row sample behind a scan (loaded when first needed) and which sampled rows its
    filter kept (None: all)."""

    alias: str
    load: Callable[[], Sample | None]
    passed: Any = None  # numpy bool array or None
    every_partition: bool = False  # the scan reads all of the table's partitions
    table: str = ""  # the table sampled (two scans of one table share its sampled rows)
    # what the request derived of this scan's sample: the sample itself, loaded once, and
    # what the joins weighed for each join order ask of it again (carried_mcvs)
    memo: dict[Hashable, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def loaded(self) -> Sample | None:
        """The sample, loaded once (each join order the planner weighs asks again)."""
        if "sample" not in self.memo:
            self.memo["sample"] = self.load()
        return self.memo["sample"]  # type: ignore[no-any-return]

    def rows(self) -> tuple[Sample, np.ndarray] | None:
        if "rows" not in self.memo:
            sample = self.loaded()
            if sample is None or sample.size == 0:
                self.memo["rows"] = None
            else:
                passed = self.passed
                if passed is None:
                    passed = np.ones(sample.size, dtype=bool)
                self.memo["rows"] = (sample, passed)
        return self.memo["rows"]  # type: ignore[no-any-return]


def value_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A numeric column's distinct values (sorted, NaN left out) and per row the index of
    its value among them (-1: NaN)."""
    present = ~np.isnan(values)
    distinct, inverse = np.unique(values[present], return_inverse=True)
    codes = np.full(len(values), -1, dtype=np.int32)  # a sample has fewer rows than 2**31
    codes[present] = inverse
    return distinct, codes


def string_codes(sample: Sample, name: str) -> tuple[pa.Array, np.ndarray]:
    """A sampled string column's distinct values (Arrow's dictionary, in order of first
    appearance) and per sampled row the index of its value among them (-1: NULL); kept
    with the sample."""

    def compute() -> tuple[pa.Array, np.ndarray]:
        array = sample.arrow(name)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        encoded = pc.dictionary_encode(array)
        indices = encoded.indices.fill_null(-1)
        codes = np.asarray(indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        return encoded.dictionary, codes

    return sample.derived(("string codes", name), compute)


def sample_table(
    sample: Sample, names: tuple[str, ...], rows: np.ndarray | None = None
) -> pa.Table:
    """The sampled columns `names` as an Arrow table (NULLs as nulls: a string column's
    None, a number's NaN), of the `rows` of a bool mask if given."""
    arrays = {}
    for name in names:
        values = sample.columns[name]
        if values.dtype == object:
            arrays[name] = sample.arrow(name)
        else:
            arrays[name] = pa.array(values, from_pandas=True)
    table = pa.table(arrays)
    return table if rows is None else table.filter(pa.array(rows))
