"""The statistics cache's accounting (metastore.statistics.cache.approximate_size) bounds what its
entries really cost (issue 22): for each kind of entry the cache holds, built by the code
that builds them from real sketches, samples and partitions, the bytes it counts are at
least the live bytes one entry holds (glibc's and pymalloc's, tests.support.memory) and at
most ACCOUNTING_FACTOR times them (less a 1% tolerance of the measurement). A daemon
whose cache is full then holds no more than its bound in entries, and the bound is not
wasted on entries counted larger than they are."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from datasketches import frequent_strings_sketch, kll_doubles_sketch, update_theta_sketch

from metastore.statistics.cache import ACCOUNTING_FACTOR, approximate_size
from metastore.statistics.column_pieces import ColumnPiece
from metastore.statistics.histograms import merge_kll, merge_theta
from metastore.statistics.summaries import PartitionRows, TableSummary, _column
from optimizer.estimate.sources import listed_key_column
from tests.support.memory import cost_of, measurable

pytestmark = pytest.mark.skipif(not measurable(), reason="needs glibc's mallinfo2 and CPython")

FIRST_DAY = dt.date(1992, 1, 1)
# what the measurement itself may be off by: glibc's chunk headers and list over-allocation
# of the building code, a few hundred bytes in an entry of hundreds of kilobytes
TOLERANCE = 0.01


def pieces(column: int, count: int = 40) -> list[ColumnPiece]:
    """A column's pieces as a selection reads them: partitions and merged blocks of very
    different sizes (a block of 512 partitions beside single ones), with their sketches."""
    rng = np.random.default_rng(column)
    found = []
    for number in range(count):
        rows = int(rng.choice([200, 5_000, 200_000]))
        values = rng.integers(0, 2_000_000, rows)
        kll = kll_doubles_sketch(200)
        kll.update(values.astype(np.float64))
        theta = update_theta_sketch(12)
        for value in values[:3_000].tolist():
            theta.update(value)
        top = frequent_strings_sketch(10)
        for value in (values[:500] % 50).tolist():
            top.update(str(value))
        found.append(
            ColumnPiece(
                partitions=1 + number % 3,
                with_hll=0,
                with_theta=1 + number % 3,
                with_sketch=1 + number % 3,
                null_count=int(rng.integers(0, 10)),
                min_value=str(int(values.min())),
                max_value=str(int(values.max())),
                total_len=None,
                max_len=None,
                hll=None,
                kll=kll.serialize(),
                theta=theta.compact().serialize(),
                top_k=top.serialize(),
                top_k_items="longs",
                top_k_text=True,
            )
        )
    return found


COLUMN_PIECES = {f"c{i}": pieces(i) for i in range(4)}


def summary() -> TableSummary:
    """A selection's merged statistics, as MetastoreSource.summary caches them."""
    columns = {
        name: _column(name, "bigint", found, 6_000_000, 20, 100)
        for name, found in COLUMN_PIECES.items()
    }
    return TableSummary("t", 40, 6_000_000, columns)


def partitions() -> list[PartitionRows]:
    """A selection's partitions with their row counts (MetastoreSource.partitions)."""
    return [
        PartitionRows((FIRST_DAY + dt.timedelta(days=day),), 2_000 + day) for day in range(2_500)
    ]


def key_columns() -> list[Any]:
    """A partition key's exact figures (MetastoreSource.key_columns)."""
    rows = [(FIRST_DAY + dt.timedelta(days=day), 2_000 + day) for day in range(2_500)]
    return [listed_key_column("date", rows, float(sum(r for _, r in rows)))]


def sample() -> Any:
    """A pooled sample, a string column read as Python strings and its nulls derived."""
    from tests.support.samples import pooled_sample

    pooled = pooled_sample(20_000)
    pooled.columns["name"]
    pooled.nulls("id")
    return pooled


def merged_kll() -> Any:
    """A merged KLL sketch as a cached summary holds it: queried (its histograms)."""
    merged = merge_kll(p.kll for p in COLUMN_PIECES["c0"] if p.kll is not None)
    merged.get_quantiles([0.25, 0.5, 0.75])
    return merged


def merged_theta() -> Any:
    return merge_theta(p.theta for p in COLUMN_PIECES["c0"] if p.theta is not None)


@pytest.mark.parametrize(
    "make",
    [summary, partitions, key_columns, sample, merged_kll, merged_theta],
    ids=lambda make: make.__name__,
)
def test_an_entry_is_counted_as_what_it_holds(make: Callable[[], Any]) -> None:
    measured, value = cost_of(make)
    counted = approximate_size(value)
    assert measured > 0
    assert (1 - TOLERANCE) * measured <= counted <= ACCOUNTING_FACTOR * measured, (
        f"{make.__name__}: counted {counted:,} bytes, measured {measured:,.0f} "
        f"({counted / measured:.2f} x)"
    )
