"""Kerberos for the Hive Metastore API: the server side of SASL's GSSAPI mechanism
(RFC 4752), as Hive's metastore accepts it from Spark, Trino and Hive with
`hive.metastore.sasl.enabled=true` (docs/hive-metastore.md#authentication).

The GSS-API work (tickets, keytab, replay cache) is MIT Kerberos's, through python-gssapi;
this module keeps the mechanism's three steps: accept the client's context tokens, offer
the security layers, read the client's choice."""

from __future__ import annotations

import logging
import socket
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from metastore.errors import StatlasError

log = logging.getLogger("statlas.hms")

NO_LAYER, INTEGRITY, CONFIDENTIALITY = 1, 2, 4
"""RFC 4752's security-layer bits; Hadoop's hadoop.rpc.protection names them."""
PROTECTIONS = {"authentication": NO_LAYER, "integrity": INTEGRITY, "privacy": CONFIDENTIALITY}
MAX_BUFFER = 0xFFFFFF  # the largest wrapped message offered (3 bytes in the layer message)


class SaslRefused(Exception):
    """The client's authentication failed; the message says why (logged, and sent to it
    with `status`: Thrift's BAD for an unknown mechanism, ERROR otherwise)."""

    def __init__(self, message: str, status: int = 4) -> None:
        super().__init__(message)
        self.status = status


def parse_protection(text: str) -> int:
    """Hadoop's `hadoop.rpc.protection` ("authentication", "integrity", "privacy", or a
    comma-separated list of them) as the layers offered."""
    layers = 0
    for name in (part.strip().lower() for part in text.split(",")):
        if name not in PROTECTIONS:
            raise StatlasError(
                f"--thrift-sasl-qop: {name!r} is not one of authentication, integrity, privacy"
            )
        layers |= PROTECTIONS[name]
    return layers


def service_principal(principal: str, host: str) -> str:
    """Hive's `_HOST` in a service principal replaced by this machine's name (lower case),
    as Hive's metastore does (`hive/_HOST@REALM`)."""
    if "_HOST" not in principal:
        return principal
    name = host if host not in ("", "0.0.0.0", "::") else socket.getfqdn()
    return principal.replace("_HOST", name.lower())


def _gssapi() -> Any:
    try:
        import gssapi
    except ImportError:
        raise StatlasError(
            "--thrift-auth kerberos needs python-gssapi: pip install 'statlas[kerberos]' "
            "(it builds against MIT Kerberos: Debian's libkrb5-dev)"
        ) from None
    return gssapi


@dataclass(frozen=True)
class KerberosAcceptor:
    """The daemon's Kerberos identity: its service principal's keys from a keytab
    (Hive's hive.metastore.kerberos.principal and hive.metastore.kerberos.keytab.file)."""

    principal: str
    credentials: Any
    layers: int

    @classmethod
    def from_keytab(cls, principal: str, keytab: Path, layers: int) -> KerberosAcceptor:
        gssapi = _gssapi()
        if not keytab.is_file():
            raise StatlasError(f"--thrift-kerberos-keytab: no such file {keytab}")
        try:
            name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
            credentials = gssapi.Credentials(
                name=name, usage="accept", store={"keytab": str(keytab)}
            )
            credentials.inquire()  # fails here, not at the first client, if the key is absent
        except gssapi.exceptions.GSSError as error:
            raise StatlasError(
                f"cannot accept Kerberos clients as {principal} with keytab {keytab}: "
                f"{_one_line(error)}"
            ) from None
        return cls(principal, credentials, layers)

    def negotiation(self) -> GssapiNegotiation:
        return GssapiNegotiation(self)


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


class GssapiNegotiation:
    """One client's SASL GSSAPI exchange, server side (RFC 4752 section 3.1): `step` takes
    each client response and returns the next challenge until `complete`."""

    def __init__(self, acceptor: KerberosAcceptor) -> None:
        gssapi = _gssapi()
        self._errors = gssapi.exceptions.GSSError
        self._context = gssapi.SecurityContext(creds=acceptor.credentials, usage="accept")
        self._layers = acceptor.layers
        self._stage = "context"
        self.complete = False
        self.principal = ""
        self.layer = NO_LAYER

    def step(self, response: bytes) -> bytes:
        try:
            if self._stage == "context":
                return self._accept(response)
            if self._stage == "offer":
                return self._offer()
            return self._choose(response)
        except self._errors as error:
            raise SaslRefused(f"GSSAPI: {_one_line(error)}") from None

    def _accept(self, token: bytes) -> bytes:
        reply = self._context.step(token) or b""
        if not self._context.complete:
            return reply
        self.principal = str(self._context.initiator_name)
        self._stage = "offer"
        if reply:  # the client answers the last context token with an empty response
            return reply
        return self._offer()

    def _offer(self) -> bytes:
        self._stage = "choice"
        offer = struct.pack("!I", self._layers << 24 | MAX_BUFFER)
        return bytes(self._context.wrap(offer, False).message)

    def _choose(self, response: bytes) -> bytes:
        choice = bytes(self._context.unwrap(response).message)
        if len(choice) < 4:
            raise SaslRefused("GSSAPI: the client's security-layer choice is shorter than 4 bytes")
        layer = choice[0]
        if layer not in (NO_LAYER, INTEGRITY, CONFIDENTIALITY) or not layer & self._layers:
            raise SaslRefused(
                f"GSSAPI: the client chose security layer {layer}, not one offered "
                f"({self._layers}): check hadoop.rpc.protection on both sides"
            )
        authorization_id = choice[4:].decode("utf-8", "replace")
        if authorization_id and authorization_id != self.principal:
            raise SaslRefused(
                f"GSSAPI: {self.principal} may not act as {authorization_id} "
                "(the authorization id must be the authenticated principal)"
            )
        self.layer = layer
        self.complete = True
        return b""

    def wrap(self, data: bytes) -> bytes:
        """A data frame as sent under the chosen layer (unchanged with no layer)."""
        if self.layer == NO_LAYER:
            return data
        return bytes(self._context.wrap(data, self.layer == CONFIDENTIALITY).message)

    def unwrap(self, data: bytes) -> bytes:
        if self.layer == NO_LAYER:
            return data
        try:
            result = self._context.unwrap(data)
        except self._errors as error:
            raise SaslRefused(f"GSSAPI: a frame failed to unwrap: {_one_line(error)}") from None
        if self.layer == CONFIDENTIALITY and not result.encrypted:
            raise SaslRefused("GSSAPI: a data frame was not encrypted under privacy")
        return bytes(result.message)
