"""One rule decides what runs as a map join (issue 21, part 3): for every TPC-H and star
query, the joins `prune` treats as map joins are exactly those `statlas explain --json`
marks `map`, with the same streamed (big) side, under the default settings and others;
`prune`'s threshold is explain's map_join_threshold. Made-up statistics (TPC-H SF 1 row
counts, tests/support/tpch.py): no Spark, no database."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.star_queries import QUERIES as STAR_QUERIES
from benchmarks.tpch_queries import QUERIES as TPCH_QUERIES
from optimizer.physical.api import explain_json, plan_query
from pruner.prune import plan_pruning
from tests.support.map_joins import explained_map_joins, pruned_map_joins
from tests.support.tpch import MadeUpStatistics
from tests.support.tpch_lake import Lake

QUERIES = {**TPCH_QUERIES, **STAR_QUERIES}

# explain's --config, and the same settings as prune takes them: the default, no map joins
# at all and a threshold between the dimensions' sizes (both through prune's threshold),
# and settings that change which joins are hashed (join results, key transfers)
SETTINGS: dict[str, tuple[dict[str, str], dict[str, Any]]] = {
    "default": ({}, {}),
    "no map joins": ({"map_join_threshold": "0"}, {"threshold": 0}),
    "3 MB threshold": ({"map_join_threshold": "3000000"}, {"threshold": 3_000_000}),
    "relations only": (
        {"broadcast_join_results": "0"},
        {"config": {"broadcast_join_results": "0"}},
    ),
    "no key transfer": ({"key_transfer": "0"}, {"config": {"key_transfer": "0"}}),
}


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("name", list(QUERIES))
def test_prune_takes_the_map_joins_explain_marks(name: str, setting: str) -> None:
    config, prune_settings = SETTINGS[setting]
    sql = QUERIES[name]
    explained, joins = explained_map_joins(
        explain_json(plan_query(None, sql, config=config, source=MadeUpStatistics()))
    )
    compiled = plan_pruning(None, sql, source=MadeUpStatistics(), **prune_settings)
    analysis = compiled.analysis
    assert pruned_map_joins(analysis) == explained, (name, setting)
    # every other join is reported as not a map join, with the plan's algorithm
    others = [r for r in analysis.rejected if r.reason.startswith("not a map join")]
    assert len(analysis.map_joins) + len(others) == joins, (name, setting)
    # candidates are map joins only, and the big table is a candidate's
    map_joins = {id(m.join) for m in analysis.map_joins}
    assert all(id(c.join) in map_joins for c in analysis.candidates)
    assert compiled.big is None or any(c.big is compiled.big for c in analysis.candidates)


def test_the_settings_exercise_map_joins_and_common_joins() -> None:
    """The comparison above is not vacuous: the queries have map joins under the default
    settings, none without a threshold, and fewer under 3 MB."""
    counts = {
        setting: sum(
            sum(
                explained_map_joins(
                    explain_json(plan_query(None, sql, config=config, source=MadeUpStatistics()))
                )[0].values()
            )
            for sql in QUERIES.values()
        )
        for setting, (config, _) in SETTINGS.items()
        if setting in ("default", "no map joins", "3 MB threshold")
    }
    assert counts["no map joins"] == 0
    assert 0 < counts["3 MB threshold"] < counts["default"]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.xdist_group("spark")
def test_prune_takes_the_map_joins_explain_marks_on_collected_statistics(
    tpch_lake: Lake,
) -> None:
    """The same over statistics Spark collected from TPC-H SF 0.01 (heavy hitters, sketches
    and samples: skew joins, key transfers), with the default threshold and 100 kB."""
    from optimizer.estimate.sources import MetastoreSource

    engine = tpch_lake.metastore.engine
    marked = 0
    for name, sql in QUERIES.items():
        for threshold in (None, 100_000):
            config = {} if threshold is None else {"map_join_threshold": str(threshold)}
            source = MetastoreSource(engine, memo=True)
            explained, _ = explained_map_joins(
                explain_json(plan_query(None, sql, config=config, source=source))
            )
            compiled = plan_pruning(engine, sql, threshold=threshold)
            assert pruned_map_joins(compiled.analysis) == explained, (name, threshold)
            marked += sum(explained.values())
    assert marked > len(QUERIES)
