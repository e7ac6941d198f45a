"""The daemon imports at start what its requests import on first use (issue 22,
servers.preload): estimating and planning the TPC-H queries afterwards, over the
synthetic statistics of benchmarks/planner_cpu (row samples and sketches), imports nothing
more. In a fresh interpreter: this process has imported them already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from servers.preload import import_request_modules
from benchmarks import tpch_queries
from benchmarks.planner_cpu import SyntheticStatistics, plan
from optimizer.estimate.explain import estimate_json
from optimizer.estimate.stats_query import StatsQuery
from optimizer.physical.api import emit, explain_json
from optimizer.sql_to_plan import build_plan

import_request_modules()
source = SyntheticStatistics()
before = set(sys.modules)
for name, sql in tpch_queries.QUERIES.items():
    estimate_json(build_plan(sql, source.table), StatsQuery(source, "sketch"))
    physical = plan(name)
    explain_json(physical)
    emit(physical)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_requests_import_nothing_after_the_daemons_start() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
