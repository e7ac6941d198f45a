"""`estimate(engine, sql)`: the plan of a query with every node's estimates."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from optimizer.estimate.predicates import SKETCH
from optimizer.estimate.stats_query import MetastoreSource, StatsQuery
from optimizer.plan import Node
from optimizer.sql_to_plan import build_plan


def plan_and_stats(
    engine: Engine, sql: str, level: str = SKETCH, dialect: str = "spark"
) -> tuple[Node, StatsQuery]:
    source = MetastoreSource(engine)
    plan = build_plan(sql, source.table, dialect)
    return plan, StatsQuery(source, level)


def estimate_rows(engine: Engine, sql: str, level: str = SKETCH, dialect: str = "spark") -> float:
    plan, stats = plan_and_stats(engine, sql, level, dialect)
    return stats.of(plan).rows.value


def estimate(
    engine: Engine, sql: str, level: str = SKETCH, dialect: str = "spark"
) -> dict[str, Any]:
    from optimizer.estimate.explain import estimate_json

    plan, stats = plan_and_stats(engine, sql, level, dialect)
    return estimate_json(plan, stats)
