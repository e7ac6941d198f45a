"""The partition lookups' fast path: GET and POST /tables/{name}/partitions answered
straight from ASGI, ahead of FastAPI's routing."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.datastructures import QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from metastore.catalog.lookup import PartitionQuery
from metastore.errors import InvalidValue
from servers.http.errors import ErrorHandler
from servers.http.formats import has_nul
from servers.http.lookup import in_lists_of, run_lookup
from servers.http.models import Selection
from servers.http.state import Service


class LookupFastPath:
    """Answers the partition lookups (GET and POST /tables/{name}/partitions) straight from
    ASGI: the request is read and validated as FastAPI would (the same pydantic model, the
    same query-string parsing), the lookup runs in a lookup thread, and errors go to the
    app's own handlers, without FastAPI's routing, dependency and thread-pool layers, which
    cost more than a small lookup. Any request it would not answer exactly as the route
    does (not JSON, a body or parameters the schema refuses, another path or method) is
    passed on to FastAPI unchanged, its body replayed."""

    _PATH = re.compile(r"/tables/([^/]+)/partitions")

    def __init__(
        self,
        app: ASGIApp,
        service: Service,
        routes: Mapping[str, APIRoute],
        handlers: Mapping[type[Exception], ErrorHandler],
    ) -> None:
        self.app = app
        self.service = service
        self.routes = routes
        self.handlers = handlers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope.get("method", "")
        match = None
        if scope["type"] == "http" and method in self.routes and not scope.get("root_path"):
            match = self._PATH.fullmatch(scope["path"])
        if match is None:
            await self.app(scope, receive, send)
            return
        if method == "POST":
            body, complete = await _read_body(receive)
            if not complete:
                return  # the client went away
            query = _posted_query(scope, body)
            if query is None:
                await self.app(scope, _replay(body, receive), send)
                return
        else:
            query = _query_of_parameters(scope)
            if query is None:
                await self.app(scope, receive, send)
                return
        scope["route"] = self.routes[method]  # the route template, for RequestMetrics
        scope["path_params"] = {"name": match.group(1)}
        try:
            response = await run_lookup(self.service, match.group(1), query)
        except Exception as error:
            handler = next(
                (self.handlers[c] for c in type(error).__mro__ if c in self.handlers), None
            )
            if handler is None:
                raise  # the server error middleware's 500
            response = await handler(Request(scope, receive), error)
        await response(scope, receive, send)


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    """The request's body, and False if the client disconnected before sending it all."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"", False
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives `body` again, then whatever the client sends next."""
    pending = True

    async def replay() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _posted_query(scope: Scope, body: bytes) -> PartitionQuery | None:
    """The query of a POSTed selection, when its body is JSON the schema accepts."""
    content_type = next((v for k, v in scope["headers"] if k == b"content-type"), None)
    if content_type is None or content_type.lower() != b"application/json" or not body:
        return None
    try:
        document = json.loads(body)
        return plain_in_lists(document) or Selection.model_validate(document).query()
    except (ValueError, ValidationError):  # json.JSONDecodeError is a ValueError
        return None


def plain_in_lists(document: Any) -> PartitionQuery | None:
    """The query of the commonest selection, {"in": {key: [text, ...], ...}} with no NUL
    character in any text, without pydantic (which would give the same query, each value
    as it is); None for anything else."""
    if type(document) is not dict or document.keys() != {"in"}:
        return None
    lists = document["in"]
    if type(lists) is not dict:
        return None
    for values in lists.values():
        if type(values) is not list or set(map(type, values)) - {str}:
            return None
        if has_nul(values):
            return None
    return PartitionQuery(tuple(lists.items()), (), None)


def _query_of_parameters(scope: Scope) -> PartitionQuery | None:
    """The query of a GET's parameters (read as Starlette reads them for FastAPI), when they
    hold no NUL character (the schema refuses those) and every `in` is KEY=V1,V2,..."""
    parameters = QueryParams(scope["query_string"])
    lists = parameters.getlist("in")
    where = parameters.get("where")
    if has_nul([*lists, where or ""]):
        return None
    try:
        return PartitionQuery(in_lists_of(lists), (), where)
    except InvalidValue:
        return None  # the route refuses it
