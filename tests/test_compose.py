"""compose.yaml is valid (checked with Debian's docker-compose, which needs no engine) and
wires the daemon to PostgreSQL and the Spark cluster; the Dockerfile builds an image with
every package that runs the daemon."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVICES = {"postgres", "migrate", "daemon", "spark-master", "spark-worker"}


def compose() -> dict[str, Any]:
    import yaml  # PyYAML comes with the dev extra (schemathesis)

    loaded: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return loaded


def test_compose_file_is_valid() -> None:
    tool = shutil.which("docker-compose")
    if tool is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose is missing (make tools installs it)", pytrace=False)
        pytest.skip("docker-compose is not installed")
    for args in (["config", "--quiet"], ["config", "--services"]):
        result = subprocess.run(
            [tool, "-f", str(ROOT / "compose.yaml"), *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) >= SERVICES


def test_daemon_service_runs_on_postgres_and_the_spark_cluster() -> None:
    services = compose()["services"]
    assert set(services) >= SERVICES
    daemon = services["daemon"]
    assert daemon["command"][0] == "daemon"
    assert daemon["command"][daemon["command"].index("--host") + 1] == "0.0.0.0"
    environment = daemon["environment"]
    assert environment["STATLAS_SPARK_MASTER"] == "spark://spark-master:7077"
    assert environment["STATLAS_DB_URL"].startswith("postgresql+psycopg2://")
    assert "@postgres:5432/" in environment["STATLAS_DB_URL"]
    assert "/health" in " ".join(daemon["healthcheck"]["test"])
    assert daemon["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert "spark-master" in daemon["depends_on"]
    # SIGTERM's grace: requests, then a running collection, must fit before SIGKILL
    assert int(daemon["stop_grace_period"].rstrip("s")) >= 40

    master, worker = services["spark-master"], services["spark-worker"]
    assert master["entrypoint"][-1] == "org.apache.spark.deploy.master.Master"
    assert master["command"][master["command"].index("--port") + 1] == "7077"
    assert worker["entrypoint"][-1] == "org.apache.spark.deploy.worker.Worker"
    assert "spark://spark-master:7077" in worker["command"]
    # executors read the lake at the path the daemon registered it under
    data = [v for v in daemon["volumes"] if v.endswith(":/data")]
    assert data and data == [v for v in worker["volumes"] if v.endswith(":/data")]
    for name in ("migrate", "daemon", "spark-master", "spark-worker"):
        assert services[name]["image"] == "statlas:latest"


def test_dockerfile_installs_every_package_and_runs_the_daemon() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = set(re.findall(r"^COPY (\w+) \1$", dockerfile, re.MULTILINE))
    assert copied == packages
    extras = re.search(r"pip install .*'\.\[([a-z,]+)\]'", dockerfile)
    assert extras is not None
    assert set(extras.group(1).split(",")) >= {"postgres", "spark", "daemon"}
    assert "openjdk-17-jre-headless" in dockerfile
    assert re.search(r'^ENTRYPOINT \["statlas"\]$', dockerfile, re.MULTILINE)
    assert re.search(r'^CMD \["daemon", "--host", "0.0.0.0"', dockerfile, re.MULTILINE)
