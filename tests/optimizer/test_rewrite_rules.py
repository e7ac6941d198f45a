"""The rewrite rules of a WHERE's conjuncts (optimizer.rewrite), each on its fixture file of
pairs (tests/fixtures/rewrite/<rule>.sql: a conjunct, then the conjuncts that replace it
joined by AND; `rules.sql` runs RULES in order); the push-down on its fixture file of
queries and the plans they map to (`push_down.sql`); and their docstrings' examples."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from optimizer import rewrite
from optimizer.estimate.explain import detail
from optimizer.plan import Aggregate, Join, Node, Project, conjunction, walk
from optimizer.rewrite import ConjunctRule, rewrite_conjunct
from optimizer.rewrite.factor_correlation import factor_correlations
from optimizer.rewrite.factor_or import factor_or
from optimizer.rewrite.fold_constants import fold_constants
from optimizer.sql_to_plan import build_plan
from tests.support.tpch import tpch_lookup

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rewrite"
RULES: dict[str, ConjunctRule] = {
    "fold_constants": fold_constants,
    "factor_or": factor_or,
    "rules": rewrite_conjunct,
}


def pairs(name: str) -> list[tuple[str, str]]:
    """The fixture file's blocks: the given line, then the expected lines."""
    blocks = (FIXTURES / f"{name}.sql").read_text().split("\n\n")
    lines = [[ln for ln in b.splitlines() if ln and not ln.startswith("#")] for b in blocks]
    return [(block[0], "\n".join(block[1:])) for block in lines if block]


CASES = [(name, given, expected) for name in RULES for given, expected in pairs(name)]


def test_every_rule_has_its_fixtures_and_runs_in_rules() -> None:
    assert {p.stem for p in FIXTURES.glob("*.sql")} == set(RULES) | {"push_down"}
    assert set(rewrite.RULES) == {fold_constants, factor_or}


@pytest.mark.parametrize(("name", "given", "expected"), CASES)
def test_rule_on_its_fixture(name: str, given: str, expected: str) -> None:
    result = RULES[name](sqlglot.parse_one(given, read="spark"))
    combined = conjunction(result)
    assert combined is not None
    assert combined.sql("spark") == expected


def rendered(node: Node, depth: int = 0) -> list[str]:
    lines = [f"{'  ' * depth}{node.op} {detail(node)}".rstrip()]
    for child in node.children:
        lines += rendered(child, depth + 1)
    return lines


@pytest.mark.parametrize(("sql", "expected"), pairs("push_down"))
def test_push_down_on_its_fixture(sql: str, expected: str) -> None:
    plan = build_plan(sql, tpch_lookup)
    assert isinstance(plan, Project)
    assert "\n".join(rendered(plan.child)) == expected


@pytest.mark.parametrize("name", ["fold_constants", "factor_or", "push_down", "merge_aggregates"])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"optimizer.rewrite.{name}")
    failed, tried = doctest.testmod(module)
    assert tried > 0
    assert failed == 0


COUNTED = (
    "SELECT p.p_name FROM part p WHERE (SELECT COUNT(*) FROM partsupp ps WHERE "
    "(ps.ps_partkey = p.p_partkey AND ps.ps_availqty > 10) OR "
    "(ps.ps_partkey = p.p_partkey AND ps.ps_supplycost < 5)) > 0"
)


def test_a_correlation_common_to_an_ors_branches_is_factored_out_of_it() -> None:
    # TPC-DS q41's shape: the correlation equality in every branch of the subquery's OR;
    # factored out, the subquery is decorrelated (an aggregate by the correlated key joined
    # on it), as Spark's BooleanSimplification lets Spark do
    statement = sqlglot.parse_one(COUNTED, read="spark")
    factor_correlations(statement)
    inner = statement.find(exp.Subquery)
    assert inner is not None
    where = inner.this.args["where"].this.sql("spark")
    assert where == (
        "ps.ps_partkey = p.p_partkey AND (ps.ps_availqty > 10 OR ps.ps_supplycost < 5)"
    )
    plan = build_plan(COUNTED, tpch_lookup)
    joins = [n for n in walk(plan) if isinstance(n, Join)]
    assert len(joins) == 1
    assert joins[0].keys == ((("p", "p_partkey"), (joins[0].keys[0][1][0], "ps_partkey")),)
    assert isinstance(joins[0].right, Aggregate)


def test_an_or_without_a_common_correlation_is_left_as_written() -> None:
    for sql in (
        # the common conjunct is not correlated
        "SELECT p.p_name FROM part p WHERE (SELECT COUNT(*) FROM partsupp ps WHERE "
        "(ps.ps_availqty > 10 AND ps.ps_partkey = p.p_partkey) OR "
        "(ps.ps_availqty > 10 AND ps.ps_supplycost < 5)) > 0",
        # no common conjunct
        "SELECT p.p_name FROM part p WHERE (SELECT COUNT(*) FROM partsupp ps WHERE "
        "(ps.ps_partkey = p.p_partkey AND ps.ps_availqty > 10) OR ps.ps_supplycost < 5) > 0",
    ):
        statement = sqlglot.parse_one(sql, read="spark")
        before = statement.sql("spark")
        factor_correlations(statement)
        assert statement.sql("spark") == before
