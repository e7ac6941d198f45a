"""The planner's own CPU time per query, without data files: every TPC-H and star query
planned (`optimizer.physical.api.plan_query`) over synthetic TPC-H SF 1 statistics held in
memory, with what real statistics carry (key NDVs, ranges, heavy hitters of the skewed keys,
KLL and theta sketches, a row sample per table), so the estimator's sketch and sample paths
run as they do over a collected lake.

    .venv/bin/python -m benchmarks.planner_cpu [--repeat 7] [--profile q8] [--json]

Prints per query the median and the best CPU time (this process's, so other load on the
host counts little) of `repeat` plannings (each with a fresh source
and planner, the statistics built once beforehand), and `--profile` a cProfile of one
query. `plan_fingerprint` is the chosen plan as text (tests/optimizer/test_plan_stability.py)."""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import json
import pstats
import statistics
import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
from datasketches import kll_doubles_sketch, update_theta_sketch

from benchmarks.star_queries import QUERIES as STAR
from benchmarks.tpch_queries import PARTITION_KEYS, ROWS, SCHEMA
from benchmarks.tpch_queries import QUERIES as TPCH
from metastore.catalog.discovery import Column
from metastore.catalog.lookup import PartitionQuery
from metastore.catalog.tables import PartitionKey, TableInfo
from metastore.errors import UnknownTable
from metastore.statistics.samples import (
    DEFAULT_SAMPLE_ROWS,
    WHOLE_TABLE_ROWS,
    Sample,
    as_number,
    from_number,
)
from metastore.statistics.summaries import ColumnSummary, PartitionRows, TableSummary
from metastore.types import parse_key_type
from optimizer.estimate.sources import StatisticsSource
from optimizer.physical.api import PhysicalPlan, emit, explain_json, plan_query

QUERIES: dict[str, str] = {**TPCH, **STAR}

# the key domains (1..n) and the columns drawing from each
DOMAINS = {"orderkey": 1_500_000, "partkey": 200_000, "suppkey": 10_000, "custkey": 150_000}
DOMAINS |= {"nationkey": 25, "regionkey": 5}
SKEWED = {"l_partkey", "l_suppkey", "o_custkey"}  # zipf as the star set's lake (z = 1)
SEED = 20261126
KLL_K = 200

_NATIONS = (
    (
        "ALGERIA ARGENTINA BRAZIL CANADA EGYPT ETHIOPIA FRANCE GERMANY INDIA INDONESIA IRAN IRAQ "
        "JAPAN JORDAN KENYA MOROCCO MOZAMBIQUE PERU CHINA ROMANIA SAUDI_ARABIA VIETNAM RUSSIA "
        "UNITED_KINGDOM UNITED_STATES"
    )
    .replace("_", " ")
    .split(" ")
)
_WORDS = "almond antique aquamarine azure beige forest green ivory khaki lace lime navy".split()
VOCABULARY: dict[str, list[str]] = {
    "r_name": ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"],
    "n_name": _NATIONS,
    "c_mktsegment": ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"],
    "p_brand": [f"Brand#{a}{b}" for a in range(1, 6) for b in range(1, 6)],
    "p_mfgr": [f"Manufacturer#{a}" for a in range(1, 6)],
    "p_container": [
        f"{a} {b}"
        for a in ("SM", "MED", "LG", "JUMBO", "WRAP")
        for b in ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")
    ],
    "p_type": [
        f"{a} {b} {c}"
        for a in ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
        for b in ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
        for c in ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")
    ],
    "p_name": [f"{a} {b}" for a in _WORDS for b in _WORDS if a != b],
    "l_shipmode": ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"],
    "l_shipinstruct": ["COLLECT COD", "DELIVER IN PERSON", "NONE", "TAKE BACK RETURN"],
    "l_returnflag": ["A", "N", "R"],
    "l_linestatus": ["F", "O"],
    "o_orderstatus": ["F", "O", "P"],
    "o_orderpriority": ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"],
    "c_phone": [f"{n}-{m:03d}" for n in range(10, 35) for m in range(40)],
}
_FIRST, _LAST = dt.date(1992, 1, 1), dt.date(1998, 12, 31)


def table_info(name: str) -> TableInfo:
    keys = (PARTITION_KEYS[name],) if name in PARTITION_KEYS else ()
    return TableInfo(
        900 + list(SCHEMA).index(name),
        name,
        "/data/" + name,
        "parquet",
        tuple(Column(c, t, True) for c, t in SCHEMA[name].items()),
        tuple(PartitionKey(k, parse_key_type("date")) for k in keys),
        None,
        {},
        1,
    )


@dataclass
class _Table:
    info: TableInfo
    summary: TableSummary
    sample: Sample
    keys: list[PartitionRows] = field(default_factory=list)


def _domain(column: str) -> int | None:
    suffix = column.split("_", 1)[1]
    return DOMAINS.get(suffix) if suffix.endswith("key") else None


def _zipf(domain: int, size: int, rng: np.random.Generator) -> np.ndarray:
    ranks = np.arange(1, domain + 1, dtype=np.float64)
    weights = 1.0 / ranks
    return rng.choice(np.arange(1, domain + 1), size=size, p=weights / weights.sum())


def sample_size(rows: int) -> int:
    """As collect samples: a table of at most WHOLE_TABLE_ROWS rows whole, else
    DEFAULT_SAMPLE_ROWS rows."""
    return rows if rows <= WHOLE_TABLE_ROWS else DEFAULT_SAMPLE_ROWS


def _values(column: str, type_: str, rows: int, rng: np.random.Generator) -> np.ndarray:
    """The column's sampled values as a pooled sample holds them: numbers (dates as days
    since 1970) as doubles, strings as objects."""
    size = sample_size(rows)
    domain = _domain(column)
    if domain is not None:
        if column in SKEWED:
            return _zipf(domain, size, rng).astype(np.float64)
        if rows == domain:  # the table's own key: each value once
            return rng.permutation(np.arange(1, domain + 1))[:size].astype(np.float64)
        return rng.integers(1, domain + 1, size).astype(np.float64)
    if column in VOCABULARY:
        words = np.asarray(VOCABULARY[column], dtype=object)
        return words[rng.integers(0, len(words), size)]
    if type_ == "int":
        return rng.integers(1, 51, size).astype(np.float64)
    if type_.startswith("decimal"):
        return rng.integers(0, 10_000_000, size) / 100.0
    if type_ == "date":
        first = as_number(_FIRST)
        assert first is not None
        return first + rng.integers(0, (_LAST - _FIRST).days + 1, size).astype(np.float64)
    return np.asarray([f"{column}{v}" for v in rng.integers(0, rows, size).tolist()], dtype=object)


@cache
def _theta(domain: int) -> Any:
    sketch = update_theta_sketch(12)
    for value in range(1, domain + 1):
        sketch.update(value)
    return sketch.compact()


def _summary(column: str, type_: str, rows: int, values: np.ndarray) -> ColumnSummary:
    domain = _domain(column)
    number = values.dtype == np.float64
    if domain is not None:
        ndv = float(min(domain, rows))
    elif column in VOCABULARY:
        ndv = float(len(VOCABULARY[column]))
    else:
        distinct = len(np.unique(values)) if number else len(set(values.tolist()))
        ndv = float(rows) if distinct == len(values) else float(distinct)  # near-unique
    kll, low, high = None, None, None
    if number:
        # KLL compacts at random: its quantiles of the sample are fed instead, few enough
        # (KLL_K) to be kept exactly, so every run plans over the same sketch
        kll = kll_doubles_sketch(KLL_K)
        kll.update(np.quantile(values, np.linspace(0.0, 1.0, KLL_K)))
        low, high = (from_number(float(v), type_) for v in (values.min(), values.max()))
    mcv: list[tuple[Any, int]] = []
    error = 0
    if column in SKEWED or (column in VOCABULARY and ndv <= 100):
        found, counts = np.unique(values, return_counts=True)
        scale = rows / len(values)
        top = np.argsort(-counts, kind="stable")[:20]
        mcv = [
            (from_number(float(found[i]), type_) if number else found[i], round(counts[i] * scale))
            for i in top
        ]
        error = 0 if column in VOCABULARY else round(scale)
    width = 8.0 if number else float(np.mean([len(v) for v in values[:200]]))
    return ColumnSummary(
        column,
        type_,
        0,
        low,
        high,
        ndv,
        "theta" if domain is not None else "hll",
        width,
        int(width) + 1,
        mcv,
        None,
        None,
        None,
        mcv_error=error,
        kll=kll,
        theta=_theta(domain) if domain is not None else None,
    )


@cache
def synthetic_tables() -> dict[str, _Table]:
    """Every table's statistics and sample, built once per process (deterministic)."""
    rng = np.random.default_rng(SEED)
    tables = {}
    for name, columns in SCHEMA.items():
        rows = ROWS[name]
        types = dict(columns)
        if name in PARTITION_KEYS:
            types[PARTITION_KEYS[name]] = "date"
        sampled = {c: _values(c, t, rows, rng) for c, t in types.items()}
        size = sample_size(rows)
        summaries = {c: _summary(c, t, rows, sampled[c]) for c, t in columns.items()}
        sample = Sample(sampled, np.full(size, rows / size), 1)
        summary = TableSummary(name, 1, rows, summaries)
        tables[name] = _Table(table_info(name), summary, sample)
    return tables


class SyntheticStatistics(StatisticsSource):
    """A statistics source over `synthetic_tables()`: the whole table for every selection
    (no partition statistics: a partition filter is estimated, not looked up)."""

    def __init__(self) -> None:
        self.tables = synthetic_tables()

    def _get(self, name: str) -> _Table:
        if name not in self.tables:
            raise UnknownTable(f"unknown table {name}")
        return self.tables[name]

    def table(self, name: str) -> TableInfo:
        return self._get(name).info

    def summary(self, name: str, query: PartitionQuery) -> TableSummary:
        return self._get(name).summary

    def partitions(self, name: str, query: PartitionQuery) -> list[PartitionRows]:
        return self._get(name).keys

    def sample(self, name: str, query: PartitionQuery) -> Sample | None:
        return self._get(name).sample


def plan(name: str, config: dict[str, str] | None = None) -> PhysicalPlan:
    return plan_query(None, QUERIES[name], config=config, source=SyntheticStatistics())


def plan_fingerprint(name: str, config: dict[str, str] | None = None) -> str:
    """The chosen plan of a query: explain's JSON (join order, algorithms, shuffles, each
    node's rows and costs, unrounded) and the Spark SQL emitted."""
    chosen = plan(name, config)
    explained = explain_json(chosen)
    explained["plan"] = _without_sources(explained["plan"])
    return json.dumps(explained, indent=1, default=str) + "\n--\n" + emit(chosen)


def _without_sources(node: dict[str, Any]) -> dict[str, Any]:
    """A plan node of explain's JSON without its row estimate's source and precision (which
    say how the rows were estimated, not what plan was chosen: the fingerprints recorded
    before explain gave them still hold)."""
    kept = {k: v for k, v in node.items() if k not in ("source", "precision")}
    kept["children"] = [_without_sources(child) for child in node["children"]]
    return kept


def measure(names: list[str], repeat: int) -> dict[str, dict[str, float]]:
    synthetic_tables()
    result = {}
    for name in names:
        times = []
        for _ in range(repeat):
            start = time.process_time()  # this process's CPU: other load on the host aside
            plan(name)
            times.append((time.process_time() - start) * 1000)
        result[name] = {"median_ms": statistics.median(times), "best_ms": min(times)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("queries", nargs="*", help="query names (default: every one)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", metavar="QUERY", help="cProfile one query's planning")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.profile:
        synthetic_tables()
        plan(args.profile)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.repeat):
            plan(args.profile)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
        return
    names = args.queries or list(QUERIES)
    result = measure(names, args.repeat)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    for name, figures in result.items():
        print(f"{name:4} median {figures['median_ms']:7.1f} ms  best {figures['best_ms']:7.1f} ms")
    medians = [f["median_ms"] for f in result.values()]
    print(f"total of medians {sum(medians):.0f} ms, largest {max(medians):.1f} ms")


if __name__ == "__main__":
    main()
