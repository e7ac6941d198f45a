"""The estimator's fast paths (issue 22) answer as the plain computations do: a changed
column as dataclasses.replace makes it, and the distinct values of a sample's kept rows,
given as a mask or as positions, few or many, as np.unique counts them."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from metastore.statistics.samples import Sample
from optimizer.estimate.column import ColumnEstimate, KeySet, changed
from optimizer.estimate.sample_distinct import distinct_in
from optimizer.estimate.values import EXACT, Estimate

NEW_VALUES: dict[str, Any] = {
    "type": "bigint",
    "ndv": Estimate(7.0, EXACT, "theta"),
    "null_fraction": 0.25,
    "low": 1,
    "high": 9,
    "mcv": ((3, 0.5),),
    "kll": object(),
    "restrict": (1.0, None),
    "theta": object(),
    "theta_share": 0.5,
    "width": 4.0,
    "tail": 2.0,
    "grouped": True,
    "source_rows": 10.0,
    "points": ((1.0, 2.0), (0.5, 1.0)),
    "values": (1, 2),
    "sampled": object(),
    "key_set": KeySet("t", "c", frozenset()),
    "within": (KeySet("u", "d", frozenset()),),
    "origin": (object(), "c"),
    "partition_distinct": 7.0,
    "degrees": object(),
}


def test_every_field_has_a_new_value() -> None:
    assert {f.name for f in fields(ColumnEstimate)} == set(NEW_VALUES)


@pytest.mark.parametrize("name", sorted(NEW_VALUES))
def test_a_changed_column_is_the_replaced_one(name: str) -> None:
    column = ColumnEstimate("int", Estimate(3.0, EXACT, "theta"), mcv=((1, 0.1),), width=8.0)
    made = changed(column, **{name: NEW_VALUES[name]})
    expected = replace(column, **{name: NEW_VALUES[name]})
    assert type(made) is ColumnEstimate
    assert made.__dict__ == expected.__dict__
    assert (
        column.__dict__
        == ColumnEstimate("int", Estimate(3.0, EXACT, "theta"), mcv=((1, 0.1),), width=8.0).__dict__
    )  # the original is left as it was
    with pytest.raises(AttributeError):
        made.width = 1.0  # type: ignore[misc]  # still frozen


def test_an_unknown_field_is_refused_as_replace_refuses_it() -> None:
    column = ColumnEstimate("int", Estimate(3.0, EXACT, "theta"))
    with pytest.raises(TypeError):
        replace(column, colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        changed(column, colour="red")


numbers = st.lists(st.one_of(st.integers(-20, 20).map(float), st.just(float("nan"))), max_size=80)
strings = st.lists(st.one_of(st.text("abc", max_size=2), st.none()), max_size=80)


@given(st.one_of(numbers, strings), st.data())
def test_distinct_in_counts_the_kept_rows_distinct_values(
    values: list[Any], data: st.DataObject
) -> None:
    """Few kept rows (sorted codes) and many (a bin per code), by mask or by position."""
    numeric = all(isinstance(v, float) for v in values)
    column = np.asarray(values, dtype=np.float64 if numeric else object)
    sample = Sample({"c": column}, np.ones(len(values)), 1)
    drawn = data.draw(st.lists(st.booleans(), min_size=len(values), max_size=len(values)))
    mask = np.asarray(drawn, dtype=bool)
    kept = [v for v, keep in zip(values, drawn, strict=True) if keep]
    expected = len({v for v in kept if v is not None and v == v})  # NaN and None: NULL
    assert distinct_in(sample, mask, "c") == expected
    assert distinct_in(sample, np.flatnonzero(mask), "c") == expected
    assert distinct_in(sample, mask, "missing") is None


def test_distinct_in_few_and_many_rows_of_a_large_sample() -> None:
    rng = np.random.default_rng(7)
    column = rng.integers(0, 500, 4000).astype(np.float64)
    column[::13] = np.nan
    sample = Sample({"c": column}, np.ones(column.size), 1)
    for share in (0.001, 0.05, 0.5, 1.0):
        mask = rng.random(column.size) < share
        kept = column[mask]
        assert distinct_in(sample, mask, "c") == np.unique(kept[~np.isnan(kept)]).size


def test_a_range_share_is_kept_with_its_sample_and_kept_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The join-range rule's share of a filtered sample inside a range is counted once per
    sample and kept rows: a plan asked again (another request, another mask object with
    the same rows) reads it; other kept rows are counted afresh."""
    from optimizer.estimate.operators import join_ranges
    from optimizer.estimate.scan_sample import ScanSample

    counted: list[int] = []
    original = join_ranges._sampled_range_share

    def counting(*args: Any) -> Any:
        counted.append(1)
        return original(*args)

    monkeypatch.setattr(join_ranges, "_sampled_range_share", counting)
    keys = np.arange(100, dtype=np.float64)
    sample = Sample({"k": keys}, np.ones(100), 1)
    first_half = keys < 50
    shares = []
    for mask in (first_half, first_half.copy(), keys >= 50):  # a request's own mask each
        scan = ScanSample("d", lambda: sample, mask.copy())
        shares.append(join_ranges._kept_range_share(scan, "k", 40.0, 59.0))
    assert shares[0] == shares[1] == pytest.approx((10 / 50, 10 / 50))
    assert shares[2] == pytest.approx((10 / 50, 10 / 50))
    assert len(counted) == 2  # the second request read the first one's count
    scan = ScanSample("d", lambda: sample, keys < 45)
    assert join_ranges._kept_range_share(scan, "k", 40.0, 59.0) == pytest.approx((5 / 45, 5 / 45))
    assert len(counted) == 3


@pytest.mark.parametrize(
    "sql",
    [
        "a.x > 1 AND a.y IN (1, 2) OR NOT a.z LIKE 'p%'",
        "a.x IN (SELECT y FROM t QUALIFY ROW_NUMBER() OVER (ORDER BY y) = 1)",
        "EXISTS(SELECT 1 FROM t WHERE t.k = a.k) AND a.d >= DATE '1994-01-01'",
    ],
)
def test_sql_text_leaves_the_tree_as_it_was(sql: str) -> None:
    """A tree printed without a copy (`sql_text`: a plan's details, a sample count's key)
    reads as sqlglot's own print of it, and is left as it was: Spark's generator rewrites a
    SELECT in place while printing it (QUALIFY to a subquery), so a tree with a query in it
    is printed from a copy."""
    from sqlglot import parse_one

    from optimizer.sql_text import sql_text

    for dialect in ("spark", None):
        tree = parse_one(sql, "spark")
        before = repr(tree)
        expected = tree.sql(dialect)
        assert sql_text(tree, dialect) == expected
        assert repr(tree) == before
