"""The bearer token: every route but /health wants `Authorization: Bearer <token>`."""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from pruner.service.errors import error_response

OPEN_PATHS = frozenset({"/health"})  # answered without the bearer token


class BearerToken:
    """Refuses every request but /health without `Authorization: Bearer <token>` (401).
    Plain ASGI: no per-request objects beyond the header lookup."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        open_path = scope["type"] != "http" or scope["path"] in OPEN_PATHS
        if not open_path and not self._authorised(scope):
            response = error_response(
                401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"}
            )
            await response(scope, receive, send)
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
