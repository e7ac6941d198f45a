"""Registration, refresh, describe, list and drop, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import os
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import inspect

from metastore import BucketSpec, Metastore
from metastore.catalog.tables import parse_partition_types
from metastore.errors import InvalidValue, RegistrationError, UnknownTable
from tests.support.partitions import write_partitions


def test_register_infers_types_and_schema(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(
        tmp_path / "sales",
        ["dt", "region", "hour"],
        [
            ["2024-01-01", "emea", "1"],
            ["2024-01-01", "apac", "02"],
            ["2024-01-02", "emea", None],
        ],
    )
    report = metastore.register_table("Sales", str(root))
    assert report.created
    assert report.added == 3
    assert [(k.name, str(k.type)) for k in report.partition_keys] == [
        ("dt", "date"),
        ("region", "string"),
        ("hour", "int"),
    ]
    info = metastore.table("sales")
    assert info.partition_count == 3
    assert [(c.name, c.type) for c in info.columns] == [("id", "bigint"), ("label", "string")]
    assert info.location == str(root)
    values = {p.name: p.values for p in metastore.partitions("sales")}
    assert values["dt=2024-01-01/region=apac/hour=02"] == {
        "dt": dt.date(2024, 1, 1),
        "region": "apac",
        "hour": 2,
    }
    assert values["dt=2024-01-02/region=emea/hour=__HIVE_DEFAULT_PARTITION__"]["hour"] is None


def test_reregistering_adds_removes_and_updates(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"], ["2024-01-02"]])
    metastore.register_table("t", str(root))
    again = metastore.register_table("t", str(root))
    assert (again.added, again.removed, again.changed, again.unchanged) == (0, 0, 0, 2)

    shutil.rmtree(root / "dt=2024-01-01")
    write_partitions(root, ["dt"], [["2024-01-03"]])
    extra = root / "dt=2024-01-02" / "part-00001.parquet"
    shutil.copy(root / "dt=2024-01-02" / "part-00000.parquet", extra)
    os.utime(extra, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    report = metastore.register_table("t", str(root))
    assert (report.added, report.removed, report.changed, report.unchanged) == (1, 1, 1, 0)
    assert metastore.partitions("t").names() == ["dt=2024-01-02", "dt=2024-01-03"]
    assert metastore.table("t").version == 3


def test_partition_type_override_and_decimal(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["code", "price"], [["007", "1.5"], ["8", "2"]])
    metastore.register_table(
        "t", str(root), partition_types=parse_partition_types("code:string,price:decimal(6,2)")
    )
    values = sorted((p.values["code"], p.values["price"]) for p in metastore.partitions("t"))
    assert values == [("007", Decimal("1.50")), ("8", Decimal("2.00"))]
    with pytest.raises(RegistrationError, match="is registered as string, not int"):
        metastore.register_table("t", str(root), partition_types=parse_partition_types("code:int"))


def test_override_that_does_not_parse_writes_nothing(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"], ["soon"]])
    with pytest.raises(RegistrationError, match="'soon' is not a valid date for key dt"):
        metastore.register_table(
            "t", str(root), partition_types={"dt": parse_partition_types("dt:date")["dt"]}
        )
    assert metastore.tables() == []


def test_clashing_typed_values_are_refused(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["n"], [["1"], ["01"]])
    with pytest.raises(RegistrationError, match="same typed values"):
        metastore.register_table("t", str(root))
    assert metastore.tables() == []
    assert not [
        t for t in inspect(metastore.engine).get_table_names() if t.startswith("partitions_")
    ]


def test_layout_errors(metastore: Metastore, tmp_path: Path) -> None:
    write_partitions(tmp_path / "mixed", ["a"], [["1"]])
    write_partitions(tmp_path / "mixed" / "a=2", ["b"], [["x"]])
    with pytest.raises(RegistrationError, match=r"holds data files but is not|inconsistent"):
        metastore.register_table("m", str(tmp_path / "mixed"))
    write_partitions(tmp_path / "inconsistent", ["a"], [["1"]])
    write_partitions(tmp_path / "inconsistent", ["b"], [["1"]])
    with pytest.raises(RegistrationError, match="inconsistent partition layout"):
        metastore.register_table("i", str(tmp_path / "inconsistent"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(RegistrationError, match="no data files"):
        metastore.register_table("e", str(tmp_path / "empty"))
    with pytest.raises(RegistrationError, match="not a directory"):
        metastore.register_table("n", str(tmp_path / "nowhere"))
    with pytest.raises(InvalidValue, match="invalid table name"):
        metastore.register_table("bad name", str(tmp_path / "mixed"))


def test_hidden_files_are_ignored(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"]])
    (root / "_SUCCESS").write_text("")
    (root / "dt=2024-01-01" / ".part-00000.parquet.crc").write_text("x")
    (root / "_temporary" / "0").mkdir(parents=True)
    (root / "_temporary" / "0" / "junk").write_text("x")
    metastore.register_table("t", str(root))
    [partition] = metastore.partitions("t")
    assert partition.name == "dt=2024-01-01"


def test_unpartitioned_and_orc(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "flat", [], [[]], data_format="orc")
    report = metastore.register_table("flat", str(root))
    assert report.partition_keys == []
    assert report.added == 1
    info = metastore.table("flat")
    assert info.format == "orc"
    assert info.partition_count == 1
    assert [p.location for p in metastore.partitions("flat")] == [str(root)]


def test_escaped_and_non_ascii_values_round_trip(metastore: Metastore, tmp_path: Path) -> None:
    values = ["a/b", "10:30", "zürich", "100%", "x=y"]
    root = write_partitions(tmp_path / "t", ["city"], [[v] for v in values])
    metastore.register_table("t", str(root))
    found = {p.values["city"]: p.location for p in metastore.partitions("t")}
    assert sorted(found) == sorted(values)
    for value, location in found.items():
        assert Path(location).is_dir(), value
    assert len(metastore.partitions("t", {"city": ["a/b", "x=y"]})) == 2


def test_bucketing_properties_show_list_drop(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"]])
    metastore.register_table(
        "db1.t",
        str(root),
        bucketing=BucketSpec(8, ("id",), (("id", "asc"),)),
        properties={"owner": "data-eng"},
    )
    info = metastore.table("DB1.T")
    assert info.bucketing == BucketSpec(8, ("id",), (("id", "asc"),))
    assert info.properties == {"owner": "data-eng"}
    assert info.as_json()["bucketing"]["num_buckets"] == 8
    assert [t.name for t in metastore.tables()] == ["db1.t"]
    with pytest.raises(RegistrationError, match="not a data column"):
        metastore.register_table("db1.u", str(root), bucketing=BucketSpec(4, ("nope",)))
    assert metastore.drop_table("db1.t") == 1
    assert metastore.tables() == []
    with pytest.raises(UnknownTable):
        metastore.drop_table("db1.t")
    with pytest.raises(UnknownTable):
        metastore.table("db1.t")


def test_changed_key_layout_is_refused(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"]])
    metastore.register_table("t", str(root))
    shutil.rmtree(root)
    write_partitions(root, ["day"], [["2024-01-01"]])
    with pytest.raises(RegistrationError, match="partition keys of t changed"):
        metastore.register_table("t", str(root))
    assert metastore.partitions("t").names() == ["dt=2024-01-01"]


def test_new_value_must_parse_as_registered_type(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["n"], [["1"]])
    metastore.register_table("t", str(root))
    write_partitions(root, ["n"], [["x"]])
    with pytest.raises(RegistrationError, match="'x' is not a valid int for key n"):
        metastore.register_table("t", str(root))
    assert metastore.partitions("t").names() == ["n=1"]


def test_wide_decimal_needs_postgres_on_sqlite(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["d"], [["1.5"]])
    types = parse_partition_types("d:decimal(30,2)")
    if metastore.engine.dialect.name == "sqlite":
        with pytest.raises(RegistrationError, match="need PostgreSQL"):
            metastore.register_table("t", str(root), partition_types=types)
        assert metastore.tables() == []  # the catalog row was rolled back with the failure
    else:
        metastore.register_table("t", str(root), partition_types=types)
        assert [p.values["d"] for p in metastore.partitions("t", {"d": ["1.5"]})] == [
            Decimal("1.50")
        ]
