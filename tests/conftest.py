"""Shared fixtures: one behaviour suite over SQLite and PostgreSQL.

PostgreSQL comes from STATLAS_TEST_DB_URL (default: the local server, database `test`);
every test gets a schema of its own so parallel runs never collide. When CI is set an
unreachable PostgreSQL fails the run instead of skipping.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from metastore import Metastore
from tests.support.tpch_lake import Lake, collected_tpch_lake

DEFAULT_PG_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
PG_URL = os.environ.get("STATLAS_TEST_DB_URL", DEFAULT_PG_URL)

_pg_status: str | None = None


def postgres_unavailable() -> str | None:
    """None when PostgreSQL answers, else why not (checked once per process)."""
    global _pg_status
    if _pg_status is None:
        try:
            engine = create_engine(PG_URL, connect_args={"connect_timeout": 3})
            with engine.connect() as conn:
                conn.execute(text("select 1"))
            engine.dispose()
            _pg_status = ""
        except Exception as error:  # any failure to connect means unavailable
            _pg_status = f"PostgreSQL at {PG_URL} is unreachable: {str(error).splitlines()[0]}"
    return _pg_status or None


def require_postgres() -> None:
    reason = postgres_unavailable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: the PostgreSQL suite must run)", pytrace=False)
    pytest.skip(reason)


@contextlib.contextmanager
def postgres_schema() -> Iterator[str]:
    """A database URL whose search_path is a fresh schema, dropped afterwards."""
    require_postgres()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    url = make_url(PG_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        admin.dispose()


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


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


def write_partitions(
    root: Path,
    keys: Sequence[str],
    rows: Sequence[Sequence[str | None]],
    data_format: str = "parquet",
) -> Path:
    """A Hive-style dataset under root: one small data file per partition. Raw values are
    escaped as Hive does; None is the default partition."""
    import pyarrow as pa

    from metastore.hive_paths import partition_name

    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "label": ["a", None, "c"]})
    for raw in rows:
        directory = root / partition_name(list(keys), list(raw)) if keys else root
        directory.mkdir(parents=True, exist_ok=True)
        if data_format == "orc":
            from pyarrow import orc

            orc.write_table(table, str(directory / "part-00000.orc"))
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, directory / "part-00000.parquet")
    return root
