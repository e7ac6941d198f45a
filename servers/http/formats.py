"""How the service writes what it answers: JSON bodies, times, and the one rule on text.

>>> import datetime as dt
>>> utc_text(dt.datetime(2024, 3, 5, 14, 30, 7, 250_000))  # naive: written in UTC
'2024-03-05T14:30:07Z'
>>> has_nul(["emea", "ap\\x00ac"])
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any

from fastapi.responses import Response
from pydantic import StringConstraints

from metastore.times import utc, utc_text

__all__ = ["Text", "has_nul", "json_response", "utc", "utc_text"]

# PostgreSQL cannot store a NUL character in text: a request holding one is refused with a
# 422 (in the schema, or by the lookup fast path passing it on to the schema) rather than
# left to fail in the driver
NUL = "\x00"
# the same rule as a schema pattern (costs about 60 ms per 1,000,000 values)
Text = Annotated[str, StringConstraints(pattern=r"^[^\x00]*$")]


def has_nul(texts: Iterable[str]) -> bool:
    """Whether any of `texts` holds a NUL character (which `Text` refuses)."""
    return NUL in "".join(texts)


def json_response(value: Any, status_code: int = 200) -> Response:
    """`value` as compact UTF-8 JSON bytes, without pydantic's validation of large answers."""
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(body, status_code=status_code, media_type="application/json")
