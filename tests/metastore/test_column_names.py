"""Column names as the files spell them, found as Spark and Hive find them; schemas merged
and widened as Spark's readers widen them; the read schema a collection gives Spark."""

from __future__ import annotations

import doctest

import pytest

from collectors import file_schemas
from collectors.file_schemas import PartitionSchema, read_layout, spark_ddl, spark_readable
from metastore.catalog import column_names as column_names
from metastore.catalog import schema_merge as schema_merge
from metastore.catalog.column_names import AmbiguousColumn, leaf_columns, resolve
from metastore.catalog.discovery import Column
from metastore.catalog.schema_merge import merge_columns, widened
from metastore.catalog.tables import BucketSpec, TableInfo
from metastore.errors import UnknownColumn


def test_docstring_examples() -> None:
    for module in (column_names, schema_merge, file_schemas):
        result = doctest.testmod(module, raise_on_error=False)
        assert result.failed == 0, module.__name__


def test_resolve_exact_then_ignoring_case() -> None:
    names = ["Id", "CreationDate", "ab", "AB", "prix €", "a.b"]
    assert resolve(names, "Id", "t") == "Id"
    assert resolve(names, "ID", "t") == "Id"
    assert resolve(names, "creationdate", "t") == "CreationDate"
    assert resolve(names, "PRIX €", "t") == "prix €"
    assert resolve(names, "A.B", "t") == "a.b"
    assert resolve(names, "AB", "t") == "AB"  # an exact spelling wins
    with pytest.raises(AmbiguousColumn, match="'ab', 'AB'"):
        resolve(names, "Ab", "t")
    with pytest.raises(UnknownColumn, match="unknown column 'nope' of table t"):
        resolve(names, "nope", "t")


def test_leaves_of_structs() -> None:
    assert leaf_columns("s", "struct<a:int,b:struct<c:string,d:array<int>>>") == [
        ("s.a", "int"),
        ("s.b.c", "string"),
        ("s.b.d", "array<int>"),
    ]
    assert leaf_columns("m", "map<string,struct<a:int>>") == []  # a map's values: not followed
    table = TableInfo(
        1,
        "t",
        "/x",
        "parquet",
        (Column("Id", "int"), Column("s", "struct<Id:int>"), Column("s.Id", "bigint")),
        (),
        BucketSpec(4, ("Id",), (("Id", "asc"),)),
        {},
        1,
    )
    # a column's own dotted name wins over a struct's leaf of the same path
    assert table.described_columns() == {"Id": "int", "s": "struct<Id:int>", "s.Id": "bigint"}
    folded = table.folded()
    assert [c.name for c in folded.columns] == ["id", "s", "s.id"]
    assert folded.bucketing == BucketSpec(4, ("id",), (("id", "asc"),))


@pytest.mark.parametrize(
    ("a", "b", "common"),
    [
        ("int", "bigint", "bigint"),
        ("tinyint", "smallint", "smallint"),
        ("float", "double", "double"),
        ("int", "double", "double"),
        ("bigint", "double", None),  # not without loss
        ("decimal(10,2)", "decimal(8,4)", "decimal(12,4)"),  # 8 integer digits, 4 after
        ("decimal(38,0)", "decimal(38,10)", None),  # 48 digits
        ("int", "string", None),
        ("date", "timestamp", None),
        ("struct<a:int>", "struct<A:bigint,b:string>", "struct<a:bigint,b:string>"),
        ("struct<a:int>", "struct<a:string>", None),
    ],
)
def test_widened(a: str, b: str, common: str | None) -> None:
    assert widened(a, b) == common
    if not a.startswith("struct"):  # a struct keeps its first side's field order
        assert widened(b, a) == common


def test_merge_columns_by_name() -> None:
    base = [Column("Id", "int"), Column("name", "string")]
    merged, conflicts = merge_columns(base, [Column("extra", "date"), Column("ID", "bigint")])
    assert merged == [Column("Id", "bigint"), Column("name", "string"), Column("extra", "date")]
    assert conflicts == []
    merged, conflicts = merge_columns(base, [Column("id", "string")])
    assert merged == base
    assert str(conflicts[0]) == "column Id is string here but int in the table"
    # case-sensitive: another column; one file's names that differ only by case stay apart
    assert len(merge_columns(base, [Column("ID", "bigint")], case_sensitive=True)[0]) == 3
    one_file = [Column("ab", "int"), Column("AB", "string")]
    assert merge_columns([], one_file) == (one_file, [])


def test_read_layout() -> None:
    table = [Column("Id", "int"), Column("name", "string")]
    schemas = {
        1: PartitionSchema((Column("Id", "int"), Column("name", "string"))),
        2: PartitionSchema((Column("ID", "bigint"), Column("p", "int"), Column("x", "time64"))),
        3: PartitionSchema((Column("Id", "string"),)),
        4: PartitionSchema(error="file f is not a readable parquet file"),
    }
    layout = read_layout(table, schemas, case_sensitive=False, keys=["P"])
    assert layout.columns == [
        Column("Id", "bigint"),
        Column("name", "string"),
        Column("x", "time64"),
    ]
    assert layout.failed == {
        3: "column Id is string here but bigint in the table",
        4: schemas[4].error,
    }
    assert layout.skipped == {"x": "Spark reads no type time64"}
    assert layout.absent(1, ["Id", "name", "x"]) == {"x"}
    assert layout.absent(2, ["Id", "name", "x"]) == {"name"}
    assert layout.absent(99, ["Id"]) == set()  # a partition not read: nothing known


def test_spark_ddl_quotes_every_name() -> None:
    columns = [
        Column("order id", "string"),
        Column("we`ird", "int"),
        Column("s", "struct<a b:int,c:array<struct<d:string>>>"),
        Column("m", "map<string,decimal(10,2)>"),
    ]
    assert spark_ddl(columns) == (
        "`order id` string, `we``ird` int, "
        "`s` struct<`a b`:int,`c`:array<struct<`d`:string>>>, `m` map<string,decimal(10,2)>"
    )
    assert spark_readable("struct<a:int,b:map<string,timestamp_ntz>>")
    assert not spark_readable("array<time64[us]>")
