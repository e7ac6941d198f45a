"""Partition lookups, the API's hot path: run in the lookup threads, counted in the
metrics, and answered as bytes written by orjson (not through pydantic). Both the routes
and the ASGI fast path (fast_path.LookupFastPath) answer through `run_lookup`."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import orjson
from fastapi.responses import Response

from metastore.catalog.lookup import PartitionList, PartitionQuery, lookup_partitions
from metastore.errors import InvalidValue
from metastore.types import json_value
from servers.http import metrics
from servers.http.state import Service

LOOKUP_PATH = "/tables/{name}/partitions"


async def run_lookup(service: Service, name: str, query: PartitionQuery) -> Response:
    """`lookup` in one of the service's lookup threads (Service.lookup_threads)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(service.lookup_threads(), lookup, service, name, query)


def in_lists_of(items: Sequence[str]) -> tuple[tuple[str, list[str]], ...]:
    """`KEY=V1,V2` query parameters as (key, values) pairs, as the CLI reads `--in`."""
    lists = []
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not key.strip():
            raise InvalidValue(f"in wants KEY=V1,V2,..., got {item!r}")
        lists.append((key.strip(), values.split(",") if values else []))
    return tuple(lists)


def lookup(service: Service, name: str, query: PartitionQuery) -> Response:
    """Run one lookup, count it in the metrics, and answer its JSON."""
    started = time.perf_counter()
    found = lookup_partitions(service.engine(), name, query)
    values = sum(len(v) for _, v in query.in_lists) + sum(len(t.rows) for t in query.tuples)
    metrics.record_lookup(found.table, values, time.perf_counter() - started)
    return Response(partitions_json(found), media_type="application/json")


_by_name = itemgetter(0)
# the Python types of key values that orjson writes exactly as json_value and json.dumps
# would (dates as YYYY-MM-DD); any other (datetime, Decimal) goes through json_value
_NATIVE_JSON = frozenset({str, int, bool, dt.date, type(None)})


def partitions_json(found: PartitionList) -> bytes:
    """`found.as_json()` as compact UTF-8 JSON bytes (the same bytes json.dumps with
    ensure_ascii=False writes), built column by column and written by orjson: a key's
    values are decoded and converted (json_value, as in as_json) only when orjson cannot
    write them as they are, each distinct value once."""
    ordered = sorted(found.rows, key=_by_name)
    keys = found.keys
    partitions: list[dict[str, Any]] = []
    if ordered:
        columns = list(zip(*ordered, strict=True))
        decoders = found.decoders or (None,) * len(keys)
        values = [_json_column(c, d) for c, d in zip(columns[1:-1], decoders, strict=True)]
        locations = columns[-1]
        if len(keys) == 1:
            (k0,) = keys
            partitions = [
                {"values": {k0: a}, "location": loc}
                for a, loc in zip(values[0], locations, strict=True)
            ]
        elif len(keys) == 2:
            k0, k1 = keys
            partitions = [
                {"values": {k0: a, k1: b}, "location": loc}
                for a, b, loc in zip(values[0], values[1], locations, strict=True)
            ]
        else:
            partitions = [
                {"values": dict(zip(keys, row[:-1], strict=True)), "location": row[-1]}
                for row in zip(*values, locations, strict=True)
            ]
    answer = {"table": found.table, "count": len(partitions), "partitions": partitions}
    return orjson.dumps(answer, default=json_value)


def _json_column(column: Sequence[Any], decoder: Callable[[Any], Any] | None) -> Sequence[Any]:
    """One key's raw values as values orjson writes as json_value's."""
    if decoder is None and set(map(type, column)) <= _NATIVE_JSON:
        return column

    def convert(raw: Any) -> Any:
        value = raw if decoder is None or raw is None else decoder(raw)
        return json_value(value)

    known = {raw: convert(raw) for raw in set(column)}
    return [known[raw] for raw in column]
