"""A schemathesis fuzz of the OpenAPI schema: no operation answers a server error."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from metastore import Metastore
from servers.http.app import create_app

FUZZ_EXAMPLES = 12  # per operation, mode and backend: about 20 s in all


def operation_cases(operation: Any, mode: GenerationMode) -> st.SearchStrategy[Any]:
    """Requests schemathesis draws for `operation`; for /tables/{name}/... half of them
    name the registered table, so that fuzzed lists and conditions reach the database."""
    drawn = operation.as_strategy(generation_mode=mode)
    if "{name}" not in operation.path:
        return drawn  # type: ignore[no-any-return]
    return st.one_of(drawn, operation.as_strategy(generation_mode=mode, path_parameters=SALES))


SALES = {"name": "sales"}


@pytest.mark.slow  # about 20 s in all: make test runs it, make check does not
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fuzz_finds_no_server_error(sales: Metastore, db_url: str, mode: GenerationMode) -> None:
    """Every operation but /prune (it may start Spark), with data that fits the schema and
    data that does not: never a 5xx, and every error is {"error": ...}."""
    app = create_app(db_url)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app).exclude(path="/prune")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9

    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not (len(operation.query) or len(operation.body)):
            continue  # nothing of it can break its schema

        @given(case=operation_cases(operation, mode))
        @settings(
            max_examples=FUZZ_EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def answers_without_server_error(case: Any) -> None:
            response = case.call()
            where = f"{case.method} {case.formatted_path} {case.query} {case.body!r}"
            assert response.status_code < 500, f"{where}: {response.text}"
            if response.status_code >= 400:
                assert list(response.json()) == ["error"], f"{where}: {response.text}"

        answers_without_server_error()
    assert app.state.service.spark.started is False
