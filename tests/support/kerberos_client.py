"""A Hive Metastore client over Thrift's SASL transport with Kerberos, written by others:
thrift_sasl's TSaslClientTransport and pure-sasl's GSSAPI mechanism (pykerberos underneath),
the stack Python clients of a Kerberized Hive use (impyla joins the two with an adapter like
`PureSasl` below: thrift_sasl speaks the API of the `sasl` binding of Cyrus SASL)."""

from __future__ import annotations

import os
import struct
from typing import Any

from hive_metastore import ThriftHiveMetastore as thrift_api
from puresasl.client import SASLClient
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket
from thrift_sasl import TSaslClientTransport


class PureSasl:
    """pure-sasl's client behind the `sasl` binding's calls, which thrift_sasl makes."""

    def __init__(self, client: SASLClient) -> None:
        self.client = client
        self.error = ""

    def _call(self, step: Any, *arguments: Any) -> tuple[bool, Any]:
        try:
            return True, step(*arguments)
        except Exception as error:  # the binding reports failures as (False, getError())
            self.error = str(error)
            return False, None

    def start(self, mechanism: str) -> tuple[bool, str, bytes]:
        ok, response = self._call(self.client.process)
        return ok, mechanism, response

    def step(self, challenge: bytes) -> tuple[bool, bytes]:
        return self._call(self.client.process, challenge)

    def encode(self, data: bytes) -> tuple[bool, bytes]:
        """As Cyrus's sasl_encode: unchanged with no security layer, else the wrapped bytes
        behind their 4-byte length."""
        ok, wrapped = self._call(self.client.wrap, data)
        if not ok or wrapped == data:
            return ok, wrapped
        return True, struct.pack("!I", len(wrapped)) + wrapped

    def decode(self, frame: bytes) -> tuple[bool, bytes]:
        return self._call(self.client.unwrap, frame[4:])  # the frame with its length

    def getError(self) -> str:
        return self.error


class KerberosThriftClient:
    """The generated Hive Metastore client on a SASL GSSAPI connection to
    `service`/`host`, with the tickets in the credential cache `ccache` (KRB5CCNAME)."""

    def __init__(
        self,
        port: int,
        ccache: str,
        service: str = "statlas",
        host: str = "localhost",
        qop: str = "auth",
    ) -> None:

        def sasl_client() -> PureSasl:
            return PureSasl(
                SASLClient(host, service=service, mechanism="GSSAPI", qops=[qop.encode()])
            )

        self.transport = TSaslClientTransport(
            sasl_client, "GSSAPI", TSocket.TSocket("127.0.0.1", port)
        )
        before = os.environ.get("KRB5CCNAME")
        os.environ["KRB5CCNAME"] = ccache  # pykerberos reads the cache of the environment
        try:
            self.transport.open()
        except BaseException:
            self.transport._trans.close()  # the socket under a refused negotiation
            raise
        finally:  # restored: libpq, for one, would try GSSAPI with these tickets
            if before is None:
                del os.environ["KRB5CCNAME"]
            else:
                os.environ["KRB5CCNAME"] = before
        self.api = thrift_api.Client(TBinaryProtocol.TBinaryProtocol(self.transport))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def close(self) -> None:
        self.transport.close()
