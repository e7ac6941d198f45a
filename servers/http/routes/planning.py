"""POST /estimate and /explain: a query's estimates and its cost-based physical plan. The
optimizer is imported by the first request (servers.preload imports it when the daemon
starts), so that an app made without serving plans does not load it."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from servers.http.errors import error_responses, sql_errors
from servers.http.formats import json_response
from servers.http.models import EstimateOut, EstimateRequest, ExplainOut, ExplainRequest
from servers.http.state import Service
from servers.process_memory import memory_freed


def router(service: Service) -> APIRouter:
    routes = APIRouter(tags=["queries"])

    @routes.post(
        "/estimate",
        summary="Estimate a query",
        response_model=EstimateOut,
        responses=error_responses(400, 404),
    )
    def estimate(request: EstimateRequest) -> Response:
        """Every plan node's rows, row size and column statistics (as `statlas estimate
        --json`)."""
        from optimizer.estimate.api import estimate as estimate_plan

        with sql_errors():
            answer = estimate_plan(service.engine(), request.sql, request.level, request.dialect)
        memory_freed()  # the request's working memory
        return json_response(answer)

    @routes.post(
        "/explain",
        summary="The cost-based physical plan of a query",
        response_model=ExplainOut,
        responses=error_responses(400, 404),
    )
    def explain(request: ExplainRequest) -> Response:
        """Join order, join algorithms, shuffles, jobs and costs (as `statlas explain
        --json`); with `emit: "spark"`, also the query as Spark SQL with join hints."""
        from optimizer.physical.api import emit, explain_json, plan_query

        with sql_errors():
            plan = plan_query(
                service.engine(), request.sql, request.dialect, request.config, level=request.level
            )
            answer = explain_json(plan)
            if request.emit == "spark":
                answer["spark_sql"] = emit(plan)
        del plan
        memory_freed()  # the request's working memory
        return json_response(answer)

    return routes
