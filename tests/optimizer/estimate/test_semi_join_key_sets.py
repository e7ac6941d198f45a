"""Key sets (optimizer.estimate.column.KeySet): a semi join leaves its left key only values
of its right key's set, so a later join of that key with a relation filtered like the semi
join's right side shares every kept key, where two independent filters would share almost
none (TPC-H q2's `part JOIN _sq1` was estimated at 2 rows for hundreds). Estimated at the
sketch level over made-up statistics with real Theta sketches of the keys (no Spark)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import pytest
from datasketches import update_theta_sketch

from metastore.catalog.lookup import PartitionQuery
from metastore.statistics.summaries import TableSummary
from optimizer.estimate.predicates import SKETCH
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Union, walk
from optimizer.sql_to_plan import build_plan
from tests.support.tpch import MadeUpStatistics

PARTS = 200_000
SIZES = 50  # p_size = 15 keeps a fiftieth of the parts: 4,000 of them
SUPPLIERS_PER_PART = 4  # partsupp: 800,000 rows, 4 per part


def key_sketch(count: int) -> Any:
    sketch = update_theta_sketch()
    for key in range(count):
        sketch.update(key)
    return sketch.compact()


class KeyedParts(MadeUpStatistics):
    """part and partsupp with their part keys' Theta sketches and TPC-H's distinct counts."""

    THETA = key_sketch(PARTS)
    KEYS: ClassVar[dict[str, int]] = {"p_partkey": PARTS, "ps_partkey": PARTS, "p_size": SIZES}

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        summary = super().summary(name, query)
        columns = dict(summary.columns)
        for column, ndv in self.KEYS.items():
            if column in columns:
                theta = self.THETA if column.endswith("partkey") else None
                columns[column] = replace(columns[column], ndv=float(ndv), theta=theta)
        return replace(summary, columns=columns)


SOURCE = KeyedParts()


def rows(sql: str) -> float:
    plan = build_plan(sql, SOURCE.table, "spark")
    return StatsQuery(SOURCE, SKETCH).of(plan).rows.value


MEDIUM = "p_size = 15"
SUPPLIES_OF_MEDIUM_PARTS = (  # partsupp's rows of the medium parts: 16,000
    "SELECT ps_partkey FROM partsupp WHERE ps_partkey IN "
    f"(SELECT p_partkey FROM part WHERE {MEDIUM})"
)


def test_semi_join_keeps_the_share_of_rows_its_right_side_keys() -> None:
    truth = PARTS * SUPPLIERS_PER_PART / SIZES
    assert rows(SUPPLIES_OF_MEDIUM_PARTS) == pytest.approx(truth, rel=0.1)


def test_semi_joined_keys_meet_the_relation_filtered_alike_in_full() -> None:
    """Every supply of a medium part joins its part: 16,000 rows (independent filters: 320)."""
    sql = (
        f"SELECT * FROM part JOIN ({SUPPLIES_OF_MEDIUM_PARTS}) AS s "
        f"ON part.p_partkey = s.ps_partkey WHERE part.{MEDIUM}"
    )
    truth = PARTS * SUPPLIERS_PER_PART / SIZES
    assert rows(sql) == pytest.approx(truth, rel=0.2)


def test_semi_joined_keys_meet_another_filter_of_the_set_independently() -> None:
    """Medium parts of one of 10 brands: a tenth of the supplies of medium parts join."""
    sql = (
        f"SELECT * FROM part JOIN ({SUPPLIES_OF_MEDIUM_PARTS}) AS s "
        f"ON part.p_partkey = s.ps_partkey WHERE part.{MEDIUM} AND part.p_brand = 'Brand#23'"
    )
    truth = PARTS * SUPPLIERS_PER_PART / SIZES / 1000  # made-up p_brand: 1,000 values
    assert rows(sql) == pytest.approx(truth, rel=0.2)


def test_keys_of_a_relation_filtered_otherwise_stay_independent() -> None:
    """Parts of size 20 share no key with supplies of size-15 parts; estimated as two
    independent fiftieths (320 rows), not as the 16,000 of one set."""
    sql = (
        f"SELECT * FROM part JOIN ({SUPPLIES_OF_MEDIUM_PARTS}) AS s "
        "ON part.p_partkey = s.ps_partkey WHERE part.p_size = 20"
    )
    assert rows(sql) < PARTS * SUPPLIERS_PER_PART / SIZES / 10


def test_a_union_forgets_the_key_sets_of_its_inputs() -> None:
    """The union of the medium parts' supplies with all supplies holds keys outside the
    medium parts' set: its join with the medium parts is not taken as whole."""
    sql = (
        f"SELECT * FROM part JOIN ({SUPPLIES_OF_MEDIUM_PARTS} UNION ALL "
        "SELECT ps_partkey FROM partsupp) AS s "
        f"ON part.p_partkey = s.ps_partkey WHERE part.{MEDIUM}"
    )
    plan = build_plan(sql, SOURCE.table, "spark")
    stats = StatsQuery(SOURCE, SKETCH)
    assert stats.of(plan).rows.value > 0
    union = next(n for n in walk(plan) if isinstance(n, Union))
    assert all(c.key_set is None and not c.within for c in stats.of(union).columns.values())


def test_an_inner_join_passes_the_key_set_to_the_other_key() -> None:
    """partsupp joined to the supplies of medium parts by part key: its keys are those
    supplies' keys, so meeting the medium parts by its own key keeps every row (64,000:
    4 supplies of each of 4,000 parts, 4 times over), not a fiftieth of them."""
    sql = (
        f"SELECT * FROM partsupp AS p2 JOIN ({SUPPLIES_OF_MEDIUM_PARTS}) AS s "
        "ON p2.ps_partkey = s.ps_partkey JOIN part ON part.p_partkey = p2.ps_partkey "
        f"WHERE part.{MEDIUM}"
    )
    truth = PARTS * SUPPLIERS_PER_PART / SIZES * SUPPLIERS_PER_PART
    assert rows(sql) == pytest.approx(truth, rel=0.2)
