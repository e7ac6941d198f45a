"""The Hive Metastore Thrift server: binary protocol; buffered transport without
authentication (Hive's default), or Thrift's SASL transport with Kerberos (GSSAPI, Hive's
`hive.metastore.sasl.enabled`); one thread per client connection (Hive clients keep
connections open while idle, so a thread pool would stall). See docs/hive-metastore.md.
"""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

from hive_metastore import ThriftHiveMetastore as thrift_api
from sqlalchemy import Engine
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from metastore.errors import StatlasError
from metastore.hive.locks import DEFAULT_TIMEOUT as DEFAULT_LOCK_TIMEOUT
from servers.authorization import Roles
from servers.hive_metastore.authorizing_handler import AuthorizingHandler
from servers.hive_metastore.encoding import list_header
from servers.hive_metastore.handler import HiveMetastoreHandler
from servers.hive_metastore.sasl_gssapi import KerberosAcceptor, SaslRefused
from servers.hive_metastore.sasl_transport import SaslDataTransport, negotiate
from servers.hive_metastore.thrift_errors import thrift_errors_of

log = logging.getLogger("statlas.hms")

DEFAULT_MAX_CONNECTIONS = 1000
"""Connections served at once (Hive's hive.metastore.server.max.threads); the next client
waits in the listen queue until one closes."""
DEFAULT_IDLE_TIMEOUT = 600.0
"""Seconds a connection may send nothing (or take nothing of a reply) before it is closed
(Hive's clients time out at hive.metastore.client.socket.timeout, 600 s)."""

# partition-list calls answered by streaming their replies (Processor._process_streamed)
STREAMED = frozenset(
    {
        "get_partitions",
        "get_partitions_with_auth",
        "get_partitions_ps",
        "get_partitions_ps_with_auth",
        "get_partitions_by_filter",
        "get_partitions_by_names",
    }
)


class Processor(thrift_api.Processor):  # type: ignore[misc]
    """The generated processor, except that a method the handler does not define answers
    UNKNOWN_METHOD with the text Hive's own server uses ("Invalid method name: 'x'"):
    Spark and Trino match that text to fall back to older calls."""

    def __init__(self, handler: HiveMetastoreHandler | AuthorizingHandler) -> None:
        super().__init__(handler)
        self._handled = {
            name for name in self._processMap if callable(getattr(handler, name, None))
        }

    def process(self, iprot: Any, oprot: Any) -> bool | None:
        name, _type, seqid = iprot.readMessageBegin()
        if name not in self._handled:
            iprot.skip(TType.STRUCT)
            iprot.readMessageEnd()
            log.info("unknown method %s: answered UNKNOWN_METHOD", name)
            error = TApplicationException(
                TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{name}'"
            )
            oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
            error.write(oprot)
            oprot.writeMessageEnd()
            oprot.trans.flush()
            return None
        log.debug("call %s", name)
        if name in STREAMED:
            self._process_streamed(name, seqid, iprot, oprot)
        else:
            self._processMap[name](self, seqid, iprot, oprot)
        return True

    def _process_streamed(self, name: str, seqid: int, iprot: Any, oprot: Any) -> None:
        """A partition-list call whose reply is written as it is encoded
        (servers.hive_metastore.encoding), in chunks: never a Thrift object per partition, never the
        whole reply in memory. Errors are answered as the generated code answers them."""
        args = getattr(thrift_api, f"{name}_args")()
        args.read(iprot)
        iprot.readMessageEnd()
        handler: HiveMetastoreHandler = self._handler
        try:
            count, chunks = thrift_errors_of(name, lambda: handler.partitions_reply(name, args))
        except TTransport.TTransportException:
            raise
        except Exception as error:
            result = getattr(thrift_api, f"{name}_result")()
            kind = TMessageType.REPLY
            field = next(
                (
                    entry[2]
                    for entry in result.thrift_spec
                    if entry is not None
                    and entry[2].startswith("o")
                    and isinstance(error, entry[3][0])
                ),
                None,
            )
            if field is not None:
                setattr(result, field, error)
            else:
                log.exception("%s failed", name)
                kind = TMessageType.EXCEPTION
                result = TApplicationException(
                    TApplicationException.INTERNAL_ERROR, f"{name} failed: {error}"
                )
            oprot.writeMessageBegin(name, kind, seqid)
            result.write(oprot)
            oprot.writeMessageEnd()
            oprot.trans.flush()
            return
        oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
        transport = oprot.trans
        transport.write(list_header(count))
        for chunk in chunks:
            transport.write(chunk)
            transport.flush()
        transport.write(b"\x00")  # the result struct's STOP
        oprot.writeMessageEnd()
        transport.flush()


class ThriftService:
    """Serves the Hive Metastore API on host:port until stop()."""

    def __init__(
        self,
        engine: Engine,
        host: str,
        port: int,
        warehouse: str,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        kerberos: KerberosAcceptor | None = None,
        roles: Roles | None = None,
    ) -> None:
        if max_connections < 1:
            raise StatlasError(
                f"--thrift-max-connections must be at least 1, got {max_connections}"
            )
        if not idle_timeout > 0:
            raise StatlasError(f"--thrift-idle-timeout must be positive, got {idle_timeout}")
        self.handler = HiveMetastoreHandler(engine, warehouse, lock_timeout)
        self.idle_timeout = idle_timeout
        self._slots = threading.BoundedSemaphore(max_connections)
        self.kerberos = kerberos
        self.processor = Processor(
            self.handler if roles is None else AuthorizingHandler(self.handler, roles)
        )
        self.protocol = TBinaryProtocolAcceleratedFactory()
        self.transport = TTransport.TBufferedTransportFactory()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind((host, port))
        except OSError as error:
            self._listener.close()
            raise StatlasError(
                f"cannot serve the Hive Metastore API on {host}:{port}: {error}"
            ) from None
        self._listener.listen(128)
        self.host = host
        self.port = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        self._clients: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, name="hms-accept", daemon=True)

    def start(self) -> ThriftService:
        self._thread.start()
        log.info("Hive Metastore API on thrift://%s:%d", self.host, self.port)
        return self

    def _accept(self) -> None:
        """Accept while a connection slot is free; past the cap, new clients wait in the
        listen queue (their connect succeeds, their first call waits) until one closes."""
        while not self._stopping.is_set():
            if not self._slots.acquire(timeout=0.5):
                continue
            try:
                client, _address = self._listener.accept()
            except OSError:
                self._slots.release()
                if self._stopping.is_set():
                    return
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client.settimeout(self.idle_timeout)  # an idle or stalled client is let go
            with self._lock:
                self._clients.add(client)
            threading.Thread(
                target=self._serve, args=(client, _address), name="hms-client", daemon=True
            ).start()

    def _serve(self, client: socket.socket, address: tuple[str, int]) -> None:
        wrapped = TSocket.TSocket()
        wrapped.setHandle(client)
        itrans: Any = wrapped
        try:
            if self.kerberos is None:
                itrans = self.transport.getTransport(wrapped)
                otrans = self.transport.getTransport(wrapped)
                self.handler.begin_connection(None)
            else:
                negotiation = negotiate(wrapped, {"GSSAPI": self.kerberos})
                itrans = otrans = SaslDataTransport(wrapped, negotiation)
                self.handler.begin_connection(negotiation.principal)
                log.debug("client %s:%d is %s", *address, negotiation.principal)
            iprot = self.protocol.getProtocol(itrans)
            oprot = self.protocol.getProtocol(otrans)
            while not self._stopping.is_set():
                self.processor.process(iprot, oprot)
        except SaslRefused as refusal:
            log.warning("Hive Metastore client %s:%d refused: %s", *address, refusal)
        except (TTransport.TTransportException, OSError):
            pass  # the client closed its connection, or sent nothing for idle_timeout
        except Exception:  # a reply that could not be written: drop this client only
            log.exception("Hive Metastore client connection failed")
        finally:
            with self._lock:
                self._clients.discard(client)
            itrans.close()
            self._slots.release()

    def stop(self) -> None:
        """Stop accepting, close every client connection (calls under way finish or fail
        with their transaction rolled back)."""
        self._stopping.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=5)
