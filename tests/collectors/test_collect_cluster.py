"""`statlas collect` end to end, as a subprocess, into both databases: a Spark JVM killed in
the middle of a collection leaves the previous statistics and a failed run (and does not
block the next collection); a collection on a real standalone cluster (one master, one
worker started from pyspark's own scripts) is exact."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sqlalchemy import Engine, create_engine, select

from metastore.models import CollectionRun, ColumnStats, PartitionStats
from metastore.partitions.names import partition_name
from tests.support.partitions import write_partition
from tests.support.processes import free_ports, log_tail, statlas_env, stop_group

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

STATLAS = Path(sys.executable).parent / "statlas"
KEYS = ["dt", "region"]
SMALL: list[list[str | None]] = [
    ["2024-01-01", "emea"],
    ["2024-01-01", "apac"],
    ["2024-01-02", "emea"],
]
CLI_TIMEOUT = 300
CLUSTER_TIMEOUT = 60
HISTOGRAMS = ("equi_depth", "equi_width", "uniform")


def cli_env(db_url: str) -> dict[str, str]:
    return statlas_env(db_url, STATLAS_SPARK_DRIVER_MEMORY="1g")


def statlas(env: dict[str, str], cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STATLAS), *argv],
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        timeout=CLI_TIMEOUT,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (
        f"{' '.join(map(str, result.args))} exited {result.returncode}:\n{result.stderr}"
    )
    return result.stdout


def ok_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(ok(result))


def write_lake(root: Path, partitions: list[list[str | None]], rows: int) -> list[pa.Table]:
    rng = random.Random(7)
    return [write_partition(root, values, rng, rows) for values in partitions]


def write_large_partition(root: Path, values: list[str | None], files: int, rows: int) -> int:
    """One partition of `files` files of `rows` rows each: a scan of a few seconds on one
    core. Returns its row count."""
    table = write_partition(root, values, random.Random(3), rows)
    directory = root / partition_name(KEYS, values)
    for n in range(1, files):
        pq.write_table(table, directory / f"part-{n:05d}.parquet")
    return files * rows


def runs(engine: Engine) -> list[tuple[str, str | None, Any]]:
    columns = CollectionRun.__table__.c
    with engine.connect() as conn:
        return [
            (status, error, finished)
            for status, error, finished in conn.execute(
                select(columns.status, columns.error, columns.finished_at).order_by(columns.id)
            )
        ]


def stored_statistics(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every statistics row the metastore holds, exactly as stored."""
    snapshot = {}
    with engine.connect() as conn:
        for model in (PartitionStats, ColumnStats):
            name = model.__tablename__
            table = model.metadata.tables[name]
            rows = conn.execute(select(table).order_by(*table.primary_key.columns))
            snapshot[name] = [tuple(row) for row in rows]
    return snapshot


def reproducible(stats: dict[str, Any]) -> dict[str, Any]:
    """`statlas stats --json` less what differs between two calls on the same statistics:
    the histograms (read from a merge of KLL sketches, which is randomised) and the order
    of heavy hitters with equal counts."""
    columns = {
        name: {
            **{k: v for k, v in column.items() if k not in HISTOGRAMS},
            "mcv": sorted(column["mcv"], key=lambda item: (-item[1], json.dumps(item[0]))),
        }
        for name, column in stats["columns"].items()
    }
    return {**stats, "columns": columns}


# --- processes -----------------------------------------------------------------------


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (from /proc/*/stat: /proc/<pid>/children is not always
    there)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def spark_driver_jvm(pid: int) -> int | None:
    """The SparkSubmit JVM PySpark started below `pid` (not spark-class's launcher JVM)."""
    for child in descendants(pid):
        try:
            argv = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            argv[0].endswith(b"java")
            and b"org.apache.spark.deploy.SparkSubmit" in argv
            and b"org.apache.spark.launcher.Main" not in argv
        ):
            return child
    return None


def running_thread_names(pid: int) -> set[str]:
    """The names (15 characters, as Linux has them) of the JVM's threads on a CPU now."""
    names: set[str] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return names
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        end = stat.rindex(")")  # "tid (name) state ...": a name may hold spaces or parentheses
        if stat[end + 2 : end + 3] == "R":
            names.add(stat[stat.index("(") + 1 : end])
    return names


def jvm_in_scan(engine: Engine, pid: int) -> int | None:
    """The driver JVM below `pid` once the second run is recorded as running and a Spark
    task of it is on a CPU ("Executor task launch worker ..." threads, idle between jobs,
    running only while a job's tasks do): whichever scan method collects, one-pass or
    Spark's aggregates."""
    if [status for status, _, _ in runs(engine)] != ["succeeded", "running"]:
        return None
    jvm = spark_driver_jvm(pid)
    if jvm is None:
        return None
    if not any(name.startswith("Executor task") for name in running_thread_names(jvm)):
        return None
    return jvm


# --- a JVM killed in the middle of a collection ----------------------------------------


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """The test's metastore, to watch collection_runs while the CLI writes it."""
    engine = create_engine(db_url)
    yield engine
    engine.dispose()


def test_killed_spark_job_keeps_previous_statistics(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    root = tmp_path / "sales"
    write_lake(root, SMALL, 1000)
    env = cli_env(db_url)
    ok(statlas(env, tmp_path, "db", "upgrade"))
    ok(statlas(env, tmp_path, "table", "register", "sales", "--path", str(root)))
    first = ok_json(statlas(env, tmp_path, "collect", "sales", "--master", "local[1]", "--json"))
    assert (first["partitions_scanned"], first["rows"]) == (3, 3000)
    before = ok_json(statlas(env, tmp_path, "stats", "sales", "--json"))
    assert (before["partitions"], before["row_count"]) == (3, 3000)
    stored = stored_statistics(engine)
    assert len(stored["partition_stats"]) == 3
    assert stored["column_stats"]

    large_rows = write_large_partition(root, ["2024-01-03", "apac"], files=30, rows=20_000)
    ok(statlas(env, tmp_path, "table", "register", "sales", "--path", str(root)))

    stdout, stderr = tmp_path / "collect.out", tmp_path / "collect.err"
    with stdout.open("wb") as out_file, stderr.open("wb") as err_file:
        collecting = subprocess.Popen(
            [str(STATLAS), "collect", "sales", "--master", "local[1]", "--json"],
            cwd=tmp_path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out_file,
            stderr=err_file,
        )
    try:
        # Kill the driver JVM once the run is recorded as running and its Spark tasks run
        # (the scan takes seconds over the new 600,000-row partition on one core).
        deadline = time.monotonic() + CLI_TIMEOUT
        jvm = None
        while jvm is None:
            if collecting.poll() is not None:
                pytest.fail(
                    f"collect exited {collecting.returncode} before its Spark job could be "
                    f"killed:\nstdout: {stdout.read_text()}\nstderr: {stderr.read_text()}"
                )
            jvm = jvm_in_scan(engine, collecting.pid)
            if jvm is None:
                if time.monotonic() > deadline:
                    pytest.fail(f"collect ran no Spark task in {CLI_TIMEOUT} s")
                time.sleep(0.1)
        os.kill(jvm, signal.SIGKILL)
        collecting.wait(timeout=CLI_TIMEOUT)
    finally:
        if collecting.poll() is None:  # a failed assertion above: leave nothing running
            for pid in descendants(collecting.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            collecting.kill()
            collecting.wait()

    out, err = stdout.read_text(), stderr.read_text()
    failure = f"exit {collecting.returncode}\nstdout: {out}\nstderr: {err}"
    assert collecting.returncode == 2, failure
    assert "Traceback" not in err, failure
    # --json: one object per table, a failed one with its error (and the one-line error)
    reported = json.loads(out)
    assert (reported["table"], reported["status"]) == ("sales", "failed"), failure
    assert reported["error"].startswith("collection of sales failed"), failure
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("statlas: error: collection of sales failed"), failure
    assert "previous statistics kept" in last, failure

    history = runs(engine)
    assert [status for status, _, _ in history] == ["succeeded", "failed"]
    _, error, finished = history[-1]
    assert error
    assert finished is not None
    assert stored_statistics(engine) == stored
    kept = ok_json(statlas(env, tmp_path, "stats", "sales", "--json"))
    assert reproducible(kept) == reproducible(before)

    # the failed run does not block the next collection, which scans the new partition only
    again = ok_json(statlas(env, tmp_path, "collect", "sales", "--master", "local[1]", "--json"))
    assert (again["partitions_scanned"], again["partitions_skipped"]) == (1, 3)
    assert again["rows"] == large_rows
    after = ok_json(statlas(env, tmp_path, "stats", "sales", "--json"))
    assert (after["partitions"], after["row_count"]) == (4, 3000 + large_rows)


# --- a standalone cluster --------------------------------------------------------------


@dataclass(frozen=True)
class Cluster:
    master: str
    web_ui: str
    work_dir: Path

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.web_ui}/json/", timeout=5) as response:
            state: dict[str, Any] = json.load(response)
        return state

    def apps(self) -> dict[str, str]:
        state = self.state()
        return {a["id"]: a["name"] for a in state["activeapps"] + state["completedapps"]}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A Spark standalone master and one worker (1 core, 1g) on 127.0.0.1, stopped (their
    process groups) however the tests end."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    base = tmp_path_factory.mktemp("spark-cluster")
    work_dir, conf_dir = base / "work", base / "conf"
    work_dir.mkdir()
    conf_dir.mkdir()
    port, master_ui, worker_ui = free_ports(3)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(
        SPARK_HOME=str(spark_home),
        SPARK_CONF_DIR=str(conf_dir),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(base),
        SPARK_WORKER_DIR=str(work_dir),
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
    )
    master = f"spark://127.0.0.1:{port}"
    commands = {
        "master": [
            str(spark_class),
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            str(master_ui),
        ],
        "worker": [
            str(spark_class),
            "org.apache.spark.deploy.worker.Worker",
            master,
            "--host",
            "127.0.0.1",
            "--cores",
            "1",
            "--memory",
            "1g",
            "--webui-port",
            str(worker_ui),
            "--work-dir",
            str(work_dir),
        ],
    }
    started: dict[str, subprocess.Popen[bytes]] = {}
    logs = {name: base / f"{name}.log" for name in commands}
    try:
        for name, command in commands.items():
            with logs[name].open("wb") as log:
                started[name] = subprocess.Popen(
                    command,
                    env=env,
                    cwd=base,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
        running = Cluster(master, f"http://127.0.0.1:{master_ui}", work_dir)
        deadline = time.monotonic() + CLUSTER_TIMEOUT
        while True:
            ended = {n: p.returncode for n, p in started.items() if p.poll() is not None}
            if ended:
                pytest.fail(
                    f"Spark {ended} exited before the cluster was up\n"
                    + "\n".join(log_tail(p) for p in logs.values())
                )
            try:
                workers = running.state()["workers"]
            except (OSError, ValueError):  # not up yet, or a page that is not the JSON yet
                workers = []
            if [w["state"] for w in workers] == ["ALIVE"]:
                break
            if time.monotonic() > deadline:
                pytest.fail(
                    f"no ALIVE worker at {running.web_ui}/json/ after {CLUSTER_TIMEOUT} s "
                    f"(workers: {workers})\n" + "\n".join(log_tail(p) for p in logs.values())
                )
            time.sleep(0.5)
        yield running
    finally:
        for name in ("worker", "master"):
            if name in started:
                stop_group(started[name])


def test_collect_through_a_standalone_cluster(
    cluster: Cluster, db_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "sales"
    partitions: list[list[str | None]] = [*SMALL, [None, "apac"]]
    tables = write_lake(root, partitions, 1000)
    env = cli_env(db_url)
    ok(statlas(env, tmp_path, "db", "upgrade"))
    ok(statlas(env, tmp_path, "table", "register", "sales", "--path", str(root)))
    apps_before = cluster.apps()

    report = ok_json(
        statlas(env, tmp_path, "collect", "sales", "--master", cluster.master, "--json")
    )
    assert report["table"] == "sales"
    assert (
        report["partitions_scanned"],
        report["partitions_skipped"],
        report["partitions_removed"],
        report["rows"],
    ) == (4, 0, 0, 4000)

    # the job ran on the cluster: a new application, with an executor on the worker
    new_apps = {i: n for i, n in cluster.apps().items() if i not in apps_before}
    assert list(new_apps.values()) == ["statlas-collect"], new_apps
    assert (cluster.work_dir / next(iter(new_apps))).is_dir()

    stats = ok_json(statlas(env, tmp_path, "stats", "sales", "--json"))
    assert (stats["partitions"], stats["row_count"]) == (4, 4000)
    data = pa.concat_tables(tables)
    ids, names = data["id"].to_pylist(), data["name"].to_pylist()
    assert (stats["columns"]["id"]["min"], stats["columns"]["id"]["max"]) == (min(ids), max(ids))
    assert stats["columns"]["id"]["null_count"] == 0
    assert stats["columns"]["name"]["null_count"] == names.count(None)
    present = [n for n in names if n is not None]
    assert (stats["columns"]["name"]["min"], stats["columns"]["name"]["max"]) == (
        min(present),
        max(present),
    )
    assert stats["columns"]["name"]["ndv"] == pytest.approx(len(set(present)), abs=1)
    one = ok_json(
        statlas(env, tmp_path, "stats", "sales", "--in", "dt=__HIVE_DEFAULT_PARTITION__", "--json")
    )
    assert (one["partitions"], one["row_count"]) == (1, 1000)
