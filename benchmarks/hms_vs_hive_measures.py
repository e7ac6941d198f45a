"""The measures of benchmarks/hms_vs_hive.py and their runs: the random cases of (a) to (d),
the rates of (e) and (f), and every run timing each measure on both metastores in turns."""

from __future__ import annotations

import argparse
import os
import random
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from hive_metastore import ttypes as hms

from benchmarks.hms_vs_hive_iceberg import Concurrent, concurrent_appends, single_appends
from benchmarks.hms_vs_hive_metastores import DB, TABLE, Side

T = TypeVar("T")
SHAPES = {
    "a": "(a) by filter, 1 partition",
    "b": "(b) by filter, 300 (30 dt x 10 region)",
    "c": "(c) by filter, 10,000 (100 dt x 100 region)",
    "d": "(d) by names, 1,000",
}


def quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def cases(
    rounds: int, days: list[str], regions: list[str], rng: random.Random
) -> list[dict[str, tuple[str, Any, int]]]:
    """Per round, per shape: (method, argument, expected partitions)."""
    out = []
    for _ in range(rounds):
        names = [f"dt={rng.choice(days)}/region={rng.choice(regions)}" for _ in range(3000)]
        unique = list(dict.fromkeys(names))[:1000]
        out.append(
            {
                "a": (
                    "get_partitions_by_filter",
                    f'dt = "{rng.choice(days)}" and region = "{rng.choice(regions)}"',
                    1,
                ),
                "b": (
                    "get_partitions_by_filter",
                    f"(dt) in ({quoted(rng.sample(days, 30))}) "
                    f"and (region) in ({quoted(rng.sample(regions, 10))})",
                    300,
                ),
                "c": (
                    "get_partitions_by_filter",
                    f"(dt) in ({quoted(rng.sample(days, 100))}) "
                    f"and (region) in ({quoted(rng.sample(regions, 100))})",
                    10_000,
                ),
                "d": ("get_partitions_by_names", unique, len(unique)),
            }
        )
    return out


def partition_call(side: Side, method: str, argument: Any, expected: int) -> float:
    if method == "get_partitions_by_names":
        _, seconds, result = side.raw.call(method, db_name=DB, tbl_name=TABLE, names=argument)
    else:
        _, seconds, result = side.raw.call(
            method, db_name=DB, tbl_name=TABLE, filter=argument, max_parts=-1
        )
    if len(result) != expected:
        raise RuntimeError(f"{side.name}: {method} gave {len(result)}, not {expected}")
    return float(seconds)


def get_table_rate(side: Side, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        side.raw.call("get_table", dbname=DB, tbl_name=TABLE)
    return calls / (time.perf_counter() - started)


def lock_request(table: str) -> hms.LockRequest:
    component = hms.LockComponent(
        type=hms.LockType.EXCLUSIVE,
        level=hms.LockLevel.TABLE,
        dbname=DB,
        tablename=table,
        isTransactional=True,
    )
    return hms.LockRequest(component=[component], user="bench", hostname="localhost")


def lock_rate(side: Side, pairs: int) -> float:
    started = time.perf_counter()
    for _ in range(pairs):
        response = side.client.lock(lock_request(TABLE))
        if response.state != hms.LockState.ACQUIRED:
            raise RuntimeError(f"{side.name}: lock state {response.state}, not ACQUIRED")
        side.client.unlock(hms.UnlockRequest(lockid=response.lockid))
    return pairs / (time.perf_counter() - started)


def turns(run: int, sides: dict[str, Side]) -> list[Side]:
    """statlas first in even runs, Hive first in odd ones."""
    order = [sides["statlas"], sides["hive"]]
    return order if run % 2 == 0 else order[::-1]


def attempt(side: Side, key: str, function: Callable[..., T], *arguments: Any) -> T | None:
    """function(side, *arguments), or None once it has failed for this side (the error
    is kept and reported)."""
    if key in side.errors:
        return None
    try:
        return function(side, *arguments)
    except Exception as exc:
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        side.errors[key] = f"{type(exc).__name__}: {message}"[:200]
        if os.environ.get("BENCH_TRACEBACK"):
            traceback.print_exc()
        return None


def measure(
    sides: dict[str, Side], args: argparse.Namespace, days: list[str], regions: list[str]
) -> tuple[dict[str, dict[str, list[float]]], dict[str, Any]]:
    rng = random.Random(args.seed)
    rounds = args.warmup + args.runs
    per_round = cases(rounds, days, regions, rng)
    samples: dict[str, dict[str, list[float]]] = {}

    def keep(key: str, side: Side, value: float | None, counted: bool) -> None:
        if value is not None and counted:
            samples.setdefault(key, {}).setdefault(side.name, []).append(value)

    for run in range(rounds):
        counted = run >= args.warmup
        for shape, (method, argument, expected) in per_round[run].items():
            for side in turns(run, sides):
                seconds = attempt(side, shape, partition_call, method, argument, expected)
                keep(shape, side, seconds, counted)
        for side in turns(run, sides):
            keep("e", side, attempt(side, "e", get_table_rate, args.calls), counted)
        for side in turns(run, sides):
            keep("f", side, attempt(side, "f", lock_rate, args.calls), counted)
        print(
            f"  run {run + 1}/{rounds}{' (warm-up)' if run < args.warmup else ''} done", flush=True
        )
    concurrent: dict[str, list[Concurrent]] = {}
    iceberg_rounds = (1 if args.warmup else 0) + args.iceberg_runs
    for run in range(iceberg_rounds):
        counted = run >= iceberg_rounds - args.iceberg_runs
        for side in turns(run, sides):
            rate = attempt(side, "g", single_appends, args, run)
            keep("g", side, rate, counted)
        for side in turns(run, sides):
            result = attempt(side, "h", concurrent_appends, args, run)
            if result is not None and counted:
                concurrent.setdefault(side.name, []).append(result)
                keep("h", side, result.rate, counted)
        print(
            f"  Iceberg run {run + 1}/{iceberg_rounds}{'' if counted else ' (warm-up)'} done",
            flush=True,
        )
    return samples, concurrent
