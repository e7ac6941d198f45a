"""Map-join partition pruning (pruner/) against a real Spark, on both databases: which joins
qualify and why the others do not, the partitions kept, and results equal to the unpruned
query's, always (a generated star schema with NULL keys and the default partition)."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from metastore import Metastore
from metastore.partitions.names import partition_name

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

DAYS = [dt.date(2024, 1, 1) + dt.timedelta(days=i) for i in range(8)]
REGIONS = ["emea", "apac", "amer", None]  # None: the __HIVE_DEFAULT_PARTITION__


@pytest.fixture(scope="module")
def star(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """facts partitioned by (day, region); dims: dates (with a NULL day), regions, items."""
    rng = random.Random(11)
    root = tmp_path_factory.mktemp("star")
    for day in DAYS:
        for region in REGIONS:
            rows = 50
            data = pa.table(
                {
                    "item": pa.array([rng.randrange(1, 40) for _ in range(rows)], pa.int64()),
                    "qty": pa.array([rng.randrange(100) for _ in range(rows)], pa.int32()),
                }
            )
            values = [day.isoformat(), region]
            directory = root / "facts" / partition_name(["day", "region"], values)
            directory.mkdir(parents=True)
            pq.write_table(data, directory / "part-0.parquet")
    dates = [*DAYS[::2], dt.date(2023, 12, 31), None]
    (root / "dates").mkdir()
    pq.write_table(
        pa.table(
            {
                "d": pa.array(dates, pa.date32()),
                "holiday": [i % 2 == 0 for i in range(len(dates))],
            }
        ),
        root / "dates" / "part-0.parquet",
    )
    (root / "regions").mkdir()
    pq.write_table(
        pa.table({"name": ["emea", "apac", None, "mars"], "zone": ["x", "y", "x", "y"]}),
        root / "regions" / "part-0.parquet",
    )
    (root / "items").mkdir()
    pq.write_table(
        pa.table({"id": pa.array(range(1, 11), pa.int64()), "color": ["red", "blue"] * 5}),
        root / "items" / "part-0.parquet",
    )
    return root


@pytest.fixture
def registered(metastore: Metastore, star: Path, spark: Any) -> Metastore:
    from collectors.collect import collect

    for name in ("facts", "dates", "regions", "items"):
        metastore.register_table(name, str(star / name))
        collect(metastore.engine, name, spark=spark)
    return metastore


def unpruned_rows(spark: Any, metastore: Metastore, sql: str) -> int:
    from metastore.catalog.tables import describe_table
    from optimizer.sql_to_plan import parse, referenced_tables
    from pruner.spark_views import register_views, rewrite_onto_views

    names = referenced_tables(parse(sql))
    tables = {n: describe_table(metastore.engine, n) for n in names}
    views = register_views(spark, tables)
    return int(spark.sql(rewrite_onto_views(sql, views)).count())


def test_a_filtered_dimension_prunes_the_fact_table(registered: Metastore, spark: Any) -> None:
    from pruner.prune import prune

    sql = (
        "SELECT f.item, d.d FROM facts f JOIN dates d ON f.day = d.d "
        "WHERE d.holiday AND f.region = 'emea'"
    )
    report = prune(registered.engine, sql, spark=spark, run=True)
    # holiday dates: 2024-01-01, 01-05 (and 2023-12-31, no partition); region emea
    assert report.pruned
    assert report.table == "facts"
    assert report.keys == ["day"]
    assert report.partitions_before == len(DAYS)  # the query's own filter: emea only
    kept = sorted((p.values["day"], p.values["region"]) for p in report.partitions)
    assert kept == [(dt.date(2024, 1, 1), "emea"), (dt.date(2024, 1, 5), "emea")]
    assert report.values_collected == {"day": 3}
    assert report.fallback is None
    assert report.rows == unpruned_rows(spark, registered, sql)
    assert report.as_json()["partitions"][0]["values"] == {"day": "2024-01-01", "region": "emea"}


def test_cascading_map_joins_prune_on_every_key(registered: Metastore, spark: Any) -> None:
    from pruner.prune import prune

    sql = (
        "SELECT COUNT(*) FROM facts f JOIN dates d ON f.day = d.d "
        "JOIN regions r ON f.region = r.name WHERE r.zone = 'x'"
    )
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert sorted(report.keys) == ["day", "region"]
    # dates: 4 days in the data; zone x: emea (NULL never matches, nor the default partition)
    assert report.partitions_after == 4
    assert {p.values["region"] for p in report.partitions} == {"emea"}
    assert report.rows == 1


def test_keys_from_one_small_table_are_looked_up_as_tuples(
    registered: Metastore, spark: Any
) -> None:
    from pruner.prune import prune

    sql = (
        "SELECT * FROM facts f JOIN (SELECT d AS day, 'apac' AS region FROM dates) s "
        "ON f.day = s.day AND f.region = s.region"
    )
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert report.keys == ["day"]  # region is computed (a literal): rejected as a key
    sql = "SELECT * FROM facts f JOIN facts g ON f.day = g.day AND f.region = g.region " + (
        "WHERE g.item = 3 AND g.day < DATE '2024-01-03'"
    )
    report = prune(registered.engine, sql, spark=spark, run=True, threshold=10**12)
    assert set(report.keys) == {"day", "region"}
    assert report.rows == unpruned_rows(spark, registered, sql)
    assert all(p.values["day"] < dt.date(2024, 1, 3) for p in report.partitions)


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        (
            "SELECT * FROM facts f LEFT JOIN dates d ON f.day = d.d",
            "preserved side of the left outer join",
        ),
        (
            "SELECT * FROM dates d RIGHT JOIN facts f ON f.day = d.d",
            "preserved side of the right outer join",
        ),
        (
            "SELECT * FROM facts f FULL JOIN dates d ON f.day = d.d",
            "runs it as a common join (a full outer join streams both sides)",
        ),
        (
            "SELECT * FROM facts f JOIN dates d ON date_add(f.day, 1) = d.d",
            "functions on the keys",
        ),
        (
            "SELECT * FROM facts f WHERE NOT EXISTS (SELECT 1 FROM dates d WHERE d.d = f.day)",
            "anti join keeps",
        ),
        (
            "SELECT * FROM (SELECT * FROM facts LIMIT 1000) f JOIN dates d ON f.day = d.d",
            "LIMIT",
        ),
        (  # the subquery reads facts under the same name: pruning one read changes both
            "SELECT * FROM facts JOIN dates d ON facts.day = d.d "
            "WHERE facts.qty > (SELECT AVG(qty) FROM facts)",
            "reads facts as facts more than once",
        ),
    ],
)
def test_joins_that_cannot_prune_say_why_and_the_query_runs(
    registered: Metastore, spark: Any, sql: str, reason: str
) -> None:
    """Not qualifying is an answer: not pruned, every partition of the big table the
    query's own filters keep (no filter on facts here: all 32), each join's reason, and the
    query's own rows."""
    from pruner.prune import LARGEST_PARTITIONED, plan_pruning, prune

    compiled = plan_pruning(registered.engine, sql)
    assert compiled.big is None
    assert any(reason in r.reason for r in compiled.analysis.rejected), compiled.analysis
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert (report.pruned, report.table, report.table_reason) == (
        False,
        "facts",
        LARGEST_PARTITIONED,
    )
    assert report.partitions_after == report.partitions_before == len(DAYS) * len(REGIONS)
    assert (report.keys, report.candidates, report.predicates) == ([], [], [])
    assert any(reason in r["reason"] for r in report.rejected), report.rejected
    assert report.rows == unpruned_rows(spark, registered, sql)
    assert report.as_json()["pruned"] is False


class NoSpark:
    """A Spark session that must not be used."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"Spark was used ({name})")


def test_a_query_without_a_join_is_not_pruned_and_runs(registered: Metastore, spark: Any) -> None:
    """The big table is the largest partitioned table the query scans; its partitions are
    those the query's own filters keep; Spark is not needed to say so, only to run."""
    from pruner.prune import LARGEST_PARTITIONED, prune, pruned_dataframe

    sql = "SELECT f.item FROM facts f WHERE f.region = 'apac' AND f.day < DATE '2024-01-03'"
    report = prune(registered.engine, sql, spark=NoSpark())
    assert (report.pruned, report.table, report.table_reason, report.rejected) == (
        False,
        "facts",
        LARGEST_PARTITIONED,
        [],
    )
    assert report.partitions_after == report.partitions_before == 2
    assert {(p.values["day"], p.values["region"]) for p in report.partitions} == {
        (DAYS[0], "apac"),
        (DAYS[1], "apac"),
    }
    assert report.rows is None
    frame = pruned_dataframe(spark, registered.engine, sql)
    assert frame.count() == unpruned_rows(spark, registered, sql) == 2 * 50
    assert frame.inputFiles()
    assert all("region=apac" in f for f in frame.inputFiles())
    assert prune(registered.engine, sql, spark=spark, run=True).rows == 2 * 50
    # a map join without a condition prunes nothing either
    sql = "SELECT * FROM dates d CROSS JOIN facts f WHERE f.day = DATE '2024-01-02'"
    report = prune(registered.engine, sql, spark=NoSpark())
    assert (report.pruned, report.table, report.partitions_before) == (False, "facts", 4)


def test_a_small_side_over_the_threshold_is_not_a_map_join(registered: Metastore) -> None:
    """The threshold is the physical planner's map_join_threshold: prune's reason is the
    plan's, and the plan `explain` makes with that setting runs the join as a common one."""
    from optimizer.physical.api import explain_json, plan_query
    from pruner.prune import plan_pruning
    from tests.support.map_joins import explained_map_joins

    sql = "SELECT * FROM facts f JOIN dates d ON f.day = d.d"
    compiled = plan_pruning(registered.engine, sql, threshold=10)
    assert compiled.big is None
    assert compiled.analysis.map_joins == []
    [rejected] = compiled.analysis.rejected
    assert rejected.reason.startswith("not a map join: the plan runs it as a common join")
    assert "exceeds the map-join threshold (10 B)" in rejected.reason
    explained = explain_json(
        plan_query(registered.engine, sql, config={"map_join_threshold": "10"})
    )
    assert explained_map_joins(explained) == (Counter(), 1)  # one join, not a map join
    assert plan_pruning(registered.engine, sql).big is not None  # the default: 10,000,000 B


def test_prune_and_explain_agree_on_collected_statistics(registered: Metastore) -> None:
    """On statistics Spark collected (both databases), the joins prune treats as map joins
    are those `explain --json` marks `map` (tests/pruner/test_prune_map_joins.py: TPC-H and star
    queries over made-up statistics)."""
    from optimizer.physical.api import explain_json, plan_query
    from pruner.prune import plan_pruning
    from tests.support.map_joins import explained_map_joins, pruned_map_joins

    queries = [
        "SELECT COUNT(*) FROM facts f JOIN dates d ON f.day = d.d "
        "JOIN regions r ON f.region = r.name JOIN items i ON f.item = i.id WHERE r.zone = 'x'",
        "SELECT * FROM facts f JOIN facts g ON f.day = g.day AND f.region = g.region "
        "WHERE g.item = 3",
        "SELECT * FROM facts f WHERE f.day IN (SELECT d.d FROM dates d WHERE NOT d.holiday)",
        "SELECT * FROM facts f LEFT JOIN dates d ON f.day = d.d",
    ]
    for sql in queries:
        default = explain_json(plan_query(registered.engine, sql))
        hashed = sorted(_hashed_sizes(default["plan"]))
        # no map joins, and a threshold only the smallest hash tables fit
        configs = [{}, {"map_join_threshold": "0"}]
        configs += [{"map_join_threshold": str(hashed[0] + 0.5)}] if len(set(hashed)) > 1 else []
        counts = []
        for config in configs:
            explained, _ = explained_map_joins(
                explain_json(plan_query(registered.engine, sql, config=config))
            )
            compiled = plan_pruning(registered.engine, sql, config=config)
            assert pruned_map_joins(compiled.analysis) == explained, (sql, config)
            counts.append(len(compiled.analysis.map_joins))
        assert counts[0] > 0, (sql, counts)
        assert counts[1] == 0, (sql, counts)
        assert len(counts) == 2 or 0 < counts[2] < counts[0], (sql, counts)


def _hashed_sizes(node: dict[str, Any]) -> list[float]:
    """The estimated bytes of the hash tables of an `explain --json` plan's map joins."""
    sizes: list[float] = []
    if node["op"] == "join" and node["algorithm"] == "map":
        streamed = 0 if node["streamed"] == "left" else 1
        sizes.append(node["children"][1 - streamed]["size"])
    for child in node["children"]:
        sizes += _hashed_sizes(child)
    return sizes


def test_semi_join_and_non_partition_keys(registered: Metastore, spark: Any) -> None:
    from pruner.prune import prune

    sql = "SELECT * FROM facts f WHERE f.day IN (SELECT d.d FROM dates d WHERE NOT d.holiday)"
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert {p.values["day"] for p in report.partitions} == {dt.date(2024, 1, 3), DAYS[6]}
    assert report.rows == unpruned_rows(spark, registered, sql)

    sql = "SELECT * FROM facts f JOIN items i ON f.item = i.id WHERE i.color = 'red'"
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert report.keys == ["item"]
    assert report.partitions_after == report.partitions_before
    assert report.predicates == ["`item` IN (1, 3, 5, 7, 9)"]  # docs/design.md#pruning-extension
    assert report.rows == unpruned_rows(spark, registered, sql)


def test_a_self_join_prunes_only_its_big_side(registered: Metastore, spark: Any) -> None:
    """facts g (small) supplies f's item values: the predicate on item and the partition
    choice apply to f's read of facts only, never to g's (its rows have other items)."""
    from pruner.prune import prune

    sql = (
        "SELECT f.qty, g.item FROM facts f JOIN facts g ON f.item = g.qty AND f.day = g.day "
        "WHERE g.qty < 3 AND g.region = 'emea' AND g.day < DATE '2024-01-03'"
    )
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert report.pruned
    assert report.table == "facts"
    [candidate] = report.candidates
    assert candidate["big_table"] == "facts f"
    assert report.keys == ["item", "day"]
    assert report.predicates
    assert report.predicates[0].startswith("`item` IN (")
    assert {p.values["day"] for p in report.partitions} == {DAYS[0], DAYS[1]}
    assert report.rows == unpruned_rows(spark, registered, sql) > 0


def test_too_many_values_fall_back_to_a_range(registered: Metastore, spark: Any) -> None:
    from pruner.prune import prune

    sql = "SELECT * FROM facts f JOIN dates d ON f.day = d.d WHERE d.d >= '2024-01-03'"
    report = prune(registered.engine, sql, spark=spark, run=True, max_values=1)
    assert report.fallback is not None
    assert "range" in report.fallback
    assert {p.values["day"] for p in report.partitions} == set(DAYS[2:7])  # 01-03 .. 01-07
    assert report.rows == unpruned_rows(spark, registered, sql)


def test_an_empty_small_side_keeps_nothing(registered: Metastore, spark: Any) -> None:
    from pruner.prune import prune

    sql = "SELECT * FROM facts f JOIN dates d ON f.day = d.d WHERE d.d > '2030-01-01'"
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert (report.partitions_after, report.rows) == (0, 0)


def test_python_api_returns_the_pruned_dataframe(registered: Metastore, spark: Any) -> None:
    from pruner.prune import pruned_dataframe

    sql = "SELECT f.qty FROM facts f JOIN regions r ON f.region = r.name WHERE r.zone = 'y'"
    frame = pruned_dataframe(spark, registered.engine, sql)
    assert frame.count() == unpruned_rows(spark, registered, sql)
    assert frame.columns == ["qty"]


JOINS = st.sampled_from(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
KEYS = st.sampled_from(["f.day = d.d", "date_add(f.day, 0) = d.d", "f.day = d.d AND d.holiday"])
FILTERS = st.sampled_from(
    ["", "WHERE d.holiday", "WHERE f.region = 'apac'", "WHERE d.d IS NULL", "WHERE f.qty < 10"]
)
REGION_KEYS_INNER = "JOIN regions r ON f.region = r.name"
REGION_KEYS = st.sampled_from(["", REGION_KEYS_INNER])


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(join=JOINS, key=KEYS, where=FILTERS, regions=REGION_KEYS)
@example(join="JOIN", key="f.day = d.d AND d.holiday", where="WHERE d.holiday", regions="")
@example(  # prunes on region through the inner join; the left join keeps every day
    join="LEFT JOIN", key="f.day = d.d", where="WHERE d.d IS NULL", regions=REGION_KEYS_INNER
)
def test_pruned_results_equal_unpruned_results(
    registered: Metastore, spark: Any, join: str, key: str, where: str, regions: str
) -> None:
    from pruner.prune import prune

    sql = f"SELECT f.item, f.qty, f.day FROM facts f {join} dates d ON {key} {regions} {where}"
    report = prune(registered.engine, sql, spark=spark, run=True)
    assert report.pruned == bool(report.candidates), sql
    assert report.table == "facts", sql
    if not report.pruned:
        assert report.partitions_after == report.partitions_before, sql
    if join == "JOIN" and key.startswith("f.day = d.d"):
        # an inner join on the bare partition key must prune: the dates hold 4 of the 8
        # days (so that equal results are not those of a query that pruned nothing)
        assert report.pruned, sql
        assert "day" in report.keys, sql
        assert report.partitions_after < report.partitions_before, sql
    assert report.rows == unpruned_rows(spark, registered, sql), sql


def test_cli_prints_json_and_one_line_errors(star: Path, spark: Any, tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    from collectors.collect import collect

    url = f"sqlite:///{tmp_path / 'statlas.db'}"
    metastore = Metastore(url)
    metastore.upgrade()
    for name in ("facts", "dates"):
        metastore.register_table(name, str(star / name))
        collect(metastore.engine, name, spark=spark)
    statlas = str(Path(sys.executable).parent / "statlas")
    env = {**os.environ, "STATLAS_DB_URL": url}

    def run(sql: str, *options: str) -> subprocess.CompletedProcess[str]:
        argv = [statlas, "prune", "--sql", sql, "--master", "local[1]", *options]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)

    done = run(
        "SELECT * FROM facts f JOIN dates d ON f.day = d.d WHERE d.holiday", "--json", "--run"
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) >= {
        "pruned", "table", "table_reason", "keys", "partitions_before", "partitions_after",
        "partitions", "values_collected", "fallback", "seconds", "rows",
    }  # fmt: skip
    assert report["pruned"] is True
    assert (report["partitions_before"], report["partitions_after"]) == (32, 8)
    assert report["rows"] == 2 * 4 * 50  # two days in the data, four regions, 50 rows each

    # nothing qualifies: an answer (exit 0), and run, the query's own rows
    left = "SELECT * FROM facts f LEFT JOIN dates d ON f.day = d.d"
    done = run(left, "--json", "--run")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["pruned"], report["table"], report["keys"]) == (False, "facts", [])
    assert (report["partitions_before"], report["partitions_after"]) == (32, 32)
    assert report["rows"] == 8 * 4 * 50
    [rejected] = report["rejected"]
    assert "preserved side of the left outer join" in rejected["reason"]
    for sql, options in [(left, ()), ("SELECT * FROM facts f JOIN dates d ON f.day = d.d",
                                      ("--map-join-threshold", "0"))]:  # fmt: skip
        done = run(sql, *options)  # no values to collect, nothing to run: no Spark
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("facts: not pruned, 32 of 32 partitions kept"), done.stdout
        assert lines[1].startswith("why facts: no map join prunes"), done.stdout
        assert lines[2].startswith("not pruned: "), done.stdout

    for sql, message in [
        ("SELECT * FROM facts f JOIN", "malformed SQL"),
        ("SELECT * FROM facts f JOIN nope n ON f.day = n.d", "unknown table"),
    ]:
        failed = run(sql)
        assert failed.returncode == 2, failed.stderr
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1, failed.stderr
        assert message in lines[0], failed.stderr
