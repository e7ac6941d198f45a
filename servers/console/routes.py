"""GET / and GET /console/{asset}: the console's files, read once from static/. The HTTP
API (servers.http) includes these routes and opens them past its token; this module knows
nothing of the API.

The files hold no data, so they are served without the bearer token; every figure the
pages show comes from the API's routes, which the page calls with the token it asks for
(servers.http.auth). The Content-Security-Policy lets a page reach this daemon only: no
script, style, image or request from any other host."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import NamedTuple

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

STATIC = Path(__file__).parent / "static"
ASSET_PREFIX = "/console/"
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",  # asked again each time, answered 304 while unchanged
}


class Asset(NamedTuple):
    content: bytes
    media_type: str
    etag: str


def is_console_path(path: str) -> bool:
    """The console's own files: served to anyone (they hold no data)."""
    return path == "/" or path.startswith(ASSET_PREFIX)


def router() -> APIRouter:
    assets = _read_assets(STATIC)
    routes = APIRouter(include_in_schema=False)

    # async: answered on the event loop, no hop to the thread pool the API's routes use
    @routes.get("/")
    async def index(request: Request) -> Response:
        return _served(assets, "index.html", request)

    @routes.get(ASSET_PREFIX + "{name}")
    async def asset(name: str, request: Request) -> Response:
        return _served(assets, name, request)

    return routes


def _read_assets(directory: Path) -> dict[str, Asset]:
    assets = {}
    for path in sorted(directory.iterdir()):
        if path.suffix in MEDIA_TYPES:
            content = path.read_bytes()
            etag = '"' + hashlib.sha256(content).hexdigest()[:20] + '"'
            assets[path.name] = Asset(content, MEDIA_TYPES[path.suffix], etag)
    return assets


def _served(assets: dict[str, Asset], name: str, request: Request) -> Response:
    found = assets.get(name)
    if found is None:
        return JSONResponse({"error": f"no console file {name!r}"}, status_code=404)
    headers = {**HEADERS, "ETag": found.etag}
    if request.headers.get("if-none-match") == found.etag:
        return Response(status_code=304, headers=headers)
    return Response(found.content, media_type=found.media_type, headers=headers)
