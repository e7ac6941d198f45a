"""What Kerberos costs on the Hive Metastore port: the same calls to two `statlas daemon`s
on one metastore, one without authentication (Hive's buffered transport) and one with
`--thrift-auth kerberos` (SASL GSSAPI, QOP authentication: Hive's default
hadoop.rpc.protection), in one run, in turns.

A real MIT KDC is started for the run (tests/support/kdc.py). The Kerberos connection is
negotiated by thrift_sasl and pure-sasl (the Python clients' stack), then its data phase is
read with the same C decoder as the plain connection (a framed transport: QOP
authentication's data frames are plain Thrift frames), so the two columns differ only by
what the server does. On a connection that stays open:

  (a) get_table, calls per second
  (b) get_partitions_by_filter, 10,000 partitions (`(dt) in (100 dates) and (region) in
      (100 regions)`, Spark's form), seconds per call decoded
  (c) a new connection: connect (and, with Kerberos, negotiate with a cached service
      ticket), one get_table, close

Medians over --runs runs, each measure on both daemons in turns (the plain one first in
even runs). Ratios are Kerberos over plain (1.10: 10% slower).

Usage: python benchmarks/hms_kerberos.py [--runs 9] [--calls 2000] [--backend postgres|sqlite]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hive_metastore import ttypes as hms
from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.hms import RawClient
from benchmarks.real_hive import recreate_database
from tests.support.hms_daemon import ThriftClient, hms_daemon
from tests.support.kdc import daemon_arguments, kdc
from tests.support.kerberos_client import KerberosThriftClient

SERVICE = "statlas/localhost"
DAYS, REGIONS = 100, 100


def raw_client_over(transport: Any) -> RawClient:
    client = RawClient.__new__(RawClient)
    client.transport = transport
    client.protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    client.seqid = 0
    return client


def plain(port: int) -> RawClient:
    return RawClient(port)


def kerberized(port: int, ccache: str) -> RawClient:
    negotiated = KerberosThriftClient(port, ccache)
    return raw_client_over(TTransport.TFramedTransport(negotiated.transport._trans))


def fill(port: int, root: Path) -> None:
    """The table `events` (dt x region, 10,000 partitions) through the plain daemon."""
    client = ThriftClient(port)
    columns = [hms.FieldSchema("id", "bigint", None)]
    keys = [hms.FieldSchema("dt", "string", None), hms.FieldSchema("region", "string", None)]
    sd = hms.StorageDescriptor(
        cols=columns,
        location=f"file:{root}",
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=hms.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
        ),
    )
    client.create_table(
        hms.Table(
            tableName="events",
            dbName="default",
            sd=sd,
            partitionKeys=keys,
            parameters={"EXTERNAL": "TRUE"},
            tableType="EXTERNAL_TABLE",
        )
    )
    for day in range(DAYS):
        batch = [
            hms.Partition(
                values=[f"2024-{day:03d}", f"r{region:03d}"],
                dbName="default",
                tableName="events",
                sd=hms.StorageDescriptor(
                    cols=columns,
                    location=f"file:{root}/dt=2024-{day:03d}/region=r{region:03d}",
                    inputFormat=sd.inputFormat,
                    outputFormat=sd.outputFormat,
                    serdeInfo=sd.serdeInfo,
                ),
            )
            for region in range(REGIONS)
        ]
        client.add_partitions(batch)
    client.close()


def filter_text() -> str:
    days = ", ".join(f'"2024-{d:03d}"' for d in range(DAYS))
    regions = ", ".join(f'"r{r:03d}"' for r in range(REGIONS))
    return f"(dt) in ({days}) and (region) in ({regions})"


def measures(calls: int) -> dict[str, Callable[[Callable[[], RawClient]], float]]:
    text = filter_text()

    def get_table(connect: Callable[[], RawClient]) -> float:
        client = connect()
        started = time.perf_counter()
        for _ in range(calls):
            client.call("get_table", dbname="default", tbl_name="events")
        elapsed = time.perf_counter() - started
        client.close()
        return calls / elapsed

    def by_filter(connect: Callable[[], RawClient]) -> float:
        client = connect()
        client.call("get_table", dbname="default", tbl_name="events")
        _first, decoded, found = client.call(
            "get_partitions_by_filter",
            db_name="default",
            tbl_name="events",
            filter=text,
            max_parts=-1,
        )
        assert len(found) == DAYS * REGIONS, len(found)
        client.close()
        return decoded

    def new_connection(connect: Callable[[], RawClient]) -> float:
        started = time.perf_counter()
        client = connect()
        client.call("get_table", dbname="default", tbl_name="events")
        client.close()
        return time.perf_counter() - started

    return {
        "(a) get_table, calls/s (higher is better)": get_table,
        "(b) get_partitions_by_filter, 10,000 partitions, s": by_filter,
        "(c) new connection + get_table, s": new_connection,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument(
        "--backend",
        choices=["postgres", "sqlite"],
        default="postgres",
        help="postgres: a new database statlas_kerberos_bench on 127.0.0.1:5432; sqlite: a file",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        db_url = f"sqlite:///{work / 'statlas.db'}"
        if args.backend == "postgres":
            recreate_database("statlas_kerberos_bench", "127.0.0.1", 5432, "postgres")
            db_url = "postgresql+psycopg2://postgres@127.0.0.1:5432/statlas_kerberos_bench"
        with kdc(work / "kdc") as realm:
            for name in (SERVICE, "bench"):
                realm.add_principal(name)
            os.environ["KRB5_CONFIG"] = str(realm.krb5_conf)
            ccache = f"FILE:{realm.kinit('bench')}"
            secured = daemon_arguments(f"{SERVICE}@{realm.realm}", realm.keytab(SERVICE))
            extra = {"KRB5_CONFIG": str(realm.krb5_conf)}
            with (
                hms_daemon(db_url, work / "plain", env_extra=extra) as (plain_port, _),
                hms_daemon(db_url, work / "kerberos", *secured, env_extra=extra) as (
                    kerberos_port,
                    _,
                ),
            ):
                fill(plain_port, work / "events")
                sides: dict[str, Callable[[], RawClient]] = {
                    "plain": lambda: plain(plain_port),
                    "kerberos": lambda: kerberized(kerberos_port, ccache),
                }
                report(run(sides, measures(args.calls), args.runs), args, db_url)


def run(
    sides: dict[str, Callable[[], RawClient]],
    timed: dict[str, Callable[[Callable[[], RawClient]], float]],
    runs: int,
) -> dict[str, dict[str, list[float]]]:
    figures: dict[str, dict[str, list[float]]] = {m: {s: [] for s in sides} for m in timed}
    for measure in timed.values():  # warm-up: caches, tickets, the daemons' first calls
        for connect in sides.values():
            measure(connect)
    for number in range(runs):
        order = list(sides) if number % 2 == 0 else list(reversed(sides))
        for name, measure in timed.items():
            for side in order:
                figures[name][side].append(measure(sides[side]))
    return figures


def report(figures: dict[str, dict[str, list[float]]], args: argparse.Namespace, db: str) -> None:
    backend = db.split(":", 1)[0].split("+")[0]
    print(f"Kerberos on the Hive Metastore port: {backend}, medians of {args.runs} runs")
    print()
    print("| measure | no authentication | Kerberos (QOP auth) | Kerberos / none |")
    print("|---|---|---|---|")
    for name, sides in figures.items():
        off, on = statistics.median(sides["plain"]), statistics.median(sides["kerberos"])
        ratio = off / on if "calls/s" in name else on / off
        print(f"| {name} | {off:,.4g} | {on:,.4g} | {ratio:.3f} |")
    print()
    print("Kerberos / none: the cost of authentication (1.10 = 10% slower); for calls/s,")
    print("plain calls/s over Kerberos calls/s.")


if __name__ == "__main__":
    main()
