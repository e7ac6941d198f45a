"""Alembic environment: runs against the connection statlas hands over, or STATLAS_DB_URL."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from metastore.engine import DEFAULT_DB_URL, make_engine
from metastore.migrate import include_object
from metastore.models import Base


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        include_object=include_object,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


given = context.config.attributes.get("connection")
if given is not None:
    run(given)
else:
    url = context.config.get_main_option("sqlalchemy.url") or os.environ.get(
        "STATLAS_DB_URL", DEFAULT_DB_URL
    )
    with make_engine(url).begin() as conn:
        run(conn)
