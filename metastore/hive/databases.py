"""Hive's databases: those Hive clients created (metastore.models.HiveDatabase) and those
the names of statlas tables imply (`db.t`; `default` always). Dropping one is
metastore.hive.tables.drop_database (with `cascade`, it drops its tables)."""

from __future__ import annotations

import re

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from metastore.errors import AlreadyExists, InvalidObject, NoSuchObject
from metastore.hive.definitions import DEFAULT_DATABASE, Database, hive_name
from metastore.models import CatalogTable, HiveDatabase

_NAME = re.compile(r"[a-z_][a-z0-9_]*")


def list_databases(conn: Connection) -> list[str]:
    """Every database: those created, and those statlas tables named `db.t` imply."""
    names = set(conn.execute(select(HiveDatabase.name)).scalars())
    names.add(DEFAULT_DATABASE)
    for table in conn.execute(select(CatalogTable.name)).scalars():
        names.add(hive_name(table)[0])
    return sorted(names)


def get_database(conn: Connection, name: str) -> Database:
    name = name.lower()
    db = Session(conn).get(HiveDatabase, name)
    if db is not None:
        return Database(
            db.name,
            db.description,
            db.location,
            db.owner_name,
            db.owner_type,
            dict(db.parameters or {}),
        )
    if name == DEFAULT_DATABASE or name in list_databases(conn):
        return Database(name, None, None, "public", "ROLE", {})
    raise NoSuchObject(f"database {name} does not exist")


def create_database(conn: Connection, database: Database) -> None:
    name = database.name.lower()
    if not _NAME.fullmatch(name):
        raise InvalidObject(f"invalid database name {database.name!r}")
    if name in list_databases(conn):
        raise AlreadyExists(f"database {name} already exists")
    session = Session(conn)
    session.add(
        HiveDatabase(
            name=name,
            description=database.description,
            location=database.location,
            owner_name=database.owner_name,
            owner_type=database.owner_type,
            parameters=dict(database.parameters),
        )
    )
    session.flush()


def alter_database(conn: Connection, name: str, database: Database) -> None:
    current = get_database(conn, name)
    session = Session(conn)
    row = session.get(HiveDatabase, current.name)
    if row is None:
        row = HiveDatabase(name=current.name)
        session.add(row)
    row.description = database.description
    row.location = database.location or current.location
    row.owner_name = database.owner_name
    row.owner_type = database.owner_type
    row.parameters = dict(database.parameters)
    session.flush()


def database_tables(conn: Connection, database: str) -> list[str]:
    """The tables of `database` (Hive names, without the database)."""
    database = database.lower()
    names = conn.execute(select(CatalogTable.name)).scalars()
    return sorted(t for d, t in map(hive_name, names) if d == database)
