"""Runs of benchmarks/plans.py: the plans taking turns, warm-up rounds and repetitions, one
run of a plan under a timeout, and the comparison of two plans' rows."""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from plans_spark import configure, exchanges, plan_shape

TOLERANCE = 1e-6


@dataclass
class Outcome:
    """One run of one plan: seconds and rows, or why there are none."""

    seconds: float | None
    rows: list[tuple[Any, ...]] | None = None
    exchanges: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    shape: str = ""


def turn_order(plans: list[str], attempt: int, index: int) -> list[str]:
    """The plans' order in one repetition: rotated by repetition and query, reversed on odd
    repetitions (a fixed cyclic order would put one plan always right after the same
    other one, and make it pay for that one's memory)."""
    turn = (attempt + index) % len(plans)
    order = plans[turn:] + plans[:turn]
    return order[::-1] if attempt % 2 else order


def repetitions(seconds: float, args: argparse.Namespace) -> int:
    """Timed repetitions of a query whose slowest last warm-up run took `seconds`: --repeat, or
    more for a short query, until each plan has about --min-seconds of timed runs (at most
    --max-repeat): a median of three sub-second runs on a 2-core machine varies by a third
    between identical plans."""
    if seconds <= 0:
        return args.repeat
    wanted = math.ceil(args.min_seconds / seconds)
    return max(args.repeat, min(args.max_repeat, wanted))


def warm_up(
    spark: Any,
    texts: dict[str, str],
    plans: list[str],
    index: int,
    errors: dict[str, str],
    args: argparse.Namespace,
) -> float:
    """Untimed rounds of every plan: --warmup, and up to --short-warmup more while the query
    is short (the first run of a plan pays for listing files and compiling code, which makes
    a short query look long: its timed repetitions would be too few, and its first ones
    still warming up). The slowest run of the last round; failures go to `errors`."""
    rounds, slowest = 0, 0.0
    while rounds < args.warmup or (
        rounds < args.warmup + args.short_warmup and repetitions(slowest, args) > args.repeat
    ):
        slowest = 0.0
        for plan in turn_order(plans, rounds, index):
            if plan in errors:
                continue
            outcome = run_once(spark, texts[plan], plan, args.timeout)
            if outcome.error is not None or outcome.seconds is None:
                errors[plan] = outcome.error or "no result"
            else:
                slowest = max(slowest, outcome.seconds)
        rounds += 1
    return slowest


def run_once(spark: Any, sql: str, plan: str, timeout: float) -> Outcome:
    """`spark.sql(sql).collect()` under the plan's settings, cancelled after `timeout` s.
    A failure (of any plan) is reported, and that plan has no time for the query."""
    configure(spark, plan)
    context = spark.sparkContext
    context._jvm.java.lang.System.gc()  # the previous run's garbage is not this run's cost
    group = f"plans-{uuid.uuid4().hex}"
    expired = threading.Event()

    def cancel() -> None:
        expired.set()
        context.cancelJobGroup(group)

    context.setJobGroup(group, plan, interruptOnCancel=True)
    timer = threading.Timer(timeout, cancel)
    timer.start()
    began = time.perf_counter()
    try:
        frame = spark.sql(sql)
        rows = [tuple(r) for r in frame.collect()]
        seconds = time.perf_counter() - began
    except Exception as error:
        if expired.is_set():
            return Outcome(None, error=f"timed out after {timeout:.0f} s")
        message = "failed: " + " ".join(str(error).split())[:300]
        print(f"!!!!!!!! {plan} plan failed: {message}", file=sys.stderr, flush=True)
        return Outcome(None, error=message)
    finally:
        timer.cancel()
    return Outcome(seconds, rows, exchanges(spark, frame), shape=plan_shape(frame))


def _sort_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    key: list[Any] = []
    for value in row:
        if isinstance(value, float | Decimal):
            value = float(f"{float(value):.8g}")
        key.append((value is None, value if value is not None else 0))
    return tuple(key)


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float | Decimal) and isinstance(b, float | Decimal):
        x, y = float(a), float(b)
        return math.isclose(x, y, rel_tol=TOLERANCE, abs_tol=1e-9) or (
            math.isnan(x) and math.isnan(y)
        )
    return bool(a == b)


def difference(rows: list[tuple[Any, ...]], reference: list[tuple[Any, ...]]) -> str | None:
    """Why two results differ (rows sorted, floats and decimals to TOLERANCE), or None."""
    if len(rows) != len(reference):
        return f"{len(rows)} rows, not {len(reference)}"
    for number, (row, want) in enumerate(
        zip(sorted(rows, key=_sort_key), sorted(reference, key=_sort_key), strict=True)
    ):
        if len(row) != len(want) or not all(map(_same_value, row, want)):
            return f"sorted row {number}: {row!r}, not {want!r}"
    return None
