"""`statlas daemon` as real processes on PostgreSQL: health, schedules that outlive the
daemon, one leader among several daemons running each tick once, takeover after the leader
is killed, SIGTERM (exit 0, a running collection abandoned cleanly), and a database restart
under requests (503s, then recovery without a restart). Leader election is also checked
in-process, on PostgreSQL's advisory lock and on SQLite's lock file."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import create_engine, select

from metastore import Metastore
from metastore.models import CollectionRun, PartitionStats
from pruner.daemon.leader import FileLock, LeaderElector, PostgresLock
from pruner.daemon.schedules import Schedules
from tests.support.databases import postgres_schema
from tests.support.partitions import write_partitions
from tests.support.processes import free_port, statlas_env

pytestmark = [pytest.mark.xdist_group("daemon")]

T = TypeVar("T")
STATLAS = Path(sys.executable).parent / "statlas"
PG_BINARIES = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), reverse=True)
START_TIMEOUT = 30.0
JOB_TIMEOUT = 120.0  # the first job of a daemon starts its Spark JVM
TAKEOVER_LIMIT = 60.0
EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


# --- processes ------------------------------------------------------------------------


def daemon_env(db_url: str) -> dict[str, str]:
    return statlas_env(db_url, STATLAS_SPARK_MASTER="local[1]", STATLAS_SPARK_DRIVER_MEMORY="512m")


def http(url: str, method: str = "GET") -> tuple[int, Any]:
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            body = answer.read()
            status = answer.status
    except urllib.error.HTTPError as error:
        body, status = error.read(), error.code
    if body.startswith((b"{", b"[")):
        return status, json.loads(body)
    return status, body.decode()


class Daemon:
    """One `statlas daemon` subprocess (in a process group of its own, with its JVM)."""

    def __init__(self, db_url: str, cwd: Path, *args: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = cwd / f"daemon-{self.port}.log"
        # several daemons share this machine: the Hive Metastore API only where asked for
        thrift = [] if "--thrift-port" in args else ["--thrift-port", "0"]
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [str(STATLAS), "daemon", "--port", str(self.port), *thrift, *args],
                cwd=cwd,
                env=daemon_env(db_url),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def node(self) -> str:
        """How the daemon lists itself among the metastore's daemons."""
        return f"{socket.gethostname()}:{self.process.pid}"

    def get(self, path: str, method: str = "GET") -> tuple[int, Any]:
        return http(self.url + path, method)

    def healthy(self) -> bool:
        with contextlib.suppress(OSError):
            return self.get("/health")[0] == 200
        return False

    def leading(self) -> bool:
        with contextlib.suppress(OSError):
            status, body = self.get("/scheduler")
            return status == 200 and bool(body["leader"])
        return False

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def terminate(self, timeout: float) -> int:
        """SIGTERM to the daemon alone (as `docker stop` does); its exit code."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"no exit {timeout:.0f} s after SIGTERM:\n{self.output()}")

    def kill(self) -> None:
        """SIGKILL to the daemon and its JVM (a crashed host or container)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)


@pytest.fixture
def start_daemon(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    started: list[Daemon] = []

    def start(db_url: str, *args: str) -> Daemon:
        daemon = Daemon(db_url, tmp_path, *args)
        started.append(daemon)
        wait_for(daemon.healthy, START_TIMEOUT, "the daemon to answer /health", daemon)
        return daemon

    yield start
    for daemon in started:
        daemon.kill()


def wait_for(
    check: Callable[[], T], timeout: float, what: str, *daemons: Daemon, every: float = 0.2
) -> T:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {d.url}\n{d.output()}" for d in daemons)
            pytest.fail(f"waited {timeout:.0f} s for {what}\n{logs}")
        for daemon in daemons:
            if daemon.process.poll() is not None and daemon.process.returncode != -9:
                pytest.fail(f"daemon exited {daemon.process.returncode}:\n{daemon.output()}")
        time.sleep(every)


def statlas(db_url: str, cwd: Path, *argv: str) -> str:
    result = subprocess.run(
        [str(STATLAS), *argv],
        cwd=cwd,
        env=daemon_env(db_url),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# --- the metastore ----------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    id: int
    status: str
    started: dt.datetime
    finished: dt.datetime | None
    error: str | None


def runs(db_url: str) -> list[Run]:
    engine = create_engine(db_url)
    columns = CollectionRun.__table__.c
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                select(
                    columns.id,
                    columns.status,
                    columns.started_at,
                    columns.finished_at,
                    columns.error,
                ).order_by(columns.id)
            ).all()
    finally:
        engine.dispose()
    return [Run(*row) for row in rows]


def succeeded_since(db_url: str, moment: dt.datetime) -> list[Run]:
    return [r for r in runs(db_url) if r.status == "succeeded" and r.started > moment]


def stats_partitions(db_url: str) -> int:
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            return len(conn.execute(select(PartitionStats.__table__.c.partition_id)).all())
    finally:
        engine.dispose()


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def lake(root: Path) -> Path:
    return write_partitions(root / "t", ["dt"], [["2024-01-01"], ["2024-01-02"]])


def add_large_partition(root: Path, rows: int = 3_000_000, files: int = 2) -> None:
    """A partition whose scan takes several seconds on one core, moved into the table's
    directory whole."""
    rng = np.random.default_rng(5)
    table = pa.table(
        {
            "id": pa.array(rng.integers(0, 1 << 40, rows)),
            "label": pa.array(np.char.add("v", rng.integers(0, 5000, rows).astype(str))),
        }
    )
    staging = root / "staging"
    staging.mkdir()
    for n in range(files):
        pq.write_table(table, staging / f"part-{n:05d}.parquet")
    staging.rename(root / "t" / "dt=2024-02-01")


@pytest.fixture
def pg_lake(tmp_path: Path) -> Iterator[str]:
    """A metastore in a schema of the test PostgreSQL with table `t` (two tiny partitions)."""
    with postgres_schema() as url:
        ms = Metastore(url)
        ms.upgrade()
        ms.register_table("t", str(lake(tmp_path)))
        ms.dispose()
        yield url


# --- daemons ----------------------------------------------------------------------------


@pytest.mark.postgres
def test_health_and_a_schedule_outlive_a_restart(
    pg_lake: str, tmp_path: Path, start_daemon: Callable[..., Daemon]
) -> None:
    daemon = start_daemon(pg_lake)
    assert daemon.get("/health") == (200, {"status": "ok", "database": "ok"})
    statlas(pg_lake, tmp_path, "schedule", "add", "t", "--cron", "0 0 1 1 *")
    status, schedules = daemon.get("/schedules")
    assert status == 200 and [s["cron"] for s in schedules] == ["0 0 1 1 *"]
    assert daemon.get("/scheduler")[1]["leader"] is True
    started = time.monotonic()
    assert daemon.terminate(30) == 0
    assert time.monotonic() - started < 15

    again = start_daemon(pg_lake)
    assert again.get("/schedules") == (200, schedules)
    assert json.loads(statlas(pg_lake, tmp_path, "schedule", "list", "--json")) == schedules
    wait_for(again.leading, 15, "the new daemon to lead", again)
    assert again.terminate(30) == 0


@pytest.mark.postgres
@pytest.mark.spark
@pytest.mark.slow
def test_one_leader_runs_each_tick_once_another_takes_over_and_sigterm_abandons(
    pg_lake: str, tmp_path: Path, start_daemon: Callable[..., Daemon]
) -> None:
    first = start_daemon(pg_lake, "--grace", "0")
    second = start_daemon(pg_lake, "--grace", "0")
    wait_for(lambda: first.leading() or second.leading(), 15, "a leader", first, second)
    leader, follower = (first, second) if first.leading() else (second, first)
    assert not follower.leading()
    # each daemon lists both, the same one leading
    for daemon in (first, second):
        listed = daemon.get("/daemons")[1]
        assert listed["leader"] == leader.node
        assert {(d["node"], d["state"], d["url"]) for d in listed["daemons"]} == {
            (d.node, "serving", d.url) for d in (first, second)
        }
    statlas(pg_lake, tmp_path, "schedule", "add", "t", "--every", "3s")

    # every tick runs once, in the leader only
    wait_for(lambda: succeeded_since(pg_lake, EPOCH), JOB_TIMEOUT, "a first run", leader)
    window = now()
    time.sleep(10)
    ticks = [r for r in runs(pg_lake) if r.started >= window]
    assert 2 <= len(ticks) <= 5, ticks
    for before, after in zip(ticks, ticks[1:], strict=False):
        assert before.finished is not None and before.finished <= after.started, ticks
    assert "statlas_job_runs_total{" in leader.get("/metrics")[1]
    assert "statlas_job_runs_total{" not in follower.get("/metrics")[1]
    assert stats_partitions(pg_lake) == 2

    # the leader dies: the follower leads within a minute and runs the schedule
    leader.kill()
    killed = now()
    waited = time.monotonic()
    wait_for(follower.leading, TAKEOVER_LIMIT, "the follower to take over", follower)
    assert time.monotonic() - waited < TAKEOVER_LIMIT
    wait_for(lambda: succeeded_since(pg_lake, killed), JOB_TIMEOUT, "a run", follower)

    def killed_is_silent() -> bool:
        listed = follower.get("/daemons")[1]
        states = {d["node"]: d["state"] for d in listed["daemons"]}
        return listed["leader"] == follower.node and states[leader.node] == "silent"

    wait_for(killed_is_silent, 30, "the killed leader listed silent", follower)
    assert [r for r in runs(pg_lake) if r.status == "running" and r.started < killed] == []

    # SIGTERM during a collection: exit 0 promptly, the run failed, no statistics written
    add_large_partition(tmp_path)
    added = now()

    def scanning() -> list[Run]:
        """Runs begun since the partition arrived and still running a second later (a run
        with nothing to scan takes milliseconds)."""
        begun = {r.id for r in runs(pg_lake) if r.status == "running" and r.started > added}
        if not begun:
            return []
        time.sleep(1.0)
        return [r for r in runs(pg_lake) if r.id in begun and r.status == "running"]

    running = wait_for(scanning, 30, "a collection of the new partition", follower, every=0.05)
    started = time.monotonic()
    assert follower.terminate(60) == 0, follower.output()
    assert time.monotonic() - started < 45
    final = {r.id: r for r in runs(pg_lake)}
    assert [r for r in final.values() if r.status == "running"] == []
    assert final[running[0].id].status == "failed", follower.output()
    assert stats_partitions(pg_lake) == 2  # the large partition's statistics: none
    listed = json.loads(statlas(pg_lake, tmp_path, "daemons", "--json"))
    assert {d["node"]: d["state"] for d in listed["daemons"]} == {
        leader.node: "silent",
        follower.node: "stopped",
    }
    assert listed["leader"] is None


@pytest.mark.postgres
@pytest.mark.spark
@pytest.mark.slow
def test_sigterm_lets_a_running_collection_finish_within_the_grace(
    pg_lake: str, tmp_path: Path, start_daemon: Callable[..., Daemon]
) -> None:
    daemon = start_daemon(pg_lake, "--grace", "120")
    wait_for(daemon.leading, 15, "the daemon to lead", daemon)
    statlas(pg_lake, tmp_path, "schedule", "add", "t", "--every", "3s")
    wait_for(lambda: succeeded_since(pg_lake, EPOCH), JOB_TIMEOUT, "a first run", daemon)
    add_large_partition(tmp_path)
    added = now()
    running = wait_for(
        lambda: [r for r in runs(pg_lake) if r.status == "running" and r.started > added],
        30,
        "a collection of the new partition",
        daemon,
        every=0.05,
    )
    assert daemon.terminate(150) == 0, daemon.output()
    final = {r.id: r for r in runs(pg_lake)}
    assert final[running[0].id].status == "succeeded", daemon.output()
    assert [r for r in final.values() if r.status == "running"] == []
    assert stats_partitions(pg_lake) == 3  # the large partition's statistics are in


# --- a database restart -------------------------------------------------------------------


@dataclass
class PrivatePostgres:
    """A PostgreSQL server of this test's own (initdb in a temporary directory)."""

    bin: Path
    root: Path
    port: int
    as_user: list[str]

    @property
    def url(self) -> str:
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *args: str) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        command = [str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-w", "-t", "60"]
        subprocess.run(
            [*self.as_user, *command, "-l", str(self.root / "log"), "-o", options, *args],
            check=True,
            capture_output=True,
            timeout=90,
        )


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    if not PG_BINARIES:
        if os.environ.get("CI"):
            pytest.fail("initdb is missing (/usr/lib/postgresql/*/bin)", pytrace=False)
        pytest.skip("initdb is not installed")
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="statlas-pg-"))
    if os.geteuid() == 0:  # initdb refuses root: run the server as postgres
        account = pwd.getpwnam("postgres")
        os.chown(root, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    server = PrivatePostgres(PG_BINARIES[0].parent, root, free_port(), as_user)
    try:
        subprocess.run(
            [*as_user, str(server.bin / "initdb"), "-D", str(root / "data")]
            + ["-A", "trust", "-U", "postgres", "-N"],
            check=True,
            capture_output=True,
            timeout=120,
        )
        server.pg_ctl("start")
        yield server
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            server.pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.postgres
@pytest.mark.spark
@pytest.mark.slow
def test_database_restart_under_requests(
    private_postgres: PrivatePostgres, tmp_path: Path, start_daemon: Callable[..., Daemon]
) -> None:
    url = private_postgres.url
    ms = Metastore(url)
    ms.upgrade()
    ms.register_table("t", str(lake(tmp_path)))
    ms.dispose()
    book = Schedules(url)
    schedule = book.add("t", every="3s").as_json()
    book.close()
    daemon = start_daemon(url)
    wait_for(lambda: succeeded_since(url, EPOCH), JOB_TIMEOUT, "a first run", daemon)

    private_postgres.pg_ctl("stop", "-m", "fast")
    for path in ("/tables", "/schedules", "/tables/t/partitions", "/health"):
        status, body = daemon.get(path)
        assert status == 503, (path, body)
        assert isinstance(body, dict) and body["error"], (path, body)
    time.sleep(6)  # the leader notices its lock connection broke
    assert daemon.get("/tables")[0] == 503

    private_postgres.pg_ctl("start")
    back = now()
    wait_for(lambda: daemon.get("/tables")[0] == 200, 30, "requests to succeed", daemon)
    status, schedules = daemon.get("/schedules")
    assert status == 200 and [(s["table"], s["every"]) for s in schedules] == [
        (schedule["table"], schedule["every"])
    ]
    wait_for(lambda: succeeded_since(url, back), 60, "the scheduler to resume", daemon)
    assert daemon.leading()
    assert daemon.terminate(60) == 0
    assert [r for r in runs(url) if r.status == "running"] == []


# --- leader election, in-process -----------------------------------------------------------


class Candidate:
    """A LeaderElector with short intervals that records its terms."""

    def __init__(self, lock: PostgresLock | FileLock) -> None:
        self.terms: list[str] = []
        self.elector = LeaderElector(
            lock,
            on_elected=lambda: self.terms.append("elected"),
            on_lost=lambda grace: self.terms.append(f"lost {grace:g}"),
            retry=0.2,
            check=0.1,
        )
        self.elector.start()


def elect_one_then_the_other(first: Candidate, second: Candidate) -> None:
    wait_for(lambda: first.elector.leading or second.elector.leading, 10, "a leader")
    time.sleep(0.6)  # a few rounds: still exactly one leader
    assert first.elector.leading != second.elector.leading
    leader, follower = (first, second) if first.elector.leading else (second, first)
    leader.elector.stop(grace=7, timeout=10)
    assert leader.terms == ["elected", "lost 7"]
    wait_for(lambda: follower.elector.leading, 10, "the follower to lead")
    follower.elector.stop(timeout=10)
    assert follower.terms == ["elected", "lost 0"]


@pytest.mark.postgres
def test_postgres_advisory_lock_elects_one_leader() -> None:
    with postgres_schema() as url:
        elect_one_then_the_other(Candidate(PostgresLock(url)), Candidate(PostgresLock(url)))


@pytest.mark.postgres
def test_postgres_leader_steps_down_when_its_connection_breaks() -> None:
    with postgres_schema() as url:
        lock = PostgresLock(url)
        candidate = Candidate(lock)
        wait_for(lambda: candidate.elector.leading, 10, "a leader")
        assert lock._conn is not None
        pid = lock._conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        admin = create_engine(url)
        with admin.connect() as conn:
            conn.exec_driver_sql(f"SELECT pg_terminate_backend({int(pid)})")
        admin.dispose()
        wait_for(lambda: "lost 0" in candidate.terms, 10, "the leader to step down")
        wait_for(lambda: candidate.terms.count("elected") == 2, 10, "it to lead again")
        candidate.elector.stop(timeout=10)


def test_sqlite_lock_file_elects_one_leader(tmp_path: Path) -> None:
    path = tmp_path / "statlas.db.scheduler.lock"
    elect_one_then_the_other(Candidate(FileLock(path)), Candidate(FileLock(path)))
