"""A block's Theta union is sized to its table as a partition's sketch is, counting the table
in blocks of its level (metastore.statistics.rollups.block_theta_lg_k, docs/design.md#sizes):
fewer hashes in the blocks of a many-partition table, and a sixteenth of the table or more,
however blocks cover it, still within a union of lgK 12's error of the exact distinct count."""

from __future__ import annotations

import pytest
from datasketches import update_theta_sketch

from metastore.statistics.histograms import THETA_LG_K, merge_theta, partition_theta_lg_k
from metastore.statistics.rollups import block_theta_lg_k

PARTITIONS = 2_048
VALUES = 600  # distinct values per partition, none shared between partitions
THETA_12 = 1 / 64  # a union of lgK 12's relative standard error


def test_blocks_of_a_many_partition_table_keep_fewer_hashes() -> None:
    # lineitem by ship date (2,526 partitions): blocks of 8 at lgK 8, of 64 at 11, of 512 at 12
    assert [block_theta_lg_k(2_526, level) for level in (1, 2, 3)] == [8, 11, 12]
    assert block_theta_lg_k(70, 1) == THETA_LG_K  # a small table's blocks: as before
    assert partition_theta_lg_k(2_526) == 7


def test_a_sixteenth_of_the_table_through_sized_blocks_is_as_accurate() -> None:
    lg_k = partition_theta_lg_k(PARTITIONS)
    partitions = []
    for p in range(PARTITIONS):
        sketch = update_theta_sketch(lg_k)
        for v in range(VALUES):
            sketch.update(p * VALUES + v)
        partitions.append(sketch.compact().serialize())
    level_1 = block_theta_lg_k(PARTITIONS, 1)
    assert level_1 < THETA_LG_K
    blocks = [
        merge_theta(partitions[b * 8 : (b + 1) * 8], level_1).serialize()
        for b in range(PARTITIONS // 8)
    ]
    assert all(merge_theta([b]).num_retained <= 2**level_1 for b in blocks)
    # a sixteenth of the table: 16 blocks of 8, and 3 partitions besides
    selection = blocks[:16] + partitions[128:131]
    exact = (16 * 8 + 3) * VALUES
    estimate = merge_theta(selection).get_estimate()
    assert estimate == pytest.approx(exact, rel=3 * THETA_12)
    # about a union of lgK 12's hashes (the least of the blocks' thetas bounds them: 3,746)
    assert merge_theta(selection).num_retained >= 0.9 * 2**THETA_LG_K
    # one block alone: its own lgK's error
    one = merge_theta(blocks[:1]).get_estimate()
    assert one == pytest.approx(8 * VALUES, rel=3 / 2 ** (level_1 / 2))
