"""The databases the suite runs on: SQLite and the PostgreSQL server named by
STATLAS_TEST_DB_URL (default: the local server, database `test`), where every test gets a
schema of its own so parallel runs never collide. When CI is set an unreachable PostgreSQL
fails the run instead of skipping."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

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
