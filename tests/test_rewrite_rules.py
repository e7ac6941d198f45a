"""The rewrite rules of a WHERE's conjuncts (optimizer.rewrite), each on its fixture file of
pairs (tests/fixtures/rewrite/<rule>.sql: a conjunct, then the conjuncts that replace it
joined by AND; `rules.sql` runs RULES in order), and their docstrings' examples."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest
import sqlglot

from optimizer import rewrite
from optimizer.plan import conjunction
from optimizer.rewrite import ConjunctRule, rewrite_conjunct
from optimizer.rewrite.factor_or import factor_or
from optimizer.rewrite.fold_constants import fold_constants

FIXTURES = Path(__file__).parent / "fixtures" / "rewrite"
RULES: dict[str, ConjunctRule] = {
    "fold_constants": fold_constants,
    "factor_or": factor_or,
    "rules": rewrite_conjunct,
}


def pairs(name: str) -> list[tuple[str, str]]:
    blocks = (FIXTURES / f"{name}.sql").read_text().split("\n\n")
    lines = [[ln for ln in b.splitlines() if ln and not ln.startswith("#")] for b in blocks]
    return [(given, expected) for given, expected in (b for b in lines if b)]


CASES = [(name, given, expected) for name in RULES for given, expected in pairs(name)]


def test_every_rule_has_its_fixtures_and_runs_in_rules() -> None:
    assert {p.stem for p in FIXTURES.glob("*.sql")} == set(RULES)
    assert set(rewrite.RULES) == {fold_constants, factor_or}


@pytest.mark.parametrize(("name", "given", "expected"), CASES)
def test_rule_on_its_fixture(name: str, given: str, expected: str) -> None:
    result = RULES[name](sqlglot.parse_one(given, read="spark"))
    combined = conjunction(result)
    assert combined is not None
    assert combined.sql("spark") == expected


@pytest.mark.parametrize("name", ["fold_constants", "factor_or"])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"optimizer.rewrite.{name}")
    failed, tried = doctest.testmod(module)
    assert tried > 0
    assert failed == 0
