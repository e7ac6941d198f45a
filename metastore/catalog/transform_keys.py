"""The partition keys of a table that are transforms of its columns: an Iceberg table's
partition fields (Iceberg spec, "Partition Transforms"), listed in its `iceberg_partitioning`
property when it is registered (collectors.iceberg.register); the optimizer projects filters
on the columns onto them (optimizer.rewrite.transform_keys)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

PROPERTY = "iceberg_partitioning"


@dataclass(frozen=True)
class TransformKey:
    """Partition key `key` is `transform` of column `source` (of statlas type `source_type`)."""

    key: str
    transform: str
    source: str
    source_type: str


def transform_keys(properties: Mapping[str, Any]) -> tuple[TransformKey, ...]:
    """The transform keys a table's properties list (collectors.iceberg.register writes
    them), but identity keys named as their column (the key is that column)."""
    text = properties.get(PROPERTY)
    if not text:
        return ()
    keys = tuple(TransformKey(*entry) for entry in json.loads(str(text)))
    return tuple(k for k in keys if not (k.transform == "identity" and k.key == k.source))


def listed(keys: Sequence[TransformKey]) -> str:
    """The property's value for `keys`."""
    return json.dumps([[k.key, k.transform, k.source, k.source_type] for k in keys])
