"""The scheduled job and the scheduler that runs it in the leading daemon.

Every schedule runs `refresh_table(table)`: an incremental `collect`, which lists the table
again where it was registered from (collectors.refresh: new and vanished partitions,
changed fingerprints), rescans only new partitions and those whose fingerprint changed,
and drops the statistics of vanished ones. A run is recorded with
`servers.http.metrics.record_job_run`.

Jobs run in the daemon's `JobRuntime`: one Spark session, the set of runs in flight, and
how to abandon them. Each run's Spark jobs carry a tag of their own, so that abandoning
(SIGTERM past the grace period, or leadership lost) cancels exactly them; `collect` then
records its run as failed and keeps the previous statistics.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from apscheduler.executors.pool import ThreadPoolExecutor  # type: ignore[import-untyped]
from apscheduler.schedulers.background import (  # type: ignore[import-untyped]
    BackgroundScheduler,
)
from sqlalchemy import Connection, Engine

from collectors.collect import collect
from metastore import Metastore, runs
from metastore.catalog.tables import get_table
from metastore.engine import run_write
from metastore.errors import StatlasError
from metastore.models import utcnow
from metastore.runs import CollectionRunning
from pruner.daemon.job_store import job_store
from pruner.daemon.schedules import JOB_DEFAULTS, UTC, job_store_engine

log = logging.getLogger("statlas.scheduler")

JOB_NAME = "refresh"
EXECUTOR_THREADS = 2
JOBSTORE_RETRY_SECONDS = 5.0
CANCEL_WAIT_SECONDS = 30.0


class JobRuntime:
    """What scheduled jobs need in a daemon: the metastore, Spark, and the runs in flight."""

    def __init__(
        self,
        metastore: Metastore,
        master: str | None = None,
        spark_conf: Mapping[str, str] | None = None,
        on_job_run: Callable[[str, str, str, float], None] | None = None,
    ) -> None:
        self.metastore = metastore
        # told of every scheduled run: (job, table, "succeeded" or "failed", seconds)
        self.on_job_run = on_job_run
        self.master = master
        self.spark_conf = dict(spark_conf or {})
        self.leader_since: dt.datetime | None = None
        self._spark: Any = None
        self._spark_lock = threading.Lock()
        self._running: dict[str, str] = {}  # table -> Spark job tag of its run
        self._changed = threading.Condition()
        self._abandoning = False
        self._hurry = False

    # --- the job -------------------------------------------------------------------------

    def refresh(self, table: str) -> str:
        """Discover partitions of `table` again and refresh stale statistics; returns the
        run's status: succeeded, skipped (a collection of it is running) or failed."""
        tag = f"statlas-refresh-{table}-{time.monotonic_ns()}"
        if not self._begin(table, tag):
            log.info("refresh %s: not started, the scheduler is stopping", table)
            return "skipped"
        try:
            engine = self.metastore.ready()
            self._abandon_orphans(engine, table)
            spark = self._session()
            if self._abandoning:
                return "skipped"
            spark.sparkContext.addJobTag(tag)
            try:
                report = collect(engine, table, spark=spark)  # lists the table again first
            finally:
                spark.sparkContext.removeJobTag(tag)
            log.info(
                "refresh %s: partitions %d added, %d removed; statistics of %d scanned, "
                "%d unchanged, in %.1f s",
                table,
                report.partitions_added,
                report.partitions_removed,
                report.partitions_scanned,
                report.partitions_skipped,
                report.seconds,
            )
            return "succeeded"
        except CollectionRunning as error:
            log.info("refresh %s skipped: %s", table, error)
            return "skipped"
        except StatlasError as error:
            log.error("refresh %s failed: %s", table, error)
            return "failed"
        finally:
            self._end(table)

    def _abandon_orphans(self, engine: Engine, table: str) -> None:
        """Runs of `table` still 'running' that started before this daemon led were started
        by a daemon that died or lost leadership (its jobs are cancelled then): record them
        as failed, or they would block the table's collections for hours."""
        since = self.leader_since
        if since is None:
            return

        def abandon(conn: Connection) -> int:
            return runs.abandon(conn, get_table(conn, table).id, since)

        count = run_write(engine, abandon)
        if count:
            log.warning(
                "refresh %s: %d run(s) of a previous leader recorded as failed", table, count
            )

    def _session(self) -> Any:
        from collectors.spark_session import spark_session

        with self._spark_lock:
            if self._spark is None:
                self._spark = spark_session(self.master, self.spark_conf)
            return self._spark

    # --- runs in flight ------------------------------------------------------------------

    def _begin(self, table: str, tag: str) -> bool:
        with self._changed:
            if self._abandoning:
                return False
            self._running[table] = tag
            return True

    def _end(self, table: str) -> None:
        with self._changed:
            self._running.pop(table, None)
            self._changed.notify_all()

    def running(self) -> list[str]:
        with self._changed:
            return sorted(self._running)

    def resume(self) -> None:
        """Accept runs again (a new term as leader)."""
        with self._changed:
            self._abandoning = self._hurry = False

    def hurry(self) -> None:
        """End the grace period of a `drain` under way: abandon the runs now."""
        with self._changed:
            self._hurry = True
            self._changed.notify_all()

    def drain(self, grace: float) -> bool:
        """Let the runs in flight finish for up to `grace` seconds, then abandon them:
        cancel their Spark jobs (again each second, for jobs submitted meanwhile) and wait
        for each to record its run as failed. True when none is left."""
        deadline = time.monotonic() + grace
        with self._changed:
            while self._running and not self._hurry and time.monotonic() < deadline:
                self._changed.wait(min(1.0, max(0.0, deadline - time.monotonic())))
            self._abandoning = True
            if self._running:
                log.warning("abandoning running job(s): %s", ", ".join(sorted(self._running)))
        give_up = time.monotonic() + CANCEL_WAIT_SECONDS
        while time.monotonic() < give_up:
            with self._changed:
                tags = list(self._running.values())
                if not tags:
                    return True
            self._cancel(tags)
            with self._changed:
                self._changed.wait(1.0)
        return not self.running()

    def _cancel(self, tags: list[str]) -> None:
        with self._spark_lock:
            spark = self._spark
        if spark is None:
            return
        for tag in tags:
            try:
                spark.sparkContext.cancelJobsWithTag(tag)
            except Exception as error:  # a dead JVM: the job fails on its own
                log.warning("cannot cancel Spark jobs %s: %s", tag, error)

    def close(self) -> None:
        with self._spark_lock:
            spark, self._spark = self._spark, None
        if spark is not None:
            try:
                spark.stop()
            except Exception as error:  # the JVM is gone already
                log.warning("stopping Spark: %s", error)


_runtime: JobRuntime | None = None


def install_runtime(runtime: JobRuntime | None) -> None:
    """The runtime `refresh_table` runs in (set by the daemon)."""
    global _runtime
    _runtime = runtime


def refresh_table(table: str) -> None:
    """The job of every schedule (by reference: schedules.REFRESH_JOB)."""
    runtime = _runtime
    if runtime is None:
        raise StatlasError("scheduled jobs run inside `statlas daemon`")
    started = time.perf_counter()
    status = "failed"
    try:
        status = runtime.refresh(table)
    except Exception:
        log.exception("refresh %s failed", table)
    finally:
        if runtime.on_job_run is not None:
            runtime.on_job_run(JOB_NAME, table, status, time.perf_counter() - started)


class LeaderScheduler:
    """The APScheduler of the leading daemon: started when leadership is won, stopped
    (with its runs finished or abandoned) when it is lost or the daemon stops."""

    def __init__(self, db_url: str, runtime: JobRuntime) -> None:
        self.db_url = db_url
        self.runtime = runtime
        self._scheduler: Any = None
        self._lock = threading.Lock()

    def start(self) -> None:
        scheduler = ResilientScheduler(
            jobstores={"default": job_store(job_store_engine(self.db_url))},
            executors={"default": ThreadPoolExecutor(EXECUTOR_THREADS)},
            job_defaults=JOB_DEFAULTS,
            timezone=UTC,
            jobstore_retry_interval=JOBSTORE_RETRY_SECONDS,
        )
        self.runtime.metastore.ready()  # the schema is at head (the database answers)
        with self._lock:
            self.runtime.leader_since = utcnow()
            self.runtime.resume()
            scheduler.start()
            self._scheduler = scheduler
        log.info("scheduler started")

    def wakeup(self) -> None:
        """Look at the job store now (schedules added or removed by another process)."""
        with self._lock:
            if self._scheduler is not None:
                self._scheduler.wakeup()

    def stop(self, grace: float) -> None:
        with self._lock:
            scheduler, self._scheduler = self._scheduler, None
            self.runtime.leader_since = None
        if scheduler is None:
            return
        scheduler.shutdown(wait=False)
        if not self.runtime.drain(grace):
            log.error(
                "jobs still running after cancellation: %s", ", ".join(self.runtime.running())
            )
        log.info("scheduler stopped")


class ResilientScheduler(BackgroundScheduler):  # type: ignore[misc]
    """A BackgroundScheduler whose loop survives the job store failing anywhere in a round
    (APScheduler 3 retries a failed due-jobs query, but a failed update ends its thread):
    the round is tried again after `jobstore_retry_interval` seconds."""

    def _process_jobs(self) -> float | None:
        try:
            wait: float | None = super()._process_jobs()
            return wait
        except Exception as error:
            log.warning("scheduler round failed, retrying: %s", error)
            return float(self.jobstore_retry_interval)
