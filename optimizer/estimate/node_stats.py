"""What the estimator knows of one plan node's output (docs/design.md#estimates): its rows,
its average row size and its columns' statistics, with the row sample behind a (filtered)
scan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from optimizer.estimate.column import ColumnEstimate
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.values import Estimate
from optimizer.plan import ColumnRef


@dataclass(frozen=True)
class NodeStats:
    rows: Estimate
    row_size: float
    columns: dict[ColumnRef, ColumnEstimate]
    # the row sample behind a (filtered) scan, for heavy keys of a join (heavy_keys_surviving)
    sample: ScanSample | None = None

    def renamed(self, aliases: Mapping[str, str]) -> NodeStats:
        """The same figures for another node of the same shape (optimizer.estimate.
        node_shape), its relation aliases renamed (`aliases`: old -> new; one not named
        keeps its name). The row samples behind its columns are new objects (one per sample
        of these figures, with its alias renamed): rules tell the columns of one scan by the
        identity of their sample (`ColumnEstimate.origin`), and the other node's scans are
        other scans."""
        fresh: dict[ScanSample, ScanSample] = {}  # samples hash by identity

        def copied(sample: ScanSample) -> ScanSample:
            found = fresh.get(sample)
            if found is None:
                alias = aliases.get(sample.alias, sample.alias)
                found = fresh[sample] = replace(sample, alias=alias)
            return found

        columns = {}
        for (alias, name), column in self.columns.items():
            origin = column.origin
            if origin is not None:  # replace(column, origin=...) without __init__ over its
                # twenty fields: a renamed join carries every column of its tables
                renamed = object.__new__(ColumnEstimate)
                renamed.__dict__.update(column.__dict__)
                object.__setattr__(renamed, "origin", (copied(origin[0]), origin[1]))
                column = renamed
            columns[(aliases.get(alias, alias), name)] = column
        sample = None if self.sample is None else copied(self.sample)
        return NodeStats(self.rows, self.row_size, columns, sample)
