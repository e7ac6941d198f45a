"""compose.yaml's services run from compose.yaml's own commands, as processes on loopback
(no container engine here): the Spark master and worker from their entrypoints and
commands, `migrate` against PostgreSQL, and the daemon with its command and environment,
healthy by its own healthcheck; a schedule then collects through the Spark cluster, and
the daemon exits 0 on SIGTERM within the stop_grace_period. Host names and ports are
rewritten to 127.0.0.1 and free ports; the `postgres` service is the test PostgreSQL."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, select

from metastore.models import CollectionRun
from tests.support.databases import postgres_schema
from tests.support.partitions import write_partitions
from tests.support.processes import free_port, log_tail, stop_group
from tests.support.repository import compose as compose_file

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("daemon"),
]

BIN = Path(sys.executable).parent
START_TIMEOUT = 90.0
JOB_TIMEOUT = 180.0


def interpolate(value: str) -> str:
    """compose's `${VAR:-default}` with no such variable set: the default."""
    return re.sub(r"\$\{\w+:-([^}]*)\}", lambda m: m[1], value)


def localize(args: list[str], hosts: dict[str, str], ports: dict[str, str]) -> list[str]:
    """compose's arguments with service host names (in URLs, after `=` and after --host)
    and published ports rewritten."""
    out: list[str] = []
    for arg in map(interpolate, args):
        if out and out[-1] == "--host":
            arg = hosts.get(arg, arg)
        for host, local in hosts.items():
            arg = re.sub(rf"(?<=//){re.escape(host)}(?=[:/])", local, arg)
            arg = re.sub(rf"(?<==){re.escape(host)}$", local, arg)
        for port, local in ports.items():
            arg = re.sub(rf"(?<!\d){port}(?!\d)", local, arg)
        out.append(arg)
    return out


class Stack:
    """The processes started, stopped (their process groups) at the end."""

    def __init__(self, base: Path, env: dict[str, str]) -> None:
        self.base, self.env = base, env
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, command: list[str], env: dict[str, str] | None = None) -> None:
        with (self.base / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                command,
                env={**self.env, **(env or {})},
                cwd=self.base,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def logs(self) -> str:
        return "\n".join(log_tail(self.base / f"{n}.log") for n in self.processes)

    def wait_for(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError, ValueError):
                result = check()
                if result:
                    return result
            ended = {n: p.returncode for n, p in self.processes.items() if p.poll() is not None}
            if ended:
                pytest.fail(f"{ended} exited while waiting for {what}\n{self.logs()}")
            if time.monotonic() > deadline:
                pytest.fail(f"waited {timeout:.0f} s for {what}\n{self.logs()}")
            time.sleep(0.5)

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            stop_group(process)


def json_at(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


def run_healthcheck(service: dict[str, Any], hosts: dict[str, str], ports: dict[str, str]) -> bool:
    """The service's own healthcheck command (["CMD", ...]), run here."""
    test = service["healthcheck"]["test"]
    assert test[0] == "CMD"
    command = localize(test[1:], hosts, ports)
    if command[0] == "python":
        command[0] = sys.executable
    return subprocess.run(command, capture_output=True, timeout=30).returncode == 0


def succeeded_runs(db_url: str) -> int:
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            columns = CollectionRun.__table__.c
            rows = conn.execute(select(columns.status)).scalars().all()
    finally:
        engine.dispose()
    return rows.count("succeeded")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(
        SPARK_HOME=str(spark_home),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp_path),
        SPARK_WORKER_DIR=str(tmp_path / "work"),
        SPARK_CONF_DIR=str(tmp_path),
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
        PATH=f"{BIN}:{spark_home / 'bin'}:{env.get('PATH', '')}",
    )
    running = Stack(tmp_path, env)
    try:
        yield running
    finally:
        running.stop()


def test_the_compose_services_collect_on_their_spark_cluster(stack: Stack, tmp_path: Path) -> None:
    compose = compose_file()["services"]
    hosts = {"spark-master": "127.0.0.1", "daemon": "127.0.0.1", "0.0.0.0": "127.0.0.1"}
    ports = {p: str(free_port()) for p in ("7077", "8080", "8081", "8082", "9083")}
    master, worker, daemon = compose["spark-master"], compose["spark-worker"], compose["daemon"]
    root = write_partitions(tmp_path / "lake" / "sales", ["dt"], [["2024-01-01"], ["2024-01-02"]])

    stack.start("spark-master", localize(master["entrypoint"] + master["command"], hosts, ports))
    stack.wait_for(
        lambda: run_healthcheck(master, hosts, ports), START_TIMEOUT, "the master's healthcheck"
    )
    worker_env = {k: str(v) for k, v in worker.get("environment", {}).items()}
    stack.start(
        "spark-worker",
        localize(worker["entrypoint"] + worker["command"], hosts, ports) + ["--host", "127.0.0.1"],
        worker_env,
    )
    master_ui = f"http://127.0.0.1:{ports['8081']}/json/"
    stack.wait_for(
        lambda: [w["state"] for w in json_at(master_ui)["workers"]] == ["ALIVE"],
        START_TIMEOUT,
        "an ALIVE worker",
    )

    with postgres_schema() as db_url:
        # migrate: `statlas db upgrade` with the service's environment, the URL ours
        migrate_env = {**compose["migrate"]["environment"], "STATLAS_DB_URL": db_url}
        result = subprocess.run(
            [str(BIN / "statlas"), *compose["migrate"]["command"]],
            env={**stack.env, **migrate_env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr

        environment = {
            k: localize([str(v)], hosts, ports)[0] for k, v in daemon["environment"].items()
        }
        assert environment["STATLAS_SPARK_MASTER"] == f"spark://127.0.0.1:{ports['7077']}"
        environment["STATLAS_DB_URL"] = db_url
        environment["STATLAS_SPARK_DRIVER_MEMORY"] = "1g"  # beside the other test JVMs
        command = localize(daemon["command"], hosts, ports)
        stack.start("daemon", [str(BIN / "statlas"), *command], environment)
        stack.wait_for(
            lambda: run_healthcheck(daemon, hosts, ports), START_TIMEOUT, "the daemon healthcheck"
        )

        cli_env = {**stack.env, "STATLAS_DB_URL": db_url}
        for argv in (
            ["table", "register", "sales", "--path", str(root)],
            ["schedule", "add", "sales", "--every", "3s"],
        ):
            done = subprocess.run(
                [str(BIN / "statlas"), *argv], env=cli_env, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
        stack.wait_for(lambda: succeeded_runs(db_url), JOB_TIMEOUT, "a scheduled collection")

        # the collection ran as an application of the cluster, with the daemon its driver
        applications = json_at(master_ui)
        names = [a["name"] for a in applications["activeapps"] + applications["completedapps"]]
        assert "statlas-collect" in names, applications
        api = f"http://127.0.0.1:{ports['8080']}"
        stats = json_at(f"{api}/tables/sales/statistics")
        assert stats["partitions"] == 2 and stats["row_count"] > 0

        # SIGTERM (docker stop): exit 0 within the service's stop_grace_period
        grace = int(str(daemon["stop_grace_period"]).rstrip("s"))
        process = stack.processes["daemon"]
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(grace) == 0, stack.logs()
        except subprocess.TimeoutExpired:
            pytest.fail(f"the daemon did not exit {grace} s after SIGTERM\n{stack.logs()}")
