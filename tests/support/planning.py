"""Physical plans without Spark or a database (`planned`), and what the tests read in the
Spark SQL emitted from them (`hints`)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from optimizer.estimate.sources import StatisticsSource
from optimizer.physical.api import PhysicalPlan, plan_query
from tests.support.tpch import MadeUpStatistics

MADE_UP = MadeUpStatistics()


def planned(sql: str, source: StatisticsSource = MADE_UP, **config: str) -> PhysicalPlan:
    """`sql` planned over `source` (made-up TPC-H statistics unless given) with the planner
    settings `config`."""
    return plan_query(None, sql, config=config, source=source)


def hints(sql: str) -> list[str]:
    """The join hints of emitted Spark SQL, sorted."""
    tree = sqlglot.parse_one(sql, read="spark")
    return sorted(h.sql(dialect="spark") for h in tree.find_all(exp.JoinHint))
