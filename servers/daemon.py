"""`statlas daemon`: the HTTP API in every daemon, the scheduled jobs in exactly one.

The main thread serves the API with uvicorn (with /schedules and /scheduler added), a
thread serves the Hive Metastore Thrift API (servers.hive_metastore) on --thrift-port; a
leader elector thread competes for the metastore's leader lock and, while it holds it,
runs the APScheduler that fires the schedules; a presence thread writes the daemon's
heartbeat to the metastore (pruner.daemon.presence), so that every daemon is listed.
SIGTERM (or SIGINT): uvicorn stops taking requests and finishes those under way, then the
running jobs get `grace` seconds to finish before their Spark jobs are cancelled (their
runs are recorded as failed, the previous statistics kept), the lock is released, the stop
recorded, Spark stops, and the process exits 0. A second signal abandons the running jobs
at once.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from metastore import Metastore
from metastore.daemons import DaemonIdentity
from metastore.errors import StatlasError
from metastore.models import utcnow
from metastore.statistics.cache import reserve_for_process, when_entries_dropped
from pruner.daemon.leader import LeaderElector, leader_lock
from pruner.daemon.presence import Presence
from pruner.daemon.scheduler import (
    CANCEL_WAIT_SECONDS,
    JobRuntime,
    LeaderScheduler,
    install_runtime,
)
from pruner.daemon.schedules import Schedules
from servers.authorization import Roles
from servers.hive_metastore.sasl_gssapi import (
    KerberosAcceptor,
    parse_protection,
    service_principal,
)
from servers.logs import configure_logging
from servers.preload import import_request_modules
from servers.process_memory import memory_freed, tune_allocator
from servers.signals import stop_on_signals
from servers.version import statlas_version

log = logging.getLogger("statlas.daemon")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080
DEFAULT_GRACE = 20.0  # seconds a running job may take to finish after SIGTERM
REQUEST_GRACE = 10  # seconds requests under way may take to finish after SIGTERM
# of STATLAS_CACHE_MB, what the daemon keeps for its growth beside the statistics cache:
# TPC-H's latency set with the cache off grows a daemon by ~20 MB (SQLite's and
# SQLAlchemy's statement and page caches, allocators' free pages, request threads' heaps)
OUTSIDE_CACHE_BYTES = 24 * 1024 * 1024


@dataclass(frozen=True)
class DaemonOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    master: str | None = None
    spark_conf: Mapping[str, str] = field(default_factory=dict)
    grace: float = DEFAULT_GRACE
    token: str | None = None
    thrift_port: int = 9083  # the Hive Metastore API (servers.hive_metastore); 0: off
    warehouse: str = "warehouse"
    lock_timeout: float = 300.0  # seconds a Hive lock lives without a heartbeat
    thrift_auth: str | None = None  # "none": serve Thrift unauthenticated beyond loopback
    thrift_max_connections: int = 1000
    thrift_idle_timeout: float = 600.0
    thrift_kerberos_principal: str | None = None
    thrift_kerberos_keytab: str | None = None
    thrift_sasl_qop: str = "authentication"  # Hadoop's hadoop.rpc.protection
    roles: str | None = None  # the roles file (servers.authorization); None: all admin


def is_loopback(host: str) -> bool:
    """Whether every address `host` names is a loopback address."""
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def check_thrift_exposure(host: str, port: int, auth: str | None) -> None:
    """Refuse to serve the Hive Metastore API beyond loopback without authentication, unless
    the user said so (`--thrift-auth none`, then logged as a warning): anyone who reaches
    the port can change and drop tables (docs/hive-metastore.md#authentication)."""
    if auth == "kerberos" or is_loopback(host):
        return
    if auth is None:
        raise StatlasError(
            f"refusing to serve the Hive Metastore API on {host}:{port} without "
            "authentication (anyone who reaches it can change and drop tables): pass "
            "--thrift-auth none to serve it anyway, or --host 127.0.0.1"
        )
    log.warning(
        "the Hive Metastore API on %s:%d is served without authentication "
        "(--thrift-auth none): anyone who reaches it can change and drop tables",
        host,
        port,
    )


def kerberos_acceptor(options: DaemonOptions) -> KerberosAcceptor | None:
    """The daemon's Kerberos identity when --thrift-auth kerberos (checked before serving)."""
    if options.thrift_auth != "kerberos":
        for flag, value in (
            ("--thrift-kerberos-principal", options.thrift_kerberos_principal),
            ("--thrift-kerberos-keytab", options.thrift_kerberos_keytab),
        ):
            if value:
                raise StatlasError(f"{flag} is given but --thrift-auth is not kerberos")
        return None
    if not options.thrift_kerberos_principal or not options.thrift_kerberos_keytab:
        raise StatlasError(
            "--thrift-auth kerberos needs --thrift-kerberos-principal and "
            "--thrift-kerberos-keytab (Hive's hive.metastore.kerberos.principal and "
            "hive.metastore.kerberos.keytab.file)"
        )
    principal = service_principal(options.thrift_kerberos_principal, options.host)
    return KerberosAcceptor.from_keytab(
        principal,
        Path(options.thrift_kerberos_keytab),
        parse_protection(options.thrift_sasl_qop),
    )


def daemon_identity(options: DaemonOptions) -> DaemonIdentity:
    """How this daemon is listed among the metastore's daemons: host and process, and the
    address its HTTP API answers on (the host's name when it listens on every address)."""
    host = socket.gethostname()
    listen = options.host
    if listen in ("", "0.0.0.0", "::"):
        listen = host
    elif ":" in listen:
        listen = f"[{listen}]"  # an IPv6 address in a URL
    return DaemonIdentity(
        node=f"{host}:{os.getpid()}",
        host=host,
        pid=os.getpid(),
        http_url=f"http://{listen}:{options.port}",
        thrift_port=options.thrift_port or None,
        version=statlas_version(),
        started_at=utcnow(),
    )


def run_daemon(db_url: str, options: DaemonOptions) -> int:
    """Serve until SIGTERM or SIGINT; 0 after a clean stop."""
    # uvicorn and the app load only here: a refused setting is answered without them
    import uvicorn

    from servers.http.app import create_app
    from servers.http.metrics import record_job_run
    from servers.http.routes.scheduler import scheduler_router
    from servers.http.routes.schedules import schedules_router

    if options.grace < 0:
        raise StatlasError("--grace must not be negative")
    configure_logging()
    if options.thrift_port:
        check_thrift_exposure(options.host, options.thrift_port, options.thrift_auth)
    kerberos = kerberos_acceptor(options) if options.thrift_port else None
    roles = Roles.load(Path(options.roles)) if options.roles else None
    if roles is not None and not options.token:
        log.warning(
            "--roles without $STATLAS_API_TOKEN: the HTTP API has no token holder to give a "
            "role, and answers anyone who reaches it"
        )
    if roles is not None and options.thrift_port and options.thrift_auth != "kerberos":
        log.warning(
            "--roles without --thrift-auth kerberos: Hive Metastore clients are known by the "
            "name they give set_ugi, which anyone can claim"
        )
    tune_allocator()  # freed memory goes back: the daemon grows by what its cache holds
    when_entries_dropped(memory_freed)  # what its cache drops, too
    reserve_for_process(OUTSIDE_CACHE_BYTES)  # STATLAS_CACHE_MB bounds the daemon's growth
    import_request_modules()  # not on the first request's path, nor counted as growth
    identity = daemon_identity(options)
    node = identity.node
    runtime = JobRuntime(
        Metastore(db_url), options.master, options.spark_conf, on_job_run=record_job_run
    )
    scheduler = LeaderScheduler(db_url, runtime)
    presence = Presence(runtime.metastore.ready(), identity, lambda: runtime.leader_since)

    def elected() -> None:
        scheduler.start()
        presence.wakeup()

    def lost(grace: float) -> None:
        try:
            scheduler.stop(grace)
        finally:
            presence.wakeup()

    elector = LeaderElector(
        leader_lock(db_url), on_elected=elected, on_lost=lost, on_tick=scheduler.wakeup
    )
    schedules = Schedules(db_url)
    app = create_app(
        db_url,
        token=options.token,
        routers=[
            schedules_router(db_url, schedules=schedules, on_change=scheduler.wakeup),
            scheduler_router(node, elector, runtime),
        ],
        spark_master=options.master,
        roles=roles,
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            host=options.host,
            port=options.port,
            log_config=None,  # our handlers (logs.configure_logging)
            timeout_graceful_shutdown=REQUEST_GRACE,
        )
    )
    with stop_on_signals(server, runtime.hurry):
        thrift = None
        if options.thrift_port:
            from servers.hive_metastore.server import ThriftService  # only when serving it

            thrift = ThriftService(
                runtime.metastore.ready(),
                options.host,
                options.thrift_port,
                options.warehouse,
                options.lock_timeout,
                options.thrift_max_connections,
                options.thrift_idle_timeout,
                kerberos,
                roles,
            ).start()
        install_runtime(runtime)
        log.info("statlas daemon %s on http://%s:%d", node, options.host, options.port)
        presence.start()
        elector.start()
        try:
            server.run()
        except SystemExit as exit_:  # uvicorn exits when it cannot listen (logged above)
            raise StatlasError(
                f"cannot serve on {options.host}:{options.port} (exit {exit_.code})"
            ) from None
        finally:
            log.info("stopping: running jobs get %.0f s to finish", options.grace)
            if thrift is not None:
                thrift.stop()
            elector.stop(options.grace, timeout=options.grace + CANCEL_WAIT_SECONDS + 15)
            presence.stop()
            schedules.close()
            runtime.close()
            install_runtime(None)
    log.info("stopped")
    return 0
