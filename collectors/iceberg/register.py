"""`statlas table register NAME --iceberg-table NS.T [--iceberg-catalog URI]`: an Iceberg
table's current snapshot registered (or brought up to date) as statlas table NAME, its
partitions typed as the partition spec's transforms give them (collectors.iceberg.listing)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from collectors.iceberg.listing import snapshot_listing
from collectors.iceberg.source import SNAPSHOT, IcebergSource, load_table
from metastore.catalog import transform_keys
from metastore.catalog.tables import RegistrationReport, register_listing
from metastore.types import parse_key_type


def register_iceberg_table(
    engine: Engine,
    name: str,
    source: IcebergSource,
    properties: Mapping[str, Any] | None = None,
) -> RegistrationReport:
    """Register `source`'s current snapshot as `name` (new partitions added, vanished ones
    removed with their statistics, changed ones' fingerprints updated)."""
    table = load_table(engine, source)
    listing = snapshot_listing(table)
    kept = {
        **(properties or {}),
        **source.properties(),
        transform_keys.PROPERTY: transform_keys.listed(listing.transform_keys),
    }
    if listing.snapshot_id is not None:
        kept[SNAPSHOT] = str(listing.snapshot_id)
    return register_listing(
        engine,
        name,
        listing.dataset,
        {key: parse_key_type(type_) for key, type_ in listing.key_types.items()},
        properties=kept,
    )
