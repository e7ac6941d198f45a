"""Hive's partition path escaping and `key=value/...` partition specs.

Implements Hive's FileUtils.escapePathName / unescapePathName (the same table Spark's
ExternalCatalogUtils uses), so a directory written by Hive or Spark round-trips exactly.
Non-ASCII characters are not escaped, as in Hive.
"""

from __future__ import annotations

import re

DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

_ESCAPED = frozenset(
    [chr(c) for c in range(0x01, 0x20)]
    + ['"', "#", "%", "'", "*", "/", ":", "=", "?", "\\", "\x7f", "{", "[", "]", "^"]
)
_HEX_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def escape_path_name(value: str) -> str:
    """Escape one key or value for use as a path component (Hive's escapePathName)."""
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


def unescape_path_name(text: str) -> str:
    """Undo escape_path_name; a '%' not followed by two hex digits stays as it is."""
    if "%" not in text:  # most names escape nothing: no pattern run over them
        return text
    return _HEX_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def split_partition_component(component: str) -> tuple[str, str | None] | None:
    """`dt=2024-01-01` -> ("dt", "2024-01-01"); the default partition -> (key, None).

    Returns None when the component is not of the form key=value.
    """
    key, sep, raw = component.partition("=")
    if not sep or not key:
        return None
    value = unescape_path_name(raw)
    return unescape_path_name(key).lower(), (None if value == DEFAULT_PARTITION_NAME else value)


def partition_name(keys: list[str], raw_values: list[str | None]) -> str:
    """The Hive partition name `k1=v1/k2=v2` of raw (string) values, None for the default."""
    return "/".join(
        f"{escape_path_name(k)}={DEFAULT_PARTITION_NAME if v is None else escape_path_name(v)}"
        for k, v in zip(keys, raw_values, strict=True)
    )
