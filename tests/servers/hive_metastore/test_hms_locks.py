"""Hive's lock manager and Hive 4's check-and-swap through the Hive Metastore API, on SQLite and
PostgreSQL: the lock calls as Hive's generated client makes them, and pyiceberg's own Hive
catalog appending from several processes, through one daemon and through two daemons on one
PostgreSQL: every acknowledged append is in the table, and only those."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
from hive_metastore import ttypes as hms
from pyiceberg.catalog.hive import HiveCatalog

from servers.hive_metastore.server import ThriftService
from tests.support.hms_daemon import ThriftClient, hms_daemon

REPOSITORY = Path(__file__).resolve().parents[3]
EXCLUSIVE, EXCL_WRITE = hms.LockType.EXCLUSIVE, hms.LockType.EXCL_WRITE
SHARED_READ, SHARED_WRITE = hms.LockType.SHARED_READ, hms.LockType.SHARED_WRITE
ACQUIRED, WAITING = hms.LockState.ACQUIRED, hms.LockState.WAITING


def component(
    lock_type: int,
    db: str = "default",
    table: str | None = "t",
    partition: str | None = None,
) -> hms.LockComponent:
    level = (
        hms.LockLevel.PARTITION if partition else hms.LockLevel.TABLE if table else hms.LockLevel.DB
    )
    return hms.LockComponent(
        type=lock_type, level=level, dbname=db, tablename=table, partitionname=partition
    )


def lock(client: ThriftClient, *components: hms.LockComponent) -> hms.LockResponse:
    return client.lock(hms.LockRequest(component=list(components), user="u", hostname="h"))


def state(client: ThriftClient, lock_id: int) -> int:
    return int(client.check_lock(hms.CheckLockRequest(lockid=lock_id)).state)


def test_exclusive_locks_queue_in_order(client: ThriftClient) -> None:
    first = lock(client, component(EXCLUSIVE))
    second = lock(client, component(EXCLUSIVE))
    reader = lock(client, component(SHARED_READ))
    assert (first.state, second.state, reader.state) == (ACQUIRED, WAITING, WAITING)
    assert state(client, second.lockid) == WAITING
    client.unlock(hms.UnlockRequest(lockid=first.lockid))
    assert state(client, second.lockid) == ACQUIRED
    assert state(client, reader.lockid) == WAITING  # behind the exclusive lock it came after
    client.unlock(hms.UnlockRequest(lockid=second.lockid))
    assert state(client, reader.lockid) == ACQUIRED


def test_compatible_and_disjoint_locks_are_granted_together(client: ThriftClient) -> None:
    readers = [lock(client, component(SHARED_READ)) for _ in range(3)]
    assert [r.state for r in readers] == [ACQUIRED] * 3
    writer = lock(client, component(SHARED_WRITE))
    assert writer.state == ACQUIRED  # a shared write passes shared reads
    assert lock(client, component(SHARED_WRITE)).state == ACQUIRED  # and shared writes
    assert lock(client, component(EXCL_WRITE)).state == WAITING  # not an exclusive write
    # other tables, other partitions of one table: no conflict
    assert lock(client, component(EXCLUSIVE, table="other")).state == ACQUIRED
    on_p1 = lock(client, component(EXCLUSIVE, table="p", partition="dt=1"))
    on_p2 = lock(client, component(EXCLUSIVE, table="p", partition="dt=2"))
    assert (on_p1.state, on_p2.state) == (ACQUIRED, ACQUIRED)
    # a table lock covers its partitions, a database lock its tables
    assert lock(client, component(SHARED_READ, table="p")).state == WAITING
    # Hive's exception: a database's shared read does not wait for a table's exclusive lock
    assert lock(client, component(SHARED_READ, db="default", table=None)).state == ACQUIRED
    assert lock(client, component(EXCLUSIVE, db="default", table=None)).state == WAITING
    assert lock(client, component(EXCLUSIVE, db="elsewhere", table=None)).state == ACQUIRED


def test_a_lock_is_granted_whole_or_waits_whole(client: ThriftClient) -> None:
    held = lock(client, component(EXCLUSIVE, table="b"))
    both = lock(client, component(EXCLUSIVE, table="a"), component(EXCLUSIVE, table="b"))
    assert both.state == WAITING
    assert lock(client, component(EXCLUSIVE, table="a")).state == WAITING  # queued behind
    client.unlock(hms.UnlockRequest(lockid=held.lockid))
    assert state(client, both.lockid) == ACQUIRED


def test_unknown_released_and_expired_locks(client: ThriftClient) -> None:
    with pytest.raises(hms.NoSuchLockException, match="No such lock lockid:424242"):
        client.check_lock(hms.CheckLockRequest(lockid=424242))
    client.unlock(hms.UnlockRequest(lockid=424242))  # Hive 4: releasing nothing succeeds
    with pytest.raises(hms.NoSuchTxnException):
        client.lock(hms.LockRequest(component=[component(EXCLUSIVE)], txnid=7, user="u"))
    held = lock(client, component(EXCLUSIVE))
    waiting = lock(client, component(EXCLUSIVE))
    client.unlock(hms.UnlockRequest(lockid=held.lockid))
    with pytest.raises(hms.NoSuchLockException, match="No such lock lockid:"):
        client.check_lock(hms.CheckLockRequest(lockid=held.lockid))
    # heartbeats keep a lock alive past the timeout (2 s here); without them it expires
    for _ in range(4):
        time.sleep(0.8)
        client.heartbeat(hms.HeartbeatRequest(lockid=waiting.lockid))
    assert state(client, waiting.lockid) == ACQUIRED
    time.sleep(2.5)
    with pytest.raises(hms.NoSuchLockException, match="No such lock: lockid:"):
        client.heartbeat(hms.HeartbeatRequest(lockid=waiting.lockid))
    assert lock(client, component(EXCLUSIVE)).state == ACQUIRED
    # a new lock never takes an expired lock's id
    assert lock(client, component(SHARED_READ, table="x")).lockid > waiting.lockid + 1


def test_show_locks(client: ThriftClient) -> None:
    held = lock(client, component(EXCLUSIVE, table="t"))
    waiting = lock(client, component(SHARED_READ, table="t"))
    lock(client, component(SHARED_READ, db="other", table="u"))
    shown = client.show_locks(hms.ShowLocksRequest(dbname="default")).locks
    assert [(e.lockid, e.tablename, e.state, e.type) for e in shown] == [
        (held.lockid, "t", ACQUIRED, EXCLUSIVE),
        (waiting.lockid, "t", WAITING, SHARED_READ),
    ]
    assert shown[1].blockedByExtId == held.lockid
    assert (shown[0].user, shown[0].hostname) == ("u", "h")
    assert shown[0].acquiredat > 0
    assert len(client.show_locks(hms.ShowLocksRequest()).locks) == 3


def iceberg_table(location: str, metadata: str) -> hms.Table:
    return hms.Table(
        tableName="ice",
        dbName="default",
        tableType="EXTERNAL_TABLE",
        sd=hms.StorageDescriptor(
            cols=[hms.FieldSchema("id", "bigint")], location=location, serdeInfo=hms.SerDeInfo()
        ),
        partitionKeys=[],
        parameters={"table_type": "ICEBERG", "metadata_location": metadata},
    )


def test_expected_parameter_is_checked_and_swapped_atomically(
    client: ThriftClient, tmp_path: Path
) -> None:
    client.create_table(iceberg_table(str(tmp_path / "ice"), "m1"))
    swap = iceberg_table(str(tmp_path / "ice"), "m2")
    context = hms.EnvironmentContext(
        properties={"expected_parameter_key": "metadata_location", "expected_parameter_value": "m1"}
    )
    client.alter_table_with_environment_context("default", "ice", swap, context)
    assert client.get_table("default", "ice").parameters["metadata_location"] == "m2"
    stale = iceberg_table(str(tmp_path / "ice"), "m3")
    with pytest.raises(hms.MetaException, match=r"The table has been modified.*'m2'.*'m1'"):
        client.alter_table_with_environment_context("default", "ice", stale, context)
    assert client.get_table("default", "ice").parameters["metadata_location"] == "m2"
    unset = iceberg_table(str(tmp_path / "ice"), "m4")
    unset.parameters.pop("metadata_location")
    swap_context = hms.EnvironmentContext(
        properties={"expected_parameter_key": "metadata_location", "expected_parameter_value": "m2"}
    )
    with pytest.raises(hms.MetaException, match="New value for expected key metadata_location"):
        client.alter_table_with_environment_context("default", "ice", unset, swap_context)
    # without a context, no check (Hive 2's behaviour)
    client.alter_table("default", "ice", stale)
    assert client.get_table("default", "ice").parameters["metadata_location"] == "m3"


def appenders(uri: str, warehouse: str, workers: int, count: int) -> list[int]:
    """Run `workers` appending processes to default.ice; the ids they acknowledged."""
    with Appending(uri, warehouse, list(range(workers)), count) as acknowledged:
        pass
    return acknowledged


def create_iceberg(uri: str, warehouse: str) -> HiveCatalog:
    catalog = HiveCatalog("statlas", uri=uri, warehouse=warehouse)
    catalog.create_table("default.ice", schema=pa.schema([pa.field("id", pa.int64(), False)]))
    return catalog


def table_ids(catalog: HiveCatalog) -> list[int]:
    table = catalog.load_table("default.ice")
    return sorted(table.scan().to_arrow()["id"].to_pylist())


@pytest.mark.slow
def test_concurrent_iceberg_appends_through_one_daemon(
    service: ThriftService, tmp_path: Path
) -> None:
    uri, warehouse = f"thrift://127.0.0.1:{service.port}", f"file://{tmp_path / 'lake'}"
    catalog = create_iceberg(uri, warehouse)
    acknowledged = appenders(uri, warehouse, workers=3, count=4)
    assert len(acknowledged) == 12
    assert table_ids(catalog) == sorted(acknowledged)
    assert len(catalog.load_table("default.ice").snapshots()) == 12


@pytest.mark.slow
def test_concurrent_iceberg_appends_through_two_daemons(pg_url: str, tmp_path: Path) -> None:
    with (
        hms_daemon(pg_url, tmp_path / "one") as (first, _),
        hms_daemon(pg_url, tmp_path / "two") as (second, _),
    ):
        warehouse = f"file://{tmp_path / 'lake'}"
        catalog = create_iceberg(f"thrift://127.0.0.1:{first}", warehouse)
        with (
            Appending(f"thrift://127.0.0.1:{first}", warehouse, [0, 1], count=4) as one,
            Appending(f"thrift://127.0.0.1:{second}", warehouse, [2, 3], count=4) as two,
        ):
            pass
        acknowledged = one + two
        assert len(acknowledged) == 16
        assert table_ids(catalog) == sorted(acknowledged)


class Appending:
    """Appending processes, started on entry and awaited on exit (so that two groups run at
    once); the ids they acknowledged."""

    def __init__(self, uri: str, warehouse: str, workers: list[int], count: int = 8) -> None:
        self.command = [sys.executable, "-m", "tests.support.iceberg_appender", uri, warehouse]
        self.workers, self.count = workers, count
        self.acknowledged: list[int] = []

    def __enter__(self) -> list[int]:
        self.processes = [
            subprocess.Popen(
                [*self.command, "default.ice", str(worker), str(self.count)],
                cwd=REPOSITORY,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for worker in self.workers
        ]
        return self.acknowledged

    def __exit__(self, *_exc: object) -> None:
        for process in self.processes:
            out, err = process.communicate(timeout=300)
            assert process.returncode == 0, err[-2000:]
            assert "gave up" not in out, out
            self.acknowledged += [
                int(line.split()[1]) for line in out.splitlines() if line.startswith("acked")
            ]


HOLDER = """
import sys, time
from hive_metastore import ttypes as hms
from tests.support.hms_daemon import ThriftClient
client = ThriftClient(int(sys.argv[1]))
component = hms.LockComponent(type=hms.LockType.EXCLUSIVE, level=hms.LockLevel.TABLE,
                              dbname="default", tablename="ice")
response = client.lock(hms.LockRequest(component=[component], user="holder", hostname="h"))
print(response.lockid, response.state, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_killed_clients_lock_expires(service: ThriftService, tmp_path: Path) -> None:
    uri, warehouse = f"thrift://127.0.0.1:{service.port}", f"file://{tmp_path / 'lake'}"
    catalog = create_iceberg(uri, warehouse)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(service.port)],
        cwd=REPOSITORY,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        lock_id, granted = (int(v) for v in holder.stdout.readline().split())
        assert granted == ACQUIRED
        os.kill(holder.pid, signal.SIGKILL)
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    observer = ThriftClient(service.port)
    try:
        # the dead client's lock still holds until the timeout (2 s) passes
        queued = lock(observer, component(EXCLUSIVE, table="ice"))
        assert queued.state == WAITING
        observer.unlock(hms.UnlockRequest(lockid=queued.lockid))
    finally:
        observer.close()
    started = time.monotonic()
    acknowledged = appenders(uri, warehouse, workers=1, count=1)
    assert acknowledged == [0]
    assert time.monotonic() - started < 30
    assert table_ids(catalog) == [0]
    shown = ThriftClient(service.port)
    try:
        assert lock_id not in [e.lockid for e in shown.show_locks(hms.ShowLocksRequest()).locks]
    finally:
        shown.close()
