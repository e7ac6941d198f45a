"""benchmarks/latency.py: its pure helpers (percentiles, the synthetic month, verdicts), in
latency_measure, latency_workload and latency_report."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any

import pytest

from tests.support.repository import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import latency_measure
import latency_report
import latency_workload


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 20 requests
    assert latency_measure.percentile(values, 0.5) == 11.0
    assert latency_measure.percentile(values, 0.95) == 19.0  # not the slowest of 20
    assert latency_measure.percentile(values[::-1], 0.95) == 19.0
    assert latency_measure.percentile([7.0], 0.95) == 7.0


def test_latency_summary_keeps_the_first_request_as_cold() -> None:
    summary = latency_measure.latency_summary([0.5, 0.01, 0.02, 0.03])
    assert summary["cold"] == 500.0
    assert summary["max"] == 500.0
    assert summary["p50"] == pytest.approx(25.0)
    assert summary["n"] == 4
    assert latency_measure.latency_summary([])["p95"] is None


def test_month_range_is_one_calendar_month_inside_the_table() -> None:
    first = latency_workload.FIRST_DAY
    assert latency_workload.month_range(1000) == (dt.date(2021, 5, 1), dt.date(2021, 5, 31))
    assert latency_workload.month_range(60) == (dt.date(2020, 1, 1), dt.date(2020, 1, 31))
    assert latency_workload.month_range(10) == (first, first + dt.timedelta(days=9))
    for days in (1, 29, 31, 45, 366, 1000):
        start, end = latency_workload.month_range(days)
        assert first <= start <= end <= first + dt.timedelta(days=days - 1)
        assert start.month == end.month
        assert (end - start).days <= 30


def test_synthetic_queries() -> None:
    queries = latency_workload.synthetic_queries(1000)
    assert queries["whole"] == "SELECT COUNT(*) FROM synthetic"
    assert "day BETWEEN DATE '2021-05-01' AND DATE '2021-05-31'" in queries["month"]


def test_chosen_queries() -> None:
    chosen = latency_workload.chosen_queries(["tpch", "star", "synthetic"], ["q1", "s2"])
    assert {name: list(q) for name, q in chosen.items()} == {"tpch": ["q1"], "star": ["s2"]}
    assert list(latency_workload.chosen_queries(["tpch", "star"], ["q3"])) == ["tpch"]
    assert len(latency_workload.chosen_queries(["tpch"], [])["tpch"]) == 22
    with pytest.raises(SystemExit):
        latency_workload.chosen_queries(["tpch"], ["s1"])


def test_split_list() -> None:
    assert latency_workload.split_list(
        "postgres, sqlite,postgres", latency_workload.ALL_DBS, "dbs"
    ) == [
        "postgres",
        "sqlite",
    ]
    with pytest.raises(SystemExit):
        latency_workload.split_list("mysql", latency_workload.ALL_DBS, "dbs")


def test_verdict_says_by_how_much() -> None:
    met = latency_report.verdict({"q1": 12.0, "q3": 31.0}, 50.0)
    assert met["met"]
    assert met["worst"] == "q3"
    assert "0.62 x the limit" in met["text"]
    missed = latency_report.verdict({"q1": 12.0, "q3": 150.0, "q9": 4500.0}, 50.0)
    assert not missed["met"]
    assert missed["over"] == ["q3", "q9"]
    assert "worst q9 4,500 ms (90.00 x the limit); 2 of 3 over, by 4,450 ms" in missed["text"]
    failed = latency_report.verdict({"q1": 12.0, "q2": None}, 50.0)
    assert not failed["met"]
    assert failed["missing"] == ["q2"]
    assert not latency_report.verdict({}, 50.0)["met"]


def test_summarize_per_database() -> None:
    def record(
        name: str, db: str, estimate: float, explain: float, spark: float | None
    ) -> dict[str, Any]:
        return {
            "set": "synthetic" if name in ("whole", "month") else "tpch",
            "db": db,
            "query": name,
            "estimate": {"p95": estimate},
            "explain": {"p95": explain, "p50": explain},
            "spark": None if spark is None else {"plan_ms": spark},
            "ratio": None if spark is None else explain / spark,
        }

    records = [
        record("q1", "sqlite", 20.0, 90.0, 100.0),
        record("q3", "sqlite", 80.0, 150.0, 50.0),
        record("whole", "sqlite", 10.0, 10.0, None),
        record("month", "sqlite", 60.0, 10.0, None),
    ]
    memory = {
        "tpch on sqlite": {
            "start": {"vmrss": 150.0},
            "end": {"vmrss": 420.0},  # before the daemon handed back its requests' memory
            "settled": {"vmrss": 300.0},
        }
    }
    summary = latency_report.summarize(records, memory, ["sqlite"])["sqlite"]
    assert not summary["estimate_p95"]["met"]
    assert summary["estimate_p95"]["over"] == ["q3"]
    assert summary["explain_p95"]["met"]
    assert summary["planning_vs_spark"]["over"] == ["q3"]
    assert summary["synthetic_estimate_p95"]["over"] == ["synthetic month"]
    assert summary["memory_growth"]["met"]  # 150 MB <= 256 MB


def test_answer_figures() -> None:
    estimate = json.dumps({"rows": 5.5, "level": "sketch", "plan": {}}).encode()
    assert latency_measure.answer_figures(estimate) == {"rows": 5.5, "level": "sketch"}
    explain = {"jobs": {"before": 2, "after": 1}, "cost": {"total": 3.0}, "plan": {}}
    assert latency_measure.answer_figures(json.dumps(explain).encode()) == {
        "jobs": {"before": 2, "after": 1},
        "cost": {"total": 3.0},
    }
    assert latency_measure.answer_figures(b"not json") == {}
