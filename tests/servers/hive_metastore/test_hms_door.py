"""The Hive Metastore port's door: connections capped and let go when idle, a daemon that will
not serve Thrift beyond loopback unauthenticated unless told to, and drops that never delete
the warehouse or a database's directory (SQLite and PostgreSQL)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

from metastore import Metastore
from servers.daemon import is_loopback
from servers.hive_metastore.server import ThriftService
from tests.servers.hive_metastore.test_hms_thrift import partition, sales_table
from tests.support.hms_daemon import STATLAS, ThriftClient, hms_daemon
from tests.support.processes import free_ports, statlas_env, stop_group


@contextlib.contextmanager
def limited(
    metastore: Metastore, tmp_path: Path, connections: int, idle: float
) -> Iterator[ThriftService]:
    server = ThriftService(
        metastore.ready(),
        "127.0.0.1",
        0,
        str(tmp_path / "warehouse"),
        max_connections=connections,
        idle_timeout=idle,
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_past_the_cap_a_client_waits_for_a_free_connection(
    metastore: Metastore, tmp_path: Path
) -> None:
    with limited(metastore, tmp_path, connections=3, idle=60) as server:
        held = [ThriftClient(server.port) for _ in range(3)]
        for client in held:
            assert "default" in client.get_all_databases()
        answered: list[list[str]] = []
        waiting = ThriftClient(server.port)  # connects: the listen queue takes it
        caller = threading.Thread(target=lambda: answered.append(waiting.get_all_databases()))
        caller.start()
        caller.join(1.0)
        assert answered == []  # no slot: its call waits
        held.pop().close()
        caller.join(10)
        assert answered == [["default"]]
        for client in [*held, waiting]:
            client.close()


def _closed_by_server(sock: socket.socket, within: float) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except (TimeoutError, ConnectionResetError):
        return False


def test_idle_and_half_sent_connections_are_let_go(metastore: Metastore, tmp_path: Path) -> None:
    with limited(metastore, tmp_path, connections=100, idle=0.5) as server:
        idle = socket.create_connection(("127.0.0.1", server.port))
        half = socket.create_connection(("127.0.0.1", server.port))
        half.sendall(b"\x80\x01\x00")  # the first bytes of a call, and no more
        assert _closed_by_server(idle, within=10)
        assert _closed_by_server(half, within=10)
        idle.close()
        half.close()
        client = ThriftClient(server.port)
        assert "default" in client.get_all_databases()
        client.close()


def test_hundreds_of_stalled_connections_leave_room_for_a_client(
    metastore: Metastore, tmp_path: Path
) -> None:
    with limited(metastore, tmp_path, connections=1000, idle=600) as server:
        stalled = []
        try:
            for i in range(300):
                sock = socket.create_connection(("127.0.0.1", server.port))
                if i % 3 == 0:
                    sock.sendall(b"\x80\x01\x00\x01\x00\x00")  # half a call
                stalled.append(sock)
            client = ThriftClient(server.port)
            started = time.monotonic()
            assert "default" in client.get_all_databases()
            assert client.get_database("default").name == "default"
            # served at once (a blocked server would hang until the idle timeout, 600 s)
            assert time.monotonic() - started < 10
            client.close()
        finally:
            for sock in stalled:
                sock.close()


def test_loopback_addresses() -> None:
    assert is_loopback("127.0.0.1")
    assert is_loopback("127.0.0.2")
    assert is_loopback("localhost")
    assert is_loopback("::1")
    assert not is_loopback("0.0.0.0")


def _daemon(db_url: str, cwd: Path, *argv: str) -> subprocess.Popen[str]:
    http, thrift = free_ports(2)
    return subprocess.Popen(
        [
            str(STATLAS),
            "daemon",
            "--host",
            "0.0.0.0",
            "--port",
            str(http),
            "--thrift-port",
            str(thrift),
            "--warehouse",
            str(cwd / "warehouse"),
            *argv,
        ],
        cwd=cwd,
        env=statlas_env(db_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def test_the_daemon_will_not_serve_thrift_beyond_loopback_unauthenticated(
    tmp_path: Path,
) -> None:
    db_url = f"sqlite:///{tmp_path / 'statlas.db'}"
    refused = _daemon(db_url, tmp_path)
    out, _ = refused.communicate(timeout=120)
    assert refused.returncode != 0
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[-1].startswith("statlas: error: refusing to serve the Hive Metastore API")
    assert "--thrift-auth none" in lines[-1]
    told = _daemon(db_url, tmp_path, "--thrift-auth", "none")
    try:
        assert told.stdout is not None
        deadline = time.monotonic() + 120
        seen = ""
        while "served without authentication" not in seen:
            assert told.poll() is None, seen + (told.stdout.read() or "")
            assert time.monotonic() < deadline, seen
            seen += told.stdout.readline()
    finally:
        stop_group(told)
        if told.stdout is not None:
            told.stdout.close()


def _managed(name: str, location: str) -> hms.Table:
    return hms.Table(
        tableName=name,
        dbName="default",
        tableType="MANAGED_TABLE",
        sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema("id", "bigint")], location=location, serdeInfo=hms.SerDeInfo()
        ),
        partitionKeys=[],
        parameters={},
    )


def test_a_drop_never_deletes_the_warehouse_or_a_databases_directory(
    client: ThriftClient, service: ThriftService, tmp_path: Path
) -> None:
    warehouse = Path(service.handler.warehouse)
    client.create_database(hms.Database(name="other"))
    other = warehouse / "other.db"
    (other / "t").mkdir(parents=True, exist_ok=True)
    (other / "t" / "part-0.parquet").write_bytes(b"other's rows")
    (warehouse / "kept.parquet").write_bytes(b"warehouse file")
    nested = warehouse / "deep" / "nested.db"
    client.create_database(hms.Database(name="nested", locationUri=f"file:{nested}"))
    (nested / "n.parquet").write_bytes(b"nested rows")
    client.create_table(_managed("at_warehouse", str(warehouse)))
    client.create_table(_managed("at_other", str(other)))
    client.create_table(_managed("above_nested", str(nested.parent)))
    client.create_table(_managed("dotted", f"{warehouse}/plain/../other.db"))
    for name in ("at_warehouse", "at_other", "above_nested", "dotted"):
        client.drop_table("default", name, True)
    assert (warehouse / "kept.parquet").read_bytes() == b"warehouse file"
    assert (other / "t" / "part-0.parquet").read_bytes() == b"other's rows"
    assert (nested / "n.parquet").read_bytes() == b"nested rows"
    # a plain managed table in the warehouse still goes
    client.create_table(_managed("plain", str(warehouse / "plain")))
    (warehouse / "plain" / "x.parquet").write_bytes(b"x")
    client.drop_table("default", "plain", True)
    assert not (warehouse / "plain").exists()


def _get_partitions_call(table: str) -> bytes:
    """A get_partitions call as bytes on the wire (binary protocol, unframed)."""
    buffer = TTransport.TMemoryBuffer()
    protocol = TBinaryProtocol.TBinaryProtocol(buffer)
    protocol.writeMessageBegin("get_partitions", TMessageType.CALL, 1)
    thrift_api.get_partitions_args(db_name="default", tbl_name=table, max_parts=-1).write(protocol)
    protocol.writeMessageEnd()
    return bytes(buffer.getvalue())


def _resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def _reply_bytes(sock: socket.socket, expected: int | None = None) -> int:
    """Bytes read until `expected`, or (None) until the reply stops flowing for a second."""
    sock.settimeout(30)
    total = 0
    while expected is None or total < expected:
        try:
            data = sock.recv(1 << 20)
        except TimeoutError:
            if expected is None and total:
                break
            raise
        if not data:
            break
        total += len(data)
        if expected is None:
            sock.settimeout(1)
    return total


def test_memory_stays_bounded_while_clients_stall_on_large_replies(
    db_url: str, tmp_path: Path
) -> None:
    """30 clients ask for 5,000 partitions each and read nothing: the daemon grows by at
    most 1.5 times the replies' bytes (each reply is encoded in chunks as it is sent, so a
    stalled one holds its rows and a chunk), serves another client meanwhile, and every
    stalled reply arrives whole once its client reads."""
    with hms_daemon(db_url, tmp_path) as (port, _log):
        client = ThriftClient(port)
        client.create_table(sales_table(str(tmp_path / "sales")))
        for day in range(50):
            client.add_partitions(
                [
                    partition([f"2024-{1 + day // 28:02d}-{1 + day % 28:02d}", str(h)])
                    for h in range(100)
                ]
            )
        call = _get_partitions_call("sales")
        with socket.create_connection(("127.0.0.1", port)) as probe:
            probe.sendall(call)
            reply = _reply_bytes(probe)
        assert reply > 1_000_000, reply
        pid = int(
            subprocess.run(
                ["pgrep", "-f", "--", f"--thrift-port {port}"], capture_output=True, text=True
            ).stdout.split()[0]
        )
        before = _resident_mb(pid)
        stalled = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
        try:
            for sock in stalled:
                sock.sendall(call)
            time.sleep(5)  # every call read, its rows selected, its first chunks sent
            grown = _resident_mb(pid) - before
            assert grown < 1.5 * 30 * reply / 2**20, (grown, reply)  # seen: 0.86 x
            started = time.monotonic()
            assert client.get_table("default", "sales").tableName == "sales"
            assert time.monotonic() - started < 10
            for sock in stalled:
                assert _reply_bytes(sock, reply) == reply
        finally:
            for sock in stalled:
                sock.close()
        client.close()
