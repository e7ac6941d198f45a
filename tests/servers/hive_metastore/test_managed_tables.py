"""Managed tables' files as Hive's metastore keeps them, with `statlas daemon` as the
metastore of PySpark 4's built-in Hive client and of Spark's Thrift Server (beeline), on
SQLite and PostgreSQL: create_table makes a managed table's directory (INSERT, dynamic
partitions and CTAS then work), a rename of a managed table at its default location moves
its directory and its partitions', and DROP deletes a managed table's directory inside the
warehouse or its database's directory, and nothing else: external tables' files, and files
reached by a location escaping the warehouse with `..` or through a symbolic link, survive.

One Spark process per backend runs every scenario (a Spark with a metastore of its own
needs a JVM of its own, 10-20 s to start); a scenario stops at its first failing
statement, and the tests name that statement and Spark's error."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.servers.hive_metastore.test_hms_spark import daemon
from tests.support.databases import BACKENDS, postgres_schema
from tests.support.hive_clients import spark_env

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]


@dataclasses.dataclass(frozen=True)
class Served:
    """A running `statlas daemon` serving the Hive Metastore API."""

    db_url: str
    port: int
    root: Path  # the daemon's working directory
    log: Path

    @property
    def warehouse(self) -> Path:
        """--warehouse: the default database's directory."""
        return self.root / "warehouse"

    @property
    def outside(self) -> Path:
        """Outside the warehouse and every database's directory (but the one of `de`)."""
        return self.root / "outside"


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.contextmanager
def serving(backend: str, root: Path) -> Iterator[Served]:
    """`statlas daemon` on a new metastore of `backend` (SQLite in `root`, or a PostgreSQL
    schema of its own), its warehouse in `root`."""
    with contextlib.ExitStack() as stack:
        if backend == "sqlite":
            db_url = f"sqlite:///{root / 'statlas.db'}"
        else:
            db_url = stack.enter_context(postgres_schema())
        port, log = stack.enter_context(daemon(db_url, root))
        yield Served(db_url, port, root, log)


@pytest.fixture(scope="module")
def ran(backend: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Served, dict[str, Any]]:
    """The daemon PySpark's scenarios ran against (stopped since; its directories stay) and
    what each scenario saw: once per backend for the whole run, whichever test process
    asks first (the others wait on a file lock and read its record)."""
    shared = tmp_path_factory.getbasetemp().parent  # one directory for every xdist worker
    record = shared / f"managed-tables-{backend}.json"
    with open(shared / f"managed-tables-{backend}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not record.is_file():
            root = tmp_path_factory.mktemp(f"spark-{backend}")
            with serving(backend, root) as daemon_served:
                result = run_scenarios(daemon_served)
            fields = dataclasses.asdict(daemon_served)
            record.write_text(json.dumps({"served": fields, "result": result}, default=str))
        saved = json.loads(record.read_text())
    fields = saved["served"]
    served = Served(
        fields["db_url"], int(fields["port"]), Path(fields["root"]), Path(fields["log"])
    )
    return served, saved["result"]


@pytest.fixture(scope="module")
def served(ran: tuple[Served, dict[str, Any]]) -> Served:
    return ran[0]


@pytest.fixture(scope="module")
def spark_ddl(ran: tuple[Served, dict[str, Any]]) -> dict[str, Any]:
    return ran[1]


def write_ids(directory: Path, ids: list[int]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), directory / "part-0.parquet")


# Files written before Spark runs: (directory under `outside`, the ids of its one file)
OUTSIDE_FILES = {
    "ro_data": [11],  # managed ro at a location of its own, renamed to ro3
    "el_files": [1, 2, 3],  # CREATE TABLE el ... LOCATION (Spark makes it EXTERNAL)
    "ee_files": [4, 5],  # CREATE EXTERNAL TABLE ee ... LOCATION
    "dotdot_spark": [6],  # managed md: SET LOCATION '<warehouse>/../outside/dotdot_spark'
    "dotdot_thrift": [7],  # managed mdt: the same with `..` sent as is (Thrift alter_table)
    "link_target": [8],  # managed ms at <warehouse>/linked -> outside/link_target
    "linkdir_target/ms2": [9],  # managed ms2 at <warehouse>/linkdir/ms2, linkdir -> outside
    "inner_target": [10],  # linked from inside managed mi's own directory
}

SPARK_SCRIPT = r'''
import inspect, json, os, sys
from collectors.spark_session import spark_session

conf, paths = json.loads(sys.argv[1]), json.loads(sys.argv[2])
warehouse, outside = paths["warehouse"], paths["outside"]
spark = spark_session("local[1]", conf)
out = {}
SCENARIOS = []


class StepFailed(Exception):
    """A statement of a scenario failed: (the statement, its error)."""


def sql(rec, statement):
    """Run one statement of a scenario (its rows as lists); a failure ends the scenario."""
    try:
        rows = [list(r) for r in spark.sql(statement).collect()]
    except Exception as error:
        raise StepFailed(statement, " ".join(str(error).split())[:1200]) from None
    rec["done"].append(statement)
    return rows


def described(rec, what, *keys):
    """Fields of DESCRIBE FORMATTED (one statement): the value of one key, or a list."""
    rows = {r[0]: r[1] for r in reversed(sql(rec, f"DESCRIBE FORMATTED {what}"))}
    values = [rows.get(key) for key in keys]
    return values[0] if len(values) == 1 else values


def tables(rec, database="default"):
    return sorted(r[1] for r in sql(rec, f"SHOW TABLES IN {database}"))


def data_files(path):
    """The data files under a directory (relative paths; no _SUCCESS, no .crc)."""
    found = []
    for parent, _, names in os.walk(path):
        found += [
            os.path.relpath(os.path.join(parent, n), path)
            for n in names
            if not n.startswith(("_", "."))
        ]
    return sorted(found)


def W(*parts):
    return os.path.join(warehouse, *parts)


def O(*parts):
    return os.path.join(outside, *parts)


def scenario(function):
    SCENARIOS.append(function)
    return function


def advance(rec, steps):
    """Run a scenario's next part; its first failing statement ends it (rec["failed"])."""
    try:
        next(steps)
    except StopIteration:
        pass
    except StepFailed as failed:
        rec["failed"] = list(failed.args)


# 1. a managed table's directory is made by create_table: INSERT, then SELECT
@scenario
def insert(rec):
    sql(rec, "CREATE TABLE t (id INT) STORED AS PARQUET")
    rec["type"], rec["location"] = described(rec, "t", "Type", "Location")
    rec["dir_after_create"] = os.path.isdir(W("t"))
    sql(rec, "INSERT INTO t VALUES (1), (2)")
    rec["rows"] = sql(rec, "SELECT id FROM t ORDER BY id")
    rec["files"] = data_files(W("t"))
    yield


@scenario
def partitioned(rec):
    sql(rec, "CREATE TABLE p (id INT, v STRING) PARTITIONED BY (k STRING) STORED AS PARQUET")
    rec["dir_after_create"] = os.path.isdir(W("p"))
    sql(
        rec,
        "INSERT INTO p PARTITION (k) "
        "SELECT CAST(id AS INT), 'x', CAST(id % 2 AS STRING) FROM range(4)",
    )
    rec["partitions"] = sql(rec, "SHOW PARTITIONS p")
    rec["rows"] = sql(rec, "SELECT k, count(*) FROM p GROUP BY k ORDER BY k")
    rec["files"] = data_files(W("p"))
    yield


# 2. Hive CTAS
@scenario
def ctas(rec):
    sql(
        rec,
        "CREATE TABLE c STORED AS PARQUET AS "
        "SELECT CAST(id AS INT) AS id, CAST(id * 10 AS STRING) AS s FROM range(3)",
    )
    rec["type"] = described(rec, "c", "Type")
    rec["rows"] = sql(rec, "SELECT id, s FROM c ORDER BY id")
    rec["files"] = data_files(W("c"))
    yield


# 3. ALTER TABLE RENAME of managed tables at their default location
@scenario
def rename(rec):
    sql(rec, "CREATE TABLE r (id INT) STORED AS PARQUET")
    sql(rec, "INSERT INTO r VALUES (1), (2)")
    sql(rec, "ALTER TABLE r RENAME TO r3")
    rec["location"] = described(rec, "r3", "Location")
    rec["old_dir"] = os.path.isdir(W("r"))
    rec["new_files"] = data_files(W("r3"))
    rec["rows"] = sql(rec, "SELECT id FROM r3 ORDER BY id")
    rec["tables"] = tables(rec)
    yield


@scenario
def rename_then_insert(rec):
    sql(rec, "CREATE TABLE ri (id INT) STORED AS PARQUET")
    sql(rec, "INSERT INTO ri VALUES (1)")
    sql(rec, "ALTER TABLE ri RENAME TO ri3")
    rec["files_before"] = data_files(W("ri3"))
    sql(rec, "INSERT INTO ri3 VALUES (2)")
    rec["files_after"] = data_files(W("ri3"))
    rec["old_dir"] = os.path.isdir(W("ri"))
    rec["rows"] = sql(rec, "SELECT id FROM ri3 ORDER BY id")
    yield


@scenario
def rename_reuses_name(rec):
    sql(rec, "CREATE TABLE rr (id INT) STORED AS PARQUET")
    sql(rec, "INSERT INTO rr VALUES (1), (2)")
    sql(rec, "ALTER TABLE rr RENAME TO rr3")
    sql(rec, "CREATE TABLE rr (id INT) STORED AS PARQUET")
    rec["location"] = described(rec, "rr", "Location")
    sql(rec, "INSERT INTO rr VALUES (9)")
    rec["rows"] = sql(rec, "SELECT id FROM rr ORDER BY id")
    rec["renamed_rows"] = sql(rec, "SELECT id FROM rr3 ORDER BY id")
    rec["files"] = data_files(W("rr"))
    rec["renamed_files"] = data_files(W("rr3"))
    yield


@scenario
def rename_partitioned(rec):
    sql(rec, "CREATE TABLE rp (id INT) PARTITIONED BY (k STRING) STORED AS PARQUET")
    sql(
        rec,
        "INSERT INTO rp PARTITION (k) SELECT CAST(id AS INT), CAST(id % 3 AS STRING) FROM range(6)",
    )
    sql(rec, "ALTER TABLE rp RENAME TO rp3")
    rec["location"] = described(rec, "rp3", "Location")
    rec["partition_locations"] = {
        k: described(rec, f"rp3 PARTITION (k='{k}')", "Location") for k in ("0", "1", "2")
    }
    rec["old_dir"] = os.path.isdir(W("rp"))
    rec["new_files"] = data_files(W("rp3"))
    rec["rows"] = sql(rec, "SELECT k, count(*) FROM rp3 GROUP BY k ORDER BY k")
    rec["ids"] = sql(rec, "SELECT id FROM rp3 ORDER BY id")
    yield


@scenario
def rename_own_location(rec):
    sql(rec, "CREATE TABLE ro (id BIGINT) STORED AS PARQUET")
    sql(rec, f"ALTER TABLE ro SET LOCATION '{O('ro_data')}'")
    sql(rec, "ALTER TABLE ro RENAME TO ro3")
    rec["type"], rec["location"] = described(rec, "ro3", "Type", "Location")
    rec["files"] = data_files(O("ro_data"))
    rec["rows"] = sql(rec, "SELECT id FROM ro3")
    yield


# 4. DROP TABLE. Every scenario's tables are made before the first DROP (at each `yield`):
# no table is created after a DROP but by create_after_drop, as SQLite gives a new table
# the id of the table last dropped


@scenario
def drop(rec):
    sql(rec, "CREATE TABLE d (id INT) STORED AS PARQUET")
    sql(rec, "INSERT INTO d VALUES (1)")
    rec["files_before"] = data_files(W("d"))
    yield
    sql(rec, "DROP TABLE d")
    rec["dir_after"] = os.path.isdir(W("d"))
    rec["tables"] = tables(rec)


@scenario
def drop_in_database(rec):
    sql(rec, "CREATE DATABASE dd")
    rec["database_location"] = [
        r[1] for r in sql(rec, "DESCRIBE DATABASE dd") if r[0] == "Location"
    ]
    sql(rec, "CREATE TABLE dd.t (id INT) STORED AS PARQUET")
    rec["location"] = described(rec, "dd.t", "Location")
    sql(rec, "INSERT INTO dd.t VALUES (1)")
    rec["files_before"] = data_files(W("dd.db", "t"))
    yield
    sql(rec, "DROP TABLE dd.t")
    rec["dir_after"] = os.path.isdir(W("dd.db", "t"))
    rec["tables"] = tables(rec, "dd")


@scenario
def drop_in_database_elsewhere(rec):
    sql(rec, f"CREATE DATABASE de LOCATION '{O('de_db')}'")
    sql(rec, "CREATE TABLE de.t (id INT) STORED AS PARQUET")
    rec["location"] = described(rec, "de.t", "Location")
    sql(rec, "INSERT INTO de.t VALUES (1)")
    rec["files_before"] = data_files(O("de_db", "t"))
    yield
    sql(rec, "DROP TABLE de.t")
    rec["dir_after"] = os.path.isdir(O("de_db", "t"))
    rec["tables"] = tables(rec, "de")


@scenario
def drop_external(rec):
    sql(rec, f"CREATE TABLE el (id BIGINT) STORED AS PARQUET LOCATION '{O('el_files')}'")
    sql(rec, f"CREATE EXTERNAL TABLE ee (id BIGINT) STORED AS PARQUET LOCATION '{O('ee_files')}'")
    rec["types"] = [described(rec, "el", "Type"), described(rec, "ee", "Type")]
    rec["rows"] = [sql(rec, f"SELECT id FROM {t} ORDER BY id") for t in ("el", "ee")]
    yield
    sql(rec, "DROP TABLE el")
    sql(rec, "DROP TABLE ee")
    rec["tables"] = tables(rec)


# a managed table whose location escapes the warehouse: with `..` as Spark sends it (Spark
# may normalise the path), and as is through the Thrift API
@scenario
def drop_dotdot(rec):
    sql(rec, "CREATE TABLE md (id BIGINT) STORED AS PARQUET")
    sent = f"{warehouse}/../outside/dotdot_spark"
    sql(rec, f"ALTER TABLE md SET LOCATION '{sent}'")
    rec["type"], rec["location"] = described(rec, "md", "Type", "Location")
    rec["rows"] = sql(rec, "SELECT id FROM md")
    yield
    sql(rec, "DROP TABLE md")
    rec["tables"] = tables(rec)


@scenario
def drop_dotdot_thrift(rec):
    from hive_metastore import ThriftHiveMetastore
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    sql(rec, "CREATE TABLE mdt (id BIGINT) STORED AS PARQUET")
    port = int(conf["spark.hadoop.hive.metastore.uris"].rsplit(":", 1)[1])
    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", port))
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
    transport.open()
    sent = rec["sent"] = f"file:{warehouse}/../outside/dotdot_thrift"
    try:
        table = client.get_table("default", "mdt")
        table.sd.location = sent
        client.alter_table("default", "mdt", table)
    except Exception as error:
        raise StepFailed(f"(Thrift) alter_table mdt location {sent}", repr(error)[:1200])
    finally:
        transport.close()
    sql(rec, "REFRESH TABLE mdt")
    rec["type"], rec["location"] = described(rec, "mdt", "Type", "Location")
    rec["rows"] = sql(rec, "SELECT id FROM mdt")
    yield
    sql(rec, "DROP TABLE mdt")
    rec["tables"] = tables(rec)


# managed tables whose directory is reached through a link inside the warehouse, and one
# whose own directory holds a link to a directory outside
@scenario
def drop_symlinks(rec):
    sql(rec, "CREATE TABLE ms (id BIGINT) STORED AS PARQUET")
    sql(rec, f"ALTER TABLE ms SET LOCATION '{W('linked')}'")
    sql(rec, "CREATE TABLE ms2 (id BIGINT) STORED AS PARQUET")
    sql(rec, f"ALTER TABLE ms2 SET LOCATION '{W('linkdir', 'ms2')}'")
    rec["types"] = [described(rec, "ms", "Type"), described(rec, "ms2", "Type")]
    rec["rows"] = [sql(rec, "SELECT id FROM ms"), sql(rec, "SELECT id FROM ms2")]
    yield
    sql(rec, "DROP TABLE ms")
    sql(rec, "DROP TABLE ms2")
    rec["tables"] = tables(rec)


@scenario
def drop_link_inside(rec):
    sql(rec, "CREATE TABLE mi (id BIGINT) STORED AS PARQUET")
    sql(rec, "INSERT INTO mi VALUES (1)")
    yield
    os.symlink(O("inner_target"), W("mi", "escape"))
    sql(rec, "DROP TABLE mi")
    rec["dir_after"] = os.path.lexists(W("mi"))
    rec["tables"] = tables(rec)


# last: the one table created after a DROP, with (on SQLite) the id of the table dropped
@scenario
def create_after_drop(rec):
    sql(rec, "CREATE TABLE ga (a INT) STORED AS PARQUET")
    rec["dropped_location"] = described(rec, "ga", "Location")
    yield
    sql(rec, "DROP TABLE ga")
    sql(rec, "CREATE TABLE gb (b STRING) STORED AS PARQUET")
    rec["location"] = described(rec, "gb", "Location")
    rec["columns"] = [r[0] for r in sql(rec, "DESCRIBE gb")]


started = []
for function in SCENARIOS:
    rec = out[function.__name__] = {"done": []}
    steps = function(rec)
    assert inspect.isgenerator(steps), function.__name__
    advance(rec, steps)
    started.append((rec, steps))
for rec, steps in started:
    if "failed" not in rec:
        advance(rec, steps)

spark.stop()
print("RESULT " + json.dumps(out, default=str))
'''


def run_scenarios(served: Served) -> dict[str, Any]:
    """Every scenario of SPARK_SCRIPT run by one PySpark with Hive support: what each saw."""
    served.warehouse.mkdir(parents=True, exist_ok=True)
    for directory, ids in OUTSIDE_FILES.items():
        write_ids(served.outside / directory, ids)
    (served.warehouse / "linked").symlink_to(served.outside / "link_target")
    (served.warehouse / "linkdir").symlink_to(served.outside / "linkdir_target")
    conf = {
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": f"thrift://127.0.0.1:{served.port}",
        "spark.sql.warehouse.dir": str(served.warehouse),
        "spark.hadoop.hive.exec.dynamic.partition.mode": "nonstrict",
    }
    paths = {"warehouse": str(served.warehouse), "outside": str(served.outside)}
    ran = subprocess.run(
        [sys.executable, "-c", SPARK_SCRIPT, json.dumps(conf), json.dumps(paths)],
        cwd=served.root,
        env=spark_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    daemon_log = served.log.read_text(errors="replace")
    failed = ran.stderr[-4000:] + "\n--- daemon log:\n" + daemon_log[-4000:]
    assert ran.returncode == 0, failed
    assert "RESULT " in ran.stdout, failed
    result: dict[str, Any] = json.loads(ran.stdout.split("RESULT ", 1)[1])
    return result


def completed(result: dict[str, Any], name: str) -> dict[str, Any]:
    """A scenario's record, asserting every statement of it succeeded."""
    rec: dict[str, Any] = result[name]
    if "failed" in rec:
        statement, error = rec["failed"]
        pytest.fail(f"{name}: `{statement}` failed: {error}\n(after: {rec['done']})")
    return rec


def at(path: Path) -> str:
    """The location Spark shows for a local path."""
    return f"file:{path}"


def test_insert_into_a_managed_table_reads_back(served: Served, spark_ddl: dict[str, Any]) -> None:
    rec = completed(spark_ddl, "insert")
    assert rec["type"] == "MANAGED", rec
    assert rec["location"] == at(served.warehouse / "t"), rec
    assert rec["dir_after_create"], "create_table made no directory for managed table t"
    assert rec["rows"] == [[1], [2]], rec
    assert rec["files"], f"no data files under {served.warehouse / 't'}"


def test_dynamic_partition_insert_into_a_managed_table(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "partitioned")
    assert rec["dir_after_create"], "create_table made no directory for managed table p"
    assert rec["partitions"] == [["k=0"], ["k=1"]], rec
    assert rec["rows"] == [["0", 2], ["1", 2]], rec
    assert {f.split("/")[0] for f in rec["files"]} == {"k=0", "k=1"}, rec["files"]


def test_ctas_makes_a_readable_managed_table(served: Served, spark_ddl: dict[str, Any]) -> None:
    rec = completed(spark_ddl, "ctas")
    assert rec["type"] == "MANAGED", rec
    assert rec["rows"] == [[0, "0"], [1, "10"], [2, "20"]], rec
    assert rec["files"], f"no data files under {served.warehouse / 'c'}"


def test_rename_moves_a_managed_tables_directory(served: Served, spark_ddl: dict[str, Any]) -> None:
    rec = completed(spark_ddl, "rename")
    assert rec["location"] == at(served.warehouse / "r3"), rec
    assert not rec["old_dir"], f"{served.warehouse / 'r'} is still there after the rename"
    assert rec["new_files"], f"no data files under {served.warehouse / 'r3'} after the rename"
    assert rec["rows"] == [[1], [2]], rec
    assert "r3" in rec["tables"], rec["tables"]
    assert "r" not in rec["tables"], rec["tables"]


def test_insert_after_rename_lands_in_the_new_directory(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "rename_then_insert")
    assert len(rec["files_before"]) == 1, rec
    assert len(rec["files_after"]) == 2, f"the INSERT after the rename wrote elsewhere: {rec}"
    assert not rec["old_dir"], f"{served.warehouse / 'ri'} exists after the rename and INSERT"
    assert rec["rows"] == [[1], [2]], rec


def test_the_old_name_is_free_after_rename(served: Served, spark_ddl: dict[str, Any]) -> None:
    rec = completed(spark_ddl, "rename_reuses_name")
    assert rec["location"] == at(served.warehouse / "rr"), rec
    assert rec["rows"] == [[9]], rec
    assert rec["renamed_rows"] == [[1], [2]], rec
    assert len(rec["files"]) == 1, rec
    assert len(rec["renamed_files"]) == 1, rec


def test_rename_moves_a_managed_tables_partitions(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "rename_partitioned")
    assert rec["location"] == at(served.warehouse / "rp3"), rec
    assert rec["partition_locations"] == {
        k: at(served.warehouse / "rp3" / f"k={k}") for k in ("0", "1", "2")
    }, rec["partition_locations"]
    assert not rec["old_dir"], f"{served.warehouse / 'rp'} is still there after the rename"
    assert {f.split("/")[0] for f in rec["new_files"]} == {"k=0", "k=1", "k=2"}, rec
    assert rec["rows"] == [["0", 2], ["1", 2], ["2", 2]], rec
    assert rec["ids"] == [[i] for i in range(6)], rec


def test_rename_keeps_a_managed_table_at_a_location_of_its_own(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "rename_own_location")
    assert rec["type"] == "MANAGED", rec
    assert rec["location"] == at(served.outside / "ro_data"), rec
    assert rec["files"] == ["part-0.parquet"], rec
    assert rec["rows"] == [[11]], rec
    assert not (served.warehouse / "ro3").exists(), "the rename made <warehouse>/ro3"


def test_drop_deletes_a_managed_tables_directory(served: Served, spark_ddl: dict[str, Any]) -> None:
    rec = completed(spark_ddl, "drop")
    assert rec["files_before"], rec
    assert "d" not in rec["tables"], rec["tables"]
    assert not rec["dir_after"], f"DROP TABLE d left {served.warehouse / 'd'}"


def test_drop_in_a_created_database_deletes_the_data(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "drop_in_database")
    assert rec["database_location"] == [at(served.warehouse / "dd.db")], rec
    assert rec["location"] == at(served.warehouse / "dd.db" / "t"), rec
    assert rec["files_before"], rec
    assert rec["tables"] == [], rec
    assert not rec["dir_after"], f"DROP TABLE dd.t left {served.warehouse / 'dd.db' / 't'}"


def test_drop_in_a_database_located_elsewhere_deletes_the_data(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    """The database's own directory is a data root as the warehouse is."""
    rec = completed(spark_ddl, "drop_in_database_elsewhere")
    assert rec["location"] == at(served.outside / "de_db" / "t"), rec
    assert rec["files_before"], rec
    assert rec["tables"] == [], rec
    assert not rec["dir_after"], f"DROP TABLE de.t left {served.outside / 'de_db' / 't'}"


def test_drop_of_external_tables_keeps_their_files(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "drop_external")
    assert rec["types"] == ["EXTERNAL", "EXTERNAL"], rec
    assert rec["rows"] == [[[1], [2], [3]], [[4], [5]]], rec
    assert not {"el", "ee"} & set(rec["tables"]), rec["tables"]
    for directory in ("el_files", "ee_files"):
        assert (served.outside / directory / "part-0.parquet").is_file(), directory


def test_drop_keeps_files_of_a_location_escaping_the_warehouse_with_dotdot(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    for name, table, directory in (
        ("drop_dotdot", "md", "dotdot_spark"),
        ("drop_dotdot_thrift", "mdt", "dotdot_thrift"),
    ):
        rec = completed(spark_ddl, name)
        assert rec["type"] == "MANAGED", rec
        assert rec["rows"] == [[OUTSIDE_FILES[directory][0]]], rec
        assert table not in rec["tables"], rec["tables"]
        assert (served.outside / directory / "part-0.parquet").is_file(), (
            f"DROP of managed {name} at {rec['location']} deleted files outside the warehouse"
        )
    assert ".." in spark_ddl["drop_dotdot_thrift"]["sent"]


def test_drop_keeps_files_reached_through_symbolic_links(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    """Managed tables at <warehouse>/linked (a link to a directory outside) and at
    <warehouse>/linkdir/ms2 (linkdir a link to a directory outside)."""
    rec = completed(spark_ddl, "drop_symlinks")
    assert rec["types"] == ["MANAGED", "MANAGED"], rec
    assert rec["rows"] == [[[8]], [[9]]], rec
    assert not {"ms", "ms2"} & set(rec["tables"]), rec["tables"]
    for directory in ("link_target", "linkdir_target/ms2"):
        assert (served.outside / directory / "part-0.parquet").is_file(), (
            f"a DROP deleted {served.outside / directory} through a link in the warehouse"
        )


def test_drop_deletes_a_link_inside_a_managed_tables_directory_not_its_target(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    rec = completed(spark_ddl, "drop_link_inside")
    assert "mi" not in rec["tables"], rec["tables"]
    assert (served.outside / "inner_target" / "part-0.parquet").is_file(), (
        f"DROP TABLE mi deleted {served.outside / 'inner_target'} through <warehouse>/mi/escape"
    )
    assert not rec["dir_after"], f"DROP TABLE mi left {served.warehouse / 'mi'}"


def test_a_table_created_after_a_drop_is_served_as_itself(
    served: Served, spark_ddl: dict[str, Any]
) -> None:
    """On SQLite a new table gets the id of the table dropped last: the daemon must serve
    the new table (its location and columns), not what it kept of the dropped one."""
    rec = completed(spark_ddl, "create_after_drop")
    assert rec["dropped_location"] == at(served.warehouse / "ga"), rec
    assert rec["location"] == at(served.warehouse / "gb"), (
        f"gb, created after DROP TABLE ga, is served at {rec['location']}"
    )
    assert rec["columns"] == ["b"], f"gb is served with the columns {rec['columns']}"
