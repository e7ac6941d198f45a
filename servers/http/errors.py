"""Every failure as `{"error": "<one line>"}` with its status: the project's errors with
their HTTP status (HTTP_STATUSES; 503 whenever the database cannot be reached), database
errors, invalid requests, and bugs (still one JSON line, a 500)."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy import Engine
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException

from metastore import Metastore
from metastore.catalog.column_names import AmbiguousColumn
from metastore.engine import translate
from metastore.errors import (
    AlreadyExists,
    ConcurrentModification,
    InvalidValue,
    MetastoreUnavailable,
    NoSuchObject,
    SchemaNotInitialised,
    StatlasError,
    UnknownColumn,
    UnknownTable,
)
from metastore.runs import CollectionRunning
from pruner.daemon.schedules import UnknownSchedule
from servers.http.models import ErrorOut

ErrorHandler = Callable[[Request, Exception], Awaitable[Response]]

# the HTTP status of each of the project's errors: that of the nearest class of the error's
# MRO listed here (an AmbiguousColumn is an UnknownColumn, but a client's mistake: 400)
HTTP_STATUSES: dict[type[StatlasError], int] = {
    AmbiguousColumn: 400,
    UnknownTable: 404,
    UnknownColumn: 404,
    NoSuchObject: 404,
    UnknownSchedule: 404,
    ConcurrentModification: 409,
    AlreadyExists: 409,
    CollectionRunning: 409,
    MetastoreUnavailable: 503,
    StatlasError: 400,
}

# why a route answers each error status (the OpenAPI schema's descriptions)
_WHY = {
    400: "invalid input (bad value, malformed condition or SQL, empty list)",
    401: "missing or wrong bearer token",
    404: "unknown table, key or column",
    422: "the request does not match its schema",
    503: "the metastore cannot be reached",
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error answers a route can give: `statuses`, and those every
    route can give (401, 422, 503)."""
    return {s: {"model": ErrorOut, "description": _WHY[s]} for s in (*statuses, 401, 422, 503)}


def http_status(error: StatlasError) -> int:
    """The HTTP status of `error` (HTTP_STATUSES)."""
    for cls in type(error).__mro__:
        status = HTTP_STATUSES.get(cls)
        if status is not None:
            return status
    raise AssertionError("StatlasError is in HTTP_STATUSES")  # pragma: no cover


def one_line(error: object) -> str:
    text = " ".join(str(error).split())
    return text or type(error).__name__


def error_response(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def add_error_handlers(app: FastAPI, metastore: Metastore) -> dict[type[Exception], ErrorHandler]:
    """Every failure becomes {"error": "<one line>"} with its status; database trouble is a
    503, never a 500. Returns the handlers of the errors a route can raise (all but the
    catch-all, which is the server error middleware's)."""

    async def statlas_error(_: Request, error: Exception) -> Response:
        assert isinstance(error, StatlasError)
        unavailable = isinstance(error, MetastoreUnavailable | SchemaNotInitialised)
        return error_response(503 if unavailable else http_status(error), one_line(error))

    async def database_error(_: Request, error: Exception) -> Response:
        assert isinstance(error, sa_exc.StatementError)
        return database_error_response(metastore.engine, error)

    async def invalid_request(_: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        return error_response(422, validation_message(error))

    async def http_error(_: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        return error_response(error.status_code, str(error.detail), error.headers)

    async def unexpected(_: Request, error: Exception) -> Response:
        return error_response(500, f"internal error: {type(error).__name__}: {one_line(error)}")

    handlers: dict[type[Exception], ErrorHandler] = {
        StatlasError: statlas_error,
        sa_exc.StatementError: database_error,
        RequestValidationError: invalid_request,
        HTTPException: http_error,
    }
    for error_type, handler in handlers.items():
        app.add_exception_handler(error_type, handler)
    app.add_exception_handler(Exception, unexpected)  # a bug: still one JSON line
    return handlers


def database_error_response(engine: Engine, error: sa_exc.StatementError) -> Response:
    """A database error outside the metastore's own translation: a value the database
    refuses (out of range, a NUL character) is the client's 400; anything else means the
    database is not answering as it should: 503."""
    if isinstance(error, sa_exc.DataError) or not isinstance(error, sa_exc.DBAPIError):
        return error_response(400, f"invalid value: {one_line(error.orig)}")
    translated = translate(engine, error)
    message = one_line(translated if translated is not error else error.orig)
    return error_response(503, message)


def validation_message(error: RequestValidationError) -> str:
    """The first problem of an invalid request on one line, e.g. `body.buckets: Input
    should be greater than or equal to 1`."""
    problems = error.errors()
    if not problems:
        return "invalid request"
    first = problems[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return " ".join(f"{where}: {first.get('msg', 'invalid')}{more}".split())


@contextlib.contextmanager
def sql_errors() -> Iterator[None]:
    """Turn sqlglot's own errors (a tokenizer error escapes the planner's parse check) into
    the one-line 400 the CLI would print."""
    from sqlglot.errors import SqlglotError

    try:
        yield
    except SqlglotError as error:
        raise InvalidValue(f"malformed SQL: {one_line(error)}") from None
