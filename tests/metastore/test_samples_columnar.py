"""Samples are stored packed (one Arrow record batch and its columns' names and types,
compressed as one; decoded in native code); samples stored before as an Arrow IPC stream or
in the zlib'd JSON form still decode to the same arrays, and pooling a table's partitions
gives what pooling each decoded partition gave."""

from __future__ import annotations

import datetime as dt
import json
import tracemalloc
import zlib
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyarrow import ipc

from metastore.statistics.partition_samples import partition_sample
from metastore.statistics.samples import (
    FRAMED_MARK,
    MAX_FRAMES,
    NUMBER,
    PACKED_MARK,
    SampleColumns,
    appended,
    as_number,
    decode_sample,
    encode_sample,
    encode_table,
    pool,
    sample_kind,
    sample_table,
    unpack_sample,
)
from tests.support.samples import COLUMNS, dated_regional_table, pooled_sample


def json_form(columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> bytes:
    """A sample as statlas stored it before the Arrow form (zlib'd JSON)."""
    kinds = [sample_kind(t) for _, t in columns]
    values: list[list[Any]] = [[] for _ in columns]
    for row in rows:
        for i, kind in enumerate(kinds):
            values[i].append(as_number(row[i]) if kind == NUMBER else row[i])
    payload = {"columns": [n for n, _ in columns], "kinds": kinds, "values": values}
    return zlib.compress(json.dumps(payload, separators=(",", ":")).encode(), 6)


def stream_form(columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> bytes:
    """A sample as statlas stored it before the packed form: an Arrow IPC stream."""
    table = sample_table(encode_sample(columns, rows))
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert list(a) == list(b)
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        if a[name].dtype == object:
            assert a[name].tolist() == b[name].tolist(), name
        else:
            np.testing.assert_array_equal(a[name], b[name])


rows_strategy = st.lists(
    st.tuples(
        st.none() | st.integers(-(2**53), 2**53),
        st.none() | st.decimals(-(10**6), 10**6, places=2, allow_nan=False),
        st.none() | st.dates(dt.date(1900, 1, 1), dt.date(2200, 1, 1)),
        st.none() | st.text(max_size=12),
    ),
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(rows_strategy)
def test_packed_form_decodes_as_the_earlier_forms_did(rows: list[tuple[Any, ...]]) -> None:
    blob = encode_sample(COLUMNS, rows)
    assert blob[:4] == PACKED_MARK  # not an Arrow IPC stream, nor zlib'd JSON
    same(decode_sample(blob), decode_sample(json_form(COLUMNS, rows)))
    same(decode_sample(blob), decode_sample(stream_form(COLUMNS, rows)))
    decoded = decode_sample(blob)
    assert decoded["name"].tolist() == [r[3] for r in rows]
    assert [None if np.isnan(v) else v for v in decoded["id"]] == [
        None if r[0] is None else float(r[0]) for r in rows
    ]


@pytest.mark.parametrize("form", ["packed", "stream", "json"])
def test_pool_fills_keys_and_weights(form: str) -> None:
    info = dated_regional_table()
    encode = {"packed": encode_sample, "stream": stream_form, "json": json_form}[form]
    first = encode(COLUMNS, [(1, Decimal("1.5"), dt.date(2024, 1, 2), "a"), (2, None, None, None)])
    second = encode(COLUMNS, [(3, Decimal(2), dt.date(2024, 1, 3), "b")])
    tables = [partition_sample(7, 20, 2, first), partition_sample(9, 5, 1, second)]
    keys = (
        np.array([7, 8, 9]),
        [[dt.date(2024, 3, 1), None, dt.date(2024, 3, 2)], ["emea", "x", None]],
    )
    pooled = pool(info, [t for t in tables if t is not None], keys)
    assert pooled is not None
    assert pooled.weights.tolist() == [10.0, 10.0, 5.0] and pooled.partitions == 2
    assert pooled.columns["region"].tolist() == ["emea", "emea", None]
    assert pooled.columns["dt"].tolist() == [as_number(dt.date(2024, 3, 1))] * 2 + [
        as_number(dt.date(2024, 3, 2))
    ]
    assert pooled.columns["name"].tolist() == ["a", None, "b"]
    assert np.isnan(pooled.columns["price"][1]) and pooled.columns["price"][2] == 2.0


def test_pooled_columns_stay_in_arrow_until_read() -> None:
    sample = pooled_sample()
    columns = sample.columns
    assert isinstance(columns, SampleColumns)
    assert sorted(columns) == ["day", "dt", "id", "name", "price", "region"]
    assert "name" in columns and "nope" not in columns and columns.materialised() == []
    assert columns.get("nope") is None and columns.materialised() == []
    names = columns["name"]
    assert columns.materialised() == ["name"]  # only the column read
    assert names.dtype == object and names[0] == "name-7-0" and names[-1] == "name-9-59"
    assert columns["name"] is names  # kept
    assert sample.arrow("name") is columns.stored("name")  # Arrow's own array: no copy
    assert sample.nulls("price").sum() == 0 and sorted(columns.materialised()) == ["name", "price"]
    assert columns["region"].tolist() == ["emea"] * 2000 + ["apac"] * 2000
    assert columns["dt"][0] == as_number(dt.date(2024, 3, 1))
    assert sorted(columns.materialised()) == ["dt", "name", "price", "region"]


def test_a_materialised_column_costs_at_most_what_is_counted() -> None:
    sample = pooled_sample()
    columns = sample.columns
    bounds = {name: columns.materialised_bytes(name) for name in ("name", "region", "id")}
    for name in ("name", "region", "id"):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            values = columns[name]
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert values.shape == (4000,)
        counted = columns.materialised_bytes(name)  # what a cache holding it is told
        assert grown <= counted <= bounds[name], name
    # 194 distinct strings: a pointer a row and each string once (they are shared)
    names = columns["name"]
    assert names[0] == "name-7-0" and names[0] is names[97]
    assert 4000 * 8 < columns.materialised_bytes("name") < 4000 * 8 + 194 * 100 + 1000
    assert columns.materialised_bytes("id") <= 256  # doubles: a view of Arrow's buffer


def test_estimates_leave_unread_columns_in_arrow() -> None:
    """A join's carried heavy values read the sample's numeric columns only."""
    from optimizer.estimate.heavy_keys_carried import carried_mcvs
    from optimizer.estimate.scan_sample import ScanSample

    sample = pooled_sample()
    side = ScanSample("t", lambda: sample)
    targets = {"price": "decimal(10,2)", "name": "string", "day": "date"}
    carried = carried_mcvs(side, "id", {1: 50.0}, 1.0, targets)
    assert set(carried) == {"price", "day"}
    assert sorted(sample.columns.materialised()) == ["day", "id", "price"]  # not "name"


@pytest.mark.parametrize(
    "predicate",
    [
        "t.name LIKE 'name-7-1%'",
        "t.name IN ('name-7-1', 'name-9-2')",
        "t.name = 'name-9-3'",
        "t.name >= 'name-9-5'",
    ],
)
def test_string_predicates_run_on_arrow_without_boxing(predicate: str) -> None:
    """LIKE, IN and comparisons with a literal on a string column are evaluated by Arrow
    on the stored column: the column is never read into Python strings (TPC-H's part
    sample boxed 200,000 distinct p_name values for q9's LIKE)."""
    import sqlglot

    from optimizer.estimate.sample_filter import count_on_sample

    sample = pooled_sample()
    parsed = sqlglot.parse_one(f"SELECT 1 FROM t WHERE {predicate}").args["where"].this
    counted = count_on_sample(parsed, sample, "t", dict(COLUMNS))
    assert counted is not None and counted.matches > 0
    assert "name" not in sample.columns.materialised()


def packed_form(columns: list[tuple[str, str]], rows: list[tuple[Any, ...]]) -> bytes:
    """Rows packed by column as the one-pass scan hands them over (collectors/jvm
    SampleColumns), written here from its description."""
    out = [len(rows).to_bytes(4, "little")]
    for i, (_, type_) in enumerate(columns):
        if sample_kind(type_) == NUMBER:
            values = [np.nan if r[i] is None else as_number(r[i]) for r in rows]
            out.append(np.array(values, dtype="<f8").tobytes())
        else:
            texts = [None if r[i] is None else r[i].encode() for r in rows]
            out.append(np.array([-1 if t is None else len(t) for t in texts], "<i4").tobytes())
            out += [t for t in texts if t is not None]
    return b"".join(out)


@settings(max_examples=60, deadline=None)
@given(rows_strategy)
def test_a_packed_sample_unpacks_to_the_rows_table(rows: list[tuple[Any, ...]]) -> None:
    table = unpack_sample(packed_form(COLUMNS, rows), COLUMNS)
    assert table.num_rows == len(rows)
    same(decode_sample(encode_table(table)), decode_sample(encode_sample(COLUMNS, rows)))


def test_a_packed_sample_of_the_wrong_size_is_refused() -> None:
    packed = packed_form(COLUMNS, [(1, Decimal("2.50"), dt.date(2024, 1, 1), "é")])
    with pytest.raises(ValueError, match="packed sample"):
        unpack_sample(packed + b"\0", COLUMNS)


def test_a_sample_appended_to_reads_as_its_rows_then_the_new_ones() -> None:
    first = sample_table(encode_sample(COLUMNS, [(1, Decimal("1.5"), dt.date(2024, 1, 2), "a")]))
    second = sample_table(encode_sample(COLUMNS, [(2, None, None, None), (3, None, None, "c")]))
    blob = appended(encode_table(first), second)
    assert blob is not None
    assert blob[:4] == FRAMED_MARK
    # (value for value: NaN is not equal to itself)
    assert repr(sample_table(blob).to_pylist()) == repr(first.to_pylist() + second.to_pylist())
    again = appended(blob, first)  # a framed sample appended to again
    assert again is not None
    assert sample_table(again).column("id").to_pylist() == [1.0, 2.0, 3.0, 1.0]
    # other columns, an earlier form, or too many frames: encoded again whole instead
    assert appended(encode_table(first), first.drop_columns(["name"])) is None
    assert appended(stream_form(COLUMNS, [(1, None, None, None)]), first) is None
    framed = encode_table(first)
    for _ in range(MAX_FRAMES - 1):
        grown = appended(framed, first)
        assert grown is not None
        framed = grown
    assert sample_table(framed).num_rows == MAX_FRAMES
    assert appended(framed, first) is None
