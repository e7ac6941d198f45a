"""The report of benchmarks/hms_vs_hive.py: the tables of medians and ratios, of adding the
partitions and of the (h) check, and the measures that failed."""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from benchmarks.hms_vs_hive_measures import SHAPES
from benchmarks.hms_vs_hive_metastores import SIDES, Side


def report(
    samples: dict[str, dict[str, list[float]]],
    concurrent: dict[str, Any],
    sides: dict[str, Side],
    filled: dict[str, float],
    partitions: int,
    args: argparse.Namespace,
) -> None:
    rates = {
        "e": "(e) get_table, one connection",
        "f": "(f) lock + unlock, one connection",
        "g": "(g) Iceberg appends, 1 client",
        "h": f"(h) Iceberg appends, {args.writers} clients, one table",
    }
    print()
    print(
        f"statlas vs Hive 2.3.10, both on PostgreSQL; {partitions:,} partitions; medians of "
        f"{args.runs} runs ({args.iceberg_runs} for Iceberg) after {args.warmup} warm-up"
    )
    print()
    print(
        "| measure | statlas ms | Hive ms | statlas calls/s | Hive calls/s | statlas/Hive (time) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for key, label in [*SHAPES.items(), *rates.items()]:
        seconds: dict[str, float | None] = {}
        for name in SIDES:
            values = samples.get(key, {}).get(name)
            if not values:
                seconds[name] = None
            elif key in rates:  # per-run rates: time of one operation
                seconds[name] = 1 / statistics.median(values)
            else:
                seconds[name] = statistics.median(values)
        cells = []
        for name in SIDES:
            value = seconds[name]
            cells.append("n/a" if value is None else f"{value * 1000:,.2f}")
        for name in SIDES:
            value = seconds[name]
            cells.append("n/a" if value is None else f"{1 / value:,.1f}")
        s, h = seconds["statlas"], seconds["hive"]
        cells.append("n/a" if s is None or h is None else f"{s / h:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("| adding the partitions (add_partitions, one run) | statlas | Hive |")
    print("|---|---:|---:|")
    print(
        f"| {partitions:,} partitions, batches of {args.batch:,}: seconds (partitions/s) | "
        + " | ".join(f"{filled[n]:.1f} ({partitions / filled[n]:,.0f}/s)" for n in SIDES)
        + " |"
    )
    print()
    print(
        f"| (h) check: {args.writers} clients x {args.writer_appends} appends | "
        "acknowledged | conflicts retried | pyiceberg's own retries | lock waits | snapshots "
        "| rows | exactly the acknowledged |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name in SIDES:
        for index, result in enumerate(concurrent.get(name, [])):
            print(
                f"| {name} run {index + 1} | {result.acknowledged} | {result.conflicts} | "
                f"{result.pyiceberg_retries} | {result.lock_waits} | {result.snapshots} | "
                f"{result.rows} | {'yes' if result.exact else 'NO'} |"
            )
        if not concurrent.get(name):
            print(f"| {name} | n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
    failures = [
        (side.name, key, error) for side in sides.values() for key, error in side.errors.items()
    ]
    if failures:
        print()
        print("Failed measures (not timed from then on):")
        for name, key, error in failures:
            print(f"- {name} ({key}): {error}")
