"""The cost model (docs/design.md#cost-model): one test per formula, the
cost variables and their chain, plan comparison; and the join-algorithm rules
(docs/design.md#join-algorithms)."""

from __future__ import annotations

import math

import pytest

from metastore.catalog.tables import BucketSpec
from metastore.errors import InvalidValue
from optimizer.cost import formulas as f
from optimizer.cost.params import CostParams, cost_params, parse_settings
from optimizer.physical.algorithms import Side, big_table, choose_join, hashable_sides

P = CostParams()
R1, R2, R3 = f.Input(1000, 100), f.Input(200, 50), f.Input(10, 20)


def test_seed_default_cost_variables() -> None:
    assert (P.cpu_c, P.net) == (1.0, 150.0)
    assert P.local_write == P.local_read == 4 * P.net == 600.0
    assert P.hdfs_write == 10 * P.local_write == 6000.0
    assert P.hdfs_read == 1.5 * P.local_read == 900.0
    assert cost_params() == P


def test_unset_variables_follow_the_seed_chain() -> None:
    p = cost_params({"CPUc": "2"})
    assert (p.cpu_c, p.net, p.local_write, p.hdfs_write, p.hdfs_read) == (2, 300, 1200, 12000, 1800)
    p = cost_params({"NEt": "100", "Hr": "1"})
    assert (p.cpu_c, p.net, p.local_read, p.hdfs_read, p.hdfs_write) == (1, 100, 400, 1, 4000)
    assert cost_params({"map_join_threshold": "5e6"}).map_join_threshold == 5_000_000


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"nope": "1"}, "unknown setting"),
        ({"CPUc": "fast"}, "needs a number"),
        ({"Lw": "-1"}, "non-negative"),
        ({"skew_share": "2"}, "fraction"),
        ({"implied_join_gain": "1"}, "fraction in \\[0, 1\\)"),
        ({"big_table_policy": "random"}, "big_table_policy"),
    ],
)
def test_bad_settings_are_one_line_errors(settings: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidValue, match=message):
        cost_params(settings)


def test_settings_parse_from_key_value_pairs() -> None:
    assert parse_settings(["CPUc=2", " Lw = 3 "]) == {"CPUc": "2", "Lw": "3"}
    with pytest.raises(InvalidValue):
        parse_settings(["CPUc"])


def test_table_scan() -> None:
    """CPU 0; IO = Hr * T(R) * Tsz."""
    assert f.table_scan(R1, P) == f.Cost(0.0, 900.0 * 1000 * 100, 1000)


def test_common_join() -> None:
    """CPU = sum T log T CPUc + sum T CPUc; IO = (Lw + Lr + NEt) sum T Tsz."""
    cost = f.common_join([R1, R2], 500, P)
    cpu = 1000 * math.log2(1000) + 200 * math.log2(200) + 1200
    assert cost.cpu == pytest.approx(cpu)
    assert cost.io == pytest.approx((600 + 600 + 150) * (100_000 + 10_000))
    assert cost.rows == 500


def test_map_join() -> None:
    """CPU = (T(R2)+...+T(Rm)) + (T(R1)+...+T(Rm)) CPUc; IO = NEt sum T Tsz (small) x
    mappers."""
    cost = f.map_join(R1, [R2, R3], 4, 300, cost_params({"CPUc": "2"}))
    assert cost.cpu == pytest.approx(210 + 1210 * 2)  # the hash-table term has no CPUc
    assert cost.io == pytest.approx(300 * (10_000 + 200) * 4)


def test_bucket_map_join() -> None:
    """CPU = (T(R2)+...+T(Rm)) CPUc + (T(R1)+...+T(Rm)) CPUc; IO as the map join."""
    cost = f.bucket_map_join(R1, [R2, R3], 4, 300, cost_params({"CPUc": "2"}))
    assert cost.cpu == pytest.approx(210 * 2 + 1210 * 2)
    assert cost.io == pytest.approx(300 * 10_200 * 4)


def test_smb_join() -> None:
    """CPU = (T(R1)+...+T(Rm)) CPUc; IO = NEt sum T Tsz (small) x mappers."""
    cost = f.smb_join(R1, [R2], 3, 100, P)
    assert cost == f.Cost(1200.0, 150.0 * 10_000 * 3, 100)


def test_group_by() -> None:
    """CPU = (T log T + T) CPUc; IO = (Lw + Lr + NEt) T Tsz."""
    cost = f.group_by(R1, 10, P)
    assert cost.cpu == pytest.approx(1000 * math.log2(1000) + 1000)
    assert cost.io == pytest.approx(1350 * 100_000)


def test_union_all() -> None:
    """CPU 0; IO = bytes x Hw + bytes x Hr + bytes x NEt."""
    cost = f.union_all([R1, R2], P)
    assert cost == f.Cost(0.0, 110_000 * (6000 + 900 + 150), 1200)


def test_filter_and_select() -> None:
    """Filter CPU = T(R) CPUc, IO 0; Select: nothing."""
    assert f.filter_(R1, 10, P) == f.Cost(1000.0, 0.0, 10)
    assert f.select(R1) == f.Cost(0.0, 0.0, 1000)


def test_skew_join_is_its_two_joins_and_the_union() -> None:
    hot, cold = f.Cost(1, 2, 3), f.Cost(4, 5, 6)
    out = f.skew_join(hot, cold, f.Input(3, 10), f.Input(6, 10), P)
    assert out == hot + cold + f.union_all([f.Input(3, 10), f.Input(6, 10)], P)


def test_plans_compare_cpu_plus_io_first_then_rows() -> None:
    """HiveVolcanoCost.isLe (docs/design.md#plan-comparison)."""
    assert f.Cost(1, 1, 100).is_le(f.Cost(2, 1, 1))
    assert not f.Cost(2, 1, 1).is_le(f.Cost(1, 1, 100))
    assert f.Cost(1, 2, 5).is_le(f.Cost(2, 1, 6))
    assert not f.Cost(1, 2, 7).is_le(f.Cost(2, 1, 6))


# ---- join algorithms --------------------------------------------------------------------
BIG = Side(rows=10_000_000, size=100, label="big")
SMALL = Side(rows=1_000, size=50, label="small")
MID = Side(rows=1_000_000, size=100, label="mid")


def test_map_join_when_the_small_side_fits() -> None:
    choice = choose_join(BIG, SMALL, "inner", True, 1000, P)
    assert (choice.algorithm, choice.streamed) == ("map", 0)
    choice = choose_join(SMALL, BIG, "inner", True, 1000, P)
    assert (choice.algorithm, choice.streamed) == ("map", 1)


def test_common_join_when_nothing_fits() -> None:
    choice = choose_join(BIG, MID, "inner", True, 1000, P)
    assert choice.algorithm == "common"
    assert "exceeds the map-join threshold" in choice.reason


def test_outer_joins_stream_the_preserved_side() -> None:
    """docs/design.md#join-algorithms: a left outer join streams its left side, a right outer join
    its right side, a full outer join is never a map join."""
    assert hashable_sides("left") == (1,)
    assert hashable_sides("right") == (0,)
    assert hashable_sides("full") == ()
    assert choose_join(SMALL, BIG, "left", True, 1000, P).algorithm == "common"
    assert choose_join(BIG, SMALL, "left", True, 1000, P).algorithm == "map"
    assert choose_join(SMALL, BIG, "right", True, 1000, P).algorithm == "map"
    assert choose_join(BIG, SMALL, "full", True, 1000, P).algorithm == "common"


def _bucketed(side: Side, buckets: int, sort: bool) -> Side:
    spec = BucketSpec(buckets, ("k",), (("k", "asc"),) if sort else ())
    return Side(side.rows, side.size, side.label, spec, ("k",), side.bytes, 1)


def test_smb_join_when_bucketed_and_sorted_alike() -> None:
    choice = choose_join(_bucketed(BIG, 32, True), _bucketed(MID, 32, True), "inner", True, 1, P)
    assert choice.algorithm == "smb"
    assert "sorted" in choice.reason


def test_bucket_map_join_when_bucketed_with_compatible_counts() -> None:
    left, right = _bucketed(BIG, 64, False), _bucketed(MID, 32, False)
    small = cost_params({"map_join_threshold": str(MID.bytes / 32 + 1)})
    assert choose_join(left, right, "inner", True, 1, small).algorithm == "bucket_map"
    assert choose_join(left, _bucketed(MID, 24, False), "inner", True, 1, small).algorithm == (
        "common"
    )


def test_big_table_policies() -> None:
    """docs/design.md#join-algorithms: average partition size (default), leftmost, table size."""
    many = Side(100, 10, "a", table_bytes=1_000_000, partitions=1000)
    few = Side(100, 10, "b", table_bytes=500_000, partitions=1)
    assert big_table(many, few, P) == 1  # 500,000 B per partition beats 1,000
    assert big_table(many, few, cost_params({"big_table_policy": "table_size"})) == 0
    assert big_table(few, many, cost_params({"big_table_policy": "leftmost"})) == 0


def test_skew_join_when_a_key_value_holds_a_large_share() -> None:
    skewed = Side(BIG.rows, BIG.size, "facts", heavy_share=0.4, heavy_values=(7,))
    choice = choose_join(skewed, MID, "inner", True, 1000, P)
    assert choice.algorithm == "skew"
    assert choice.skew_values == (7,)
    assert "40%" in choice.reason
    mild = Side(BIG.rows, BIG.size, "facts", heavy_share=0.01)
    assert choose_join(mild, MID, "inner", True, 1000, P).algorithm == "common"
    assert choose_join(skewed, MID, "full", True, 1000, P).algorithm == "common"


def test_a_joins_result_is_hashed_unless_turned_off() -> None:
    """By default a map join may hash the result of a join (emitted as a derived table);
    `broadcast_join_results=0` hashes one relation only, unless `bushy=1`."""
    joined = Side(rows=1_000, size=50, label="the join of a, b", relation=False)
    assert choose_join(BIG, joined, "inner", True, 1000, P).algorithm == "map"
    relations = cost_params({"broadcast_join_results": "0"})
    assert choose_join(BIG, joined, "inner", True, 1000, relations).algorithm == "common"
    bushy = cost_params({"broadcast_join_results": "0", "bushy": "1"})
    assert choose_join(BIG, joined, "inner", True, 1000, bushy).algorithm == "map"
