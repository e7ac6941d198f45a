"""A request's figures are freed when the request ends, by reference counting alone (issue
22): nothing a request's estimates hold (a scan's row sample, its filter's kept rows) refers
back to the request, so no reference cycle keeps their arrays until the garbage collector
runs (in the daemon, long after the request, its arrays' heap pages no longer handed back).
Over the synthetic TPC-H statistics of benchmarks/planner_cpu (row samples and sketches)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from benchmarks.planner_cpu import SyntheticStatistics
from optimizer.estimate.explain import estimate_json
from optimizer.estimate.predicates import SKETCH
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Scan, walk
from optimizer.sql_to_plan import build_plan

QUERY = (
    "SELECT o.o_orderpriority, COUNT(*) FROM lineitem l JOIN orders o "
    "ON l.l_orderkey = o.o_orderkey WHERE l.l_quantity < 10 AND o.o_orderdate < "
    "DATE '1995-01-01' GROUP BY o.o_orderpriority"
)


@cache
def source() -> SyntheticStatistics:
    return SyntheticStatistics()


@contextmanager
def no_garbage_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def test_a_requests_estimates_are_freed_without_the_garbage_collector() -> None:
    plan = build_plan(QUERY, source().table)
    with no_garbage_collector():
        stats = StatsQuery(source(), SKETCH)
        estimate_json(plan, stats)
        scans = [n for n in walk(plan) if isinstance(n, Scan)]
        samples = [stats.of(n).sample for n in scans]
        assert len(scans) == 2
        assert all(s is not None for s in samples)  # the figures hold their row samples
        request, figures = weakref.ref(stats), weakref.ref(stats.of(scans[0]))
        del stats, samples
        assert request() is None  # no cycle through the scans' samples
        assert figures() is None
