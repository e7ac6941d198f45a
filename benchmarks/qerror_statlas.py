"""statlas as an estimator of the q-error harness (benchmarks/qerror.py).

Per variant: a SQLite metastore under benchmarks/.data/ with every TPC-H table registered
and collected (incrementally: a second run scans nothing), then, per query, the estimated
rows of the input of its COUNT(*) at each level. Estimates come from statistics only.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from collectors.collect import collect_tables
from collectors.spark_session import LazySession
from metastore import Metastore
from optimizer.estimate.sources import MetastoreSource
from optimizer.estimate.stats_query import StatsQuery
from optimizer.plan import Aggregate, Node, Project
from optimizer.sql_to_plan import build_plan

TABLES = ("lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region")
LEVELS = ("basic", "histogram", "sketch")


def metastore_for(root: Path, scale: str, variant: str, directory: Path, spark: Any) -> Metastore:
    """The variant's metastore, registered and collected (nothing is rescanned when the
    data did not change)."""
    path = root / f"qerror-statlas-sf{scale}-{variant}.db"
    metastore = Metastore(f"sqlite:///{path}")
    metastore.upgrade()
    register_and_collect(metastore, directory, TABLES, spark)
    return metastore


def register_and_collect(
    metastore: Metastore,
    directory: Path,
    tables: Iterable[str],
    spark: Any,
    properties: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Each table of `directory` registered (with its `properties`, if any), then all of
    them collected in one run (`statlas collect` of several tables: nothing rescanned when
    the data did not change; a table sampled before the tables referencing it sampled
    again), partition values read as text as statlas types them itself; prints each
    collection's partitions scanned and seconds."""
    inference = spark.conf.get("spark.sql.sources.partitionColumnTypeInference.enabled")
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        names = list(tables)
        for table in names:
            own = (properties or {}).get(table)
            metastore.register_table(table, str(directory / table), properties=own)
        started = time.perf_counter()
        for outcome in collect_tables(
            metastore.engine, names, spark=LazySession.of(spark, None, None)
        ):
            if outcome.error is not None:
                raise outcome.error
            assert outcome.report is not None
            seconds, started = time.perf_counter() - started, time.perf_counter()
            print(
                f"{outcome.table}: {outcome.report.partitions_scanned} partitions scanned"
                f" in {seconds:.1f} s"
            )
    finally:
        spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", inference)


def count_input(plan: Node) -> Node:
    """The node whose rows a `SELECT COUNT(*) FROM ... WHERE ...` counts."""
    node = plan
    while isinstance(node, Project):
        node = node.child
    if isinstance(node, Aggregate) and not node.group_by:
        return node.child
    return node


_SOURCES: dict[int, MetastoreSource] = {}


def estimate_count_input(metastore: Metastore, sql: str, level: str) -> float:
    """Rows of the query's COUNT(*) input; each table's statistics of a partition selection
    are read and merged once per run (they do not change between queries)."""
    source = _SOURCES.setdefault(id(metastore), MetastoreSource(metastore.engine, memo=True))
    plan = build_plan(sql, source.table)
    return StatsQuery(source, level).of(count_input(plan)).rows.value


def estimators(
    metastore_of: Callable[[str], Metastore], sql_of: Callable[[Any, str], str]
) -> dict[str, Callable[[Any, str], float | None]]:
    """{"statlas-<level>": estimate(query, variant)} over the variant's metastore."""

    def make(level: str) -> Callable[[Any, str], float | None]:
        def estimate(query: Any, variant: str) -> float | None:
            return estimate_count_input(metastore_of(variant), sql_of(query, variant), level)

        return estimate

    return {f"statlas-{level}": make(level) for level in LEVELS}
