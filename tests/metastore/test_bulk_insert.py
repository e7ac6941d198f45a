"""metastore.bulk_insert: the values written are the values given (PostgreSQL's binary COPY
and the batched INSERT alike), across several COPY batches, and a failing batch leaves
nothing behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from metastore import Metastore, bulk_insert
from metastore.models import CatalogTable, ColumnStats
from tests.support.partitions import write_partitions


def column_rows(table_id: int, count: int, offset: int = 0) -> list[dict[str, Any]]:
    rows = []
    for n in range(offset, offset + count):
        rows.append(
            {
                "table_id": table_id,
                "partition_id": (1 << 40) + n,
                "column_name": f"c{n}",
                "null_count": (1 << 50) + n,
                "min_value": None if n % 3 == 0 else f"mín {n} 'quoted' \\ back\tslash",
                "max_value": "" if n % 2 else "zzz",
                "total_len": None,
                "max_len": 2**31 - 1 - n,
                "hll": bytes(range(256)) * (n % 5),
                "kll": None if n % 4 == 0 else b"\x00\\x01'\n",
                "theta": bytes([n % 256]) * (1000 * n),
                "top_k": b"",
                "top_k_items": "longs",
                "absent": n % 7 == 0,
                "iceberg_theta": None if n % 2 else bytes([n % 256]) * 30,
            }
        )
    return rows


@pytest.fixture
def table_id(db_url: str, tmp_path: Path) -> int:
    ms = Metastore(db_url)
    ms.upgrade()
    ms.register_table("t", str(write_partitions(tmp_path / "t", ["k"], [["1"]])))
    found = ms.table("t").id
    ms.dispose()
    return found


def stored(db_url: str) -> list[dict[str, Any]]:
    ms = Metastore(db_url)
    try:
        with ms.engine.connect() as conn:
            found = conn.execute(select(ColumnStats).order_by(ColumnStats.partition_id))
            return [dict(r._mapping) for r in found]
    finally:
        ms.dispose()


def test_values_round_trip_over_several_batches(
    db_url: str, table_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bulk_insert, "COPY_BATCH_BYTES", 20_000)  # many COPY batches
    rows = column_rows(table_id, 60)
    ms = Metastore(db_url)
    with ms.engine.begin() as conn:
        if db_url.startswith("postgresql"):  # PostgreSQL takes the binary COPY
            assert bulk_insert._copy_encoders(conn, ColumnStats.__table__, list(rows[0]))
        else:  # SQLite its driver's executemany on plain tuples
            assert bulk_insert._plain_sqlite(conn, ColumnStats.__table__, list(rows[0]))
        bulk_insert.bulk_insert(conn, ColumnStats, rows)
        bulk_insert.bulk_insert(conn, ColumnStats, [])
    ms.dispose()
    assert stored(db_url) == rows


def test_a_failing_row_writes_nothing(db_url: str, table_id: int) -> None:
    rows = column_rows(table_id, 10)
    ms = Metastore(db_url)
    with pytest.raises(IntegrityError), ms.engine.begin() as conn:
        bulk_insert.bulk_insert(conn, ColumnStats, rows + column_rows(table_id, 1, offset=3))
    ms.dispose()
    assert stored(db_url) == []


def test_rows_needing_sqlalchemys_processing_take_its_insert(db_url: str, table_id: int) -> None:
    """A column SQLAlchemy would fill in (a default) or convert (a JSON or date value) is
    left to its INSERT: the plain path is for integers, text and bytes given in full."""
    ms = Metastore(db_url)
    with ms.engine.connect() as conn:
        plain = bulk_insert._plain_sqlite
        assert plain(conn, CatalogTable.__table__, ["id", "name"]) is False  # defaults left out
        columns = [c.name for c in CatalogTable.__table__.columns]
        assert plain(conn, CatalogTable.__table__, columns) is False  # JSON and dates given
        given = ["table_id", "partition_id", "column_name", "null_count"]
        assert plain(conn, ColumnStats.__table__, given) is db_url.startswith("sqlite")
    ms.dispose()
