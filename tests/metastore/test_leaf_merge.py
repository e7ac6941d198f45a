"""A level-1 block merged as its partitions arrive (rollups.LeafMerge), in whatever order a
collection's scan hands them over, reads as the block merged from them in id order."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from datasketches import update_theta_sketch

from metastore.statistics.column_pieces import merge_pieces, piece_of_partition
from metastore.statistics.histograms import inflated, merge_hll
from metastore.statistics.rollups import LeafMerge, PartitionPiece
from tests.support.exact_sets import exact_set

TYPES = {"day": "int", "key": "bigint"}


def record(name: str, values: list[int], sketch: str) -> Any:
    """A column_stats record of the values: an exact set (HLL) or a Theta sketch."""
    theta = None
    if sketch == "theta":
        built = update_theta_sketch(12)
        for value in values:
            built.update(value)
        theta = built.compact().serialize(compress=True)
    return SimpleNamespace(
        name=name,
        null_count=1,
        min_value=str(min(values)),
        max_value=str(max(values)),
        total_len=None,
        max_len=None,
        hll=exact_set(values) if sketch == "hll" else None,
        kll=None,
        theta=theta,
        top_k=None,
        top_k_items=None,
        absent=False,
    )


def test_a_block_merged_as_its_partitions_arrive_reads_as_one_merged_in_id_order() -> None:
    rng = random.Random(4)
    pieces = {}
    for pid in range(8, 16):
        # each partition's days below the one before's: the order values are fed in tells
        days = rng.sample(range(19_000 - 300 * pid, 20_200 - 300 * pid), 500)
        keys = rng.sample(range(10**6), 300)
        records = [record("day", days, "hll"), record("key", keys, "theta")]
        pieces[pid] = PartitionPiece(rows=600, sample=None, records=records)
    arrival = list(pieces)
    rng.shuffle(arrival)
    assert arrival != sorted(arrival)
    merge = LeafMerge(TYPES, partitions_in_table=100)
    for pid in arrival:
        merge.add(pid, pieces[pid])
    block = merge.block(table_id=1)
    assert block.block["block"] == 1
    assert block.block["partitions"] == 8
    assert block.block["row_count"] == 8 * 600
    assert block.members == tuple(range(8, 16))
    by_name = {row["column_name"]: row for row in block.columns}
    for name in ("day", "key"):
        column = [
            piece_of_partition(r) for pid in sorted(pieces) for r in pieces[pid].records
            if r.name == name
        ]  # fmt: skip
        expected = merge_pieces(TYPES[name], column, theta_lg_k=12)
        row = by_name[name]
        assert (row["null_count"], row["min_value"], row["max_value"]) == (
            expected.null_count,
            expected.min_value,
            expected.max_value,
        )
        assert row["distinct_sum"] == expected.distinct_sum
        assert row["theta"] == expected.theta
        assert row["hll"] == expected.hll
    estimate = merge_hll([inflated(by_name["day"]["hll"])]).get_estimate()
    assert estimate == merge_hll([pieces[p].records[0].hll for p in sorted(pieces)]).get_estimate()
