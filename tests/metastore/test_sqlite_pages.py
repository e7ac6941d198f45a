"""A new SQLite metastore is made of 16 KB pages (metastore.engine.SQLITE_PAGE_SIZE: rows of
sketches leave a fifth of 4 KB pages empty); a metastore made before keeps its own pages and
works as it did. SQLite alone: PostgreSQL's pages are the server's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from metastore import Metastore
from metastore.engine import SQLITE_PAGE_SIZE
from tests.support.partitions import write_partitions


def page_size(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])


def test_a_new_metastore_has_large_pages_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"], ["2024-01-02"]])
    new = tmp_path / "new.db"
    ms = Metastore(f"sqlite:///{new}")
    ms.upgrade()
    ms.register_table("t", str(tmp_path / "t"))
    ms.dispose()
    assert page_size(new) == SQLITE_PAGE_SIZE == 16_384

    old = tmp_path / "old.db"
    with sqlite3.connect(old) as conn:  # made before: SQLite's default pages, in WAL mode
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE made_before (x INTEGER)")
    ms = Metastore(f"sqlite:///{old}")
    ms.upgrade()
    ms.register_table("t", str(tmp_path / "t"))
    assert [t.name for t in ms.tables()] == ["t"]
    ms.dispose()
    assert page_size(old) == 4096
