"""What the collection scan returned for one partition, as the write and the blocks over
it take it (collectors/collect.py)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from collectors.aggregations import ColumnRecord
from metastore.statistics.rollups import PartitionPiece, stored_sample


@dataclass(frozen=True)
class ScannedPartition:
    """What the scan returned for one partition."""

    rows: int
    columns: list[ColumnRecord]
    # (sampled rows, stored bytes, their table); the bytes None where the sample is to be
    # held by its block (`held`), which pools the tables: encoded only if need be (`encoded`)
    sample: tuple[int, bytes | None, pa.Table] | None

    def encoded(self) -> tuple[int, bytes, pa.Table] | None:
        """The sample with its stored bytes (encoded now if they were left)."""
        if self.sample is None:
            return None
        count, _, table = self.sample
        return count, stored_sample(self.piece()), table

    def piece(self) -> PartitionPiece:
        """As the blocks over it take it (metastore.statistics.rollups)."""
        if self.sample is None:
            return PartitionPiece(self.rows, None, self.columns)
        count, stored, table = self.sample
        return PartitionPiece(self.rows, (count, stored), self.columns, table)
