"""Hive clients the tests run against `statlas daemon --thrift-port`, besides PySpark's own
(tests/servers/hive_metastore/test_hms_spark.py): Spark's Thrift Server (HiveThriftServer2, started
with pyspark's spark-submit) and Hive's beeline talking JDBC to it."""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import io
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from tests.support.processes import free_port, log_tail, stop_group

THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
BEELINE = "org.apache.hive.beeline.BeeLine"


def pyspark_home() -> Path:
    """pyspark's directory: its bin/ (spark-submit) and jars/ (Spark, Hive 2.3, beeline)."""
    spec = importlib.util.find_spec("pyspark")
    assert spec is not None, "pyspark is not installed"
    assert spec.origin is not None, spec
    return Path(spec.origin).parent


def spark_env() -> dict[str, str]:
    """The caller's environment without Spark or statlas settings, Spark on the loopback."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("STATLAS_", "SPARK_", "PYSPARK_"))
    }
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


def thrift_server_command(metastore_port: int, warehouse: Path, port: int) -> list[str]:
    """spark-submit starting Spark's Thrift Server with the Hive metastore at
    `metastore_port` (`spark-internal`: the server is in Spark's own jars)."""
    return [
        str(pyspark_home() / "bin" / "spark-submit"),
        "--class",
        THRIFT_SERVER,
        "--master",
        "local[1]",
        "--name",
        "statlas-thrift-server",
        "--conf",
        "spark.ui.enabled=false",
        "--conf",
        "spark.sql.catalogImplementation=hive",
        "--conf",
        f"spark.hadoop.hive.metastore.uris=thrift://127.0.0.1:{metastore_port}",
        "--conf",
        f"spark.sql.warehouse.dir={warehouse}",
        "--conf",
        "spark.sql.session.timeZone=UTC",
        "spark-internal",
        "--hiveconf",
        f"hive.server2.thrift.port={port}",
        "--hiveconf",
        "hive.server2.thrift.bind.host=127.0.0.1",
    ]


@contextlib.contextmanager
def spark_thrift_server(
    metastore_port: int, warehouse: Path, cwd: Path, timeout: float = 180
) -> Iterator[int]:
    """Spark's Thrift Server on a free loopback port (yielded once it accepts connections),
    its log in `cwd`/thrift-server.log; its whole process group is stopped afterwards."""
    port = free_port()
    log = cwd / "thrift-server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            thrift_server_command(metastore_port, warehouse, port),
            cwd=cwd,
            env=spark_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + timeout
        while True:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", port), timeout=1),
            ):
                break
            assert process.poll() is None, "the Thrift Server exited\n" + log_tail(log, 60)
            assert time.monotonic() < deadline, "the Thrift Server did not start\n" + log_tail(
                log, 60
            )
            time.sleep(0.5)
        yield port
    finally:
        stop_group(process)


def beeline_command(port: int, statements: Sequence[str]) -> list[str]:
    """Hive's BeeLine (pyspark's jars) running `statements` against HiveServer2 at `port`:
    rows as CSV with no header on stdout; it stops at the first failing statement."""
    jars = pyspark_home() / "jars"
    return [
        "java",
        "-cp",
        f"{jars}/*",
        BEELINE,
        "-u",
        f"jdbc:hive2://127.0.0.1:{port}/default",
        "--outputformat=csv2",
        "--showHeader=false",
        "-e",
        "; ".join(statements) + ";",
    ]


# what beeline prints (stderr) after each statement it completed
_COMPLETED = re.compile(r"^(No rows selected|No rows affected|\d+ rows? (selected|affected))\b")


class BeelineRun:
    """One beeline run: its exit status, rows and which statement failed (if any)."""

    def __init__(self, statements: Sequence[str], done: subprocess.CompletedProcess[str]) -> None:
        self.statements = list(statements)
        self.returncode = done.returncode
        self.stdout = done.stdout
        self.stderr = done.stderr

    @property
    def rows(self) -> list[list[str]]:
        """Every row printed (--outputformat=csv2, no header), of every statement."""
        return [row for row in csv.reader(io.StringIO(self.stdout)) if row]

    @property
    def completed(self) -> int:
        return sum(1 for line in self.stderr.splitlines() if _COMPLETED.match(line))

    def failure(self) -> str:
        """The statement that failed and beeline's error (the first line of it)."""
        errors = [line for line in self.stderr.splitlines() if line.startswith("Error:")]
        failed = (
            self.statements[self.completed] if self.completed < len(self.statements) else "(none)"
        )
        error = errors[0][:1500] if errors else self.stderr[-3000:]
        return f"beeline exited {self.returncode} at `{failed}`: {error}"


def beeline(port: int, statements: Sequence[str], cwd: Path, timeout: float = 300) -> BeelineRun:
    done = subprocess.run(
        beeline_command(port, statements),
        cwd=cwd,
        env=spark_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return BeelineRun(statements, done)
