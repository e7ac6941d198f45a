"""Managed tables' DDL through Spark's Thrift Server and beeline (clients nobody here wrote),
over a `statlas daemon` as their metastore: the metastore's side of the same DDL is
test_managed_tables.py's, through PySpark, on both databases."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.servers.hive_metastore.test_managed_tables import Served, backend, serving
from tests.support.hive_clients import beeline, spark_thrift_server

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]
__all__ = ["backend"]  # the module-scoped backend fixture, shared


@dataclasses.dataclass(frozen=True)
class ThriftServer:
    served: Served  # its metastore
    port: int  # HiveServer2's


@pytest.fixture(scope="module")
def thrift_server(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ThriftServer]:
    """Spark's Thrift Server, one per backend (a start takes 10-20 s), over a daemon and a
    metastore of its own (a daemon starts in a second or two). On PostgreSQL only: the
    metastore's side of the same DDL is the PySpark tests' on both databases, and a Thrift
    Server costs a minute of the suite's time."""
    if backend != "postgres":
        pytest.skip("beeline runs on PostgreSQL; the PySpark tests cover both databases")
    root = tmp_path_factory.mktemp(f"thrift-server-{backend}")
    with (
        serving(backend, root) as daemon_served,
        spark_thrift_server(daemon_served.port, daemon_served.warehouse, root) as port,
    ):
        yield ThriftServer(daemon_served, port)


def test_everyday_ddl_through_beeline_and_the_spark_thrift_server(
    thrift_server: ThriftServer,
) -> None:
    """CREATE TABLE, INSERT, SELECT, ALTER TABLE RENAME and DROP in one beeline run (a JVM
    of its own); the rows read after the rename name the files they came from."""
    warehouse = thrift_server.served.warehouse
    run = beeline(
        thrift_server.port,
        [
            "CREATE TABLE bl_t (id INT) STORED AS PARQUET",
            "INSERT INTO bl_t VALUES (1), (2)",
            "SELECT 'created', id FROM bl_t ORDER BY id",
            "ALTER TABLE bl_t RENAME TO bl_r",
            "SELECT 'renamed', id, input_file_name() FROM bl_r ORDER BY id",
            "DROP TABLE bl_r",
            "SHOW TABLES LIKE 'bl_*'",
        ],
        thrift_server.served.root,
    )
    assert run.returncode == 0, run.failure()
    selected = [r for r in run.rows if r[0] in ("created", "renamed")]
    assert [r[:2] for r in selected] == [
        ["created", "1"],
        ["created", "2"],
        ["renamed", "1"],
        ["renamed", "2"],
    ], run.stdout
    read_from = [Path(urlparse(r[2]).path).parent for r in selected if r[0] == "renamed"]
    assert read_from == [warehouse / "bl_r"] * 2, f"after the rename bl_r was read from {read_from}"
    listed = [r for r in run.rows if r not in selected]
    assert listed == [], f"tables left after DROP TABLE bl_r: {listed}"
    assert not (warehouse / "bl_t").exists(), f"the rename left {warehouse / 'bl_t'}"
    assert not (warehouse / "bl_r").exists(), f"DROP TABLE bl_r left {warehouse / 'bl_r'}"
