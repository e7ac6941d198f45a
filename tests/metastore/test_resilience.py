"""A dropped database connection (as on a server restart) is recovered on the next call;
a failed write leaves nothing half-written."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from metastore import Metastore
from metastore.errors import RegistrationError
from tests.support.databases import PG_URL
from tests.support.partitions import write_partitions


@pytest.mark.postgres
def test_lookup_survives_terminated_connections(pg_url: str, tmp_path: Path) -> None:
    ms = Metastore(pg_url)
    ms.upgrade()
    write_partitions(tmp_path / "t", ["n"], [["1"], ["2"]])
    ms.register_table("t", str(tmp_path / "t"))
    assert len(ms.partitions("t")) == 2
    with ms.engine.connect() as conn:
        pids = {conn.execute(text("select pg_backend_pid()")).scalar_one()}
    admin = create_engine(PG_URL)
    with admin.begin() as conn:  # what a restart does to every open connection
        for pid in pids:
            conn.execute(text("select pg_terminate_backend(:pid)"), {"pid": pid})
    admin.dispose()
    assert len(ms.partitions("t", {"n": [2]})) == 1  # the pool reconnects
    ms.dispose()


def test_failed_refresh_keeps_previous_state(metastore: Metastore, tmp_path: Path) -> None:
    root = write_partitions(tmp_path / "t", ["n"], [["1"], ["2"]])
    metastore.register_table("t", str(root))
    write_partitions(root, ["n"], [["3"], ["03"]])  # two directories, one typed value
    with pytest.raises(RegistrationError, match="same typed values"):
        metastore.register_table("t", str(root))
    assert metastore.partitions("t").names() == ["n=1", "n=2"]
    assert metastore.table("t").version == 1
    tables = [t for t in inspect(metastore.engine).get_table_names() if t.startswith("partitions_")]
    assert len(tables) == 1
