"""Schema management through Alembic: upgrade, current revision, drift check."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, inspect, text

import migrations
from metastore.engine import run_read, run_write
from metastore.errors import SchemaNotInitialised
from metastore.models import PARTITION_TABLE_PREFIX, SCHEMA_REVISION, Base

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic is imported only by the functions that change or compare the schema, so that
# everyday commands do not pay for loading it.
VERSION_TABLE = "alembic_version"


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(migrations.__file__).parent))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, revision: str = "head") -> str | None:
    """Bring the schema to `revision` in one transaction; returns the new revision."""
    from alembic import command

    run_write(engine, lambda conn: command.upgrade(alembic_config(conn), revision))
    return current_revision(engine)


def downgrade(engine: Engine, revision: str) -> str | None:
    from alembic import command

    run_write(engine, lambda conn: command.downgrade(alembic_config(conn), revision))
    return current_revision(engine)


def current_revision(engine: Engine) -> str | None:
    """The revision recorded in the database's alembic_version table (None if absent)."""

    def read(conn: Connection) -> str | None:
        if not inspect(conn).has_table(VERSION_TABLE):
            return None
        revision = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalar()
        return None if revision is None else str(revision)

    return run_read(engine, read)


def head_revision() -> str | None:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    """Leave each table's own partitions table (and its indexes) out of Alembic's view."""
    if type_ == "table" and name and name.startswith(PARTITION_TABLE_PREFIX):
        return False
    table = getattr(obj, "table", None)
    return not (
        type_ in ("index", "unique_constraint")
        and table is not None
        and table.name.startswith(PARTITION_TABLE_PREFIX)
    )


def drift(engine: Engine) -> list[Any]:
    """The differences autogenerate finds between the models and the database (none wanted)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    def compare(conn: Connection) -> list[Any]:
        context = MigrationContext.configure(
            conn,
            opts={
                "include_object": include_object,
                "compare_type": True,
                "render_as_batch": conn.dialect.name == "sqlite",
            },
        )
        return list(compare_metadata(context, Base.metadata))

    return run_read(engine, compare)


def ensure_schema(engine: Engine) -> None:
    """Check the schema is at head. An embedded SQLite metastore with no schema at all is
    created on first use, as Spark's embedded Derby metastore is; anything else must be
    upgraded explicitly with `statlas db upgrade`."""
    current = current_revision(engine)
    if current == SCHEMA_REVISION:
        return
    empty = current is None and engine.dialect.name == "sqlite"
    if empty and not run_read(engine, lambda conn: inspect(conn).get_table_names()):
        upgrade(engine)
        return
    raise SchemaNotInitialised(
        f"the metastore schema is at {current or 'nothing'}, not {SCHEMA_REVISION}: "
        "run 'statlas db upgrade'"
    )
