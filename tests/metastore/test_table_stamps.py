"""Tables' stamps (metastore.catalog.stamps): one stamp for the statistics cache and the Hive
Metastore API, read by names or by one name alike; a table dropped and registered again has
another, later stamp, also where SQLite gives it its old id."""

from __future__ import annotations

from pathlib import Path

import pytest

from metastore import Metastore
from metastore.catalog.stamps import TableStamp, stamp_of, table_stamps
from metastore.errors import NoSuchObject
from metastore.hive.tables import table_stamp
from tests.support.partitions import write_partitions


def stamps(metastore: Metastore) -> TableStamp:
    with metastore.engine.connect() as conn:
        stamp = stamp_of(conn, "t")
        assert stamp is not None
        assert table_stamps(conn, ["t", "nope"]) == {"t": stamp}
        assert table_stamp(conn, "default", "t") == stamp
        assert table_stamp(conn, "DEFAULT", "T") == stamp
        assert stamp_of(conn, "nope") is None
        with pytest.raises(NoSuchObject, match=r"table default\.nope does not exist"):
            table_stamp(conn, "default", "nope")
        return stamp


def test_a_table_registered_again_has_another_stamp(
    metastore: Metastore, db_url: str, tmp_path: Path
) -> None:
    root = write_partitions(tmp_path / "t", ["k"], [["1"]])
    metastore.register_table("t", str(root))
    first = stamps(metastore)
    assert (first.version, first.last_run) == (1, 0)
    metastore.drop_table("t")
    metastore.register_table("t", str(root))
    again = stamps(metastore)
    assert (again.version, again.last_run) == (1, 0)
    if db_url.startswith("sqlite"):
        assert again.table_id == first.table_id  # SQLite gave the dropped table's id again
    assert again != first
    assert again.newer_than(first)
    assert not first.newer_than(again)
