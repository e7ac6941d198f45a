"""GET /schedules, POST /schedules and DELETE /schedules/{table}: the schedules of
pruner.daemon.schedules over HTTP (the daemon adds this router to its app)."""

from __future__ import annotations

import json
from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from metastore.errors import InvalidValue, StatlasError
from pruner.daemon.schedules import Schedules
from servers.http.errors import error_response, http_status


def schedules_router(
    db_url: str,
    *,
    schedules: Schedules | None = None,
    on_change: Callable[[], None] | None = None,
) -> APIRouter:
    """GET /schedules, POST /schedules {"table", "cron" | "every"}, DELETE
    /schedules/{table}; errors are {"error": message} with the error's HTTP status.
    `on_change` is called after every change (the daemon wakes its scheduler)."""
    book = schedules if schedules is not None else Schedules(db_url)
    router = APIRouter(tags=["schedules"])

    def changed() -> None:
        if on_change is not None:
            on_change()

    @router.get("/schedules")
    def list_schedules() -> Response:
        try:
            return JSONResponse([s.as_json() for s in book.list()])
        except StatlasError as error:
            return error_response(http_status(error), str(error))

    @router.post("/schedules")
    async def add_schedule(request: Request) -> Response:
        try:
            body = _schedule_request(await request.body())
            schedule = await run_in_threadpool(
                lambda: book.add(body["table"], cron=body.get("cron"), every=body.get("every"))
            )
        except StatlasError as error:
            return error_response(http_status(error), str(error))
        changed()
        return JSONResponse(schedule.as_json(), status_code=201)

    @router.delete("/schedules/{table}")
    def remove_schedule(table: str) -> Response:
        try:
            name = book.remove(table)
        except StatlasError as error:
            return error_response(http_status(error), str(error))
        changed()
        return JSONResponse({"table": name, "removed": True})

    return router


def _schedule_request(raw: bytes) -> dict[str, str]:
    """The body of POST /schedules: {"table": NAME, "cron": EXPR} or {..., "every": DUR}."""
    try:
        body = json.loads(raw or b"null")
    except ValueError:
        raise InvalidValue("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise InvalidValue('the request body must be {"table": ..., "cron" | "every": ...}')
    unknown = sorted(set(body) - {"table", "cron", "every"})
    if unknown:
        raise InvalidValue(f"unknown field(s) {', '.join(unknown)}: use table, cron or every")
    for key, value in body.items():
        if not isinstance(value, str) and not (key != "table" and value is None):
            raise InvalidValue(f"{key} must be a string")
    if "table" not in body:
        raise InvalidValue("table is required")
    return {k: v for k, v in body.items() if v is not None}
