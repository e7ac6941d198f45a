"""Schedules of `statlas daemon`: one per table, a cron expression or an interval, kept in
the metastore's `apscheduler_jobs` table (APScheduler 3's SQLAlchemyJobStore), so they
survive restarts and every daemon on the metastore sees the same ones.

`Schedules` adds, lists and removes them without a running daemon, through a paused
APScheduler on the same job store; servers.http.routes.schedules serves the same
operations over HTTP (GET /schedules, POST /schedules, DELETE /schedules/{table}).

>>> every_seconds("1h30m")
5400
>>> crontab_weekdays("1-5")
'mon,tue,wed,thu,fri'
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from sqlalchemy import Engine

from metastore import Metastore
from metastore.catalog.tables import normalise_table_name
from metastore.engine import make_engine, with_reconnect
from metastore.errors import InvalidValue, StatlasError
from metastore.times import utc_text
from pruner.daemon.job_store import JOB_KINDS, REFRESH, job_store

T = TypeVar("T")

UTC = ZoneInfo("UTC")
# the job every schedule runs: stored by its kind (pruner.daemon.job_store)
REFRESH_JOB = JOB_KINDS[REFRESH]
JOB_DEFAULTS: dict[str, Any] = {
    "coalesce": True,  # runs missed while no daemon led are caught up by ONE run
    "max_instances": 1,  # never two runs of one table's job at once in a daemon
    "misfire_grace_time": None,  # a late run is run, however late
}
_DURATION = re.compile(r"(\d+)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


class UnknownSchedule(StatlasError):
    """A table that has no schedule."""


@dataclass(frozen=True)
class Schedule:
    """The schedule of one table: `kind` is "cron" or "every", `expression` as given."""

    table: str
    kind: str
    expression: str
    next_run: dt.datetime | None

    def as_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "cron": self.expression if self.kind == "cron" else None,
            "every": self.expression if self.kind == "every" else None,
            "next_run": None if self.next_run is None else utc_text(self.next_run),
        }

    def describe(self) -> str:
        when = "never (paused)" if self.next_run is None else utc_text(self.next_run)
        return f"{self.table}\t{self.kind} {self.expression}\tnext run {when}"


def every_seconds(text: str) -> int:
    """`30s`, `15m`, `2h`, `1d` or a sequence of them (`1h30m`) as seconds."""
    cleaned = text.strip().lower()
    if not cleaned or _DURATION.sub("", cleaned) or not _DURATION.search(cleaned):
        raise InvalidValue(f"every wants a duration such as 30s, 15m, 2h or 1d, got {text!r}")
    seconds = sum(int(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION.findall(cleaned))
    if seconds < 1:
        raise InvalidValue(f"every must be at least 1s, got {text!r}")
    return seconds


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field (0 or 7 = Sunday, ranges, lists, steps, names) as the day
    names APScheduler 3 reads the same way (its own numbers start on Monday)."""
    if field == "*":
        return field
    days: set[int] = set()
    for item in field.lower().split(","):
        span, slash, step_text = item.partition("/")
        if slash and not step_text.isdigit():
            raise InvalidValue(f"invalid day of week {item!r} in cron expression")
        step = int(step_text) if slash else 1
        low, dash, high = span.partition("-")
        if span == "*":
            first, last = 0, 6
        else:
            first = _weekday(low)
            last = _weekday(high) if dash else (6 if slash else first)
        if step < 1 or last < first:
            raise InvalidValue(f"invalid day of week {item!r} in cron expression")
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(_WEEKDAYS[day] for day in sorted(days))


def _weekday(text: str) -> int:
    """0-7 (0 and 7 are Sunday) or a three-letter name, as cron's number (Sunday 0)."""
    if text.isdigit() and int(text) <= 7:
        return int(text)
    if text in _WEEKDAYS:
        return _WEEKDAYS.index(text)
    raise InvalidValue(f"invalid day of week {text!r} in cron expression")


def make_trigger(cron: str | None, every: str | None) -> tuple[str, str, Any]:
    """(kind, expression, APScheduler trigger) for exactly one of `cron` and `every`."""
    from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]
    from apscheduler.triggers.interval import IntervalTrigger  # type: ignore[import-untyped]

    if (cron is None) == (every is None):
        raise InvalidValue("give exactly one of cron (e.g. '0 * * * *') and every (e.g. 15m)")
    if every is not None:
        expression = every.strip().lower()
        return "every", expression, IntervalTrigger(seconds=every_seconds(every), timezone=UTC)
    assert cron is not None
    fields = cron.split()
    if len(fields) != 5:
        raise InvalidValue(
            f"cron wants 5 fields (minute hour day month weekday), got {len(fields)} in {cron!r}"
        )
    try:
        trigger = CronTrigger(
            minute=fields[0],
            hour=fields[1],
            day=fields[2],
            month=fields[3],
            day_of_week=crontab_weekdays(fields[4]),
            timezone=UTC,
        )
    except ValueError as error:
        raise InvalidValue(f"invalid cron expression {cron!r}: {error}") from None
    return "cron", " ".join(fields), trigger


def job_store_engine(db_url: str) -> Engine:
    """An engine of its own for the job store (APScheduler disposes of it at shutdown)."""
    return make_engine(db_url)


class Schedules:
    """Add, list and remove schedules in the metastore at `db_url`, with no daemon running:
    a paused APScheduler on the shared job store (started on first use)."""

    def __init__(self, db_url: str) -> None:
        self.db_url = db_url
        self._metastore = Metastore(db_url)
        self._scheduler: Any = None
        self._lock = threading.Lock()

    def _paused(self) -> Any:
        with self._lock:
            if self._scheduler is None:
                from apscheduler.schedulers.background import (  # type: ignore[import-untyped]
                    BackgroundScheduler,
                )

                engine = self._metastore.ready()  # the job store table exists at head
                scheduler = BackgroundScheduler(
                    jobstores={"default": job_store(job_store_engine(self.db_url))},
                    job_defaults=JOB_DEFAULTS,
                    timezone=UTC,
                )
                self._call(engine, lambda: scheduler.start(paused=True))
                self._scheduler = scheduler
            return self._scheduler

    def _call(self, engine: Engine, work: Callable[[], T]) -> T:
        """Run a job store operation (metastore.engine.with_reconnect)."""
        return with_reconnect(engine, work)

    def add(self, table: str, *, cron: str | None = None, every: str | None = None) -> Schedule:
        """Schedule `table` (replacing its schedule if it has one)."""
        kind, expression, trigger = make_trigger(cron, every)
        name = self._metastore.table(table).name  # UnknownTable (404) when not registered
        scheduler = self._paused()
        job = self._call(
            self._metastore.engine,
            lambda: scheduler.add_job(
                REFRESH_JOB,
                trigger=trigger,
                args=[name],
                id=name,
                name=f"{kind} {expression}",
                replace_existing=True,
                **JOB_DEFAULTS,
            ),
        )
        return Schedule(name, kind, expression, job.next_run_time)

    def list(self) -> list[Schedule]:
        scheduler = self._paused()
        jobs = self._call(self._metastore.engine, scheduler.get_jobs)
        return sorted((_schedule(job) for job in jobs), key=lambda s: s.table)

    def remove(self, table: str) -> str:
        from apscheduler.jobstores.base import JobLookupError  # type: ignore[import-untyped]

        name = normalise_table_name(table)
        scheduler = self._paused()
        try:
            self._call(self._metastore.engine, lambda: scheduler.remove_job(name))
        except JobLookupError:
            raise UnknownSchedule(f"table {name} has no schedule") from None
        return name

    def close(self) -> None:
        with self._lock:
            if self._scheduler is not None:
                self._scheduler.shutdown(wait=False)
                self._scheduler = None
        self._metastore.dispose()


def _schedule(job: Any) -> Schedule:
    kind, _, expression = str(job.name).partition(" ")
    return Schedule(str(job.id), kind, expression, job.next_run_time)
