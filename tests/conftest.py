"""Shared fixtures: one behaviour suite over SQLite and PostgreSQL (`db_url`, `metastore`;
the databases are tests/support/databases.py's), and one Spark for the whole run."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metastore import Metastore
from tests.support.databases import BACKENDS, postgres_schema
from tests.support.spark_jvm import ARCHIVE_TIMEOUT, BASE_OPTIONS, driver_options
from tests.support.tpch_lake import Lake, collected_tpch_lake

_ARCHIVING: list[subprocess.Popen[bytes]] = []  # the class-data archive being made


def pytest_configure(config: pytest.Config) -> None:
    """Every Spark driver JVM the run starts, in a test's process or a CLI's it runs, starts
    with tests/support/spark_jvm.py's options, unless SPARK_SUBMIT_OPTS says otherwise. Set
    once, before xdist's workers start (they inherit it). Where Spark's tests are to run and
    its class-data archive (kept in the virtualenv) is missing, it is made meanwhile."""
    if "SPARK_SUBMIT_OPTS" in os.environ:  # the user's, or set already for this run
        return
    if "not spark" in (config.option.markexpr or ""):
        os.environ["SPARK_SUBMIT_OPTS"] = BASE_OPTIONS
        return
    options, making = driver_options(Path(sys.prefix) / "spark-class-archives")
    os.environ["SPARK_SUBMIT_OPTS"] = options
    if making is not None:
        _ARCHIVING.append(making)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The archive's maker, waited for (a run shorter than it leaves nothing running)."""
    for making in _ARCHIVING:
        try:
            making.wait(timeout=ARCHIVE_TIMEOUT)
        except subprocess.TimeoutExpired:
            making.kill()
            making.wait()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'statlas.db'}"
    else:
        with postgres_schema() as url:
            yield url


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test taking the pg_url fixture needs PostgreSQL, so it carries the postgres marker
    (before `-m` selects): `make check`'s `-m "not postgres"` leaves it out."""
    for item in items:
        if "pg_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)


@pytest.fixture
def pg_url() -> Iterator[str]:
    with postgres_schema() as url:
        yield url


@pytest.fixture
def metastore(db_url: str) -> Iterator[Metastore]:
    ms = Metastore(db_url)
    ms.upgrade()
    yield ms
    ms.dispose()


CODE_HEAPS = "-XX:ReservedCodeCacheSize=320m -XX:NonNMethodCodeHeapSize=64m"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one local Spark of a test process (a start costs 10-20 s), shared by every test
    that needs a Spark: none stops it, and a setting a test changes is put back after it
    (collectors.spark_session.session_settings). Spark sessions are process-wide
    (getOrCreate), so a test needing a Spark configured otherwise (Hive support, a
    standalone cluster, the daemon's metastore) runs it in a process of its own."""
    from collectors.spark_session import spark_session

    # the JVM's code heap for adapters and stubs (5.6 MB by default) ran out once in a whole
    # suite's session (every test's generated classes in one JVM), stopping its Spark
    session = spark_session("local[2]", conf={"spark.driver.extraJavaOptions": CODE_HEAPS})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def tpch_lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    """TPC-H SF 0.01 with statistics Spark collected into a SQLite metastore."""
    lake = collected_tpch_lake(tmp_path_factory.mktemp("tpch-sf0.01"), spark)
    yield lake
    lake.metastore.dispose()
