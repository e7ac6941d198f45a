"""POST /prune (servers.http.routes.pruning)."""

from __future__ import annotations

from fastapi import FastAPI

from tests.servers.http.helpers import TestClient, assert_error


def test_prune_with_nothing_to_prune_does_not_start_spark(client: TestClient, app: FastAPI) -> None:
    """Nothing to prune is an answer (issue 21): not pruned, the partitions the query's own
    filters keep, and no Spark started to say so."""
    response = client.post("/prune", json={"sql": "SELECT * FROM sales WHERE dt = '2024-01-01'"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["pruned"], body["table"], body["rejected"]) == (False, "sales", [])
    assert body["partitions_before"] == body["partitions_after"] == 4  # 3 regions + default
    assert_error(client.post("/prune", json={"sql": "SELECT 1", "max_values": 0}), 422)
    assert app.state.service.spark.started is False
