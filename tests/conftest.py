"""Shared fixtures: one behaviour suite over SQLite and PostgreSQL (`db_url`, `metastore`;
the databases are tests/support/databases.py's), and one Spark for the whole run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from metastore import Metastore
from tests.support.databases import BACKENDS, postgres_schema
from tests.support.tpch_lake import Lake, collected_tpch_lake

# A test's Spark driver JVM lives seconds to minutes: with the client compiler alone and the
# serial collector it starts and runs them faster (a CLI collection of the demo table 30 ->
# 23 s; test_collect.py with test_cli_spark.py 168 -> 123 s, measured). spark-submit puts
# this on every driver JVM a test starts, in its own process or a CLI's it runs.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


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


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one local Spark of a test process (a start costs 10-20 s), shared by every test
    that needs a Spark: none stops it, and a setting a test changes is put back after it
    (collectors.spark_session.session_settings). Spark sessions are process-wide
    (getOrCreate), so a test needing a Spark configured otherwise (Hive support, a
    standalone cluster, the daemon's metastore) runs it in a process of its own."""
    from collectors.spark_session import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def tpch_lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    """TPC-H SF 0.01 with statistics Spark collected into a SQLite metastore."""
    lake = collected_tpch_lake(tmp_path_factory.mktemp("tpch-sf0.01"), spark)
    yield lake
    lake.metastore.dispose()
