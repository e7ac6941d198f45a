"""servers.http.lookup: a lookup's answer written by orjson, byte for byte the CLI's
json.dumps."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest


def compact_json(value: Any) -> bytes:
    """What json.dumps writes for the CLI's --json, compact: the bytes an answer must be."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("keys", [0, 1, 2, 3])
def test_lookup_answer_is_byte_for_byte_json_dumps(keys: int) -> None:
    """partitions_json (orjson, column by column) writes the very bytes of json.dumps of
    as_json(), for every type of key value, raw values with decoders (SQLite), strings
    that need escaping, no key at all and no partition at all."""
    import decimal

    from metastore.catalog.lookup import PartitionList
    from servers.http.lookup import partitions_json

    strange = ['q"uote\\', "tab\tnew\nline\x01\x7f", "é€😀\u2028", "", "__x__"]
    values: list[list[Any]] = [
        [3, -(2**63), True, None, 7],
        [dt.date(2024, 1, 5), dt.date(1, 1, 1), dt.date(9999, 12, 31), None, dt.date(999, 3, 4)],
        strange,
        [dt.datetime(2024, 1, 1, 10), dt.datetime(2024, 1, 1, 0, 0, 0, 250), None, None, None],
        [decimal.Decimal("12.50"), decimal.Decimal("-0.05"), None, decimal.Decimal(0), None],
    ]
    for chosen in ([0, 1, 2], [1, 3, 4], [2]):
        columns = [values[i] for i in chosen][:keys]
        names = tuple(f"k{i}" for i in range(len(columns)))
        rows = [
            (f"p{5 - r}", *(c[r] for c in columns), f"/lake/{strange[r]}/{r}") for r in range(5)
        ]
        found = PartitionList("db.t", names, rows)
        assert partitions_json(found) == compact_json(found.as_json())
        assert partitions_json(PartitionList("t", names, [])) == compact_json(
            {"table": "t", "count": 0, "partitions": []}
        )
    # raw values and their decoders, as SQLite answers
    raw = [("b", "2024-01-02", "1250", "/b"), ("a", None, "-5", "/a")]
    decoders = (dt.date.fromisoformat, lambda v: decimal.Decimal(int(v)).scaleb(-2))
    found = PartitionList("t", ("d", "m"), raw, decoders)
    assert partitions_json(found) == compact_json(found.as_json())
