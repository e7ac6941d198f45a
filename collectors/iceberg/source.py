"""Where an Iceberg table registered in statlas is read from: a pyiceberg catalog named by a
URI (a SQLAlchemy URL: pyiceberg's SQL catalog; `thrift://host:port`: a Hive Metastore,
statlas's own or another), or, with no URI, the Iceberg table a Hive client created through
statlas's own Hive Metastore API (its `metadata_location` parameter, read in the database)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from metastore.engine import run_read
from metastore.errors import RegistrationError, StatlasError, UnknownTable

# the table properties a registered Iceberg table keeps its source in
CATALOG = "iceberg_catalog"  # the catalog's URI; absent: statlas's own Hive Metastore API
CATALOG_NAME = "iceberg_catalog_name"  # the SQL catalog's name (its rows' catalog_name)
TABLE = "iceberg_table"  # the Iceberg identifier, namespace.table
SNAPSHOT = "iceberg_snapshot_id"  # the snapshot the listing was last taken of
DEFAULT_CATALOG_NAME = "default"


class IcebergUnavailable(StatlasError):
    """The Iceberg table cannot be read or is stored in a way statlas does not handle."""


@dataclass(frozen=True)
class IcebergSource:
    identifier: str
    catalog: str | None = None
    catalog_name: str = DEFAULT_CATALOG_NAME

    def properties(self) -> dict[str, str]:
        kept = {TABLE: self.identifier, CATALOG_NAME: self.catalog_name}
        if self.catalog:
            kept[CATALOG] = self.catalog
        return kept

    def describe(self) -> str:
        where = self.catalog or "statlas's Hive Metastore"
        return f"Iceberg table {self.identifier} ({where})"


def source_of(properties: Mapping[str, Any]) -> IcebergSource | None:
    """The source a registered table was registered from; None for a table not of Iceberg."""
    identifier = properties.get(TABLE)
    if not identifier:
        return None
    return IcebergSource(
        str(identifier),
        str(properties[CATALOG]) if properties.get(CATALOG) else None,
        str(properties.get(CATALOG_NAME) or DEFAULT_CATALOG_NAME),
    )


def load_table(engine: Engine, source: IcebergSource) -> Any:
    """The pyiceberg Table of `source`, read now."""
    _check_identifier(source.identifier)
    if source.catalog is None:
        return _from_own_metastore(engine, source)
    catalog = _catalog(source)
    from pyiceberg.exceptions import NoSuchTableError

    try:
        return catalog.load_table(source.identifier)
    except NoSuchTableError:
        raise UnknownTable(f"{source.describe()} does not exist") from None
    except StatlasError:
        raise
    except Exception as error:
        raise IcebergUnavailable(f"cannot read {source.describe()}: {_one_line(error)}") from None


def _catalog(source: IcebergSource) -> Any:
    assert source.catalog is not None
    try:
        if source.catalog.startswith("thrift://"):
            from pyiceberg.catalog.hive import HiveCatalog

            return HiveCatalog(source.catalog_name, uri=source.catalog)
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog(source.catalog_name, uri=source.catalog)
    except ImportError as error:
        raise IcebergUnavailable(
            f"reading Iceberg tables needs pyiceberg ({error.name} is missing): "
            "pip install 'statlas[daemon]'"
        ) from None
    except Exception as error:
        raise IcebergUnavailable(
            f"cannot open the Iceberg catalog {source.catalog}: {_one_line(error)}"
        ) from None


def _from_own_metastore(engine: Engine, source: IcebergSource) -> Any:
    from metastore.hive.catalog import NoSuchObject, get_stored_table

    database, _, table = source.identifier.rpartition(".")
    try:
        stored = run_read(engine, lambda conn: get_stored_table(conn, database or "default", table))
    except NoSuchObject:
        raise UnknownTable(f"{source.describe()} does not exist") from None
    parameters = {k.lower(): v for k, v in (stored.definition.parameters or {}).items()}
    location = parameters.get("metadata_location")
    if parameters.get("table_type", "").upper() != "ICEBERG" or not location:
        raise RegistrationError(
            f"{source.identifier} in statlas's Hive Metastore is not an Iceberg table "
            "(no table_type=ICEBERG with a metadata_location)"
        )
    from pyiceberg.table import StaticTable

    try:
        return StaticTable.from_metadata(location)
    except Exception as error:
        raise IcebergUnavailable(
            f"cannot read the metadata of {source.describe()} at {location}: {_one_line(error)}"
        ) from None


def _check_identifier(identifier: str) -> None:
    parts = identifier.split(".")
    if len(parts) < 2 or not all(parts):
        raise RegistrationError(
            f"not an Iceberg table identifier: {identifier!r} (use namespace.table)"
        )


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:300] or type(error).__name__
