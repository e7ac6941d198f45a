"""servers.http.auth: the bearer token guards every route but /health, and with a
roles file the token's role decides what it may change."""

from __future__ import annotations

from fastapi import APIRouter

from metastore import Metastore
from servers.authorization import HTTP_TOKEN_PRINCIPAL, Role, Roles
from servers.http.app import create_app
from servers.http.routes.schedules import schedules_router
from tests.servers.http.helpers import TestClient, assert_error

TOKEN = "s3cret-token"


def test_token_guards_every_route_but_health(sales: Metastore, db_url: str) -> None:
    router = APIRouter()

    @router.get("/ping")
    def ping() -> dict[str, str]:
        return {"pong": "yes"}

    with TestClient(create_app(db_url, token=TOKEN, routers=[router])) as client:
        assert client.get("/health").status_code == 200
        for path in ("/tables", "/tables/sales/partitions", "/metrics", "/runs", "/ping", "/docs"):
            assert_error(client.get(path), 401, "missing or wrong bearer token")
        wrong = {"Authorization": "Bearer nope"}
        assert_error(client.get("/tables", headers=wrong), 401)
        assert_error(client.get("/tables", headers={"Authorization": TOKEN}), 401)
        good = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get("/tables", headers=good).status_code == 200
        assert client.get("/ping", headers=good).json() == {"pong": "yes"}
        found = client.post("/tables/sales/partitions", json={}, headers=good)
        assert found.json()["count"] == 11
        schema = client.get("/openapi.json", headers=good).json()
        assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert "/ping" in schema["paths"]


def test_the_tokens_role_decides_what_it_may_change(sales: Metastore, db_url: str) -> None:
    """With a roles file the bearer token's holder ("api-token") is a reader, writer or
    admin: a reader queries (GET and the reading POSTs) and may not change schedules."""
    good = {"Authorization": f"Bearer {TOKEN}"}
    for role, may_change in (("reader", False), ("writer", True)):
        roles = Roles({HTTP_TOKEN_PRINCIPAL: Role[role.upper()]}, None)
        app = create_app(db_url, token=TOKEN, routers=[schedules_router(db_url)], roles=roles)
        with TestClient(app) as client:
            assert client.get("/tables", headers=good).status_code == 200
            found = client.post("/tables/sales/partitions", json={}, headers=good)
            assert found.json()["count"] == 11
            assert client.get("/schedules", headers=good).status_code == 200
            added = client.post("/schedules", json={"table": "sales", "every": "1h"}, headers=good)
            removed = client.delete("/schedules/sales", headers=good)
            if may_change:
                assert (added.status_code, removed.status_code) == (201, 200), added.text
            else:
                message = "Permission denied: api-token (role reader) may not POST /schedules"
                assert message in assert_error(added, 403)
                assert_error(removed, 403)
                assert client.get("/schedules", headers=good).json() == []
    nobody = create_app(db_url, token=TOKEN, roles=Roles({}, None))
    with TestClient(nobody) as client:
        assert "has no role" in assert_error(client.get("/tables", headers=good), 403)
        assert client.get("/health").status_code == 200
