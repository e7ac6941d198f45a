"""The bearer token: every route but /health and the console's files wants
`Authorization: Bearer <token>`. With a roles file (servers.authorization) the token's
holder, "api-token", has a role: the queries (GET, and the POSTs that only read) want a
reader, changing schedules a writer."""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from servers.authorization import HTTP_TOKEN_PRINCIPAL, Role, Roles, denied_message
from servers.console.routes import is_console_path
from servers.http.errors import error_response

OPEN_PATHS = frozenset({"/health"})  # answered without the bearer token, as the console's files
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
READING_POSTS = re.compile(r"/(estimate|explain|prune|tables/[^/]+/(partitions|statistics))")
"""POSTs that only read (their questions are too long for a URL); any other POST, PUT,
PATCH or DELETE changes something and wants a writer."""


def needed_role(method: str, path: str) -> Role:
    if method in READ_METHODS or (method == "POST" and READING_POSTS.fullmatch(path)):
        return Role.READER
    return Role.WRITER


class BearerToken:
    """Refuses every request but /health and the console's files without `Authorization:
    Bearer <token>` (401).
    Plain ASGI: no per-request objects beyond the header lookup."""

    def __init__(self, app: ASGIApp, token: str, roles: Roles | None = None) -> None:
        self.app = app
        self.token = token.encode()
        self.roles = roles

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        open_path = scope["type"] != "http" or _open(scope["path"])
        if not open_path and not self._authorised(scope):
            response = error_response(
                401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
            )
            await response(scope, receive, send)
            return
        if not open_path and self.roles is not None:
            needed = needed_role(scope["method"], scope["path"])
            role = self.roles.role_of(HTTP_TOKEN_PRINCIPAL)
            if role is None or role < needed:
                action = f"{scope['method']} {scope['path']}"
                message = denied_message(HTTP_TOKEN_PRINCIPAL, role, action, needed)
                await error_response(403, message)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    credentials.strip(), self.token
                )
        return False


def _open(path: str) -> bool:
    """/health, and the console's files: they hold no data (the page asks for the token)."""
    return path in OPEN_PATHS or is_console_path(path)


def document_bearer(app: FastAPI) -> None:
    """Declare the bearer token in the OpenAPI schema, so /docs can send it."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        components = schema.setdefault("components", {})
        components.setdefault("securitySchemes", {})["bearer"] = {
            "type": "http",
            "scheme": "bearer",
        }
        schema["security"] = [{"bearer": []}]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
