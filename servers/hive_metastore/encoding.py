"""Partition lists encoded straight to Thrift's binary protocol, without a Thrift object
per partition (docs/hive-metastore.md, "Replies").

Thrift's binary protocol writes a struct as its fields (a type byte, a 16-bit id, the
value) in any order, ended by a STOP byte; readers dispatch on the id. Every partition of a
table shares its database, table and storage descriptor but for the location, so those
bytes are encoded once per table (by the generated code, from real Thrift objects) and each
partition adds only its values, creation time, location and parameters, packed here. A
partition with a storage descriptor of its own is encoded whole by the generated code.
Replies are written in chunks, so a reply of many partitions is never held whole.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from hive_metastore import ttypes as hms
from thrift.protocol import fastbinary

T_STOP, T_I32, T_STRING, T_STRUCT, T_MAP, T_LIST = 0, 8, 11, 12, 13, 15
_I32 = struct.Struct(">i")
_FIELD = struct.Struct(">bh")
DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
CHUNK = 1000  # partitions per write to the socket


def encode_struct(obj: Any) -> bytes:
    """A Thrift struct's bytes, by the generated code's C encoder."""
    data: bytes = fastbinary.encode_binary(obj, [obj.__class__, obj.thrift_spec])
    return data


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _I32.pack(len(data)) + data


def _field(kind: int, field_id: int) -> bytes:
    return _FIELD.pack(kind, field_id)


# field headers: values (1, a list of strings), createTime (4), sd (6) opened by its
# location (2)
_VALUES_HEADER = _FIELD.pack(T_LIST, 1) + bytes((T_STRING,))
_CREATE_TIME = _FIELD.pack(T_I32, 4)
_SD_LOCATION = _FIELD.pack(T_STRUCT, 6) + _FIELD.pack(T_STRING, 2)


_KEYS: dict[str, bytes] = {}
"""Encoded parameter names (a table's partitions repeat a few: numRows, totalSize, ...)."""


def string_map(field_id: int, mapping: Mapping[str, str]) -> bytes:
    parts = [_field(T_MAP, field_id), bytes((T_STRING, T_STRING)), _I32.pack(len(mapping))]
    keys = _KEYS
    for key, value in mapping.items():
        encoded = keys.get(key)
        if encoded is None:
            encoded = _string(key)
            if len(keys) < 4096:
                keys[key] = encoded
        parts.append(encoded)
        parts.append(_string(value))
    return b"".join(parts)


class PartitionEncoder:
    """Encodes the partitions of one table, given the table's constant parts."""

    def __init__(self, template: hms.Partition) -> None:
        """`template`: a partition of the table with every constant field set (database,
        table, catalog, the storage descriptor but its location)."""
        sd = template.sd
        template.sd = None
        template.values = None
        template.parameters = None
        template.createTime = None
        # the rest of the partition, with its STOP byte; the storage descriptor's fields
        # but its location, with the descriptor's STOP byte (its location comes first)
        self._rest = encode_struct(template)
        sd.location = None
        self._sd_body = encode_struct(sd)
        self._empty_parameters = string_map(7, {})

    def encode(
        self,
        values: Sequence[str | None],
        create_time: int,
        location: str,
        parameters: Mapping[str, str] | None,
    ) -> bytes:
        pack = _I32.pack
        parts = [_VALUES_HEADER, pack(len(values))]
        for value in values:
            data = (DEFAULT_PARTITION if value is None else value).encode("utf-8")
            parts.append(pack(len(data)))
            parts.append(data)
        where = location.encode("utf-8")
        parts.append(_CREATE_TIME)
        parts.append(pack(create_time))
        parts.append(_SD_LOCATION)
        parts.append(pack(len(where)))
        parts.append(where)
        parts.append(self._sd_body)
        parts.append(string_map(7, parameters) if parameters else self._empty_parameters)
        parts.append(self._rest)
        return b"".join(parts)


def list_header(count: int) -> bytes:
    """The reply struct's field 0 (`success`) as a list of `count` structs."""
    return _field(T_LIST, 0) + bytes((T_STRUCT,)) + _I32.pack(count)


def chunks(encoded: Iterable[bytes], size: int = CHUNK) -> Iterator[bytes]:
    batch: list[bytes] = []
    for item in encoded:
        batch.append(item)
        if len(batch) >= size:
            yield b"".join(batch)
            batch = []
    if batch:
        yield b"".join(batch)
