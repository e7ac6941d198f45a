"""What Hive clients keep in a metastore, on top of statlas's catalog (docs/hive-metastore.md).

A Hive table `db.t` is the statlas table `db.t` (`t` for database `default`): its columns,
partition keys and typed partitions are statlas's own, so a table a Hive client creates is a
statlas table and a table `statlas table register` made is a Hive table. Beside them
metastore keeps what only Hive clients use (metastore.models Hive*): databases, each table's
type, owner, storage descriptor, parameters and view text, column comments, each partition's
parameters and its own storage descriptor where it differs from the table's, and column
statistics written by engines. Every function takes the caller's connection: one call of
the Thrift API is one transaction.

The work is kept by what it is about: the records and the mapping of Hive's names and types
(metastore.hive.definitions), databases (hive_databases), tables and their stamps
(hive_tables, table_stamps), partitions read (hive_partition_reads) and changed
(hive_partition_writes), statistics engines write (hive_statistics); the errors Hive clients
are told are metastore.errors'. This module gathers the names the Hive Metastore API
(servers.hive_metastore) and statlas's other packages use.
"""

from __future__ import annotations

from metastore.catalog.stamps import TableStamp
from metastore.errors import (
    AlreadyExists,
    InvalidObject,
    InvalidOperation,
    NoSuchObject,
    StaleParameter,
)
from metastore.hive.databases import (
    alter_database,
    create_database,
    database_tables,
    get_database,
    list_databases,
)
from metastore.hive.definitions import (
    DEFAULT_DATABASE,
    EXTERNAL_TABLE,
    FORMAT_STORAGE,
    HIVE_METASTORE,
    MANAGED_TABLE,
    SOURCE,
    VIRTUAL_VIEW,
    Database,
    HiveColumn,
    PartitionDefinition,
    StoredPartition,
    StoredTable,
    TableDefinition,
    default_storage,
    format_of,
    hive_name,
    hive_type_name,
    key_type_of,
    local_location,
    raw_values,
    statlas_name,
)
from metastore.hive.partition_reads import (
    partition_name_of,
    partition_names,
    prefix_predicate,
    read_partitions,
    typed_values,
)
from metastore.hive.partition_writes import (
    add_partitions,
    alter_partitions,
    drop_partitions,
    refresh_fingerprints,
    relocate_partitions,
    rename_partition,
)
from metastore.hive.statistics import (
    TABLE_LEVEL,
    delete_column_statistics,
    read_column_statistics,
    statistics_changed,
    write_column_statistics,
)
from metastore.hive.tables import (
    alter_table,
    create_table,
    drop_database,
    drop_table,
    get_stored_table,
    served_statistics_source,
    statistics_source,
    statlas_is_fresher,
    table_metas,
    table_names,
    table_stamp,
)

__all__ = [
    "DEFAULT_DATABASE",
    "EXTERNAL_TABLE",
    "FORMAT_STORAGE",
    "HIVE_METASTORE",
    "MANAGED_TABLE",
    "SOURCE",
    "TABLE_LEVEL",
    "VIRTUAL_VIEW",
    "AlreadyExists",
    "Database",
    "HiveColumn",
    "InvalidObject",
    "InvalidOperation",
    "NoSuchObject",
    "PartitionDefinition",
    "StaleParameter",
    "StoredPartition",
    "StoredTable",
    "TableDefinition",
    "TableStamp",
    "add_partitions",
    "alter_database",
    "alter_partitions",
    "alter_table",
    "create_database",
    "create_table",
    "database_tables",
    "default_storage",
    "delete_column_statistics",
    "drop_database",
    "drop_partitions",
    "drop_table",
    "format_of",
    "get_database",
    "get_stored_table",
    "hive_name",
    "hive_type_name",
    "key_type_of",
    "list_databases",
    "local_location",
    "partition_name_of",
    "partition_names",
    "prefix_predicate",
    "raw_values",
    "read_column_statistics",
    "read_partitions",
    "refresh_fingerprints",
    "relocate_partitions",
    "rename_partition",
    "served_statistics_source",
    "statistics_changed",
    "statistics_source",
    "statlas_is_fresher",
    "statlas_name",
    "table_metas",
    "table_names",
    "table_stamp",
    "typed_values",
    "write_column_statistics",
]
