"""Every TPC-H and star query's chosen plan over the planner benchmark's synthetic statistics
(benchmarks/planner_cpu.py) is the one recorded in tests/fixtures/plan_fingerprints.json:
explain's JSON (join order, algorithms, shuffles, every node's rows and costs) and the Spark
SQL emitted, in full for the default settings, as a SHA-256 for the settings of VARIANTS
(bushy trees; greedy ordering above four relations). A change to the planner that only makes
it faster must leave them all as they are; a change meant to alter plans re-records them
and says so:

    .venv/bin/python -m tests.optimizer.test_plan_stability --update
"""

from __future__ import annotations

import difflib
import hashlib
import json
import sys

import pytest

from benchmarks.planner_cpu import QUERIES, plan_fingerprint
from tests.support.repository import FIXTURES

FIXTURE = FIXTURES / "plan_fingerprints.json"
VARIANTS = {"bushy": {"bushy": "1"}, "greedy": {"greedy_above": "4"}}


def recorded() -> dict[str, str]:
    return json.loads(FIXTURE.read_text())  # type: ignore[no-any-return]


def digest(name: str, variant: str) -> str:
    return hashlib.sha256(plan_fingerprint(name, VARIANTS[variant]).encode()).hexdigest()


def test_every_query_is_recorded() -> None:
    keys = set(QUERIES) | {f"{name} {variant}" for name in QUERIES for variant in VARIANTS}
    assert set(recorded()) == keys


@pytest.mark.parametrize("name", list(QUERIES))
def test_chosen_plan_is_unchanged(name: str) -> None:
    expected, actual = recorded()[name], plan_fingerprint(name)
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "recorded", "planned", lineterm=""
        )
        pytest.fail(f"{name}'s plan changed:\n" + "\n".join(list(diff)[:80]))


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("name", list(QUERIES))
def test_chosen_plan_under_other_settings_is_unchanged(name: str, variant: str) -> None:
    assert digest(name, variant) == recorded()[f"{name} {variant}"]


def main() -> None:
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python -m tests.optimizer.test_plan_stability --update")
    fingerprints = {name: plan_fingerprint(name) for name in QUERIES}
    for variant in VARIANTS:
        fingerprints |= {f"{name} {variant}": digest(name, variant) for name in QUERIES}
    FIXTURE.write_text(json.dumps(fingerprints, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(fingerprints)} plans in {FIXTURE}")


if __name__ == "__main__":
    main()
