"""A real Hive 2.3 metastore, for side-by-side benchmarks: `real_hive(...)` starts
`org.apache.hadoop.hive.metastore.HiveMetaStore -p PORT` from pyspark's jars on Java 17, on
its own PostgreSQL database, listening on 127.0.0.1 only, and yields its Thrift port.

- The metastore's tables are created by DataNucleus (`datanucleus.schema.autoCreateAll`);
  Hive 2.3 reads and writes them through direct SQL ("underlying DB is POSTGRES").
- The transaction tables behind lock()/check_lock()/unlock() (TXNS, HIVE_LOCKS, NEXT_LOCK_ID,
  ...) are not among DataNucleus's models, and Hive's own test helper
  (`TxnDbUtil.prepDb`, run under `hive.in.test`) speaks Derby (`varchar(2048) for bit
  data`), which PostgreSQL rejects. They are created here beforehand, in PostgreSQL's
  dialect, in the shape `TxnDbUtil.prepDb` of hive-metastore-2.3.10 gives them (its bit-data
  columns as bytea), unquoted, hence lower case: the spelling of TxnHandler's unquoted SQL.
- Hive 2.3's metastore has no listen-address setting: `HiveMetaStore.startMetaStore` asks
  `org.apache.hadoop.hive.common.auth.HiveAuthUtils.getServerSocket(null, port)` for a
  wildcard socket. A replacement `HiveAuthUtils`, compiled here with javac and placed on the
  classpath before pyspark's jars (so the JVM loads it instead of hive-common's), binds the
  loopback address instead; it offers no TLS. After start-up, the listening sockets of the
  port are read from /proc/net/tcp{,6} and any non-loopback one stops the metastore.

Usage: python benchmarks/real_hive.py [--db hive_check]
       (starts one, creates an Iceberg table through pyiceberg's HiveCatalog, appends to it
       through the metastore's lock API, checks the rows, and stops it)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import psycopg2


def _pyspark_jars() -> Path:
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise RuntimeError("pyspark is not installed")
    return Path(spec.origin).parent / "jars"


JARS = _pyspark_jars()
POSTGRES_JAR = Path("/usr/share/java/postgresql.jar")
MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"

# The options Spark's launcher passes to Java 17 (JavaModuleOptions in Spark's launcher).
ADD_OPENS = [
    "java.base/java.lang",
    "java.base/java.lang.invoke",
    "java.base/java.lang.reflect",
    "java.base/java.io",
    "java.base/java.net",
    "java.base/java.nio",
    "java.base/java.util",
    "java.base/java.util.concurrent",
    "java.base/java.util.concurrent.atomic",
    "java.base/sun.nio.ch",
    "java.base/sun.nio.cs",
    "java.base/sun.security.action",
    "java.base/sun.util.calendar",
]

# HiveMetaStore.startMetaStore binds HiveAuthUtils.getServerSocket(null, port): this class,
# earlier on the classpath, replaces hive-common's and binds the loopback address. Its other
# methods keep their signatures (plain sockets for clients; no TLS).
LOOPBACK_SHIM = """\
package org.apache.hadoop.hive.common.auth;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;

/** statlas benchmarks: Hive's server sockets on loopback only. */
public class HiveAuthUtils {
  private static TTransportException noTls() {
    return new TTransportException("TLS is not available: loopback-only benchmark build");
  }

  public static TTransport getSocketTransport(String host, int port, int timeout)
      throws TTransportException {
    return new TSocket(host, port, timeout);
  }

  public static TTransport getSSLSocket(String host, int port, int timeout)
      throws TTransportException {
    throw noTls();
  }

  public static TTransport getSSLSocket(String host, int port, int timeout,
      String trustStore, String password) throws TTransportException {
    throw noTls();
  }

  public static TTransport getSSLSocket(String host, int port, int socketTimeout,
      int connectionTimeout, String trustStore, String password) throws TTransportException {
    throw noTls();
  }

  public static TServerSocket getServerSocket(String host, int port)
      throws TTransportException {
    InetAddress address = InetAddress.getLoopbackAddress();
    System.err.println("statlas loopback shim: Thrift server socket on "
        + address.getHostAddress() + ":" + port + " (asked for host " + host + ")");
    return new TServerSocket(new InetSocketAddress(address, port));
  }

  public static TServerSocket getServerSSLSocket(String host, int port, String keyStore,
      String password, List<String> blacklist) throws TTransportException {
    throw noTls();
  }
}
"""

# Hive 2.3's transaction tables, as TxnDbUtil.prepDb (hive-metastore-2.3.10) creates them,
# in PostgreSQL's dialect (Derby's `varchar(2048) for bit data` is bytea).
TXN_TABLES = [
    "CREATE TABLE TXNS (TXN_ID bigint PRIMARY KEY, TXN_STATE char(1) NOT NULL,"
    " TXN_STARTED bigint NOT NULL, TXN_LAST_HEARTBEAT bigint NOT NULL,"
    " TXN_USER varchar(128) NOT NULL, TXN_HOST varchar(128) NOT NULL)",
    "CREATE TABLE TXN_COMPONENTS (TC_TXNID bigint REFERENCES TXNS (TXN_ID),"
    " TC_DATABASE varchar(128) NOT NULL, TC_TABLE varchar(128), TC_PARTITION varchar(767),"
    " TC_OPERATION_TYPE char(1) NOT NULL)",
    "CREATE TABLE COMPLETED_TXN_COMPONENTS (CTC_TXNID bigint,"
    " CTC_DATABASE varchar(128) NOT NULL, CTC_TABLE varchar(128), CTC_PARTITION varchar(767))",
    "CREATE TABLE NEXT_TXN_ID (NTXN_NEXT bigint NOT NULL)",
    "INSERT INTO NEXT_TXN_ID VALUES (1)",
    "CREATE TABLE HIVE_LOCKS (HL_LOCK_EXT_ID bigint NOT NULL, HL_LOCK_INT_ID bigint NOT NULL,"
    " HL_TXNID bigint, HL_DB varchar(128) NOT NULL, HL_TABLE varchar(128),"
    " HL_PARTITION varchar(767), HL_LOCK_STATE char(1) NOT NULL,"
    " HL_LOCK_TYPE char(1) NOT NULL, HL_LAST_HEARTBEAT bigint NOT NULL,"
    " HL_ACQUIRED_AT bigint, HL_USER varchar(128) NOT NULL, HL_HOST varchar(128) NOT NULL,"
    " HL_HEARTBEAT_COUNT integer, HL_AGENT_INFO varchar(128), HL_BLOCKEDBY_EXT_ID bigint,"
    " HL_BLOCKEDBY_INT_ID bigint, PRIMARY KEY (HL_LOCK_EXT_ID, HL_LOCK_INT_ID))",
    "CREATE INDEX HL_TXNID_INDEX ON HIVE_LOCKS (HL_TXNID)",
    "CREATE TABLE NEXT_LOCK_ID (NL_NEXT bigint NOT NULL)",
    "INSERT INTO NEXT_LOCK_ID VALUES (1)",
    "CREATE TABLE COMPACTION_QUEUE (CQ_ID bigint PRIMARY KEY,"
    " CQ_DATABASE varchar(128) NOT NULL, CQ_TABLE varchar(128) NOT NULL,"
    " CQ_PARTITION varchar(767), CQ_STATE char(1) NOT NULL, CQ_TYPE char(1) NOT NULL,"
    " CQ_TBLPROPERTIES varchar(2048), CQ_WORKER_ID varchar(128), CQ_START bigint,"
    " CQ_RUN_AS varchar(128), CQ_HIGHEST_TXN_ID bigint, CQ_META_INFO bytea,"
    " CQ_HADOOP_JOB_ID varchar(32))",
    "CREATE TABLE NEXT_COMPACTION_QUEUE_ID (NCQ_NEXT bigint NOT NULL)",
    "INSERT INTO NEXT_COMPACTION_QUEUE_ID VALUES (1)",
    "CREATE TABLE COMPLETED_COMPACTIONS (CC_ID bigint PRIMARY KEY,"
    " CC_DATABASE varchar(128) NOT NULL, CC_TABLE varchar(128) NOT NULL,"
    " CC_PARTITION varchar(767), CC_STATE char(1) NOT NULL, CC_TYPE char(1) NOT NULL,"
    " CC_TBLPROPERTIES varchar(2048), CC_WORKER_ID varchar(128), CC_START bigint,"
    " CC_END bigint, CC_RUN_AS varchar(128), CC_HIGHEST_TXN_ID bigint, CC_META_INFO bytea,"
    " CC_HADOOP_JOB_ID varchar(32))",
    "CREATE TABLE AUX_TABLE (MT_KEY1 varchar(128) NOT NULL, MT_KEY2 bigint NOT NULL,"
    " MT_COMMENT varchar(255), PRIMARY KEY (MT_KEY1, MT_KEY2))",
    "CREATE TABLE WRITE_SET (WS_DATABASE varchar(128) NOT NULL,"
    " WS_TABLE varchar(128) NOT NULL, WS_PARTITION varchar(767), WS_TXNID bigint NOT NULL,"
    " WS_COMMIT_ID bigint NOT NULL, WS_OPERATION_TYPE char(1) NOT NULL)",
]


# Hive's own log4j2 settings write to /tmp/$USER/hive.log, asynchronously through a class
# pyspark lacks: these, found first on the classpath, write to the process's stderr (the log
# file of real_hive), at `root` level, keeping the start-up facts (direct SQL, the port).
LOG4J2 = """\
status = WARN
name = RealHiveBenchmark
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %5p [%t] %c{2}: %m%n
rootLogger.level = {root}
rootLogger.appenderRef.root.ref = console
loggers = directsql, datanucleus
logger.directsql.name = org.apache.hadoop.hive.metastore.MetaStoreDirectSql
logger.directsql.level = INFO
logger.datanucleus.name = DataNucleus
logger.datanucleus.level = ERROR
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def recreate_database(db: str, host: str, port: int, user: str) -> None:
    """Drop `db` (its sessions ended) and create it empty."""
    admin = psycopg2.connect(host=host, port=port, user=user, dbname="postgres")
    admin.autocommit = True
    try:
        with admin.cursor() as cur:
            cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            cur.execute(f'CREATE DATABASE "{db}"')
    finally:
        admin.close()


def fresh_database(db: str, host: str, port: int, user: str) -> None:
    """Drop and create `db`, then create Hive 2.3's transaction tables in it."""
    recreate_database(db, host, port, user)
    conn = psycopg2.connect(host=host, port=port, user=user, dbname=db)
    try:
        with conn, conn.cursor() as cur:
            for statement in TXN_TABLES:
                cur.execute(statement)
    finally:
        conn.close()


def hive_site(settings: dict[str, str]) -> str:
    properties = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
        for k, v in settings.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{properties}</configuration>\n'


def compile_shim(directory: Path) -> Path:
    """javac the loopback HiveAuthUtils into directory/classes; returns that directory."""
    source = directory / "src" / "org/apache/hadoop/hive/common/auth/HiveAuthUtils.java"
    source.parent.mkdir(parents=True)
    source.write_text(LOOPBACK_SHIM)
    classes = directory / "classes"
    classes.mkdir()
    classpath = f"{JARS / 'libthrift-0.16.0.jar'}:{JARS / 'slf4j-api-2.0.17.jar'}"
    done = subprocess.run(
        ["javac", "-nowarn", "-cp", classpath, "-d", str(classes), str(source)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"javac failed:\n{done.stdout}{done.stderr}")
    return classes


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as in /proc/net/tcp{,6}) of sockets listening on `port`."""
    found = set()
    for name in ("tcp", "tcp6"):
        path = Path("/proc/net") / name
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.add(address)
    return found


LOOPBACK_HEX = {
    "0100007F",  # 127.0.0.1
    "00000000000000000000000001000000",  # ::1
    "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1
}


@contextlib.contextmanager
def real_hive(
    db: str = "hive_bench",
    *,
    pg_host: str = "127.0.0.1",
    pg_port: int = 5432,
    pg_user: str = "postgres",
    port: int | None = None,
    fresh: bool = True,
    heap: str = "2g",
    log_level: str = "WARN",
    workdir: Path | None = None,
    startup_timeout: float = 300.0,
) -> Iterator[int]:
    """Start a real Hive 2.3 metastore on PostgreSQL database `db` (dropped and re-created
    when `fresh`), listening on 127.0.0.1; yield its Thrift port; stop it on exit.

    Its configuration, loopback shim, warehouse and log (`hive-metastore.log`, at
    `log_level`: Hive's INFO writes two lines per call) live in `workdir` (a temporary
    directory, removed on exit, when not given)."""
    for needed in (JARS / "hive-metastore-2.3.10.jar", POSTGRES_JAR):
        if not needed.exists():
            hint = " (apt-get install -y libpostgresql-jdbc-java)" if needed == POSTGRES_JAR else ""
            raise RuntimeError(f"{needed} is missing{hint}")
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="real-hive-")))
        workdir.mkdir(parents=True, exist_ok=True)
        if fresh:
            fresh_database(db, pg_host, pg_port, pg_user)
        port = port or free_port()
        conf = workdir / "conf"
        conf.mkdir(exist_ok=True)
        warehouse = workdir / "warehouse"
        warehouse.mkdir(exist_ok=True)
        (conf / "hive-site.xml").write_text(
            hive_site(
                {
                    "javax.jdo.option.ConnectionURL": (
                        f"jdbc:postgresql://{pg_host}:{pg_port}/{db}"
                    ),
                    "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
                    "javax.jdo.option.ConnectionUserName": pg_user,
                    "javax.jdo.option.ConnectionPassword": "",
                    "datanucleus.schema.autoCreateAll": "true",
                    "hive.metastore.schema.verification": "false",
                    "datanucleus.connectionPoolingType": "HikariCP",
                    "hive.metastore.warehouse.dir": f"file://{warehouse}",
                    "hive.metastore.port": str(port),
                    "hive.async.log.enabled": "false",
                }
            )
        )
        (conf / "hive-log4j2.properties").write_text(LOG4J2.replace("{root}", log_level))
        shim_dir = workdir / f"shim-{port}"
        shutil.rmtree(shim_dir, ignore_errors=True)
        shim = compile_shim(shim_dir)
        # conf (hive-site.xml) and the shim come before every jar of pyspark's
        classpath = os.pathsep.join([str(conf), str(shim), f"{JARS}/*", str(POSTGRES_JAR)])
        command = [
            "java",
            f"-Xmx{heap}",
            "-Djava.net.preferIPv4Stack=true",
            f"-Dderby.system.home={workdir}",
            *[f"--add-opens={module}=ALL-UNNAMED" for module in ADD_OPENS],
            "-cp",
            classpath,
            MAIN_CLASS,
            "-p",
            str(port),
        ]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HIVE_", "HADOOP_"))}
        log_path = workdir / "hive-metastore.log"
        log = stack.enter_context(open(log_path, "wb"))
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=workdir, env=env
        )
        try:
            deadline = time.monotonic() + startup_timeout
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        tail = log_path.read_text(errors="replace")[-3000:]
                        raise RuntimeError(
                            f"the Hive metastore did not start (see {log_path}):\n{tail}"
                        ) from None
                    time.sleep(0.5)
            exposed = listening_addresses(port) - LOOPBACK_HEX
            if exposed:
                raise RuntimeError(f"the Hive metastore listens beyond loopback: {exposed}")
            yield port
        finally:
            if process.poll() is None:
                os.kill(process.pid, 15)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    os.kill(process.pid, 9)
                    process.wait(30)


def check(db: str) -> None:
    """Start one, append to an Iceberg table through pyiceberg's HiveCatalog (the lock API),
    count what it holds, and stop it."""
    import pyarrow as pa
    from pyiceberg.catalog.hive import HiveCatalog

    with tempfile.TemporaryDirectory(prefix="real-hive-check-") as directory:
        work = Path(directory)
        started = time.monotonic()
        with real_hive(db, workdir=work / "hive") as port:
            print(f"Hive metastore up on 127.0.0.1:{port} in {time.monotonic() - started:.0f} s")
            catalog = HiveCatalog(
                "hive", uri=f"thrift://127.0.0.1:{port}", warehouse=f"file://{work / 'lake'}"
            )
            catalog.create_namespace("check")
            rows = pa.table({"id": pa.array([1, 2, 3], pa.int64())})
            table = catalog.create_table("check.t", rows.schema)
            for _ in range(3):
                table.append(rows)  # lock, check_lock, alter_table, unlock
            table = catalog.load_table("check.t")
            count = table.scan().to_arrow().num_rows
            snapshots = len(table.metadata.snapshots)
            print(f"Iceberg table check.t: {snapshots} snapshots, {count} rows")
            if (snapshots, count) != (3, 9):
                raise SystemExit("the appends did not all land")
        print("the Hive metastore stopped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="hive_check", help="PostgreSQL database (re-created)")
    args = parser.parse_args()
    check(args.db)


if __name__ == "__main__":
    main()
