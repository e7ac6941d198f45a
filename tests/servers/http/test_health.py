"""GET /health (servers.http.routes.health), and a database that is down or not
upgraded: 503 from every route that needs it, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from servers.http.app import create_app
from tests.servers.http.helpers import TestClient, assert_error, sample

CLOSED_PORT_PG = "postgresql+psycopg2://postgres@127.0.0.1:1/test"


def test_health(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}


@pytest.mark.parametrize(
    "url",
    [CLOSED_PORT_PG, "sqlite:////nonexistent-statlas-dir/statlas.db"],
    ids=["postgres-closed-port", "sqlite-missing-dir"],
)
def test_database_down_is_503(url: str) -> None:
    with TestClient(create_app(url)) as client:
        health = client.get("/health")
        assert health.status_code == 503
        assert health.json()["status"] == "degraded"
        assert health.json()["database"] == "unavailable"
        assert "\n" not in health.json()["error"]
        assert "cannot reach the metastore" in assert_error(
            client.get("/tables/sales/partitions", params={"in": "dt=2024-01-01"}), 503
        )
        assert_error(client.post("/tables/sales/partitions", json={"in": {"dt": ["x"]}}), 503)
        assert_error(client.get("/tables"), 503)
        assert_error(client.get("/runs"), 503)
        scraped = client.get("/metrics")
        assert scraped.status_code == 200
        assert sample(scraped.text, "statlas_metastore_up") == 0


@pytest.mark.postgres
def test_schema_not_upgraded_is_503(pg_url: str) -> None:
    """A PostgreSQL metastore is upgraded explicitly: until then the API is unavailable."""
    with TestClient(create_app(pg_url)) as client:
        assert client.get("/health").status_code == 200  # the database itself answers
        assert "statlas db upgrade" in assert_error(client.get("/tables"), 503)
