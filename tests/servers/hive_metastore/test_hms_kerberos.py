"""Kerberos on the Hive Metastore port (SASL GSSAPI, as Hive's `hive.metastore.sasl.enabled`)
and roles, on SQLite and PostgreSQL: a real MIT KDC started by the test (tests/support/kdc.py),
the daemon's service principal in a keytab, clients written by others (thrift_sasl and
pure-sasl over pykerberos). A client without a ticket, with a ticket for another service,
with an expired ticket or speaking plain Thrift is refused before any call runs; readers,
writers and admins may do what their role allows, and a refused call changes nothing."""

from __future__ import annotations

import socket
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from metastore import Metastore
from servers.authorization import Roles
from servers.hive_metastore.sasl_gssapi import CONFIDENTIALITY, NO_LAYER, KerberosAcceptor
from servers.hive_metastore.server import ThriftService
from tests.servers.hive_metastore.test_hms_thrift import sales_table
from tests.support.hms_daemon import STATLAS, ThriftClient
from tests.support.kdc import Realm, daemon_arguments, kdc
from tests.support.kerberos_client import KerberosThriftClient
from tests.support.processes import free_ports, statlas_env

pytestmark = pytest.mark.kerberos

SERVICE = "statlas/localhost"
ROLES = """
[principals]
"alice" = "reader"
"wendy" = "writer"
"root/admin" = "admin"
"""


@pytest.fixture(scope="module")
def realm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Realm]:
    with kdc(tmp_path_factory.mktemp("kdc")) as started:
        for name in (SERVICE, "other/localhost", "alice", "wendy", "root/admin", "mallory"):
            started.add_principal(name)
        yield started


@pytest.fixture(autouse=True)
def krb5_environment(realm: Realm, monkeypatch: pytest.MonkeyPatch) -> None:
    """The acceptor (in this process) and the clients read the test realm's krb5.conf."""
    monkeypatch.setenv("KRB5_CONFIG", str(realm.krb5_conf))
    monkeypatch.delenv("KRB5_KTNAME", raising=False)
    monkeypatch.delenv("KRB5CCNAME", raising=False)


def kerberized(
    metastore: Metastore,
    realm: Realm,
    tmp_path: Path,
    roles: Roles | None = None,
    layers: int = NO_LAYER,
) -> ThriftService:
    acceptor = KerberosAcceptor.from_keytab(
        f"{SERVICE}@{realm.realm}", realm.keytab(SERVICE), layers
    )
    return ThriftService(
        metastore.ready(),
        "127.0.0.1",
        0,
        str(tmp_path / "warehouse"),
        kerberos=acceptor,
        roles=roles,
    ).start()


@pytest.fixture
def service(metastore: Metastore, realm: Realm, tmp_path: Path) -> Iterator[ThriftService]:
    server = kerberized(metastore, realm, tmp_path)
    yield server
    server.stop()


def client_of(realm: Realm, server: ThriftService, who: str, **sasl: str) -> KerberosThriftClient:
    return KerberosThriftClient(server.port, f"FILE:{realm.kinit(who)}", **sasl)


def databases_in(metastore: Metastore) -> list[str]:
    with metastore.engine.connect() as conn:
        return [row[0] for row in conn.exec_driver_sql("SELECT name FROM hms_databases")]


def test_a_kerberos_client_is_served(service: ThriftService, realm: Realm, tmp_path: Path) -> None:
    client = client_of(realm, service, "alice")
    client.create_database(hms.Database(name="k", locationUri=f"file:{tmp_path}/k.db"))
    client.create_table(sales_table(str(tmp_path / "sales"), db="k"))
    assert client.get_table("k", "sales").sd.cols[0].name == "id"
    assert client.get_all_databases() == ["default", "k"]
    client.close()


def test_privacy_is_served_and_required(metastore: Metastore, realm: Realm, tmp_path: Path) -> None:
    server = kerberized(metastore, realm, tmp_path, layers=CONFIDENTIALITY)
    try:
        client = client_of(realm, server, "alice", qop="auth-conf")
        assert "default" in client.get_all_databases()
        client.close()
        with pytest.raises(TTransportException, match="quality of protection"):
            client_of(realm, server, "alice", qop="auth")  # asks for no layer: refused
    finally:
        server.stop()


def test_a_plain_thrift_client_is_refused(service: ThriftService, metastore: Metastore) -> None:
    plain = ThriftClient(service.port)
    with pytest.raises(TTransportException):
        plain.create_database(hms.Database(name="plain"))
    plain.close()
    assert databases_in(metastore) == ["default"]


def test_a_client_without_a_ticket_gets_nowhere(
    service: ThriftService, metastore: Metastore, realm: Realm, tmp_path: Path
) -> None:
    empty = tmp_path / "no-tickets"
    with pytest.raises(Exception, match=r"(?i)credentials|not found|no such file"):
        KerberosThriftClient(service.port, f"FILE:{empty}")
    assert databases_in(metastore) == ["default"]


def test_a_ticket_for_another_service_is_refused(
    service: ThriftService, metastore: Metastore, realm: Realm
) -> None:
    with pytest.raises(TTransportException, match="GSSAPI"):
        client_of(realm, service, "mallory", service="other")
    assert databases_in(metastore) == ["default"]


def sasl_frame(status: int, payload: bytes) -> bytes:
    return struct.pack("!BI", status, len(payload)) + payload


def test_an_expired_ticket_is_refused(
    service: ThriftService, metastore: Metastore, realm: Realm
) -> None:
    """The AP-REQ is made while the 4-second ticket is valid and sent after it expired (the
    realm's clock skew is 3 s): the daemon refuses it."""
    import gssapi

    ccache = realm.kinit("mallory", lifetime="4s")
    credentials = gssapi.Credentials(usage="initiate", store={"ccache": f"FILE:{ccache}"})
    target = gssapi.Name(f"{SERVICE}@{realm.realm}", gssapi.NameType.kerberos_principal)
    token = gssapi.SecurityContext(name=target, creds=credentials, usage="initiate").step()
    assert token
    time.sleep(9)
    with socket.create_connection(("127.0.0.1", service.port), timeout=10) as sock:
        sock.sendall(sasl_frame(1, b"GSSAPI") + sasl_frame(2, token))
        status, length = struct.unpack("!BI", sock.recv(5))
        message = sock.recv(length).decode()
    assert status == 4, message  # ERROR
    assert "expired" in message.lower(), message
    assert databases_in(metastore) == ["default"]


@pytest.fixture
def roles_file(tmp_path: Path) -> Path:
    path = tmp_path / "roles.toml"
    path.write_text(ROLES)
    return path


def test_roles_decide_what_each_principal_may_do(
    metastore: Metastore, realm: Realm, tmp_path: Path, roles_file: Path
) -> None:
    server = kerberized(metastore, realm, tmp_path, roles=Roles.load(roles_file))
    try:
        writer = client_of(realm, server, "wendy")
        writer.create_database(hms.Database(name="k", locationUri=f"file:{tmp_path}/k.db"))
        writer.create_table(sales_table(str(tmp_path / "sales"), db="k"))
        with pytest.raises(hms.MetaException, match=r"wendy@STATLAS\.TEST \(role writer\) may not"):
            writer.drop_table("k", "sales", False)

        reader = client_of(realm, server, "alice")
        assert reader.get_table("k", "sales").tableName == "sales"
        with pytest.raises(hms.MetaException, match="needs the writer role"):
            reader.create_table(sales_table(str(tmp_path / "other"), db="k", name="other"))
        with pytest.raises(hms.MetaException, match="needs the admin role"):
            reader.drop_database("k", False, False)
        shared = hms.LockComponent(
            type=hms.LockType.SHARED_READ, level=hms.LockLevel.TABLE, dbname="k", tablename="sales"
        )
        granted = reader.lock(hms.LockRequest(component=[shared], user="alice", hostname="h"))
        assert granted.state == hms.LockState.ACQUIRED
        reader.unlock(hms.UnlockRequest(lockid=granted.lockid))
        exclusive = hms.LockComponent(
            type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE, dbname="k", tablename="sales"
        )
        with pytest.raises(TApplicationException, match="needs the writer role"):
            reader.lock(hms.LockRequest(component=[exclusive], user="alice", hostname="h"))
        assert reader.get_tables("k", "*") == ["sales"]  # nothing changed

        unnamed = client_of(realm, server, "mallory")
        with pytest.raises(hms.MetaException, match="has no role"):
            unnamed.get_all_databases()

        admin = client_of(realm, server, "root/admin")
        admin.drop_table("k", "sales", False)
        assert admin.get_tables("k", "*") == []
        for client in (writer, reader, unnamed, admin):
            client.close()
    finally:
        server.stop()


def test_without_kerberos_roles_go_by_the_set_ugi_name(
    metastore: Metastore, tmp_path: Path, roles_file: Path
) -> None:
    server = ThriftService(
        metastore.ready(), "127.0.0.1", 0, str(tmp_path / "w"), roles=Roles.load(roles_file)
    ).start()
    try:
        client = ThriftClient(server.port)
        with pytest.raises(hms.MetaException, match="anonymous has no role"):
            client.get_all_databases()
        client.set_ugi("alice", [])
        assert client.get_all_databases() == ["default"]
        with pytest.raises(hms.MetaException, match="needs the writer role"):
            client.create_database(hms.Database(name="x"))
        client.close()
    finally:
        server.stop()


def daemon_error(tmp_path: Path, realm: Realm, *arguments: str) -> str:
    db_url = f"sqlite:///{tmp_path / 'statlas.db'}"
    env = statlas_env(db_url)
    env["KRB5_CONFIG"] = str(realm.krb5_conf)
    http_port, thrift_port = free_ports(2)
    ports = ["--port", str(http_port), "--thrift-port", str(thrift_port)]
    finished = subprocess.run(
        [STATLAS, "daemon", *ports, *arguments],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode != 0, finished.stdout
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1, finished.stderr
    return lines[0]


def test_daemon_kerberos_settings_are_checked_before_serving(tmp_path: Path, realm: Realm) -> None:
    assert "--thrift-kerberos-principal and --thrift-kerberos-keytab" in daemon_error(
        tmp_path, realm, "--thrift-auth", "kerberos"
    )
    missing = tmp_path / "missing.keytab"
    principal, keytab = f"{SERVICE}@{realm.realm}", realm.keytab(SERVICE)
    wrong_principal = daemon_arguments(f"nobody/localhost@{realm.realm}", keytab)
    bad_qop = [*daemon_arguments(principal, keytab), "--thrift-sasl-qop", "secret"]
    assert f"no such file {missing}" in daemon_error(
        tmp_path, realm, *daemon_arguments(principal, missing)
    )
    assert "as nobody/localhost" in daemon_error(tmp_path, realm, *wrong_principal)
    assert "'secret' is not one of" in daemon_error(tmp_path, realm, *bad_qop)
    bad_roles = tmp_path / "roles.toml"
    bad_roles.write_text('[principals]\nalice = "owner"\n')
    assert "role 'owner' for 'alice'" in daemon_error(tmp_path, realm, "--roles", str(bad_roles))
