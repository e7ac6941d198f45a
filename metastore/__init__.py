"""The statlas metastore: a catalog of tables and typed partitions, and partition lookups.

>>> ms = Metastore("sqlite:///statlas.db")                      # doctest: +SKIP
>>> ms.register_table("sales", "/data/sales")                   # doctest: +SKIP
>>> ms.partitions("sales", {"dt": ["2024-01-01"], "region": ["emea", "apac"]})  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Engine

from metastore import migrate
from metastore.catalog import lookup as lookup
from metastore.catalog import tables as catalog
from metastore.catalog.lookup import Partition, PartitionList, PartitionQuery, TupleList
from metastore.catalog.tables import BucketSpec, PartitionKey, RegistrationReport, TableInfo
from metastore.engine import DEFAULT_DB_URL, make_engine
from metastore.errors import StatlasError
from metastore.types import KeyType

__all__ = [
    "DEFAULT_DB_URL",
    "BucketSpec",
    "Metastore",
    "Partition",
    "PartitionKey",
    "PartitionList",
    "PartitionQuery",
    "RegistrationReport",
    "StatlasError",
    "TableInfo",
    "TupleList",
]


class Metastore:
    """One metastore database (SQLite file or PostgreSQL) and the operations on it."""

    def __init__(self, url: str = DEFAULT_DB_URL, *, engine: Engine | None = None) -> None:
        self.engine = engine if engine is not None else make_engine(url)
        self._checked = False

    def ready(self) -> Engine:
        """The engine, once the schema is known to be at head (checked once)."""
        if not self._checked:
            migrate.ensure_schema(self.engine)
            self._checked = True
        return self.engine

    def upgrade(self, revision: str = "head") -> str | None:
        return migrate.upgrade(self.engine, revision)

    def current_revision(self) -> str | None:
        return migrate.current_revision(self.engine)

    def register_table(
        self,
        name: str,
        path: str,
        data_format: str | None = None,
        partition_types: Mapping[str, KeyType] | None = None,
        bucketing: BucketSpec | None = None,
        properties: Mapping[str, Any] | None = None,
    ) -> RegistrationReport:
        return catalog.register_table(
            self.ready(), name, path, data_format, partition_types, bucketing, properties
        )

    def table(self, name: str) -> TableInfo:
        return catalog.describe_table(self.ready(), name)

    def tables(self) -> list[TableInfo]:
        return catalog.list_tables(self.ready())

    def drop_table(self, name: str) -> int:
        return catalog.drop_table(self.ready(), name)

    def partitions(
        self,
        table: str,
        in_lists: Mapping[str, Sequence[Any]] | None = None,
        tuples: Sequence[TupleList] = (),
        where: str | None = None,
    ) -> PartitionList:
        """Partitions of `table` whose keys are in `in_lists` (per key), in `tuples` (exact
        multi-key rows) and satisfy `where`, all conjoined."""
        return self.lookup(table, PartitionQuery.of(in_lists, tuples, where))

    def lookup(self, table: str, query: PartitionQuery) -> PartitionList:
        return lookup.lookup_partitions(self.ready(), table, query)

    def dispose(self) -> None:
        self.engine.dispose()
