"""Permanent functions Hive clients create (CREATE FUNCTION), by database and name
(docs/hive-metastore.md#functions). Names are kept in lower case, as Hive keeps them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from metastore.errors import AlreadyExists, InvalidObject, NoSuchObject
from metastore.hive.databases import get_database
from metastore.models import HiveFunction

_NAME = re.compile(r"[\w.$]+")


@dataclass(frozen=True)
class FunctionDefinition:
    database: str
    name: str
    class_name: str
    owner_name: str | None = None
    owner_type: str | None = None
    create_time: int = 0
    function_type: int = 1  # Hive's FunctionType.JAVA
    resources: Sequence[dict[str, Any]] = field(default_factory=tuple)


def _checked(definition: FunctionDefinition) -> FunctionDefinition:
    name, database = (definition.name or "").lower(), (definition.database or "").lower()
    if not _NAME.fullmatch(name):
        raise InvalidObject(f"Invalid function name {definition.name!r}")
    if not definition.class_name:
        raise InvalidObject(f"function {database}.{name} needs a class name")
    return FunctionDefinition(
        database,
        name,
        definition.class_name,
        definition.owner_name,
        definition.owner_type,
        definition.create_time,
        definition.function_type,
        list(definition.resources),
    )


def create_function(conn: Connection, definition: FunctionDefinition) -> None:
    function = _checked(definition)
    get_database(conn, function.database)  # NoSuchObject for an unknown database
    if _row(conn, function.database, function.name) is not None:
        raise AlreadyExists(f"Function {function.database}.{function.name} already exists")
    conn.execute(insert(HiveFunction).values(**_values(function)))


def alter_function(conn: Connection, database: str, name: str, new: FunctionDefinition) -> None:
    database, name = database.lower(), name.lower()
    if _row(conn, database, name) is None:
        raise NoSuchObject(f"function {database}.{name} doesn't exist")
    function = _checked(new)
    if (function.database, function.name) != (database, name):
        get_database(conn, function.database)
        if _row(conn, function.database, function.name) is not None:
            raise AlreadyExists(f"Function {function.database}.{function.name} already exists")
    conn.execute(
        update(HiveFunction)
        .where(HiveFunction.database_name == database, HiveFunction.function_name == name)
        .values(**_values(function))
    )


def drop_function(conn: Connection, database: str, name: str) -> None:
    database, name = (database or "").lower(), (name or "").lower()
    dropped = conn.execute(
        delete(HiveFunction).where(
            HiveFunction.database_name == database, HiveFunction.function_name == name
        )
    ).rowcount
    if not dropped:
        raise NoSuchObject(f"Function {database}.{name} does not exist")


def get_function(conn: Connection, database: str, name: str) -> FunctionDefinition:
    row = _row(conn, (database or "").lower(), (name or "").lower())
    if row is None:
        raise NoSuchObject(f"Function {database}.{name} does not exist")
    return _definition(row)


def list_functions(conn: Connection, database: str | None = None) -> list[FunctionDefinition]:
    query = select(*HiveFunction.__table__.c).order_by(
        HiveFunction.database_name, HiveFunction.function_name
    )
    if database is not None:
        query = query.where(HiveFunction.database_name == database.lower())
    return [_definition(row) for row in conn.execute(query)]


def drop_database_functions(conn: Connection, database: str) -> None:
    conn.execute(delete(HiveFunction).where(HiveFunction.database_name == database.lower()))


def _row(conn: Connection, database: str, name: str) -> Any:
    return conn.execute(
        select(*HiveFunction.__table__.c).where(
            HiveFunction.database_name == database, HiveFunction.function_name == name
        )
    ).first()


def _values(function: FunctionDefinition) -> dict[str, Any]:
    return {
        "database_name": function.database,
        "function_name": function.name,
        "class_name": function.class_name,
        "owner_name": function.owner_name,
        "owner_type": function.owner_type,
        "create_time": function.create_time,
        "function_type": function.function_type,
        "resources": list(function.resources),
    }


def _definition(row: Any) -> FunctionDefinition:
    return FunctionDefinition(
        row.database_name,
        row.function_name,
        row.class_name,
        row.owner_name,
        row.owner_type,
        row.create_time,
        row.function_type,
        tuple(row.resources or ()),
    )
