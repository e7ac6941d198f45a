"""`estimate(engine, sql)`: the plan of a query with every node's estimates."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Engine

from optimizer.estimate.explain import estimate_json
from optimizer.estimate.predicates import SKETCH, Level
from optimizer.estimate.sources import MetastoreSource, consistently
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Node
from optimizer.sql_to_plan import build_plan

T = TypeVar("T")


def estimated(
    engine: Engine,
    sql: str,
    render: Callable[[Node, StatsQuery], T],
    level: Level = SKETCH,
    dialect: str = "spark",
) -> T:
    """`render(plan, stats)` of the query: the plan and estimates made from one committed
    state of each table it reads (started over when a collection commits meanwhile)."""
    source = MetastoreSource(engine)

    def attempt() -> T:
        plan = build_plan(sql, source.table, dialect, source.prepare)
        return render(plan, StatsQuery(source, level))

    return consistently(source, attempt)


def estimate_rows(engine: Engine, sql: str, level: Level = SKETCH, dialect: str = "spark") -> float:
    return estimated(engine, sql, lambda plan, stats: stats.of(plan).rows.value, level, dialect)


def estimate(
    engine: Engine, sql: str, level: Level = SKETCH, dialect: str = "spark"
) -> dict[str, Any]:
    return estimated(engine, sql, estimate_json, level, dialect)
