"""`statlas daemon` serving the Hive Metastore API, as a process a test starts and stops, and
a raw Thrift client as Hive's (binary protocol over a buffered transport)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hive_metastore import ThriftHiveMetastore as thrift_api
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from tests.support.processes import free_ports, statlas_env, stop_group

STATLAS = Path(sys.executable).parent / "statlas"


class ThriftClient:
    """The generated Hive Metastore client over Hive's wire settings."""

    def __init__(self, port: int) -> None:
        self.transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
        self.api = thrift_api.Client(TBinaryProtocol.TBinaryProtocol(self.transport))
        self.transport.open()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    def close(self) -> None:
        self.transport.close()


@contextlib.contextmanager
def hms_daemon(
    db_url: str, cwd: Path, *arguments: str, env_extra: Mapping[str, str] | None = None
) -> Iterator[tuple[int, Path]]:
    """A `statlas daemon` on `db_url` (upgraded first, run in `cwd` with its warehouse
    there, `env_extra` added to its environment) serving its Thrift port; yields the port
    and the daemon's log."""
    env = {**statlas_env(db_url), **(env_extra or {})}
    upgraded = subprocess.run(
        [str(STATLAS), "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120
    )
    assert upgraded.returncode == 0, upgraded.stderr
    http_port, thrift_port = free_ports(2)
    cwd.mkdir(parents=True, exist_ok=True)
    log = cwd / f"daemon-{thrift_port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                str(STATLAS),
                "daemon",
                "--port",
                str(http_port),
                "--thrift-port",
                str(thrift_port),
                "--warehouse",
                str(cwd / "warehouse"),
                *arguments,
            ],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", thrift_port), timeout=1),
            ):
                break
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield thrift_port, log
    finally:
        stop_group(process)
