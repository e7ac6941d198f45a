"""LEFT outer joins whose NULLs the WHERE rejects are planned as inner joins
(optimizer.rewrite.outer_to_inner); those whose NULLs a row may keep stay LEFT joins."""

from __future__ import annotations

import pytest
import sqlglot

from optimizer.rewrite.outer_to_inner import outer_to_inner

FROM = "SELECT s.a FROM s AS s LEFT OUTER JOIN r AS r ON s.k = r.k, x AS x WHERE "


@pytest.mark.parametrize(
    "where",
    [
        "r.c = x.c",
        "x.c < r.c",
        "r.c BETWEEN 1 AND 2",
        "r.c IN (1, 2)",
        "r.name LIKE 'a%'",
        "NOT r.c IS NULL",
        "x.d = 1 AND r.c <> 3",
    ],
)
def test_a_conjunct_false_on_the_added_nulls_makes_the_join_inner(where: str) -> None:
    tree = sqlglot.parse_one(FROM + where, read="spark")
    assert outer_to_inner(tree) == 1
    assert "LEFT" not in tree.sql(dialect="spark")


@pytest.mark.parametrize(
    "where",
    [
        "r.c IS NULL",  # the anti-join idiom: the added rows are the ones kept
        "COALESCE(r.c, 0) = 0",  # true on a NULL
        "r.c = 1 OR x.d = 1",  # not a conjunct
        "NOT r.c IN (1, 2)",
        "x.c = 1",  # reads the left side only
        "r.c IN (SELECT y.c FROM y AS y)",
    ],
)
def test_a_join_whose_nulls_a_row_may_keep_stays_left(where: str) -> None:
    tree = sqlglot.parse_one(FROM + where, read="spark")
    assert outer_to_inner(tree) == 0
    assert "LEFT OUTER JOIN" in tree.sql(dialect="spark")


def test_only_the_rejected_join_of_a_chain_turns() -> None:
    tree = sqlglot.parse_one(
        "SELECT s.a FROM s AS s LEFT JOIN r AS r ON s.k = r.k LEFT JOIN q AS q ON r.j = q.j "
        "WHERE q.c > 0",
        read="spark",
    )
    assert outer_to_inner(tree) == 1
    assert tree.sql(dialect="spark") == (
        "SELECT s.a FROM s AS s LEFT JOIN r AS r ON s.k = r.k JOIN q AS q ON r.j = q.j "
        "WHERE q.c > 0"
    )
