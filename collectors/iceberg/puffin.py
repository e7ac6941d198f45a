"""Puffin files (Iceberg's "Puffin file format" spec): blobs of statistics after the magic
`PFA1`, then a footer of the magic, a JSON payload describing each blob (type, fields,
snapshot, offset, length, properties), the payload's length (4 bytes, little-endian), four
bytes of flags (none set: the payload is not compressed) and the magic again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

MAGIC = b"PFA1"
THETA_BLOB = "apache-datasketches-theta-v1"


@dataclass(frozen=True)
class Blob:
    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    payload: bytes
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PuffinBytes:
    content: bytes
    footer_size: int  # the footer's bytes, both magics included (file-footer-size-in-bytes)


def puffin_file(blobs: list[Blob], properties: dict[str, str] | None = None) -> PuffinBytes:
    """The bytes of a Puffin file holding `blobs`, uncompressed."""
    body = bytearray(MAGIC)
    described = []
    for blob in blobs:
        offset = len(body)
        body += blob.payload
        described.append(
            {
                "type": blob.type,
                "fields": list(blob.fields),
                "snapshot-id": blob.snapshot_id,
                "sequence-number": blob.sequence_number,
                "offset": offset,
                "length": len(blob.payload),
                "properties": dict(blob.properties),
            }
        )
    payload = json.dumps(
        {"blobs": described, "properties": dict(properties or {})}, separators=(",", ":")
    ).encode()
    footer = MAGIC + payload + len(payload).to_bytes(4, "little") + bytes(4) + MAGIC
    return PuffinBytes(bytes(body) + footer, len(footer))
