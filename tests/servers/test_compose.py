"""compose.yaml and the Dockerfile fit together and fit the code they run. compose.yaml is
valid (Debian's docker-compose, which needs no engine); each statlas service's command is
one the CLI's own parser takes; the daemon's database and Spark URLs name the services,
ports, user and database that serve them; its healthcheck asks the port it listens on for
a route the app answers; the Spark services' classes are in PySpark's jars. The Dockerfile
copies every package pyproject names, installs every runtime extra, exposes the ports its
command listens on, and builds the collection scan's jar as the Makefile does, with a JDK,
for a runtime stage with a JRE only. Literal values are read from the files, never
restated here."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tomllib
import warnings
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy.engine import make_url

from statlas.cli import build_parser
from tests.support.repository import ROOT, compose

STATLAS_SPARK_JAVA = 17  # the oldest Java that Spark 4 (pyproject: pyspark>=4.0) runs on
JDK = re.compile(r"-jdk\b")  # a JDK's package or image (openjdk-17-jdk-headless, temurin:17-jdk)


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def dockerfile_stages() -> list[tuple[str, str]]:
    """The Dockerfile's stages in order: (name, or "" for an unnamed one; its text)."""
    stages = []
    for text in re.split(r"^FROM ", dockerfile(), flags=re.MULTILINE)[1:]:
        named = re.match(r"\S+ AS (\S+)", text.splitlines()[0], re.IGNORECASE)
        stages.append((named.group(1) if named else "", text))
    return stages


def make_recipe(target: str) -> str:
    """The recipe of the Makefile's rule for `target` (its tab-indented lines)."""
    text = (ROOT / "Makefile").read_text()
    rule = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, re.MULTILINE)
    assert rule is not None, target
    return rule.group(1)


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def cli(argv: list[str]) -> argparse.Namespace:
    """argv as `statlas` parses it (a command it does not take fails the test)."""
    try:
        return build_parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"statlas does not take {argv}", pytrace=False)


def statlas_services(services: dict[str, Any]) -> dict[str, Any]:
    """The services that run the image built here, with its entrypoint (statlas)."""
    return {n: s for n, s in services.items() if "build" in s and "entrypoint" not in s}


def container_ports(service: dict[str, Any]) -> set[int]:
    """The container side of each published port ("127.0.0.1:8080:8080" -> 8080)."""
    return {int(str(p).rsplit(":", 1)[-1]) for p in service.get("ports", [])}


def option(argv: list[str], name: str) -> str:
    assert name in argv, (name, argv)
    return str(argv[argv.index(name) + 1])


def listened(args: argparse.Namespace) -> set[int]:
    """The ports `statlas daemon` listens on: HTTP, and the Hive Metastore's Thrift API."""
    return {p for p in (args.port, getattr(args, "thrift_port", None)) if p}


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
    assert set(result.stdout.split()) == set(compose()["services"])


def test_statlas_services_run_commands_the_cli_takes() -> None:
    services = compose()["services"]
    built = {n: s for n, s in services.items() if "build" in s}
    # one image, built from this directory's Dockerfile
    assert len({s["image"] for s in built.values()}) == 1
    for service in built.values():
        assert (ROOT / service["build"] / "Dockerfile").is_file()
    ours = statlas_services(services)
    assert {"migrate", "daemon"} <= set(ours)
    upgrade = cli(ours["migrate"]["command"])
    assert upgrade.handler is cli(["db", "upgrade"]).handler
    assert upgrade.revision == "head"
    daemon = cli(ours["daemon"]["command"])
    assert daemon.handler is cli(["daemon"]).handler
    # reachable from the other containers and through the published ports
    assert daemon.host == "0.0.0.0"
    assert container_ports(services["daemon"]) == listened(daemon)


def test_daemon_reaches_postgres_and_the_spark_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    from collectors.spark_session import spark_master
    from statlas.settings import Settings

    services = compose()["services"]
    daemon = services["daemon"]
    for name, value in daemon["environment"].items():
        monkeypatch.setenv(name, str(value))
    args = cli(daemon["command"])

    # the metastore: the postgres service, its user, password and database
    url = make_url(Settings.load(args.db).db_url)
    assert url.get_backend_name() == "postgresql"
    postgres = services[str(url.host)]
    environment = postgres["environment"]
    assert (url.username, url.password, url.database) == (
        environment["POSTGRES_USER"],
        environment["POSTGRES_PASSWORD"],
        environment["POSTGRES_DB"],
    )
    assert url.port == 5432  # the server's own port
    assert container_ports(postgres) <= {5432}
    assert services["migrate"]["environment"]["STATLAS_DB_URL"] == str(
        daemon["environment"]["STATLAS_DB_URL"]
    )
    # the schema is brought to head once the server answers, the daemon starts after that
    assert services["migrate"]["depends_on"][url.host]["condition"] == "service_healthy"
    assert daemon["depends_on"]["migrate"]["condition"] == "service_completed_successfully"

    # Spark: the master service at the host and port it listens on; the worker joins it;
    # executors connect back to the driver by the daemon's service name
    master_url = urlsplit(spark_master(args.master))
    assert master_url.scheme == "spark"
    master = services[str(master_url.hostname)]
    assert option(master["command"], "--host") == master_url.hostname
    assert int(option(master["command"], "--port")) == master_url.port
    assert master_url.hostname in daemon["depends_on"]
    workers = [s for s in services.values() if s.get("entrypoint", [""])[-1].endswith(".Worker")]
    assert workers
    assert all(w["command"][0] == master_url.geturl() for w in workers)
    conf = dict(c.split("=", 1) for c in args.spark_conf)
    assert services.get(conf["spark.driver.host"]) is daemon
    # the executors read the lake at the path the daemon registered it under
    data = [v for v in daemon["volumes"] if v.endswith(":/data")]
    assert data
    assert all(data == [v for v in w["volumes"] if v.endswith(":/data")] for w in workers)


def test_spark_services_start_classes_pyspark_has() -> None:
    import pyspark

    home = Path(pyspark.__file__).parent
    jars = sorted((home / "jars").glob("*.jar"), key=lambda j: not j.name.startswith("spark-"))
    services = compose()["services"]
    started = [s["entrypoint"] for s in services.values() if "entrypoint" in s]
    assert len(started) >= 2  # a master and a worker
    for program, main_class in started:
        assert (home / "bin" / program).is_file(), program
        entry = main_class.replace(".", "/") + ".class"
        assert any(entry in zipfile.ZipFile(j).namelist() for j in jars), main_class


def test_daemon_healthcheck_asks_a_route_it_answers(tmp_path: Path) -> None:
    from starlette.exceptions import StarletteDeprecationWarning

    from servers.http.app import create_app

    with warnings.catch_warnings():  # starlette asks for httpx2; the httpx installed works
        warnings.simplefilter("ignore", StarletteDeprecationWarning)
        from fastapi.testclient import TestClient

    daemon = compose()["services"]["daemon"]
    args = cli(daemon["command"])
    [url] = re.findall(r"https?://[^\s'\"]+", " ".join(daemon["healthcheck"]["test"]))
    asked = urlsplit(url)
    assert asked.port == args.port
    with TestClient(create_app(f"sqlite:///{tmp_path / 'statlas.db'}")) as client:
        assert client.get(asked.path).status_code == 200


def test_daemon_stops_within_its_grace_period() -> None:
    """SIGTERM: requests under way, then a running collection's --grace, must end before
    Docker's SIGKILL."""
    from servers.daemon import REQUEST_GRACE

    daemon = compose()["services"]["daemon"]
    args = cli(daemon["command"])
    period = re.fullmatch(r"(\d+)s", str(daemon["stop_grace_period"]))
    assert period is not None
    assert int(period.group(1)) > REQUEST_GRACE + args.grace


def test_dockerfile_installs_every_package_and_runs_the_daemon() -> None:
    text = dockerfile()
    project = pyproject()
    packages = {p.rstrip("*") for p in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = set(re.findall(r"^COPY (\w+) \1$", text, re.MULTILINE))
    assert copied == packages
    extras = re.search(r"pip install .*'\.\[([a-z,]+)\]'", text)
    assert extras is not None
    runtime = set(project["project"]["optional-dependencies"]) - {"dev", "kerberos-tests"}
    assert set(extras.group(1).split(",")) == runtime

    entrypoint = re.search(r"^ENTRYPOINT (\[.*\])$", text, re.MULTILINE)
    command = re.search(r"^CMD (\[.*\])$", text, re.MULTILINE)
    assert entrypoint is not None
    assert command is not None
    [program] = json_list(entrypoint.group(1))
    assert program in project["project"]["scripts"]
    args = cli(json_list(command.group(1)))
    assert args.handler is cli(["daemon"]).handler
    exposed = {
        int(p) for line in re.findall(r"^EXPOSE (.+)$", text, re.MULTILINE) for p in line.split()
    }
    assert listened(args) <= exposed

    # PySpark runs on the image's Java (its last stage's)
    final = re.split(r"^FROM ", text, flags=re.MULTILINE)[-1]
    java = re.findall(r"(?:openjdk-|temurin:|jdk-?|jre-?)(\d+)", final)
    assert java
    assert min(int(v) for v in java) >= STATLAS_SPARK_JAVA


def test_dockerfile_builds_the_scan_jar_with_a_jdk_for_a_jre_runtime() -> None:
    """The one-pass collection scan's jar is built as `make install` builds it (the module
    the Makefile's jar rule runs) in a stage with a JDK; the runtime stage, with a JRE only,
    copies from that stage (the install, jar included)."""
    [module] = re.findall(r"-m ([\w.]+)", make_recipe("$(JAR)"))
    *builds, (_, runtime) = dockerfile_stages()
    builders = [
        name
        for name, text in builds
        if JDK.search(text) and re.search(rf"python -m {re.escape(module)}\b", text)
    ]
    assert builders, f"no stage runs `python -m {module}` with a JDK"
    assert all(builders)  # named, so that the runtime stage can copy from them
    assert any(re.search(rf"^COPY --from={b} ", runtime, re.MULTILINE) for b in builders)
    assert not JDK.search(runtime)  # a JRE only


def json_list(text: str) -> list[str]:
    import json

    value = json.loads(text)
    assert isinstance(value, list)
    assert all(isinstance(v, str) for v in value)
    return value
