"""`statlas daemon`, `statlas daemons` and `statlas schedule add|list|remove`: their options
and commands.

Commands import what they run when they run (as statlas.cli's); `daemon` first puts
Arrow on the system allocator, which must happen before anything loads pyarrow
(servers.process_memory.arrow_on_system_allocator)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from metastore.errors import InvalidValue
from statlas.options import add_spark_options, print_json, spark_conf
from statlas.settings import Settings


def add_daemon_commands(commands: Any, common: argparse.ArgumentParser) -> None:
    """`statlas daemon`, `statlas daemons` and `statlas schedule add|list|remove`."""
    daemon = commands.add_parser(
        "daemon",
        parents=[common],
        help="serve the HTTP API and run scheduled jobs",
        description="Serve the HTTP API. Of all daemons on one metastore, exactly one (the "
        "leader) runs the scheduled jobs; another takes over when it dies. SIGTERM stops "
        "taking requests, gives running jobs --grace seconds to finish, cancels the rest "
        "and exits 0. $STATLAS_API_TOKEN, when set, is the bearer token every route but "
        "/health wants.",
    )
    daemon.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    daemon.add_argument("--port", type=int, default=8080, help="port to listen on (8080)")
    daemon.add_argument(
        "--thrift-port",
        type=int,
        default=9083,
        metavar="PORT",
        help="port of the Hive Metastore Thrift API, for Spark, Hive and Trino (9083; 0: off)",
    )
    daemon.add_argument(
        "--warehouse",
        default="warehouse",
        metavar="DIR",
        help="where managed tables created through the Hive Metastore API live; dropping "
        "one deletes its data only inside this directory (./warehouse)",
    )
    daemon.add_argument(
        "--thrift-auth",
        choices=["none", "kerberos"],
        default=None,
        help="authentication of the Hive Metastore API: 'kerberos' (SASL GSSAPI, as Hive's "
        "hive.metastore.sasl.enabled); without it the daemon serves Thrift on loopback "
        "addresses only; 'none' serves it on --host anyway (logged as a warning)",
    )
    daemon.add_argument(
        "--thrift-kerberos-principal",
        metavar="PRINCIPAL",
        help="the daemon's service principal, e.g. hive/_HOST@EXAMPLE.COM (_HOST: this "
        "machine's name), as Hive's hive.metastore.kerberos.principal",
    )
    daemon.add_argument(
        "--thrift-kerberos-keytab",
        metavar="FILE",
        help="the keytab holding the service principal's keys, as Hive's "
        "hive.metastore.kerberos.keytab.file",
    )
    daemon.add_argument(
        "--thrift-sasl-qop",
        default="authentication",
        metavar="QOP",
        help="the protection of Kerberos connections: authentication, integrity or privacy "
        "(or a comma-separated list), as Hadoop's hadoop.rpc.protection (authentication)",
    )
    daemon.add_argument(
        "--roles",
        metavar="FILE",
        help="a TOML file mapping principals (Kerberos names, the HTTP token's holder) to "
        "roles: reader, writer, admin (default: every authenticated client is admin)",
    )
    daemon.add_argument(
        "--thrift-max-connections",
        type=int,
        default=1000,
        metavar="N",
        help="Hive Metastore connections served at once; more wait (1000, as Hive's "
        "hive.metastore.server.max.threads)",
    )
    daemon.add_argument(
        "--thrift-idle-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="a Hive Metastore connection that sends or reads nothing this long is closed "
        "(600, as Hive's client socket timeout)",
    )
    daemon.add_argument(
        "--lock-timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="seconds a Hive Metastore lock lives without a heartbeat, as Hive's "
        "hive.txn.timeout (300)",
    )
    daemon.add_argument(
        "--grace",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="how long running jobs may take to finish after SIGTERM (20)",
    )
    add_spark_options(daemon)
    daemon.set_defaults(handler=cmd_daemon)

    listing_daemons = commands.add_parser(
        "daemons",
        parents=[common],
        help="list the daemons of this metastore and which one leads",
        description="Every daemon heard from in the last day: where it serves, its latest "
        "heartbeat, and whether it is serving, silent (no heartbeat for 15 s: it died, hangs "
        "or cannot reach the database) or stopped. The leader runs the scheduled jobs.",
    )
    listing_daemons.add_argument("--json", action="store_true", help="print JSON")
    listing_daemons.set_defaults(handler=cmd_daemons)

    schedule = commands.add_parser(
        "schedule", help="schedule partition discovery and statistics refresh of tables"
    )
    schedules = schedule.add_subparsers(title="schedule commands", metavar="COMMAND")
    add = schedules.add_parser(
        "add",
        parents=[common],
        help="schedule a table (replaces its schedule)",
        description="Each run lists the table's directory again (new and vanished "
        "partitions) and collects the statistics of new and changed partitions. Runs "
        "happen in the leading `statlas daemon`; cron times are UTC.",
    )
    add.add_argument("name")
    add.add_argument("--cron", metavar="EXPR", help='a crontab expression, e.g. "0 * * * *"')
    add.add_argument("--every", metavar="DURATION", help="an interval: 30s, 15m, 2h, 1d, 1h30m")
    add.add_argument("--json", action="store_true", help="print JSON")
    add.set_defaults(handler=cmd_schedule_add)
    listing = schedules.add_parser("list", parents=[common], help="list schedules")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=cmd_schedule_list)
    remove = schedules.add_parser("remove", parents=[common], help="remove a table's schedule")
    remove.add_argument("name")
    remove.set_defaults(handler=cmd_schedule_remove)


def cmd_daemon(args: argparse.Namespace, settings: Settings) -> int:
    from servers.process_memory import arrow_on_system_allocator

    arrow_on_system_allocator()  # before anything loads pyarrow
    from servers.daemon import DaemonOptions, run_daemon

    if not 0 <= args.port <= 65535:
        raise InvalidValue(f"--port must be between 0 and 65535, got {args.port}")
    if not args.lock_timeout > 0:
        raise InvalidValue(f"--lock-timeout must be positive, got {args.lock_timeout}")
    options = DaemonOptions(
        host=args.host,
        port=args.port,
        master=args.master,
        spark_conf=spark_conf(args),
        grace=args.grace,
        token=os.environ.get("STATLAS_API_TOKEN") or None,
        thrift_port=args.thrift_port,
        warehouse=args.warehouse,
        lock_timeout=args.lock_timeout,
        thrift_auth=args.thrift_auth,
        thrift_max_connections=args.thrift_max_connections,
        thrift_idle_timeout=args.thrift_idle_timeout,
        thrift_kerberos_principal=args.thrift_kerberos_principal,
        thrift_kerberos_keytab=args.thrift_kerberos_keytab,
        thrift_sasl_qop=args.thrift_sasl_qop,
        roles=args.roles,
    )
    return run_daemon(settings.db_url, options)


def cmd_daemons(args: argparse.Namespace, settings: Settings) -> int:
    from metastore import Metastore, daemons
    from metastore.engine import run_read

    seen = run_read(Metastore(settings.db_url).ready(), daemons.daemons)
    if args.json:
        print_json(daemons.listing_json(seen))
        return 0
    for daemon in seen:
        figures = daemon.as_json()
        role = f"leader since {figures['leader_since']}" if daemon.leading else "standby"
        if daemon.state != daemons.SERVING:
            role = "-"
        print(
            f"{figures['node']}	{figures['state']}	{role}	{figures['url']}	"
            f"started {figures['started']}	heartbeat {figures['heartbeat']}	"
            f"statlas {figures['version']}"
        )
    return 0


def cmd_schedule_add(args: argparse.Namespace, settings: Settings) -> int:
    from pruner.daemon.schedules import Schedules

    book = Schedules(settings.db_url)
    try:
        schedule = book.add(args.name, cron=args.cron, every=args.every)
    finally:
        book.close()
    if args.json:
        print_json(schedule.as_json())
    else:
        print(f"scheduled {schedule.describe()}")
    return 0


def cmd_schedule_list(args: argparse.Namespace, settings: Settings) -> int:
    from pruner.daemon.schedules import Schedules

    book = Schedules(settings.db_url)
    try:
        found = book.list()
    finally:
        book.close()
    if args.json:
        print_json([s.as_json() for s in found])
        return 0
    for schedule in found:
        print(schedule.describe())
    return 0


def cmd_schedule_remove(args: argparse.Namespace, settings: Settings) -> int:
    from pruner.daemon.schedules import Schedules

    book = Schedules(settings.db_url)
    try:
        name = book.remove(args.name)
    finally:
        book.close()
    print(f"removed the schedule of {name}")
    return 0
