"""Progress of a collection: a rich progress bar on a terminal, plain lines otherwise.

`collect` reports phases (`scan`: Spark tasks done of all tasks of its job; `receive`:
partitions' statistics received; `write`) to a `ProgressSink`; `watch_spark_job` polls
Spark's status tracker for the tasks of one job group while the scan runs.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Protocol, TextIO

PHASES = {"scan": "scanning (Spark tasks)", "receive": "receiving partitions", "write": "writing"}


class ProgressSink(Protocol):
    def update(self, phase: str, done: int, total: int) -> None: ...


class PlainProgress:
    """One line per phase change, and at most one per `interval` seconds within a phase."""

    def __init__(self, stream: TextIO, label: str, interval: float = 10.0) -> None:
        self.stream, self.label, self.interval = stream, label, interval
        self._phase: str | None = None
        self._last = 0.0
        self._finished = False
        self._lock = threading.Lock()

    def update(self, phase: str, done: int, total: int) -> None:
        with self._lock:
            now = time.monotonic()
            finished = total > 0 and done >= total
            if phase == self._phase and (
                self._finished or (not finished and now - self._last < self.interval)
            ):
                return
            self._phase, self._last, self._finished = phase, now, finished
            share = f" ({100 * done // total}%)" if total else ""
            print(
                f"{self.label}: {PHASES.get(phase, phase)} {done:,}/{total:,}{share}",
                file=self.stream,
                flush=True,
            )


class RichProgress:
    """A rich progress bar with one task per phase (use as a context manager)."""

    def __init__(self, stream: TextIO, label: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.label = label
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=stream),
            transient=False,
        )
        self._tasks: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def update(self, phase: str, done: int, total: int) -> None:
        with self._lock:
            task = self._tasks.get(phase)
            if task is None:
                description = f"{self.label}: {PHASES.get(phase, phase)}"
                task = self._tasks[phase] = self._progress.add_task(description, total=total)
            self._progress.update(task, completed=done, total=total)


@contextmanager
def console_progress(label: str, stream: TextIO | None = None) -> Iterator[ProgressSink]:
    """A progress bar when `stream` (stderr) is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    if stream.isatty():
        with RichProgress(stream, label) as bar:
            yield bar
    else:
        yield PlainProgress(stream, label)


@contextmanager
def watch_spark_job(
    spark: Any, group: str, sink: ProgressSink | None, every: float = 0.5
) -> Iterator[None]:
    """Run the block's Spark jobs in job group `group`, reporting their tasks to `sink`."""
    context = spark.sparkContext
    context.setJobGroup(group, f"statlas {group}", interruptOnCancel=True)
    stop = threading.Event()

    def poll() -> None:
        ended: dict[int, tuple[int, int]] = {}
        while not stop.wait(every):
            done, total = _tasks_of_group(context, group, ended)
            if total and sink is not None:
                sink.update("scan", done, total)

    watcher = threading.Thread(target=poll, name=f"progress-{group}", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        with suppress(Exception):  # a dead JVM: keep the scan's own error, not this one
            context.setLocalProperty("spark.jobGroup.id", None)
            context.setLocalProperty("spark.job.description", None)


def _tasks_of_group(
    context: Any, group: str, ended: dict[int, tuple[int, int]] | None = None
) -> tuple[int, int]:
    """Completed and total tasks of every stage of the group's jobs known so far. `ended`
    keeps the counts of the jobs seen finished, which are not asked again: a collection
    runs a job per few partitions (collectors/driver_rows.py), and asking every one of them
    at every poll took a tenth of the driver's time by the end of lineitem's scan."""
    ended = {} if ended is None else ended
    try:
        tracker = context.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(group):
            if job_id in ended:
                done, total = done + ended[job_id][0], total + ended[job_id][1]
                continue
            job = tracker.getJobInfo(job_id)
            job_done = job_total = 0
            for stage_id in job.stageIds if job else ():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    job_done += stage.numCompletedTasks
                    job_total += stage.numTasks
            if job is not None and job.status in FINISHED_JOBS:
                ended[job_id] = (job_done, job_total)
            done, total = done + job_done, total + job_total
        return done, total
    except Exception:  # the JVM went away: the scan itself reports the failure
        return 0, 0


# SparkJobInfo.status of a job whose counts no longer change
FINISHED_JOBS = ("SUCCEEDED", "FAILED")
