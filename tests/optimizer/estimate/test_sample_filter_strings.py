"""A string column compared with a literal on a row sample (Arrow's comparison in
optimizer.estimate.sample_filter) counts the rows Python's own comparison of each value
counts, NULLs unknown, non-ASCII text included."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import sqlglot
from hypothesis import given
from hypothesis import strategies as st

from metastore.statistics.samples import Sample
from optimizer.estimate.sample_filter import count_on_sample

OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
texts = st.text(alphabet="aAbß€😀 ", max_size=3)


@given(
    st.lists(st.one_of(texts, st.none()), min_size=1, max_size=30),
    st.sampled_from(list(OPERATORS)),
    texts,
)
def test_string_comparison_counts_as_python_compares(
    values: list[str | None], symbol: str, literal: str
) -> None:
    sample = Sample({"s": np.asarray(values, dtype=object)}, np.ones(len(values)), 1)
    quoted = literal.replace("'", "''")
    predicate = sqlglot.parse_one(f"SELECT 1 FROM t WHERE t.s {symbol} '{quoted}'").args["where"]
    counted = count_on_sample(predicate.this, sample, "t", {"s": "string"})
    assert counted is not None
    expected = sum(1 for v in values if v is not None and OPERATORS[symbol](v, literal))
    assert counted.matches == expected
