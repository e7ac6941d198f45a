"""What the estimator knows of one plan node's output (docs/design.md#estimates): its rows,
its average row size and its columns' statistics, with the row sample behind a (filtered)
scan."""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.key_lookup import ScanSample
from optimizer.estimate.values import Estimate
from optimizer.plan import ColumnRef


@dataclass(frozen=True)
class NodeStats:
    rows: Estimate
    row_size: float
    columns: dict[ColumnRef, ColumnEstimate]
    # the row sample behind a (filtered) scan, for heavy keys of a join (key_lookup)
    sample: ScanSample | None = None
