"""The Hive Metastore's function calls (CREATE FUNCTION and friends) over statlas's stored
functions (metastore.hive.functions; docs/hive-metastore.md#functions)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hive_metastore import ttypes as hms
from sqlalchemy import Connection, Engine

from metastore.engine import run_read, run_write
from metastore.hive import functions as functions
from servers.hive_metastore.thrift_errors import thrift_errors

T = TypeVar("T")


def _matcher(pattern: str | None) -> Callable[[str], bool]:
    """Hive's name patterns: `*` any characters, `|` alternatives, case-insensitive."""
    if not pattern or pattern in ("*", ".*"):
        return lambda _name: True
    regex = "|".join(re.escape(p).replace(r"\*", ".*") for p in pattern.lower().split("|"))
    compiled = re.compile(f"(?:{regex})")
    return lambda name: compiled.fullmatch(name.lower()) is not None


def function_of(obj: hms.Function) -> functions.FunctionDefinition:
    owner_type = hms.PrincipalType._VALUES_TO_NAMES.get(obj.ownerType) if obj.ownerType else None
    return functions.FunctionDefinition(
        obj.dbName or "default",
        obj.functionName or "",
        obj.className or "",
        obj.ownerName,
        owner_type,
        obj.createTime or int(time.time()),
        obj.functionType or hms.FunctionType.JAVA,
        [{"type": r.resourceType, "uri": r.uri} for r in obj.resourceUris or []],
    )


def function_object(function: functions.FunctionDefinition) -> hms.Function:
    owner_type = hms.PrincipalType._NAMES_TO_VALUES.get(function.owner_type or "USER", 1)
    return hms.Function(
        functionName=function.name,
        dbName=function.database,
        className=function.class_name,
        ownerName=function.owner_name,
        ownerType=owner_type,
        createTime=function.create_time,
        functionType=function.function_type,
        resourceUris=[
            hms.ResourceUri(resourceType=r.get("type"), uri=r.get("uri"))
            for r in function.resources
        ],
        catName="hive",
    )


class FunctionCalls:
    """Mixed into the handler: needs `engine`."""

    engine: Engine

    def _functions(self, work: Callable[[Connection], T]) -> T:
        return run_write(self.engine, work)

    @thrift_errors
    def create_function(self, func: hms.Function) -> None:
        definition = function_of(func)
        self._functions(lambda conn: functions.create_function(conn, definition))

    @thrift_errors
    def alter_function(
        self,
        dbName: str,
        funcName: str,
        newFunc: hms.Function,
    ) -> None:
        definition = function_of(newFunc)
        self._functions(
            lambda conn: functions.alter_function(conn, dbName or "", funcName or "", definition)
        )

    @thrift_errors
    def drop_function(self, dbName: str, funcName: str) -> None:
        self._functions(lambda conn: functions.drop_function(conn, dbName, funcName))

    @thrift_errors
    def get_function(self, dbName: str, funcName: str) -> hms.Function:
        """An unknown function's NoSuchObjectException says "... does not exist", the text
        Spark's client looks for."""
        found = run_read(self.engine, lambda conn: functions.get_function(conn, dbName, funcName))
        return function_object(found)

    @thrift_errors
    def get_functions(self, dbName: str, pattern: str) -> list[str]:
        matches = _matcher(pattern)
        found: list[Any] = run_read(
            self.engine, lambda conn: functions.list_functions(conn, dbName or "default")
        )
        return [f.name for f in found if matches(f.name)]

    @thrift_errors
    def get_all_functions(self) -> hms.GetAllFunctionsResponse:
        found = run_read(self.engine, functions.list_functions)
        return hms.GetAllFunctionsResponse(functions=[function_object(f) for f in found])
