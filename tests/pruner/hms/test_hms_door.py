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

from hive_metastore import ttypes as hms

from metastore import Metastore
from pruner.daemon.run import is_loopback
from pruner.hms.server import ThriftService
from tests.support.hms_daemon import STATLAS, ThriftClient
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
