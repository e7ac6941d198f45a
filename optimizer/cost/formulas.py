"""CPU and IO of each operator, exactly as the Hive CBO proposal writes them
(docs/design.md#operator-costs). T is rows, Tsz the average row size in bytes;
costs are nanoseconds. `log` is log2 (comparisons of a sort); the proposal leaves the base open.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from optimizer.cost.params import CostParams


@dataclass(frozen=True)
class Input:
    rows: float  # T(R)
    size: float  # Tsz

    @property
    def bytes(self) -> float:
        return self.rows * self.size


@dataclass(frozen=True)
class Cost:
    """HiveVolcanoCost: CPU and IO kept apart; plans compare on CPU + IO, then rows."""

    cpu: float = 0.0
    io: float = 0.0
    rows: float = 0.0

    @property
    def total(self) -> float:
        return self.cpu + self.io

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.cpu + other.cpu, self.io + other.io, self.rows + other.rows)

    def is_le(self, other: Cost) -> bool:
        """HiveVolcanoCost.isLe (docs/design.md#plan-comparison): CPU + IO, then rows."""
        if self.total != other.total:
            return self.total < other.total
        return self.rows <= other.rows


def _tlogt(rows: float) -> float:
    return rows * math.log2(rows) if rows > 1 else 0.0


def table_scan(table: Input, p: CostParams) -> Cost:
    """Table Scan: CPU 0; IO = Hr * T(R) * Tsz."""
    return Cost(0.0, p.hdfs_read * table.bytes, table.rows)


def common_join(inputs: Sequence[Input], out_rows: float, p: CostParams) -> Cost:
    """Common Join: CPU = sum T(Ri) log T(Ri) CPUc + sum T(Ri) CPUc;
    IO = (Lw + Lr + NEt) * sum T(Ri) Tszi."""
    cpu = sum(_tlogt(r.rows) for r in inputs) * p.cpu_c + sum(r.rows for r in inputs) * p.cpu_c
    shuffled = sum(r.bytes for r in inputs)
    io = p.local_write * shuffled + p.local_read * shuffled + p.net * shuffled
    return Cost(cpu, io, out_rows)


def map_join(
    big: Input, small: Sequence[Input], mappers: float, out_rows: float, p: CostParams
) -> Cost:
    """Map Join: CPU = (T(R2) + ... + T(Rm)) + (T(R1) + ... + T(Rm)) * CPUc (the proposal
    writes the hash-table term without CPUc); IO = NEt * sum T(Ri) Tszi (i >= 2) * mappers."""
    small_rows = sum(r.rows for r in small)
    cpu = small_rows + (big.rows + small_rows) * p.cpu_c
    io = p.net * sum(r.bytes for r in small) * mappers
    return Cost(cpu, io, out_rows)


def bucket_map_join(
    big: Input, small: Sequence[Input], mappers: float, out_rows: float, p: CostParams
) -> Cost:
    """Bucket Map Join: CPU = (T(R2) + ... + T(Rm)) * CPUc + (T(R1) + ... + T(Rm)) *
    CPUc; IO = NEt * sum T(Ri) Tszi (i >= 2) * mappers."""
    small_rows = sum(r.rows for r in small)
    cpu = small_rows * p.cpu_c + (big.rows + small_rows) * p.cpu_c
    io = p.net * sum(r.bytes for r in small) * mappers
    return Cost(cpu, io, out_rows)


def smb_join(
    big: Input, small: Sequence[Input], mappers: float, out_rows: float, p: CostParams
) -> Cost:
    """SMB Join: CPU = (T(R1) + ... + T(Rm)) * CPUc; IO = NEt * sum T(Ri) Tszi (i >= 2)
    * mappers."""
    cpu = (big.rows + sum(r.rows for r in small)) * p.cpu_c
    io = p.net * sum(r.bytes for r in small) * mappers
    return Cost(cpu, io, out_rows)


def group_by(child: Input, out_rows: float, p: CostParams) -> Cost:
    """Distinct/Group By: CPU = (T(R) log T(R) + T(R)) * CPUc; IO = Lw T Tsz + Lr T Tsz
    + NEt T Tsz."""
    cpu = (_tlogt(child.rows) + child.rows) * p.cpu_c
    io = (p.local_write + p.local_read + p.net) * child.bytes
    return Cost(cpu, io, out_rows)


def union_all(inputs: Sequence[Input], p: CostParams) -> Cost:
    """Union All: CPU 0; IO = (sum T Tsz) * Hw + (sum T Tsz) * Hr + (sum T Tsz) * NEt."""
    moved = sum(r.bytes for r in inputs)
    return Cost(
        0.0, moved * p.hdfs_write + moved * p.hdfs_read + moved * p.net, sum(r.rows for r in inputs)
    )


def filter_(child: Input, out_rows: float, p: CostParams) -> Cost:
    """Filter/Having: CPU = T(R) * CPUc; IO 0."""
    return Cost(child.rows * p.cpu_c, 0.0, out_rows)


def select(child: Input) -> Cost:
    """Select: CPU 0, IO 0."""
    return Cost(0.0, 0.0, child.rows)


def skew_join(skewed: Cost, rest: Cost, skewed_out: Input, rest_out: Input, p: CostParams) -> Cost:
    """Skew Join: the rewrite (join on the skewed values) UNION ALL (join on the rest),
    costed as its two joins plus the union."""
    return skewed + rest + union_all((skewed_out, rest_out), p)
