"""The tables people have: column names as their files spell them (any case, spaces, dots,
non-ASCII, names differing only by case), every type Spark reads (structs' leaves, arrays
and maps, wide decimals, timestamp_ntz, binary, old dates, NaN and infinities), partitions
written with different schemas, and bad files, written with pyarrow and with Spark,
collected on both databases and checked against figures computed here."""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metastore import Metastore, PartitionQuery
from metastore.catalog.column_names import AmbiguousColumn
from metastore.errors import UnknownColumn
from metastore.statistics.summaries import table_statistics
from tests.support.partitions import corrupt_pages

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def write(root: Path, partition: str, table: pa.Table, name: str = "part-0.parquet") -> None:
    directory = root / partition
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, directory / name)


def posts(ids: list[int], offset: int) -> pa.Table:
    return pa.table(
        {
            "Id": pa.array(ids, pa.int64()),
            "CreationDate": pa.array(
                [dt.date(2024, 1, 1) + dt.timedelta(days=(i + offset) % 9) for i in ids]
            ),
            "OwnerUserId": pa.array([None if i % 4 == 0 else i % 7 for i in ids], pa.int32()),
            "order id": [f"o{i % 5}" for i in ids],
            "prix €": pa.array([i / 2 for i in ids]),
            "a.b": pa.array([i % 3 for i in ids], pa.int8()),
            # a colon, a backtick and a character Java counts as two
            "3:`😀": pa.array([i % 4 for i in ids], pa.int16()),
        }
    )


def test_names_as_the_files_spell_them(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect
    from optimizer.estimate.api import estimate_rows

    root = tmp_path / "posts"
    first, second = list(range(1, 41)), list(range(41, 101))
    write(root, "site=a", posts(first, 0))
    write(root, "site=b", posts(second, 3))
    metastore.register_table("posts", str(root))
    names = [c.name for c in metastore.table("posts").columns]
    assert names == ["Id", "CreationDate", "OwnerUserId", "order id", "prix €", "a.b", "3:`😀"]
    report = collect(metastore.engine, "posts", spark=spark)
    assert (report.partitions_scanned, report.rows, report.partitions_failed) == (2, 100, {})

    ids = first + second
    owners = [None if i % 4 == 0 else i % 7 for i in ids]
    # found by any casing; shown as spelled
    summary = table_statistics(
        metastore.engine, "posts", columns=["id", "OWNERUSERID", "Order ID", "PRIX €", "A.B"]
    )
    assert list(summary.columns) == ["Id", "OwnerUserId", "order id", "prix €", "a.b"]
    assert (summary.columns["Id"].min, summary.columns["Id"].max) == (1, 100)
    assert summary.columns["Id"].ndv == 100
    assert summary.columns["OwnerUserId"].null_count == owners.count(None)
    assert summary.columns["OwnerUserId"].ndv == len({o for o in owners if o is not None})
    assert summary.columns["order id"].ndv == 5
    assert summary.columns["prix €"].max == 50.0
    assert summary.columns["a.b"].ndv == 3
    assert table_statistics(metastore.engine, "posts", columns=["3:`😀"]).columns["3:`😀"].ndv == 4
    with pytest.raises(UnknownColumn, match="'nope'"):
        table_statistics(metastore.engine, "posts", columns=["nope"])
    # the planner finds them by any casing too
    wanted = sum(1 for i in ids if i > 90)
    sql = "SELECT * FROM posts p WHERE p.ID > 90 AND `ORDER ID` IS NOT NULL"
    assert estimate_rows(metastore.engine, sql) == pytest.approx(wanted, rel=0.15)
    site_a = table_statistics(metastore.engine, "posts", PartitionQuery.of({"site": ["a"]}), ["id"])
    assert site_a.columns["Id"].max == 40


def test_names_differing_only_by_case(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect
    from collectors.spark_session import session_settings

    root = tmp_path / "cased"
    table = pa.table({"ab": [1, 2, 3, 4], "AB": ["x", "y", "y", None], "other": [1, 1, 2, 2]})
    write(root, "", table)
    metastore.register_table("cased", str(root))
    assert [c.name for c in metastore.table("cased").columns] == ["ab", "AB", "other"]
    # Spark's default matches names ignoring case: it cannot tell them apart, the rest reads
    report = collect(metastore.engine, "cased", spark=spark)
    assert set(report.columns_skipped) == {"ab", "AB"}
    assert "spark.sql.caseSensitive" in report.columns_skipped["ab"]
    summary = table_statistics(metastore.engine, "cased")
    assert summary.columns["other"].ndv == 2
    assert (
        summary.columns["other"].collected_partitions,
        summary.columns["ab"].collected_partitions,
    ) == (1, 0)
    # with spark.sql.caseSensitive=true each is read and found by its exact spelling
    with session_settings(spark, {"spark.sql.caseSensitive": "true"}):
        report = collect(metastore.engine, "cased", spark=spark, full=True)
    assert report.columns_skipped == {}
    summary = table_statistics(metastore.engine, "cased", columns=["ab", "AB"])
    assert (summary.columns["ab"].ndv, summary.columns["ab"].max) == (4, 4)
    assert (summary.columns["AB"].ndv, summary.columns["AB"].null_count) == (2, 1)
    with pytest.raises(AmbiguousColumn, match="'ab', 'AB'"):
        table_statistics(metastore.engine, "cased", columns=["Ab"])


def test_every_type_spark_reads(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect

    root = tmp_path / "types"
    wide = [Decimal("12345678901234567890.123456789012345678"), None, Decimal("-1.5")]
    table = pa.table(
        {
            "big": pa.array(wide, pa.decimal128(38, 18)),
            "naive": pa.array([dt.datetime(1890, 1, 1, 12), None, dt.datetime(2024, 5, 1)]),
            "aware": pa.array(
                [dt.datetime(1850, 6, 1), dt.datetime(2024, 1, 1), None], pa.timestamp("us", "UTC")
            ),
            "old": pa.array([dt.date(1000, 5, 5), dt.date(1899, 12, 31), None]),
            "raw": pa.array([b"\x00\x01", b"abc", None], pa.binary()),
            "flag": pa.array([True, None, True]),
            "tiny": pa.array([-128, 127, None], pa.int8()),
            "small": pa.array([-2, None, 300], pa.int16()),
            "ratio": pa.array([1.5, math.nan, math.inf]),
            "addr": pa.array(
                [{"city": "x", "geo": {"lat": 1.0}}, None, {"city": None, "geo": {"lat": -2.5}}],
                pa.struct([("city", pa.string()), ("geo", pa.struct([("lat", pa.float64())]))]),
            ),
            "tags": pa.array([["a"], [], None], pa.list_(pa.string())),
            "attrs": pa.array([[("k", 1)], None, []], pa.map_(pa.string(), pa.int32())),
        }
    )
    write(root, "", table)
    metastore.register_table("types", str(root))
    types = {c.name: c.type for c in metastore.table("types").columns}
    assert (types["naive"], types["aware"], types["big"]) == (
        "timestamp_ntz",
        "timestamp",
        "decimal(38,18)",
    )
    report = collect(metastore.engine, "types", spark=spark)
    assert report.rows == 3
    assert report.partitions_failed == {}
    assert set(report.columns_skipped) == {"tags", "attrs"}  # their elements: not described
    s = table_statistics(metastore.engine, "types").columns
    assert (s["big"].min, s["big"].max, s["big"].null_count) == (Decimal("-1.5"), wide[0], 1)
    assert (s["naive"].min, s["naive"].max) == (
        dt.datetime(1890, 1, 1, 12),
        dt.datetime(2024, 5, 1),
    )
    assert s["aware"].min == dt.datetime(1850, 6, 1)
    assert (s["old"].min, s["old"].max) == (dt.date(1000, 5, 5), dt.date(1899, 12, 31))
    assert (s["raw"].null_count, s["raw"].max_len, s["raw"].avg_len) == (1, 3, 2.5)
    assert (s["flag"].min, s["flag"].max, s["flag"].null_count) == (True, True, 1)
    assert (s["tiny"].min, s["tiny"].max, s["small"].max) == (-128, 127, 300)
    assert s["ratio"].min == 1.5
    assert math.isnan(s["ratio"].max)
    assert s["ratio"].as_json()["max"] == "NaN"
    assert s["ratio"].equi_width is not None
    assert math.isinf(s["ratio"].equi_width.bounds[-1])
    assert (s["addr.city"].ndv, s["addr.city"].null_count) == (1, 2)
    assert (s["addr.geo.lat"].min, s["addr.geo.lat"].max) == (-2.5, 1.0)
    assert (s["tags"].null_count, s["attrs"].null_count, s["addr"].null_count) == (1, 1, 1)


def test_partitions_written_with_other_schemas(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    from collectors.collect import collect

    root = tmp_path / "evolving"
    write(root, "v=1", pa.table({"Id": pa.array([1, 2, 3], pa.int32()), "name": ["a", None, "c"]}))
    # later: the id widened to bigint (spelled ID), name dropped, a column added, reordered
    write(root, "v=2", pa.table({"extra": ["p", "q"], "ID": pa.array([2**40, 5], pa.int64())}))
    # a type that cannot be widened: this partition fails, the others are collected
    write(root, "v=3", pa.table({"Id": ["not a number"], "name": ["z"]}))
    metastore.register_table("evolving", str(root))
    report = collect(metastore.engine, "evolving", spark=spark)
    assert report.partitions_scanned == 2
    assert list(report.partitions_failed) == ["v=3"]
    assert "Id is string here but bigint" in report.partitions_failed["v=3"]
    assert report.columns_added == ["extra"]
    columns = {c.name: c.type for c in metastore.table("evolving").columns}
    assert columns == {"Id": "bigint", "name": "string", "extra": "string"}
    s = table_statistics(metastore.engine, "evolving")
    assert s.row_count == 5
    assert (s.columns["Id"].min, s.columns["Id"].max, s.columns["Id"].ndv) == (1, 2**40, 5)
    # the partition without `name` counts as NULL for its rows, and says so
    assert (s.columns["name"].null_count, s.columns["name"].absent_partitions) == (3, 1)
    assert (s.columns["extra"].null_count, s.columns["extra"].absent_partitions) == (3, 1)
    own = table_statistics(metastore.engine, "evolving", PartitionQuery.of({"v": [2]})).columns
    assert (own["name"].absent_partitions, own["extra"].absent_partitions) == (1, 0)
    # the failed partition is tried again at the next run; fixed, it collects
    write(root, "v=3", pa.table({"Id": pa.array([7], pa.int64()), "name": ["z"]}))
    again = collect(metastore.engine, "evolving", spark=spark)
    assert (again.partitions_scanned, again.partitions_failed) == (1, {})
    assert table_statistics(metastore.engine, "evolving").columns["Id"].ndv == 6


def test_bad_files(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect

    root = tmp_path / "bad"
    good = pa.table({"k": pa.array([1, 2, 3], pa.int64())})
    write(root, "d=1", good)
    (root / "d=1" / "_SUCCESS").write_bytes(b"")
    (root / "d=1" / "_committed_123").write_text("{}")
    (root / "d=1" / ".notes").write_text("not data")
    (root / "d=1" / "empty.parquet").write_bytes(b"")  # no rows, no footer: Spark skips it
    write(root, "d=1", good.slice(0, 0), "zero-rows.parquet")
    write(root, "d=2", good)
    (root / "d=2" / "stray.csv").write_text("k\n1\n")
    # a writer that keeps the partition column in its files too (spelled otherwise)
    write(root, "d=3", good.append_column("D", pa.array([3, 3, 3], pa.int64())))
    metastore.register_table("bad", str(root))
    report = collect(metastore.engine, "bad", spark=spark)
    assert report.partitions_scanned == 2
    assert report.rows == 6
    assert report.partitions_failed == {"d=2": "file stray.csv is not a readable parquet file"}
    assert [c.name for c in metastore.table("bad").columns] == ["k"]
    # a data file whose rows do not read fails the job: the previous statistics are kept
    corrupt_pages(root / "d=3" / "part-0.parquet")
    (root / "d=2" / "stray.csv").unlink()
    metastore.register_table("bad", str(root))
    with pytest.raises(Exception, match="previous statistics kept"):
        collect(metastore.engine, "bad", spark=spark)
    assert table_statistics(metastore.engine, "bad").row_count == 6


def test_tables_spark_wrote(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from collectors.collect import collect

    root = tmp_path / "spark_written"
    frame = spark.sql(
        "SELECT id AS UserId, CAST(id % 7 AS INT) AS `Score Value`, "
        "named_struct('Street', concat('s', id % 3), 'No', id) AS Address, "
        "id % 2 AS Part FROM range(50)"
    )
    frame.write.partitionBy("Part").parquet(str(root))
    # a later write adds a column, as Spark's mergeSchema reads it
    spark.sql("SELECT id + 50 AS UserId, 'x' AS Note, 2 AS Part FROM range(10)").write.mode(
        "append"
    ).partitionBy("Part").parquet(str(root))
    metastore.register_table("written", str(root))
    report = collect(metastore.engine, "written", spark=spark)
    assert (report.partitions_scanned, report.rows, report.partitions_failed) == (3, 60, {})
    s = table_statistics(metastore.engine, "written").columns
    assert (s["UserId"].min, s["UserId"].max, s["UserId"].ndv) == (0, 59, 60)
    assert (s["Score Value"].ndv, s["Score Value"].null_count) == (7, 10)
    assert (s["Address.Street"].ndv, s["Address.No"].max) == (3, 49)
    assert (s["Note"].null_count, s["Note"].absent_partitions) == (50, 2)


def test_orc_types_and_schemas(metastore: Metastore, spark: Any, tmp_path: Path) -> None:
    from pyarrow import orc

    from collectors.collect import collect

    root = tmp_path / "orc"
    first = pa.table(
        {
            "Id": pa.array([1, 2, 3], pa.int32()),
            "big": pa.array([Decimal("12345678901234567890.5"), None, Decimal("-1.5")]),
            "old": pa.array([dt.date(1899, 12, 31), dt.date(1900, 1, 1), None]),
            "raw": pa.array([b"\x00\x01", b"abc", None]),
            "addr": pa.array(
                [{"city": "x"}, None, {"city": "y"}], pa.struct([("city", pa.string())])
            ),
            "tags": pa.array([["a"], [], None], pa.list_(pa.string())),
        }
    )
    for partition, table in (("p=1", first), ("p=2", pa.table({"ID": pa.array([9], pa.int64())}))):
        (root / partition).mkdir(parents=True)
        orc.write_table(table, str(root / partition / "part-0.orc"))
    metastore.register_table("orc_t", str(root), "orc")
    report = collect(metastore.engine, "orc_t", spark=spark)
    assert (report.rows, report.partitions_failed, list(report.columns_skipped)) == (
        4,
        {},
        ["tags"],
    )
    s = table_statistics(metastore.engine, "orc_t", columns=["ID", "BIG", "old", "addr.city"])
    assert (s.columns["Id"].max, s.columns["Id"].ndv) == (9, 4)
    assert (s.columns["big"].max, s.columns["big"].null_count) == (first["big"][0].as_py(), 2)
    assert (s.columns["old"].min, s.columns["old"].absent_partitions) == (dt.date(1899, 12, 31), 1)
    assert (s.columns["addr.city"].ndv, s.columns["addr.city"].null_count) == (2, 2)


def test_prune_over_spelled_and_evolving_tables(
    metastore: Metastore, spark: Any, tmp_path: Path
) -> None:
    """Map-join pruning reads the tables as collected: a camel-case dimension, and a fact
    table whose older partitions hold `UserId` as int and newer ones as bigint."""
    from collectors.collect import collect
    from pruner.prune import prune

    facts, users = tmp_path / "Visits", tmp_path / "Users"
    for day in range(1, 7):
        kind = pa.int32() if day <= 3 else pa.int64()
        table = pa.table({"UserId": pa.array([day, day + 10, 7], kind), "Pages": [1, 2, 3]})
        write(facts, f"day={day}", table)
    write(users, "", pa.table({"UserId": pa.array([2, 5], pa.int64()), "IsStaff": [True, True]}))
    for name, root in (("visits", facts), ("users", users)):
        metastore.register_table(name, str(root))
        assert collect(metastore.engine, name, spark=spark).partitions_failed == {}
    sql = (
        "SELECT v.USERID, v.pages FROM visits v JOIN users u ON v.DAY = u.userid "
        "WHERE u.ISSTAFF AND v.userid > 0"
    )
    report = prune(metastore.engine, sql, spark=spark, run=True)
    assert report.pruned
    assert sorted(p.values["day"] for p in report.partitions) == [2, 5]
    assert report.rows == 6  # 3 rows in each kept day, every UserId > 0


def test_cli_reports_failed_partitions_and_skipped_columns(
    db_url: str, spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`statlas collect` (on this process's Spark) says which partition was not read and
    why, exits 1, and lists the columns described in part; `stats` says which are absent."""
    from statlas.cli import main

    root = tmp_path / "cli"
    write(root, "d=1", pa.table({"Id": [1, 2], "Tags": pa.array([["a"], []])}))
    write(root, "d=2", pa.table({"Id": [3]}))
    (root / "d=3").mkdir()
    (root / "d=3" / "notes.parquet").write_text("a stray text file")
    assert main(["--db", db_url, "db", "upgrade"]) == 0
    assert main(["--db", db_url, "table", "register", "cli", "--path", str(root)]) == 0
    capsys.readouterr()
    assert main(["--db", db_url, "collect", "cli", "--master", "local[2]"]) == 1
    out, err = capsys.readouterr()
    assert "cli: scanned 2 partitions" in out
    assert "  column Tags: array column: its counts and nulls only" in out
    assert "statlas: warning: cli partition d=3 not collected: file notes.parquet" in err
    assert main(["--db", db_url, "stats", "cli", "--column", "TAGS", "--json"]) == 0
    tags = json.loads(capsys.readouterr().out)["columns"]["Tags"]
    assert (tags["null_count"], tags["absent_partitions"]) == (1, 1)
