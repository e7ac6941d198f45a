"""Row samples as the collection stores them: a table's columns (`COLUMNS`) and a pooled
sample of two of its partitions (`pooled_sample`)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np

from metastore.catalog.tables import PartitionKey, TableInfo
from metastore.statistics.partition_samples import partition_sample
from metastore.statistics.samples import encode_sample, pool
from metastore.types import parse_key_type

COLUMNS = [("id", "bigint"), ("price", "decimal(10,2)"), ("day", "date"), ("name", "string")]


def dated_regional_table() -> TableInfo:
    """A table partitioned by a date `dt` and a string `region`, with no data columns."""
    return TableInfo(
        id=1,
        name="t",
        location="/x",
        format="parquet",
        columns=(),
        partition_keys=(
            PartitionKey("dt", parse_key_type("date")),
            PartitionKey("region", parse_key_type("string")),
        ),
        bucketing=None,
        properties={},
        version=1,
    )


def pooled_sample(rows: int = 2000) -> Any:
    """A pooled sample of two partitions of `rows` rows each, keyed by a date and a region."""
    info = dated_regional_table()
    tables = [
        partition_sample(
            pid,
            rows * 3,
            rows,
            encode_sample(
                COLUMNS,
                [
                    (i, Decimal(i) / 4, dt.date(2024, 1, 1 + i % 28), f"name-{pid}-{i % 97}")
                    for i in range(rows)
                ],
            ),
        )
        for pid in (7, 9)
    ]
    keys = (np.array([7, 9]), [[dt.date(2024, 3, 1), dt.date(2024, 3, 2)], ["emea", "apac"]])
    return pool(info, [t for t in tables if t is not None], keys)
