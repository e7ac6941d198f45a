"""A row sample's columns packed for storage (metastore.statistics.sample_packing, issue 49):
every double, integer and string reads back bit for bit, in fewer bytes than the record
batch stored before, which still reads."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.statistics.sample_packing import packed, unpacked
from metastore.statistics.samples import (
    COLUMNAR,
    PACKED_LEVEL,
    PACKED_MARK,
    _header,
    appended,
    encode_table,
    sample_table,
)


def same(a: pa.Table, b: pa.Table) -> None:
    """Equal schemas and values, doubles compared by their bits (-0.0; any NaN as NaN)."""
    assert a.schema == b.schema
    for x, y in zip(a.columns, b.columns, strict=True):
        x, y = x.combine_chunks(), y.combine_chunks()
        if pa.types.is_float64(x.type):
            values = [np.asarray(v.to_numpy(zero_copy_only=False)) for v in (x, y)]
            bits = [np.where(np.isnan(v), np.nan, v).view(np.int64) for v in values]
            assert np.array_equal(bits[0], bits[1])
        else:
            assert x.equals(y)


doubles = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**60), 2**60).map(float),
    st.decimals(-(10**9), 10**9, places=2, allow_nan=False, allow_infinity=False).map(float),
    st.sampled_from([0.0, -0.0, 0.05, 0.1, math.nan]),
)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 40).flatmap(
        lambda rows: st.tuples(
            st.lists(doubles, min_size=rows, max_size=rows),
            st.lists(st.integers(-(2**63), 2**63 - 1), min_size=rows, max_size=rows),
            st.lists(st.text(max_size=30), min_size=rows, max_size=rows),
        )
    )
)
def test_every_value_reads_back_bit_for_bit(
    columns: tuple[list[float], list[int], list[str]],
) -> None:
    numbers, integers, texts = columns
    table = pa.table(
        {
            "n": pa.array(numbers, pa.float64()),
            "i": pa.array(integers, pa.int64()),
            "s": pa.array(texts, pa.string()),
        }
    )
    body = packed(table)
    assert body is not None
    same(unpacked(body, table.schema), table)
    same(sample_table(encode_table(table)), table)


def lineitem_like(rows: int, seed: int = 49) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "l_orderkey": rng.integers(1, 6_000_000, rows).astype(np.float64),
            "l_extendedprice": np.round(rng.uniform(900, 105_000, rows), 2),
            "l_discount": rng.integers(0, 11, rows) / 100,
            "l_commitdate": rng.integers(8_000, 10_500, rows).astype(np.float64),
            "l_tax": np.where(rng.random(rows) < 0.1, np.nan, rng.integers(0, 9, rows) / 100),
            "l_shipmode": rng.choice(["AIR", "MAIL", "SHIP", "TRUCK", "RAIL"], rows),
            "l_comment": [f"carefully regular {i} requests" for i in rng.integers(0, 10**6, rows)],
        }
    )


def test_a_sample_is_smaller_packed_than_as_a_record_batch() -> None:
    table = lineitem_like(27)
    stored = encode_table(table)
    assert stored[:4] == PACKED_MARK
    header = _header(table)
    batch = table.combine_chunks().to_batches()[0].serialize().to_pybytes()
    before = pa.Codec("zstd", PACKED_LEVEL).compress(
        len(header).to_bytes(4, "little") + header + batch, asbytes=True
    )
    assert len(stored) < 0.8 * (8 + len(before))
    same(sample_table(stored), table)


def test_samples_stored_before_still_read_and_take_new_frames() -> None:
    table = lineitem_like(20)
    header = _header(table)
    batch = table.combine_chunks().to_batches()[0].serialize().to_pybytes()
    raw = len(header).to_bytes(4, "little") + header + batch
    compressed = pa.Codec("zstd", PACKED_LEVEL).compress(raw, asbytes=True)
    before = PACKED_MARK + len(raw).to_bytes(4, "little") + compressed
    assert COLUMNAR not in raw[:4]
    same(sample_table(before), table)
    more = lineitem_like(5, seed=7)
    framed = appended(before, more)
    assert framed is not None
    same(sample_table(framed), pa.concat_tables([table, more]))


@pytest.mark.parametrize(
    "array",
    [
        pa.array([1.0, None, 3.0], pa.float64()),  # an Arrow NULL, not a NaN
        pa.array([True, False, True]),
        pa.array(["a", "b", "c"], pa.large_string()),
    ],
)
def test_columns_packing_does_not_take_are_stored_as_a_record_batch(array: pa.Array) -> None:
    table = pa.table({"x": array, "y": pa.array([1.0, 2.0, 3.0])})
    assert packed(table) is None
    same(sample_table(encode_table(table)), table)


def test_a_truncated_sample_is_an_error_not_a_short_read() -> None:
    table = lineitem_like(10)
    body = packed(table)
    assert body is not None
    with pytest.raises(ValueError, match="packed sample"):
        unpacked(body[:-3], table.schema)
