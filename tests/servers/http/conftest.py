"""The HTTP API's fixtures: `sales` registered in the test's metastore (SQLite and
PostgreSQL), the app serving it, and a test client of the app."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

from metastore import Metastore
from servers.http.app import create_app
from tests.servers.http.helpers import TestClient
from tests.support.partitions import register_sales


@pytest.fixture
def sales(metastore: Metastore, tmp_path: Path) -> Metastore:
    """`sales` by dt (date) x region (string), with a default partition on each key."""
    return register_sales(metastore, tmp_path)


@pytest.fixture
def app(sales: Metastore, db_url: str) -> FastAPI:
    return create_app(db_url)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as test_client:
        yield test_client
