"""Processes the tests start: a free port on loopback for them, the end of their logs, and
stopping a process's whole group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any


def statlas_env(db_url: str, **settings: str) -> dict[str, str]:
    """The caller's environment without statlas or Spark settings, plus the metastore URL
    (for PostgreSQL it carries the test's schema as `options=-csearch_path=...`), Spark on
    the loopback and `settings`, for a statlas process a test starts."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("STATLAS_", "SPARK_", "PYSPARK_"))
    }
    env.update(STATLAS_DB_URL=db_url, SPARK_LOCAL_IP="127.0.0.1", **settings)
    return env


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports (all probed at once: free_port twice may give one port
    twice)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def log_tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return f"--- {path.name}:\n" + "\n".join(text.splitlines()[-lines:])


def stop_group(process: subprocess.Popen[Any]) -> None:
    """Terminate the process group of a process we started in a session of its own."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    except ProcessLookupError:
        process.wait(timeout=30)
