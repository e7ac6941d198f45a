"""A block's Theta union and KLL sketch are sized to its table as a partition's sketches are,
counting the table in blocks of its level (metastore.statistics.rollups.block_theta_lg_k and
block_kll_k, docs/design.md#sizes): fewer hashes and items in the blocks of a many-partition
table, and a sixteenth of the table or more, however blocks cover it, still within a union of
lgK 12's error of the exact distinct count and about KLL k 200's rank error."""

from __future__ import annotations

import numpy as np
import pytest
from datasketches import kll_doubles_sketch, update_theta_sketch

from metastore.statistics.histograms import (
    KLL_K,
    THETA_LG_K,
    merge_kll,
    merge_theta,
    partition_kll_k,
    partition_theta_lg_k,
)
from metastore.statistics.rollups import block_kll_k, block_theta_lg_k

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


def test_blocks_of_a_many_partition_table_keep_smaller_kll_sketches() -> None:
    # lineitem by ship date: blocks of 8 at k 46, of 64 at k 129, of 512 at k 200
    assert [block_kll_k(2_526, level) for level in (1, 2, 3)] == [46, 129, KLL_K]
    assert block_kll_k(70, 1) == KLL_K  # a small table's blocks: as before


def test_a_sixteenth_of_the_table_through_sized_kll_blocks_ranks_as_one_sketch() -> None:
    rng = np.random.default_rng(49)
    k = partition_kll_k(PARTITIONS)
    values = [rng.normal(p % 97, 10, VALUES) for p in range(PARTITIONS)]
    partitions = []
    for rows in values:
        sketch = kll_doubles_sketch(k)
        for v in rows:
            sketch.update(float(v))
        partitions.append(sketch.serialize())
    level_1 = block_kll_k(PARTITIONS, 1)
    assert level_1 < KLL_K
    blocks = [
        merge_kll(partitions[b * 8 : (b + 1) * 8], level_1).serialize()
        for b in range(PARTITIONS // 8)
    ]
    wide = [merge_kll(partitions[b * 8 : (b + 1) * 8]).serialize() for b in range(16)]
    assert sum(map(len, blocks[:16])) < 0.6 * sum(map(len, wide))
    # a sixteenth of the table: 16 blocks of 8, and 3 partitions besides
    merged = merge_kll(blocks[:16] + partitions[128:131])
    exact = np.sort(np.concatenate(values[:131]))
    probes = np.quantile(exact, np.linspace(0.02, 0.98, 49))
    errors = [abs(merged.get_rank(x) - np.searchsorted(exact, x) / exact.size) for x in probes]
    # within one sketch of k 200's bound (1.33%, 99% of the time); these err 0.3-0.6%
    assert max(errors) <= kll_doubles_sketch.get_normalized_rank_error(KLL_K, False)
