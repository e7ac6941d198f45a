"""Hive Metastore Thrift objects <-> statlas's catalog records (metastore.hive.catalog).

Thrift structs come from the generated bindings pyiceberg[hive] ships (`hive_metastore`:
Hive 4's IDL, which Hive 2.3 and 3 clients read too: Thrift matches fields by id and skips
the ones it does not know). See docs/hive-metastore.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hive_metastore import ttypes as hms

from metastore.hive.catalog import (
    DEFAULT_DATABASE,
    EXTERNAL_TABLE,
    Database,
    HiveColumn,
    PartitionDefinition,
    StoredPartition,
    StoredTable,
    TableDefinition,
    local_location,
)

CATALOG = "hive"


def hadoop_location(path: str | None) -> str | None:
    """A local path as Hadoop writes it (`file:/x`); URIs unchanged."""
    if not path:
        return None
    return f"file:{path}" if path.startswith("/") else path


def database_object(database: Database, warehouse: str) -> hms.Database:
    location = database.location
    if location is None:
        base = warehouse.rstrip("/")
        location = base if database.name == DEFAULT_DATABASE else f"{base}/{database.name}.db"
    owner_type = hms.PrincipalType._NAMES_TO_VALUES.get(database.owner_type or "USER", 1)
    return hms.Database(
        name=database.name,
        description=database.description,
        locationUri=hadoop_location(location),
        parameters=dict(database.parameters),
        ownerName=database.owner_name,
        ownerType=owner_type,
        catalogName=CATALOG,
    )


def database_of(obj: hms.Database) -> Database:
    owner_type = hms.PrincipalType._VALUES_TO_NAMES.get(obj.ownerType) if obj.ownerType else None
    return Database(
        (obj.name or "").lower(),
        obj.description,
        local_location(obj.locationUri),
        obj.ownerName,
        owner_type,
        dict(obj.parameters or {}),
    )


def _fields(columns: tuple[HiveColumn, ...]) -> list[hms.FieldSchema]:
    return [hms.FieldSchema(name=c.name, type=c.type, comment=c.comment) for c in columns]


def storage_object(
    storage: Mapping[str, Any], columns: tuple[HiveColumn, ...], location: str | None
) -> hms.StorageDescriptor:
    sort = [hms.Order(col=c, order=int(o)) for c, o in storage.get("sortCols") or []]
    skewed = storage.get("skewedInfo")
    return hms.StorageDescriptor(
        cols=_fields(columns),
        location=hadoop_location(location),
        inputFormat=storage.get("inputFormat"),
        outputFormat=storage.get("outputFormat"),
        compressed=bool(storage.get("compressed", False)),
        numBuckets=int(storage.get("numBuckets", -1)),
        serdeInfo=hms.SerDeInfo(
            name=storage.get("serdeName"),
            serializationLib=storage.get("serde"),
            parameters=dict(storage.get("serdeParameters") or {}),
        ),
        bucketCols=list(storage.get("bucketCols") or []),
        sortCols=sort,
        parameters=dict(storage.get("parameters") or {}),
        skewedInfo=None
        if skewed is None
        else hms.SkewedInfo(
            skewedColNames=list(skewed.get("names") or []),
            skewedColValues=[list(v) for v in skewed.get("values") or []],
            skewedColValueLocationMaps={},
        ),
        storedAsSubDirectories=bool(storage.get("storedAsSubDirectories", False)),
    )


def storage_of(sd: hms.StorageDescriptor | None) -> dict[str, Any]:
    """The parts of a storage descriptor kept as given (columns and location are kept in
    the catalog's own columns)."""
    if sd is None:
        return {}
    serde = sd.serdeInfo or hms.SerDeInfo()
    storage: dict[str, Any] = {
        "inputFormat": sd.inputFormat,
        "outputFormat": sd.outputFormat,
        "serde": serde.serializationLib,
        "serdeName": serde.name,
        "serdeParameters": dict(serde.parameters or {}),
        "compressed": bool(sd.compressed),
        "numBuckets": -1 if sd.numBuckets is None else int(sd.numBuckets),
        "bucketCols": list(sd.bucketCols or []),
        "sortCols": [[o.col, o.order] for o in sd.sortCols or []],
        "parameters": dict(sd.parameters or {}),
        "storedAsSubDirectories": bool(sd.storedAsSubDirectories),
    }
    if sd.skewedInfo is not None and sd.skewedInfo.skewedColNames:
        storage["skewedInfo"] = {
            "names": list(sd.skewedInfo.skewedColNames),
            "values": [list(v) for v in sd.skewedInfo.skewedColValues or []],
        }
    return storage


def table_object(stored: StoredTable, parameters: Mapping[str, str]) -> hms.Table:
    definition = stored.definition
    return hms.Table(
        tableName=definition.name,
        dbName=definition.database,
        owner=definition.owner,
        createTime=definition.create_time,
        lastAccessTime=0,
        retention=0,
        sd=storage_object(definition.storage, definition.columns, definition.location),
        partitionKeys=_fields(definition.partition_keys),
        parameters=dict(parameters),
        viewOriginalText=definition.view_original_text,
        viewExpandedText=definition.view_expanded_text,
        tableType=definition.table_type,
        temporary=False,
        catName=CATALOG,
    )


def table_of(obj: hms.Table, database: str | None = None) -> TableDefinition:
    sd = obj.sd or hms.StorageDescriptor()
    return TableDefinition(
        (obj.dbName or database or DEFAULT_DATABASE).lower(),
        (obj.tableName or "").lower(),
        tuple(_column(c) for c in sd.cols or []),
        tuple(_column(c) for c in obj.partitionKeys or []),
        sd.location,
        storage_of(sd),
        obj.tableType or EXTERNAL_TABLE,
        obj.owner,
        dict(obj.parameters or {}),
        obj.viewOriginalText,
        obj.viewExpandedText,
        obj.createTime or 0,
    )


def _column(field: hms.FieldSchema) -> HiveColumn:
    return HiveColumn((field.name or "").lower(), field.type or "string", field.comment)


def partition_object(
    stored: StoredTable, partition: StoredPartition, parameters: Mapping[str, str]
) -> hms.Partition:
    definition = stored.definition
    storage = partition.storage if partition.storage is not None else definition.storage
    columns = definition.columns
    own_columns = (partition.storage or {}).get("columns")
    if own_columns:
        columns = tuple(HiveColumn(c["name"], c["type"], c.get("comment")) for c in own_columns)
    return hms.Partition(
        values=["__HIVE_DEFAULT_PARTITION__" if v is None else v for v in partition.values],
        dbName=definition.database,
        tableName=definition.name,
        createTime=partition.create_time,
        lastAccessTime=0,
        sd=storage_object(storage, columns, partition.location),
        parameters=dict(parameters),
        catName=CATALOG,
    )


def partition_of(obj: hms.Partition, table: StoredTable) -> PartitionDefinition:
    sd = obj.sd
    storage: dict[str, Any] | None = None
    if sd is not None:
        storage = storage_of(sd)
        columns = [_column(c) for c in sd.cols or []]
        if columns and tuple(columns) != table.definition.columns:
            storage["columns"] = [
                {"name": c.name, "type": c.type, "comment": c.comment} for c in columns
            ]
    return PartitionDefinition(
        tuple(None if v == "__HIVE_DEFAULT_PARTITION__" else v for v in obj.values or []),
        None if sd is None else sd.location,
        storage,
        dict(obj.parameters or {}),
        obj.createTime or 0,
    )
