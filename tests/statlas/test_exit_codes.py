"""The exit code and HTTP status of each of the project's errors, where the CLI and the HTTP
service keep them (statlas/exit_codes.py, servers/http/errors.py): the nearest class of an
error's MRO decides, so a subclass answers as its parent unless listed itself."""

from __future__ import annotations

import pytest

from collectors.collect import CollectionFailed
from metastore.catalog.column_names import AmbiguousColumn
from metastore.errors import (
    AlreadyExists,
    ConcurrentModification,
    InvalidLookup,
    InvalidValue,
    MetastoreUnavailable,
    NoSuchObject,
    SchemaNotInitialised,
    StatlasError,
    UnknownColumn,
    UnknownTable,
)
from metastore.runs import CollectionRunning
from optimizer.estimate.sources import StatisticsChanged
from optimizer.sql_to_plan import InvalidQuery
from pruner.daemon.schedules import UnknownSchedule
from servers.http.errors import http_status
from statlas.exit_codes import exit_code

CASES: list[tuple[type[StatlasError], int, int]] = [
    # error, HTTP status, exit code
    (StatlasError, 400, 2),
    (InvalidValue, 400, 2),
    (InvalidLookup, 400, 2),
    (InvalidQuery, 400, 2),
    (CollectionFailed, 400, 2),
    (SchemaNotInitialised, 400, 2),
    (UnknownTable, 404, 2),
    (UnknownColumn, 404, 2),
    (AmbiguousColumn, 400, 2),  # an UnknownColumn, but the client's mistake
    (NoSuchObject, 404, 2),
    (UnknownSchedule, 404, 2),
    (ConcurrentModification, 409, 2),
    (StatisticsChanged, 409, 2),  # a ConcurrentModification
    (AlreadyExists, 409, 2),
    (CollectionRunning, 409, 2),
    (MetastoreUnavailable, 503, 3),
]


@pytest.mark.parametrize(("error", "status", "code"), CASES, ids=[c[0].__name__ for c in CASES])
def test_each_error_has_its_status_and_exit_code(
    error: type[StatlasError], status: int, code: int
) -> None:
    raised = error("x")
    assert http_status(raised) == status
    assert exit_code(raised) == code


def test_an_unlisted_subclass_answers_as_its_parent() -> None:
    class Unreachable(MetastoreUnavailable):
        pass

    class Missing(UnknownTable):
        pass

    assert (http_status(Unreachable("x")), exit_code(Unreachable("x"))) == (503, 3)
    assert (http_status(Missing("x")), exit_code(Missing("x"))) == (404, 2)
