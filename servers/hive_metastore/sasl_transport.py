"""Thrift's SASL transport, server side, as Hive's metastore speaks it (TSaslServerTransport):
a negotiation of status-tagged messages, then data in 4-byte-length frames, wrapped when the
negotiated layer asks for integrity or privacy (docs/hive-metastore.md#authentication)."""

from __future__ import annotations

import contextlib
import struct
from io import BytesIO
from typing import Any, Protocol

from thrift.transport.TTransport import CReadableTransport, TTransportBase, TTransportException

from servers.hive_metastore.sasl_gssapi import SaslRefused

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
"""The negotiation's status bytes (Thrift's TSaslTransport.NegotiationStatus)."""
MAX_NEGOTIATION_MESSAGE = 1 << 20  # Kerberos tokens with large authorisation data: ~64 KiB
MAX_DATA_FRAME = 256 << 20  # one Thrift message: a few hundred thousand partitions at most


class Negotiation(Protocol):
    complete: bool
    principal: str

    def step(self, response: bytes) -> bytes: ...
    def wrap(self, data: bytes) -> bytes: ...
    def unwrap(self, data: bytes) -> bytes: ...


class Mechanism(Protocol):
    def negotiation(self) -> Negotiation: ...


def _read_message(transport: Any) -> tuple[int, bytes]:
    header = transport.readAll(5)
    status, length = header[0], struct.unpack("!I", header[1:])[0]
    if status not in (START, OK, BAD, ERROR, COMPLETE):
        raise SaslRefused(
            f"not a SASL negotiation (status byte {status}): the client does not use "
            "Kerberos (hive.metastore.sasl.enabled=true)"
        )
    if length > MAX_NEGOTIATION_MESSAGE:
        raise SaslRefused(f"a SASL negotiation message of {length} bytes")
    payload = transport.readAll(length)
    if status in (BAD, ERROR):
        said = " ".join(payload.decode("utf-8", "replace").split())
        raise SaslRefused(f"the client gave up its SASL negotiation: {said}")
    return status, payload


def _send_message(transport: Any, status: int, payload: bytes) -> None:
    transport.write(struct.pack("!BI", status, len(payload)) + payload)
    transport.flush()


def negotiate(transport: Any, mechanisms: dict[str, Mechanism]) -> Negotiation:
    """Run the client's SASL negotiation on `transport` (a connected TSocket). Returns the
    completed negotiation (its principal and layer); on failure tells the client why
    (BAD or ERROR, as Thrift's server does) and raises SaslRefused."""
    try:
        status, payload = _read_message(transport)
        if status != START:
            raise SaslRefused(f"expected a SASL START message, got status {status}")
        name = payload.decode("utf-8", "replace")
        mechanism = mechanisms.get(name)
        if mechanism is None:
            raise SaslRefused(f"Unsupported mechanism type {name}", BAD)
        negotiation = mechanism.negotiation()
        while not negotiation.complete:
            status, payload = _read_message(transport)
            if status not in (OK, COMPLETE):
                raise SaslRefused(f"expected COMPLETE or OK, got status {status}")
            challenge = negotiation.step(payload)
            _send_message(transport, COMPLETE if negotiation.complete else OK, challenge)
        return negotiation
    except SaslRefused as refusal:
        with contextlib.suppress(OSError, TTransportException):
            _send_message(transport, refusal.status, str(refusal).encode())
        raise


class SaslDataTransport(TTransportBase, CReadableTransport):  # type: ignore[misc]
    """The data phase: each flush is one frame (4-byte length, then the bytes wrapped by the
    negotiated layer); reads unwrap frame by frame. A CReadableTransport, so the accelerated
    binary protocol reads from its buffer directly."""

    def __init__(self, transport: Any, negotiation: Negotiation) -> None:
        self._transport = transport
        self._negotiation = negotiation
        self._read_buffer = BytesIO(b"")
        self._write_buffer: list[bytes] = []

    def isOpen(self) -> bool:
        return bool(self._transport.isOpen())

    def open(self) -> None:
        self._transport.open()

    def close(self) -> None:
        self._transport.close()

    def read(self, size: int) -> bytes:
        data = self._read_buffer.read(size)
        if data:
            return data
        self._read_frame()
        return self._read_buffer.read(size)

    def _next_frame(self) -> bytes:
        (length,) = struct.unpack("!I", self._transport.readAll(4))
        if length > MAX_DATA_FRAME:
            raise TTransportException(
                TTransportException.SIZE_LIMIT,
                f"a SASL data frame of {length} bytes (at most {MAX_DATA_FRAME})",
            )
        frame = self._transport.readAll(length)
        try:
            return self._negotiation.unwrap(frame)
        except SaslRefused as refusal:
            raise TTransportException(TTransportException.UNKNOWN, str(refusal)) from None

    def _read_frame(self) -> None:
        self._read_buffer = BytesIO(self._next_frame())

    def write(self, data: bytes) -> None:
        self._write_buffer.append(data)

    def flush(self) -> None:
        data = self._negotiation.wrap(b"".join(self._write_buffer))
        self._write_buffer = []
        self._transport.write(struct.pack("!I", len(data)) + data)
        self._transport.flush()

    @property
    def cstringio_buf(self) -> BytesIO:
        return self._read_buffer

    def cstringio_refill(self, partial: bytes, needed: int) -> BytesIO:
        while len(partial) < needed:
            partial += self._next_frame()
        self._read_buffer = BytesIO(partial)
        return self._read_buffer
