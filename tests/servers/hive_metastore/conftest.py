"""The Hive Metastore API served in the test's process over the test's metastore (SQLite and
PostgreSQL), and a client of it as Hive's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from metastore import Metastore
from servers.hive_metastore.server import ThriftService
from tests.support.hms_daemon import ThriftClient

LOCK_TIMEOUT = 2.0
"""Seconds a lock lives without a heartbeat in these tests (Hive's 300 s would make the
expiry tests wait minutes)."""


@pytest.fixture
def service(metastore: Metastore, tmp_path: Path) -> Iterator[ThriftService]:
    server = ThriftService(
        metastore.ready(), "127.0.0.1", 0, str(tmp_path / "warehouse"), LOCK_TIMEOUT
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture
def client(service: ThriftService) -> Iterator[ThriftClient]:
    c = ThriftClient(service.port)
    yield c
    c.close()
