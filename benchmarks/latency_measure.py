"""The measurement of benchmarks/latency.py: statlas's daemon on a free port, the timed
requests to it over one keep-alive connection (their percentiles), its memory, and the
CLI's wall time."""

from __future__ import annotations

import contextlib
import http.client
import json
import signal
import socket
import statistics
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from latency_metastores import child_env, run_statlas, statlas_command

from servers.process_memory import RELEASE_INTERVAL_S

SETTLE_S = 3 * RELEASE_INTERVAL_S  # the daemon hands back freed memory within one interval
WARM_UP_SQL = "SELECT COUNT(*) FROM statlas_latency_no_such_table"
REQUEST_TIMEOUT = 1800.0  # seconds: one estimate took seconds before issue 22


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile (q in [0, 1]) of `values`, as benchmarks/api_load.py."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency_summary(seconds: list[float]) -> dict[str, Any]:
    """p50, p95, max and the first (cold) request, in ms, of requests timed in seconds."""
    if not seconds:
        return {"n": 0, "p50": None, "p95": None, "max": None, "cold": None, "ms": []}
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50": statistics.median(ms),
        "p95": percentile(ms, 0.95),
        "max": max(ms),
        "cold": ms[0],
        "ms": ms,
    }


# ------------------------------------------------------------------------------ daemon


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, MB (Linux /proc)."""
    found: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                found[key.lower()] = int(value.split()[0]) / 1024
    return found


@dataclass
class Daemon:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid


def daemon_command(url: str) -> list[str]:
    """`statlas daemon` on the loopback, without its Hive Metastore Thrift API (not measured
    here; its port, 9083, may be taken by another process): the port is added."""
    return [*statlas_command(), "--db", url, "daemon", "--host", "127.0.0.1", "--thrift-port", "0"]


@contextlib.contextmanager
def daemon(url: str, log: Path) -> Iterator[Daemon]:
    """`statlas daemon --db URL` on a free port, healthy, until the block ends (SIGTERM)."""
    port = free_port()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*daemon_command(url), "--port", str(port)],
            env=child_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    running = Daemon(process, port, log)
    try:
        wait_healthy(running)
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_healthy(running: Daemon, seconds: float = 180.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if running.process.poll() is not None:
            tail = running.log.read_text(errors="replace")[-2000:]
            raise SystemExit(f"the daemon exited with {running.process.returncode}:\n{tail}")
        with contextlib.suppress(OSError, http.client.HTTPException):
            connection = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
            try:
                connection.request("GET", "/health")
                if connection.getresponse().status == 200:
                    return
            finally:
                connection.close()
        time.sleep(0.2)
    raise SystemExit(f"the daemon was not healthy within {seconds:.0f} s (log: {running.log})")


class Client:
    """JSON POSTs over one keep-alive HTTP/1.1 connection, timed to the answer's last byte."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.connection: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict[str, Any]) -> tuple[float, int, bytes]:
        payload = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        for attempt in (1, 2):  # once more on a connection the server closed
            if self.connection is None:
                self.connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=REQUEST_TIMEOUT
                )
            began = time.perf_counter()
            try:
                self.connection.request("POST", path, payload, headers)
                answer = self.connection.getresponse()
                content = answer.read()
            except (ConnectionError, http.client.RemoteDisconnected):
                self.close()
                if attempt == 2:
                    raise
                continue
            return time.perf_counter() - began, answer.status, content
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def timed_requests(client: Client, path: str, body: dict[str, Any], n: int) -> dict[str, Any]:
    """`n` requests of one body: their latency summary, or the first error (no more
    requests after it)."""
    seconds: list[float] = []
    error = None
    content = b""
    for _ in range(n):
        took, status, content = client.post(path, body)
        if status != 200:
            error = f"{status}: {content.decode(errors='replace')[:300]}"
            break
        seconds.append(took)
    summary = latency_summary(seconds)
    summary["error"] = error
    summary["answer"] = answer_figures(content) if error is None else {}
    return summary


def answer_figures(content: bytes) -> dict[str, Any]:
    """The headline figures of an /estimate or /explain answer (rows; cost, shuffles and
    jobs), kept to compare runs: a faster read path must give the same estimates."""
    try:
        answer = json.loads(content)
    except ValueError:
        return {}
    if not isinstance(answer, dict):
        return {}
    figures = {key: answer[key] for key in ("rows", "level", "shuffles", "jobs") if key in answer}
    if isinstance(answer.get("cost"), dict):
        figures["cost"] = answer["cost"]
    return figures


def warm_up(client: Client) -> None:
    """One request per route that fails before statistics are read (unknown table): the
    routes' modules are imported, nothing of any table is cached."""
    for path in ("/estimate", "/explain"):
        client.post(path, {"sql": WARM_UP_SQL})


def cli_seconds(url: str, sql: str, repeat: int) -> dict[str, Any]:
    """Wall time of `statlas --db URL estimate --sql SQL --json` (median of `repeat`)."""
    runs: list[float] = []
    for _ in range(repeat):
        began = time.perf_counter()
        done = run_statlas(url, "estimate", "--sql", sql, "--json", check=False)
        took = time.perf_counter() - began
        if done.returncode != 0:
            return {"seconds": None, "runs": runs, "error": done.stderr.strip()[:300]}
        runs.append(took)
    return {"seconds": statistics.median(runs), "runs": runs, "error": None}
