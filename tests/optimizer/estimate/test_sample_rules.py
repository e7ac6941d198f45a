"""Heavy join keys through row samples (optimizer.estimate.heavy_keys_surviving,
heavy_keys_carried) and the composite-key rule for foreign-key-to-foreign-key joins."""

from __future__ import annotations

import numpy as np
import pytest

from metastore.statistics.samples import Sample, from_number
from optimizer.estimate.heavy_keys_carried import carried_mcvs, key_weights, weighted_mcvs
from optimizer.estimate.heavy_keys_surviving import surviving_mcvs
from optimizer.estimate.scan_sample import ScanSample
from optimizer.estimate.selectivity import composite_key_completion


def _sample(weights: float = 1.0, **columns: list[float]) -> Sample:
    arrays = {name: np.array(values, dtype=np.float64) for name, values in columns.items()}
    size = len(next(iter(arrays.values())))
    return Sample(arrays, np.full(size, weights), 1)


def test_key_weights() -> None:
    keys = np.array([1.0, 2.0, 3.0, np.nan])
    passed = np.array([True, True, False, True])
    weights = key_weights(keys, passed, np.full(4, 2.0), {1.0: 500.0, 3.0: 70.0}, 4.0)
    # heavy key 1 takes its own count; key 2 stands for 2 rows of 4 matches; key 3 failed
    # the filter; a NULL key joins nothing
    assert weights.tolist() == [500.0, 8.0, 0.0, 0.0]


def test_weighted_mcvs_are_fractions_of_the_total() -> None:
    values = np.array([6.0, 6.0, 7.0, np.nan])
    mcvs = weighted_mcvs(values, np.array([1.0, 2.0, 1.0, 4.0]), "bigint")
    assert mcvs == ((6, 3 / 8), (7, 1 / 8))
    assert isinstance(mcvs[0][0], int)


def test_carried_mcvs_follow_the_heavy_key() -> None:
    # customer 1 (nation 6) places 900 orders, the 99 others 1 each
    customers = _sample(c_custkey=list(range(1, 101)), c_nationkey=[6] + [k % 5 for k in range(99)])
    side = ScanSample("c", lambda: customers)
    carried = carried_mcvs(side, "c_custkey", {1: 900.0}, 1.0, {"c_nationkey": "int"})
    share = dict(carried["c_nationkey"])
    assert share[6] == pytest.approx(900 / 999)
    # the same customer filtered out by the scan's filter takes nothing with it
    passed = np.arange(100) > 0
    filtered = ScanSample("c", lambda: customers, passed)
    share = dict(
        carried_mcvs(filtered, "c_custkey", {1: 900.0}, 1.0, {"c_nationkey": "int"})["c_nationkey"]
    )
    assert 6 not in share


def test_surviving_mcvs_drop_a_filtered_hot_key_and_its_suppliers() -> None:
    # 1,000 fact rows: part 1 (supplier 10) is hot, parts 2..5 (supplier 20) the rest
    parts = [1.0] * 600 + [2.0, 3.0, 4.0, 5.0] * 100
    suppliers = [10.0] * 600 + [20.0] * 400
    facts = ScanSample("f", lambda: _sample(p=parts, s=suppliers))
    dim = _sample(id=[1.0, 2.0, 3.0, 4.0, 5.0])
    keep = np.array([False, True, True, True, True])  # the dimension's filter drops part 1
    filtered = ScanSample("d", lambda: dim, keep, every_partition=True)
    targets = {"p": ((1, 0.6), (2, 0.1)), "s": ((10, 0.6), (20, 0.4))}
    survived = surviving_mcvs(facts, "p", filtered, "id", targets, scale=1000 / 400)
    assert dict(survived["p"]) == {1: 0.0, 2: pytest.approx(0.25)}
    assert dict(survived["s"]) == {10: 0.0, 20: pytest.approx(1.0)}
    # a sample of part of the dimension cannot say which keys it lacks
    partial = ScanSample("d", lambda: _sample(2.0, id=[1.0, 2.0, 3.0]), every_partition=True)
    assert surviving_mcvs(facts, "p", partial, "id", targets, 1.0) == {}
    pruned = ScanSample("d", lambda: dim, keep, every_partition=False)
    assert surviving_mcvs(facts, "p", pruned, "id", targets, 1.0) == {}


def test_composite_key_completion() -> None:
    # lineitem (6M rows: 200k parts, 10k suppliers) and partsupp (800k: 200k x 4 suppliers)
    lineitem = (6_000_000.0, [200_000.0, 10_000.0])
    partsupp = (800_000.0, [200_000.0, 10_000.0])
    assert composite_key_completion([lineitem, partsupp]) == pytest.approx(1 / 4)
    # a first key unique on its side is no composite key: the second is a filter of its own
    supplier = (10_000.0, [10_000.0, 25.0])
    assert composite_key_completion([supplier]) is None
    assert composite_key_completion([]) is None
    # keys whose product cannot cover the rows are no key of the table
    assert composite_key_completion([(6_000_000.0, [100.0, 50.0])]) is None


def test_from_number_inverts_the_sample_encoding() -> None:
    import datetime as dt
    from decimal import Decimal

    assert from_number(3.0, "bigint") == 3
    assert isinstance(from_number(3.0, "int"), int)
    assert from_number(1.0, "date") == dt.date(1970, 1, 2)
    assert from_number(0.05, "decimal(12,2)") == Decimal("0.05")
    assert from_number(2.5, "double") == 2.5
