"""servers.http.fast_path: the lookups it answers ahead of FastAPI, those it leaves to
FastAPI, and plain_in_lists against the request schema."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fastapi import FastAPI
from hypothesis import example, given
from hypothesis import strategies as st
from starlette.middleware import Middleware
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.servers.http.helpers import JSON_CONTENT, TestClient, assert_error, names


class FastAPIRouting:
    """ASGI, placed innermost (between the fast path and FastAPI's router): the method of
    each lookup request that reaches FastAPI's routing, in order. What the fast path
    (servers.http.fast_path.LookupFastPath) answers never gets here."""

    def __init__(self, app: ASGIApp, seen: list[str]) -> None:
        self.app = app
        self.seen = seen

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and re.fullmatch(r"/tables/[^/]+/partitions", scope["path"]):
            self.seen.append(scope["method"])
        await self.app(scope, receive, send)


def test_lookup_fast_path_answers_and_leaves_the_rest_to_fastapi(app: FastAPI) -> None:
    """Well-formed lookups (a JSON body, or GET parameters the schema takes) are answered
    by the fast path and never reach FastAPI's routing; the others get FastAPI's answer:
    JSON with a charset, a body that is not JSON, query parameters FastAPI refuses."""
    fastapi_saw: list[str] = []
    app.user_middleware.append(Middleware(FastAPIRouting, seen=fastapi_saw))  # innermost
    with TestClient(app) as client:
        body = json.dumps({"in": {"dt": ["2024-01-02"], "region": ["emea"]}}).encode()
        fast = client.post("/tables/sales/partitions", content=body, headers=JSON_CONTENT)
        assert fast.status_code == 200
        assert names(fast.json()) == ["dt=2024-01-02/region=emea"]
        fast_get = client.get("/tables/sales/partitions", params={"in": "dt=2024-01-02"})
        assert names(fast_get.json()) == [
            "dt=2024-01-02/region=amer",
            "dt=2024-01-02/region=apac",
            "dt=2024-01-02/region=emea",
        ]
        unknown = client.post("/tables/nope/partitions", content=body, headers=JSON_CONTENT)
        assert_error(unknown, 404)  # the app's own error handler, from the fast path
        assert fastapi_saw == []
        with_charset = client.post(
            "/tables/sales/partitions",
            content=body,
            headers={"content-type": "application/json; charset=utf-8"},
        )
        assert with_charset.status_code == 200
        assert with_charset.content == fast.content
        assert fastapi_saw == ["POST"]
        assert_error(
            client.post(
                "/tables/sales/partitions", content=body, headers={"content-type": "text/plain"}
            ),
            422,
        )
        assert_error(
            client.post("/tables/sales/partitions", content=b"", headers=JSON_CONTENT), 422
        )
        assert_error(
            client.post("/tables/sales/partitions", content=b"[1]", headers=JSON_CONTENT), 422
        )
        bad_get = client.get("/tables/sales/partitions", params={"in": "region=a\x00"})
        assert_error(bad_get, 422)
        assert fastapi_saw == ["POST", "POST", "POST", "POST", "GET"]
        # a trailing slash (redirected) and other methods are FastAPI's to answer
        assert client.get("/tables/sales/partitions/", follow_redirects=False).status_code == 307
        assert client.put("/tables/sales/partitions", json={}).status_code == 405


PLAIN_TEXT = st.one_of(st.text(max_size=6), st.sampled_from(["a\x00", "\x00", "2024-01-01"]))


DOCUMENTS = st.one_of(
    st.dictionaries(
        st.sampled_from(["in", "in_", "where", "tuples", "x"]),
        st.one_of(
            st.dictionaries(
                st.text(max_size=4),
                st.one_of(
                    st.lists(PLAIN_TEXT, max_size=4),
                    st.lists(st.one_of(PLAIN_TEXT, st.integers(), st.none()), max_size=3),
                    PLAIN_TEXT,
                ),
                max_size=3,
            ),
            PLAIN_TEXT,
            st.none(),
        ),
        max_size=2,
    ),
    st.lists(PLAIN_TEXT, max_size=2),
)


PLAIN_DOCUMENTS = st.fixed_dictionaries(
    {"in": st.dictionaries(st.text(max_size=4), st.lists(st.text(max_size=6)), max_size=3)}
).filter(lambda document: "\x00" not in json.dumps(document, ensure_ascii=False))


def plain(document: Any) -> bool:
    """The commonest selection, which plain_in_lists reads without pydantic:
    {"in": {key: [text, ...], ...}} with no NUL character in any text."""
    if not isinstance(document, dict) or list(document) != ["in"]:
        return False
    lists = document["in"]
    return isinstance(lists, dict) and all(
        isinstance(values, list) and all(isinstance(v, str) and "\x00" not in v for v in values)
        for values in lists.values()
    )


@given(st.one_of(PLAIN_DOCUMENTS, DOCUMENTS))
@example({"in": {"dt": ["2024-01-01", ""], "region": []}})
@example({"in": {"dt": ["2024-01-01", None]}})
def test_plain_in_lists_are_what_the_schema_makes_of_them(document: Any) -> None:
    """plain_in_lists takes every plain document, and gives the query the schema makes of
    it; anything else it leaves to the schema (None)."""
    from pydantic import ValidationError

    from servers.http.fast_path import plain_in_lists
    from servers.http.models import Selection

    quick = plain_in_lists(document)
    if not plain(document):
        assert quick is None, f"plain_in_lists took {document!r}, which is not plain"
        return
    assert quick is not None, f"plain_in_lists left {document!r} to the schema"
    try:
        assert quick == Selection.model_validate(document).query()
    except ValidationError:
        pytest.fail(f"plain_in_lists took {document!r}, which the schema refuses")
