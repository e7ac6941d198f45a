"""One Alembic tree for both databases: upgrade head leaves no drift; downgrade works."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import inspect

from metastore import Metastore, migrate
from tests.support.partitions import write_partitions


def test_upgrade_head_has_no_drift(db_url: str, tmp_path: Path) -> None:
    ms = Metastore(db_url)
    assert ms.current_revision() is None
    assert ms.upgrade() == migrate.head_revision()
    assert migrate.drift(ms.engine) == []
    # each table's own partitions table is not part of the Alembic-owned schema
    write_partitions(tmp_path / "t", ["dt"], [["2024-01-01"]])
    ms.register_table("t", str(tmp_path / "t"))
    assert migrate.drift(ms.engine) == []
    ms.dispose()


def test_downgrade_to_base_and_back(db_url: str) -> None:
    ms = Metastore(db_url)
    ms.upgrade()
    assert migrate.downgrade(ms.engine, "base") is None
    assert "catalog_tables" not in inspect(ms.engine).get_table_names()
    assert ms.upgrade() == migrate.head_revision()
    ms.dispose()


def test_embedded_sqlite_is_created_on_first_use(tmp_path: Path) -> None:
    ms = Metastore(f"sqlite:///{tmp_path / 'fresh.db'}")
    assert ms.tables() == []
    assert ms.current_revision() == migrate.head_revision()
    ms.dispose()


def test_postgres_without_schema_asks_for_upgrade(pg_url: str) -> None:
    import pytest

    from metastore.errors import SchemaNotInitialised

    ms = Metastore(pg_url)
    with pytest.raises(SchemaNotInitialised, match="statlas db upgrade"):
        ms.tables()
    ms.dispose()


def test_models_name_the_head_revision() -> None:
    from metastore.models import SCHEMA_REVISION

    assert migrate.head_revision() == SCHEMA_REVISION


def test_postgres_keeps_sketches_uncompressed(pg_url: str) -> None:
    from sqlalchemy import text

    ms = Metastore(pg_url)
    ms.upgrade()
    with ms.engine.connect() as conn:
        storage = dict(
            conn.execute(
                text(
                    "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = "
                    "'column_stats'::regclass AND attname IN ('hll', 'kll', 'theta', 'top_k')"
                )
            ).all()
        )
    assert storage == {"hll": "e", "kll": "e", "theta": "e", "top_k": "e"}
    migrate.downgrade(ms.engine, "0003")
    with ms.engine.connect() as conn:
        theta = conn.execute(
            text(
                "SELECT attstorage FROM pg_attribute WHERE attrelid = "
                "'column_stats'::regclass AND attname = 'theta'"
            )
        ).scalar_one()
    assert theta == "x"
    ms.dispose()
