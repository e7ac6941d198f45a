"""The physical planner on statistics Spark collected into each database: Hive's correlation
optimizer's three examples (docs/design.md#correlation-optimizer; jobs before and after), join
order, map-join stages, and `--emit spark` SQL that runs on Spark with the original's rows."""

from __future__ import annotations

import contextlib
import datetime as dt
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metastore import Metastore
from optimizer.physical.api import emit, explain_json, explain_text, plan_query
from optimizer.physical.plan import PhysicalNode
from tests.support.databases import BACKENDS, postgres_schema

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

# Hive's Example 1 (its ON names t2, which the query does not read: t1 is meant)
EXAMPLE_1 = """
SELECT tmp1.key, count(*)
FROM (SELECT key, avg(value) AS avg FROM t1 GROUP BY key) tmp1
JOIN t1 ON (tmp1.key = t1.key)
WHERE t1.value > tmp1.avg
GROUP BY tmp1.key"""

# Hive's Example 2 (it selects tmp1.key but groups by t1.key, which Spark rejects: t1.key here)
EXAMPLE_2 = """
SELECT t1.key, count(*)
FROM t1
JOIN (SELECT key, avg(value) AS avg FROM t1 GROUP BY key) tmp1 ON (t1.key = tmp1.key)
JOIN t2 ON (tmp1.key = t2.key)
WHERE t2.value > tmp1.avg
GROUP BY t1.key"""

EXAMPLE_3 = """
SELECT count(distinct ws1.ws_order_number) as order_count,
       sum(ws1.ws_ext_ship_cost) as total_shipping_cost,
       sum(ws1.ws_net_profit) as total_net_profit
FROM web_sales ws1
JOIN customer_address ca ON (ws1.ws_ship_addr_sk = ca.ca_address_sk)
JOIN web_site s ON (ws1.ws_web_site_sk = s.web_site_sk)
JOIN date_dim d ON (ws1.ws_ship_date_sk = d.d_date_sk)
LEFT SEMI JOIN (SELECT ws2.ws_order_number as ws_order_number
                FROM web_sales ws2 JOIN web_sales ws3
                ON (ws2.ws_order_number = ws3.ws_order_number)
                WHERE ws2.ws_warehouse_sk <> ws3.ws_warehouse_sk) ws_wh1
ON (ws1.ws_order_number = ws_wh1.ws_order_number)
LEFT SEMI JOIN (SELECT wr_order_number
                FROM web_returns wr
                JOIN (SELECT ws4.ws_order_number as ws_order_number
                      FROM web_sales ws4 JOIN web_sales ws5
                      ON (ws4.ws_order_number = ws5.ws_order_number)
                      WHERE ws4.ws_warehouse_sk <> ws5.ws_warehouse_sk) ws_wh2
                ON (wr.wr_order_number = ws_wh2.ws_order_number)) tmp1
ON (ws1.ws_order_number = tmp1.wr_order_number)
WHERE d.d_date >= '2001-05-01' and d.d_date <= '2001-06-30' and ca.ca_state = 'NC'
  and s.web_company_name = 'pri'"""

STAR = """
SELECT s.name, count(*) FROM sales f
JOIN stores s ON f.store = s.id
JOIN products p ON f.product = p.id
JOIN days d ON f.day = d.id
WHERE d.holiday AND p.color = 'red'
GROUP BY s.name"""

NO_MAP_JOINS = {"map_join_threshold": "0"}


def _write(root: Path, name: str, columns: dict[str, pa.Array]) -> None:
    (root / name).mkdir()
    pq.write_table(pa.table(columns), root / name / "part-0.parquet")


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(6)
    root = tmp_path_factory.mktemp("lake")
    for name, rows in (("t1", 3000), ("t2", 2000)):
        _write(
            root,
            name,
            {
                "key": pa.array([i % 300 for i in range(rows)], pa.int64()),
                "value": pa.array([rng.random() * 100 for _ in range(rows)], pa.float64()),
            },
        )
    n = 30_000
    _write(
        root,
        "web_sales",
        {
            "ws_order_number": pa.array([i // 3 for i in range(n)], pa.int64()),
            "ws_warehouse_sk": pa.array([rng.randrange(1, 6) for _ in range(n)], pa.int64()),
            "ws_ship_addr_sk": pa.array([rng.randrange(1, 51) for _ in range(n)], pa.int64()),
            "ws_web_site_sk": pa.array([rng.randrange(1, 6) for _ in range(n)], pa.int64()),
            "ws_ship_date_sk": pa.array([rng.randrange(1, 121) for _ in range(n)], pa.int64()),
            "ws_ext_ship_cost": pa.array([rng.random() for _ in range(n)], pa.float64()),
            "ws_net_profit": pa.array([rng.random() for _ in range(n)], pa.float64()),
        },
    )
    states = ["NC", "CA", "TX", "NY", "WA"]
    _write(
        root,
        "customer_address",
        {
            "ca_address_sk": pa.array(range(1, 51), pa.int64()),
            "ca_state": [states[i % 5] for i in range(50)],
        },
    )
    companies = ["pri", "ought", "able", "ese", "anti"]
    _write(
        root,
        "web_site",
        {"web_site_sk": pa.array(range(1, 6), pa.int64()), "web_company_name": companies},
    )
    start = dt.date(2001, 4, 1)
    _write(
        root,
        "date_dim",
        {
            "d_date_sk": pa.array(range(1, 121), pa.int64()),
            "d_date": pa.array([start + dt.timedelta(days=i) for i in range(120)], pa.date32()),
        },
    )
    _write(
        root,
        "web_returns",
        {"wr_order_number": pa.array([rng.randrange(10_000) for _ in range(600)], pa.int64())},
    )
    # a star: 20,000 sales, three dimensions
    _write(
        root,
        "sales",
        {
            "store": pa.array([rng.randrange(50) for _ in range(20_000)], pa.int64()),
            "product": pa.array([rng.randrange(400) for _ in range(20_000)], pa.int64()),
            "day": pa.array([rng.randrange(365) for _ in range(20_000)], pa.int64()),
        },
    )
    _write(
        root,
        "stores",
        {"id": pa.array(range(50), pa.int64()), "name": [f"store {i}" for i in range(50)]},
    )
    _write(
        root,
        "products",
        {
            "id": pa.array(range(400), pa.int64()),
            "color": [("red" if i % 40 == 0 else "blue") for i in range(400)],
        },
    )
    _write(
        root,
        "days",
        {"id": pa.array(range(365), pa.int64()), "holiday": [i % 30 == 0 for i in range(365)]},
    )
    return root


TABLES = (
    "t1",
    "t2",
    "web_sales",
    "customer_address",
    "web_site",
    "date_dim",
    "web_returns",
    "sales",
    "stores",
    "products",
    "days",
)


@pytest.fixture(scope="module", params=BACKENDS)
def registered(
    request: pytest.FixtureRequest, lake: Path, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Metastore]:
    """Every table registered and collected once per database (the tests only read)."""
    from collectors.collect import collect

    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path_factory.mktemp('physical') / 'statlas.db'}"
        else:
            url = stack.enter_context(postgres_schema())
        metastore = Metastore(url)
        metastore.upgrade()
        for name in TABLES:
            metastore.register_table(name, str(lake / name))
            collect(metastore.engine, name, spark=spark)
        yield metastore
        metastore.dispose()


def spark_rows(spark: Any, metastore: Metastore, sql: str) -> list[tuple[Any, ...]]:
    from metastore.catalog.tables import describe_table
    from optimizer.sql_to_plan import parse, referenced_tables
    from pruner.spark_views import register_views, rewrite_onto_views

    names = referenced_tables(parse(sql))
    views = register_views(spark, {n: describe_table(metastore.engine, n) for n in names})
    rows = spark.sql(rewrite_onto_views(sql, views)).collect()
    return sorted(tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in rows)


def joins(node: PhysicalNode) -> list[PhysicalNode]:
    return [n for n in node.walk() if n.op == "join"]


def test_seed_examples_run_as_one_or_two_jobs(registered: Metastore, spark: Any) -> None:
    """docs/design.md#correlation-optimizer: Examples 1 and 2 take three jobs before and one after,
    scanning t1 once; Example 3 (map joins on the dimensions) takes two."""
    for sql in (EXAMPLE_1, EXAMPLE_2):
        plan = plan_query(registered.engine, sql, config=NO_MAP_JOINS)
        assert (plan.before.jobs, plan.after.jobs) == (3, 1), explain_text(plan)
        assert plan.after.scans == plan.before.scans - 1  # t1 read once
        assert plan.after.shuffles < plan.before.shuffles
    plan = plan_query(registered.engine, EXAMPLE_3, config={"map_join_threshold": "2000"})
    text = explain_text(plan)
    algorithms = sorted(j.algorithm or "" for j in joins(plan.root))
    assert algorithms.count("map") == 3, text
    assert plan.after.jobs == 2, text
    assert plan.before.jobs == 5, text
    data = explain_json(plan)
    assert data["jobs"] == {"before": 5, "after": 2}
    assert data["plan"]["op"] == "aggregate"


def test_job_flow_correlation_needs_the_same_keys(registered: Metastore) -> None:
    sql = "SELECT t1.value, count(*) FROM t1 JOIN t2 ON t1.key = t2.key GROUP BY t1.value"
    plan = plan_query(registered.engine, sql, config=NO_MAP_JOINS)
    assert (plan.before.jobs, plan.after.jobs) == (2, 2)
    sql = "SELECT t2.key, count(*) FROM t1 JOIN t2 ON t1.key = t2.key GROUP BY t2.key"
    assert plan_query(registered.engine, sql, config=NO_MAP_JOINS).after.jobs == 1
    # the null-supplying side of an outer join is not partitioned on its key (join-type rules)
    sql = "SELECT t2.key, count(*) FROM t1 LEFT JOIN t2 ON t1.key = t2.key GROUP BY t2.key"
    assert plan_query(registered.engine, sql, config=NO_MAP_JOINS).after.jobs == 2
    sql = "SELECT t1.key, count(*) FROM t1 LEFT JOIN t2 ON t1.key = t2.key GROUP BY t1.key"
    assert plan_query(registered.engine, sql, config=NO_MAP_JOINS).after.jobs == 1


def test_star_join_order_starts_from_the_selective_dimensions(registered: Metastore) -> None:
    plan = plan_query(registered.engine, STAR, config=NO_MAP_JOINS)
    order = [j.logical for j in joins(plan.root)]
    first = order[0]  # the lowest join
    aliases = {a for a, _ in first.output()}
    assert "s" not in aliases, explain_text(plan)  # stores filter nothing: joined last
    for join in order:
        assert join.keys, "no cross products"
    greedy = plan_query(registered.engine, STAR, config={**NO_MAP_JOINS, "greedy_above": "2"})
    assert len(joins(greedy.root)) == 3
    assert all(j.logical.keys for j in joins(greedy.root))


def test_map_joins_share_a_stage_while_their_hash_tables_fit(registered: Metastore) -> None:
    together = plan_query(registered.engine, STAR)
    assert [j.algorithm for j in joins(together.root)] == ["map"] * 3
    assert together.after.jobs == 1  # one map stage, then the aggregation's reduce
    products = next(j for j in joins(together.root) if "p" in str(j.detail))
    budget = max(j.children[1 - (j.streamed or 0)].bytes for j in joins(together.root))
    split = plan_query(registered.engine, STAR, config={"map_join_threshold": str(budget)})
    algorithms = [j.algorithm for j in joins(split.root)]
    assert algorithms == ["map"] * 3, explain_text(split)
    assert any(any(j.stage_break) for j in joins(split.root)), explain_text(split)
    assert split.after.jobs > together.after.jobs
    assert products is not None


def test_emitted_spark_sql_returns_the_original_rows(registered: Metastore, spark: Any) -> None:
    for sql, config in (
        (EXAMPLE_1, NO_MAP_JOINS),
        (EXAMPLE_2, NO_MAP_JOINS),
        (EXAMPLE_3, {"map_join_threshold": "2000"}),
        (STAR, {}),
        (STAR, NO_MAP_JOINS),
    ):
        emitted = emit(plan_query(registered.engine, sql, config=config))
        assert spark_rows(spark, registered, emitted) == spark_rows(spark, registered, sql)
    emitted = emit(plan_query(registered.engine, STAR))
    assert "BROADCAST" in emitted.upper()
    single = "SELECT key, count(*) FROM t1 WHERE value > 3 GROUP BY key"
    assert emit(plan_query(registered.engine, single)) == single  # nothing to change


def test_the_cli_explains_and_emits(
    registered: Metastore, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from statlas.cli import main

    url = registered.engine.url.render_as_string(hide_password=False)
    assert main(["--db", url, "explain", "--sql", STAR, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) >= {"jobs", "shuffles", "scans", "cost", "plan"}
    assert main(["--db", url, "explain", "--sql", STAR, "--emit", "spark"]) == 0
    assert "JOIN" in capsys.readouterr().out
    assert main(["--db", url, "explain", "--sql", STAR, "--config", "CPUc=x"]) != 0
    assert "needs a number" in capsys.readouterr().err
    assert main(["--db", url, "explain", "--sql", "SELECT nope FROM t1"]) != 0
