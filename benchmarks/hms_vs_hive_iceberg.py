"""The Iceberg measures of benchmarks/hms_vs_hive.py, through pyiceberg's own HiveCatalog:
(g) one client appending one-row batches, (h) --writers client processes appending to one
table at once, retrying conflicts, and the check of what the table holds after."""

from __future__ import annotations

import argparse
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

from benchmarks.hms_vs_hive_metastores import Side


def catalog(uri: str, warehouse: Path, args: argparse.Namespace) -> Any:
    from pyiceberg.catalog.hive import HiveCatalog

    return HiveCatalog(
        "bench",
        uri=uri,
        warehouse=f"file://{warehouse}",
        **{
            "lock-check-min-wait-time": "0.01",
            "lock-check-max-wait-time": str(args.lock_max_wait),
            "lock-check-retries": str(args.lock_retries),
        },
    )


def iceberg_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [pa.field("writer", pa.int32(), nullable=False), pa.field("seq", pa.int32(), False)]
    )


def one_row(writer: int, seq: int) -> Any:
    import pyarrow as pa

    return pa.table(
        {"writer": pa.array([writer], pa.int32()), "seq": pa.array([seq], pa.int32())},
        schema=iceberg_schema(),
    )


def new_iceberg_table(side: Side, args: argparse.Namespace, name: str) -> str:
    """A fresh Iceberg table bench.<name>; pyiceberg's own commit retries set to
    --commit-retries (0: a conflict comes back to the writer's loop at once)."""
    cat = catalog(side.uri, side.iceberg, args)
    if ("bench",) not in cat.list_namespaces():
        cat.create_namespace("bench", {"location": f"file://{side.iceberg / 'bench.db'}"})
    identifier = f"bench.{name}"
    properties = {"commit.retry.num-retries": str(args.commit_retries)}
    cat.create_table(identifier, iceberg_schema(), properties=properties)
    return identifier


class PyicebergWarnings(logging.Handler):
    """Counts (and keeps off stderr) pyiceberg's "Wait on lock" and its own commit
    retries ("Commit failed due to a concurrent update, retrying")."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lock_waits = 0
        self.retries = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Wait on lock"):
            self.lock_waits += 1
        elif "concurrent update" in message:
            self.retries += 1


def quiet_pyiceberg() -> PyicebergWarnings:
    counter = PyicebergWarnings()
    logger = logging.getLogger("pyiceberg")
    logger.handlers = [counter]
    logger.propagate = False
    return counter


def single_appends(side: Side, args: argparse.Namespace, run: int) -> float:
    identifier = new_iceberg_table(side, args, f"single_{run}")
    cat = catalog(side.uri, side.iceberg, args)
    table = cat.load_table(identifier)
    started = time.perf_counter()
    for seq in range(args.appends):
        table.append(one_row(0, seq))
    rate: float = args.appends / (time.perf_counter() - started)
    snapshots = len(cat.load_table(identifier).metadata.snapshots)
    if snapshots != args.appends:
        raise RuntimeError(f"{snapshots} snapshots after {args.appends} appends")
    return rate


def writer(
    uri: str,
    warehouse: str,
    identifier: str,
    number: int,
    args: argparse.Namespace,
    barrier: Barrier,
    results: Any,
) -> None:
    """One of the concurrent clients: appends (number, seq) rows, retrying conflicts."""
    from pyiceberg.exceptions import CommitFailedException

    counter = quiet_pyiceberg()
    acknowledged: list[int] = []
    conflicts = 0
    error = None
    try:
        cat = catalog(uri, Path(warehouse), args)
        table = cat.load_table(identifier)
        rows = [one_row(number, seq) for seq in range(args.writer_appends)]
        barrier.wait()
        for seq, row in enumerate(rows):
            for _attempt in range(args.max_attempts):
                try:
                    table.append(row)
                except CommitFailedException:
                    conflicts += 1
                    table = cat.load_table(identifier)
                    continue
                acknowledged.append(seq)
                break
            else:
                raise RuntimeError(f"append {seq} failed {args.max_attempts} times")
    except Exception as exc:  # reported by the parent
        error = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(Exception):
            barrier.abort()
    results.put((number, acknowledged, conflicts, counter.retries, counter.lock_waits, error))


@dataclass
class Concurrent:
    rate: float
    acknowledged: int
    conflicts: int
    pyiceberg_retries: int
    lock_waits: int
    snapshots: int
    rows: int
    exact: bool


def concurrent_appends(side: Side, args: argparse.Namespace, run: int) -> Concurrent:
    identifier = new_iceberg_table(side, args, f"shared_{run}")
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(args.writers + 1)
    results = context.Queue()
    processes = [
        context.Process(
            target=writer,
            args=(side.uri, str(side.iceberg), identifier, n, args, barrier, results),
        )
        for n in range(args.writers)
    ]
    for process in processes:
        process.start()
    try:
        with contextlib.suppress(threading.BrokenBarrierError):  # a writer failed: see below
            barrier.wait(timeout=120)
        started = time.perf_counter()
        reports = [results.get(timeout=600) for _ in processes]
        seconds = time.perf_counter() - started
    finally:
        for process in processes:
            process.join(60)
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, 9)
                process.join()
    errors = [r[5] for r in reports if r[5]]
    if errors:
        raise RuntimeError(errors[0])
    expected = {(r[0], seq) for r in reports for seq in r[1]}
    table = catalog(side.uri, side.iceberg, args).load_table(identifier)
    data = table.scan().to_arrow()
    found = list(zip(data["writer"].to_pylist(), data["seq"].to_pylist(), strict=True))
    snapshots = len(table.metadata.snapshots)
    exact = len(found) == len(expected) and set(found) == expected and snapshots == len(expected)
    return Concurrent(
        rate=len(expected) / seconds,
        acknowledged=len(expected),
        conflicts=sum(r[2] for r in reports),
        pyiceberg_retries=sum(r[3] for r in reports),
        lock_waits=sum(r[4] for r in reports),
        snapshots=snapshots,
        rows=len(found),
        exact=exact,
    )
