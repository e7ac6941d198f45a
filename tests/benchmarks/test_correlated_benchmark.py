"""benchmarks/correlated_data.py and correlated_queries.py (issue 47's benchmark): the data
are deterministic and correlated as documented, and the per-key counting gives COUNT(*)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.support.repository import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import correlated_data
import correlated_queries


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("correlated")
    return {v: correlated_data.build(v, root, 0.01) for v in correlated_data.VARIANTS}


def degrees(table: object, column: str, owners: int) -> np.ndarray:
    keys = table[column].to_numpy()  # type: ignore[index]
    return np.bincount(keys, minlength=owners + 1)[1:]


def test_generation_is_deterministic_and_the_variants_differ() -> None:
    first = correlated_data.generate("correlated", 0.01)
    assert first["posts"].equals(correlated_data.generate("correlated", 0.01)["posts"])
    anti = correlated_data.generate("anti", 0.01)
    owners = first["owners"].num_rows
    correlated = np.corrcoef(
        degrees(first["posts"], "p_owner", owners), degrees(first["comments"], "c_owner", owners)
    )[0, 1]
    reversed_ = np.corrcoef(
        degrees(anti["posts"], "p_owner", owners), degrees(anti["comments"], "c_owner", owners)
    )[0, 1]
    assert correlated > 0.9
    assert reversed_ < 0.1


def test_workload_shapes() -> None:
    queries = correlated_queries.QUERIES
    assert 60 <= len(queries) <= 100
    assert {q.tables for q in queries} == {1, 2, 3, 4, 5, 6}
    assert len({q.name for q in queries}) == len(queries)
    sql = {q.name: q.sql for q in queries}
    assert sql["p_o_c_none"] == (
        "SELECT COUNT(*) FROM posts p JOIN owners o ON p.p_owner = o.o_id "
        "JOIN comments c ON c.c_owner = o.o_id"
    )


@pytest.mark.slow
def test_counting_per_key_is_count_star(tiny: dict[str, Path]) -> None:
    checked = 0
    for directory in tiny.values():
        connection = correlated_queries.duckdb_views(directory)
        for query in correlated_queries.QUERIES:
            exact = correlated_queries.exact_count(connection, query)
            if exact < 5_000_000:  # small enough to enumerate
                assert exact == correlated_queries.plain_count(connection, query), query.name
                checked += 1
        connection.close()
    assert checked > 120
