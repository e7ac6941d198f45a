"""Path and query parameters shared by several routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from servers.http.formats import Text

TableName = Annotated[str, Path(description="table name, `name` or `db.name`")]
InParam = Annotated[
    list[Text] | None,
    Query(
        alias="in",
        description="KEY=V1,V2,...: the values of one key (repeatable; a conjunction)",
    ),
]
WhereParam = Annotated[Text | None, Query(description="SQL condition on keys")]
