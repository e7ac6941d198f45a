"""A real MIT Kerberos KDC for tests: a realm of its own on 127.0.0.1, in a temporary directory.

Everything (database, stash, keytabs, credential caches, the acceptors' replay cache, krb5.conf,
kdc.conf, logs) lives in the directory given to `kdc`; every command runs with KRB5_CONFIG and
KRB5_KDC_PROFILE pointing there, so /etc/krb5.conf and /var/lib/krb5kdc are never used. The KDC
grants lifetimes as short as asked ("4s" gives a ticket valid for exactly 4 s). krb5.conf's
clockskew of 1 s makes an acceptor refuse a ticket about a second after it ends ("Ticket
expired"), and also any AP-REQ accepted more than ~1 s after it was made ("Clock skew too great").
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.processes import free_port, log_tail, stop_group

REALM = "STATLAS.TEST"

COMMAND_TIMEOUT = 30.0  # seconds, for each kdb5_util, kadmin.local and kinit
START_TIMEOUT = 20.0  # seconds, for the KDC to accept TCP connections

KRB5_CONF = """\
[libdefaults]
    default_realm = {realm}
    dns_canonicalize_hostname = false
    rdns = false
    dns_lookup_kdc = false
    dns_lookup_realm = false
    udp_preference_limit = 1
    clockskew = 3
    forwardable = true
    default_rcache_name = file2:{directory}/krb5.rcache2

[realms]
    {realm} = {{
        kdc = 127.0.0.1:{port}
    }}

[domain_realm]
    localhost = {realm}
    .localhost = {realm}
    127.0.0.1 = {realm}
"""

KDC_CONF = """\
[kdcdefaults]
    kdc_listen = 127.0.0.1:{port}
    kdc_tcp_listen = 127.0.0.1:{port}

[realms]
    {realm} = {{
        database_name = {directory}/principal
        key_stash_file = {directory}/stash
        acl_file = {directory}/kadm5.acl
        kdc_listen = 127.0.0.1:{port}
        kdc_tcp_listen = 127.0.0.1:{port}
        max_life = 1h
        max_renewable_life = 1h
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }}

[logging]
    kdc = STDERR
    admin_server = FILE:{directory}/kadmin.log
    default = FILE:{directory}/krb5.log
"""


class KerberosError(RuntimeError):
    """A Kerberos command failed, or the KDC did not start."""


def _file_name(name: str) -> str:
    """A principal's name as part of a file name ("statlas/localhost" -> "statlas_localhost")."""
    return name.replace("/", "_").replace("@", "_")


@dataclass(frozen=True)
class Realm:
    """A running realm: its KDC's port, its krb5.conf, and helpers for principals and tickets."""

    directory: Path
    realm: str
    port: int
    krb5_conf: Path
    _caches: Iterator[int] = field(
        default_factory=itertools.count, init=False, repr=False, compare=False
    )

    @property
    def kdc_conf(self) -> Path:
        return self.directory / "kdc.conf"

    def run(self, *command: str) -> str:
        """Run a Kerberos command on this realm's files; its stdout, or KerberosError."""
        return _run(list(command), self._admin_env())

    def add_principal(self, name: str) -> str:
        """Add `name` ("alice", "statlas/localhost") with a random key; returns "name@REALM"."""
        self.run("kadmin.local", "-r", self.realm, "-q", f"addprinc -randkey {name}")
        return f"{name}@{self.realm}"

    def keytab(self, name: str) -> Path:
        """A keytab file with the keys of principal `name`, written the first time it is asked."""
        path = self.directory / f"{_file_name(name)}.keytab"
        if not path.exists():
            self.run("kadmin.local", "-r", self.realm, "-q", f"ktadd -k {path} -norandkey {name}")
        return path

    def kinit(self, name: str, lifetime: str | None = None) -> Path:
        """A new credential cache file holding a TGT of `name`, got with its keytab, valid for
        `lifetime` ("4s", "10m") when given."""
        cache = self.directory / f"cc-{_file_name(name)}-{next(self._caches)}"
        command = ["kinit", "-k", "-t", str(self.keytab(name)), "-c", f"FILE:{cache}"]
        if lifetime is not None:
            command += ["-l", lifetime]
        self.run(*command, f"{name}@{self.realm}")
        return cache

    def env(self, ccache: Path | None = None) -> dict[str, str]:
        """The environment for a Kerberos client or server of this realm: os.environ with
        KRB5_CONFIG, KRB5CCNAME=FILE:`ccache` when given (else none), and no KRB5_KTNAME."""
        env = {k: v for k, v in os.environ.items() if k not in ("KRB5CCNAME", "KRB5_KTNAME")}
        env["KRB5_CONFIG"] = str(self.krb5_conf)
        if ccache is not None:
            env["KRB5CCNAME"] = f"FILE:{ccache}"
        return env

    def _admin_env(self) -> dict[str, str]:
        env = self.env()
        env["KRB5_KDC_PROFILE"] = str(self.kdc_conf)
        return env


def _run(command: list[str], env: dict[str, str]) -> str:
    try:
        done = subprocess.run(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise KerberosError(f"{command} timed out after {COMMAND_TIMEOUT} s") from error
    # kadmin.local exits 0 even when its query fails: anything on its stderr but the notice
    # "No policy specified for NAME; defaulting to no policy" is a failure
    complaints = [
        line
        for line in done.stderr.splitlines()
        if line.strip() and not line.startswith("No policy specified for ")
    ]
    if done.returncode != 0 or (command[0] == "kadmin.local" and complaints):
        raise KerberosError(
            f"{command} failed (exit {done.returncode}):\n{done.stderr.strip()}\n"
            f"{done.stdout.strip()}"
        )
    return done.stdout


def _wait_until_serving(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    """Wait for the KDC to log that it has bound its sockets and to accept a TCP connection
    (the connection alone could reach another process that took the port first)."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise KerberosError(f"krb5kdc exited with {process.returncode}\n{log_tail(log)}")
        if b"commencing operation" in log.read_bytes():
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                return
        time.sleep(0.05)
    raise KerberosError(
        f"krb5kdc is not serving on 127.0.0.1:{port} after {START_TIMEOUT} s\n{log_tail(log)}"
    )


def _start(directory: Path, attempts: int = 3) -> tuple[Realm, subprocess.Popen[bytes]]:
    """Configure the realm on a free port and start its KDC, on another port when another
    process took the first one (its UDP side, or both, before the KDC bound it)."""
    log = directory / "krb5kdc.log"
    for attempt in range(1, attempts + 1):
        port = free_port()
        realm = Realm(
            directory=directory, realm=REALM, port=port, krb5_conf=directory / "krb5.conf"
        )
        realm.krb5_conf.write_text(KRB5_CONF.format(realm=REALM, port=port, directory=directory))
        realm.kdc_conf.write_text(KDC_CONF.format(realm=REALM, port=port, directory=directory))
        if attempt == 1:
            (directory / "kadm5.acl").write_text("")
            realm.run("kdb5_util", "create", "-s", "-r", REALM, "-P", secrets.token_urlsafe(24))
        with log.open("wb") as output:
            process = subprocess.Popen(
                ["krb5kdc", "-n", "-r", REALM],
                env={**realm._admin_env(), "LC_ALL": "C"},  # an English log, read here
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            _wait_until_serving(port, process, log)
        except BaseException:
            stop_group(process)
            if attempt < attempts and b"Address already in use" in log.read_bytes():
                continue
            raise
        return realm, process
    raise AssertionError("unreachable")


@contextlib.contextmanager
def kdc(directory: Path) -> Iterator[Realm]:
    """Create realm REALM in `directory`, run its KDC on 127.0.0.1, and stop the KDC on exit."""
    directory = directory.resolve()
    directory.mkdir(parents=True, exist_ok=True)
    realm, process = _start(directory)
    try:
        yield realm
    finally:
        stop_group(process)


def daemon_arguments(principal: str, keytab: Path) -> list[str]:
    """`statlas daemon`'s options serving Thrift with Kerberos as `principal`."""
    return [
        "--thrift-auth",
        "kerberos",
        "--thrift-kerberos-principal",
        principal,
        "--thrift-kerberos-keytab",
        str(keytab),
    ]
