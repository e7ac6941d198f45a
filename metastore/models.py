"""The catalog's schema (owned by Alembic, see migrations/).

Partitions do not live here: each table's partitions are kept in a table of their own with
one TYPED column per partition key (see metastore/partitions/store.py), so that an IN-list
lookup is an index scan on real typed columns, never a cast of Hive's varchar values.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    Unicode,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# The Alembic revision these models describe (tests check it is the head of migrations/).
SCHEMA_REVISION = "0015"

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

JsonType = JSON().with_variant(JSONB(), "postgresql")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


PARTITION_TABLE_PREFIX = "partitions_"
"""Each table's partitions live in a table of their own, `partitions_<table id>`, made by
metastore.partitions.store (not declared here, so not Alembic's)."""


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class CatalogTable(Base):
    """A registered table: a dataset directory (Parquet/ORC, key=value partitions)."""

    __tablename__ = "catalog_tables"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(256), unique=True)
    location: Mapped[str] = mapped_column(Text)
    format: Mapped[str] = mapped_column(String(16))
    num_buckets: Mapped[int | None] = mapped_column(Integer)
    bucket_columns: Mapped[list[str]] = mapped_column(JsonType, default=list)
    sort_columns: Mapped[list[list[str]]] = mapped_column(JsonType, default=list)
    properties: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    version: Mapped[int] = mapped_column(Integer, default=1)


class CatalogColumn(Base):
    """A column of a registered table: a data column or a partition key (kind), in order."""

    __tablename__ = "catalog_columns"
    __table_args__ = (UniqueConstraint("table_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(256))
    type: Mapped[str] = mapped_column(Text)
    nullable: Mapped[bool] = mapped_column(default=True)
    comment: Mapped[str | None] = mapped_column(Text)


class CollectionRun(Base):
    """One `statlas collect` of one table: what it scanned and how it ended."""

    __tablename__ = "collection_runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), index=True
    )
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16))
    partitions_scanned: Mapped[int] = mapped_column(Integer, default=0)
    partitions_skipped: Mapped[int] = mapped_column(Integer, default=0)
    partitions_removed: Mapped[int] = mapped_column(Integer, default=0)
    rows: Mapped[int] = mapped_column(BigInteger, default=0)
    error: Mapped[str | None] = mapped_column(Text)


class PartitionStats(Base):
    """Statistics of one partition as collected, with the fingerprint they were taken at."""

    __tablename__ = "partition_stats"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    partition_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    row_count: Mapped[int] = mapped_column(BigInteger)
    file_count: Mapped[int] = mapped_column(Integer)
    total_bytes: Mapped[int] = mapped_column(BigInteger)
    modified_ns: Mapped[int] = mapped_column(BigInteger)
    run_id: Mapped[int] = mapped_column(ForeignKey("collection_runs.id", ondelete="CASCADE"))
    # a uniform random sample of the partition's rows (metastore.statistics.samples), and its size
    sample_size: Mapped[int | None] = mapped_column(Integer)
    sample: Mapped[bytes | None] = mapped_column(LargeBinary)


class ForcedKeyList(Base):
    """A sampled table's forced keys of one column: the values whose rows every partition's
    row sample holds whatever its draw (collectors/forced_keys.py), comma-separated."""

    __tablename__ = "forced_keys"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    column_name: Mapped[str] = mapped_column(String(256), primary_key=True)
    key_values: Mapped[str] = mapped_column(Text)


class ColumnFigures:
    """A column's statistics as column_stats (one partition's) and rollup_columns (a block's,
    merged) keep them: exact figures and mergeable sketches (metastore.statistics.column_pieces).
    Each table's own columns come first, except those declared with TRAILING, which follow."""

    null_count: Mapped[int] = mapped_column(BigInteger)
    min_value: Mapped[str | None] = mapped_column(Text)
    max_value: Mapped[str | None] = mapped_column(Text)
    total_len: Mapped[int | None] = mapped_column(BigInteger)
    max_len: Mapped[int | None] = mapped_column(Integer)
    hll: Mapped[bytes | None] = mapped_column(LargeBinary)
    kll: Mapped[bytes | None] = mapped_column(LargeBinary)
    theta: Mapped[bytes | None] = mapped_column(LargeBinary)
    top_k: Mapped[bytes | None] = mapped_column(LargeBinary)
    top_k_items: Mapped[str | None] = mapped_column(String(8))


# the sort_order of a table's columns that follow its ColumnFigures (declarative puts a
# mixin's columns after the class's own ones, then orders all of them by sort_order)
TRAILING = 1


class ColumnStats(ColumnFigures, Base):
    """Statistics of one column in one partition: exact figures and mergeable sketches."""

    __tablename__ = "column_stats"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    partition_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    column_name: Mapped[str] = mapped_column(String(256), primary_key=True)
    # the partition's files lack the column: its rows count as NULL (null_count = rows)
    absent: Mapped[bool] = mapped_column(Boolean, server_default=false(), sort_order=TRAILING)
    # an Iceberg table's Theta sketch of the values as Iceberg serialises them, where its
    # statistics file cannot take `theta` (collectors.iceberg.publish)
    iceberg_theta: Mapped[bytes | None] = mapped_column(LargeBinary, sort_order=TRAILING)


class RollupBlock(Base):
    """A block of a table's pre-merged statistics (metastore.statistics.rollups): the
    partitions with statistics whose ids fall in [block x 8**level, (block + 1) x 8**level),
    merged: their count, rows and pooled row sample."""

    __tablename__ = "rollup_blocks"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    level: Mapped[int] = mapped_column(Integer, primary_key=True)
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    partitions: Mapped[int] = mapped_column(Integer)
    row_count: Mapped[int] = mapped_column(BigInteger)
    sample_size: Mapped[int | None] = mapped_column(Integer)
    sample: Mapped[bytes | None] = mapped_column(LargeBinary)


class RollupColumn(ColumnFigures, Base):
    """One column's statistics merged over a block's partitions (RollupBlock), with how
    many of them had a record of the column and each kind of sketch."""

    __tablename__ = "rollup_columns"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    level: Mapped[int] = mapped_column(Integer, primary_key=True)
    block: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    column_name: Mapped[str] = mapped_column(String(256), primary_key=True)
    partitions: Mapped[int] = mapped_column(Integer)
    with_hll: Mapped[int] = mapped_column(Integer)
    with_theta: Mapped[int] = mapped_column(Integer)
    with_sketch: Mapped[int] = mapped_column(Integer)
    # each partition's distinct count (its Theta sketch's, else its HLL's), summed: the
    # distinct (partition, value) pairs (NULL when a partition had neither sketch)
    distinct_sum: Mapped[int | None] = mapped_column(BigInteger, sort_order=TRAILING)
    # how many of the partitions lack the column (column_stats.absent)
    absent: Mapped[int] = mapped_column(Integer, server_default=text("0"), sort_order=TRAILING)


class HiveDatabase(Base):
    """A database as Hive clients see it (`default` always exists): tables named `db.t`
    belong to database `db`, tables without a dot to `default`."""

    __tablename__ = "hms_databases"

    name: Mapped[str] = mapped_column(String(128), primary_key=True)
    description: Mapped[str | None] = mapped_column(Text)
    location: Mapped[str | None] = mapped_column(Text)
    owner_name: Mapped[str | None] = mapped_column(String(256))
    owner_type: Mapped[str | None] = mapped_column(String(16))
    parameters: Mapped[dict[str, str]] = mapped_column(JsonType, default=dict)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HiveTable(Base):
    """What a Hive client keeps of a table beyond statlas's catalog: type, owner, storage
    descriptor (formats, serde, bucketing as given), parameters and view text. A table
    registered by statlas has none until a client alters it (defaults are served)."""

    __tablename__ = "hms_tables"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    table_type: Mapped[str] = mapped_column(String(32))
    owner: Mapped[str | None] = mapped_column(String(256))
    storage: Mapped[dict[str, Any]] = mapped_column(JsonType, default=dict)
    parameters: Mapped[dict[str, str]] = mapped_column(JsonType, default=dict)
    view_original_text: Mapped[str | None] = mapped_column(Text)
    view_expanded_text: Mapped[str | None] = mapped_column(Text)
    create_time: Mapped[int] = mapped_column(Integer)
    # when an engine last wrote statistics parameters (Spark's ANALYZE), to serve the fresher
    statistics_written_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class HivePartition(Base):
    """A partition's parameters, and its storage descriptor where it differs from its
    table's (the typed values and location live in the table's partitions table)."""

    __tablename__ = "hms_partitions"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    partition_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    storage: Mapped[dict[str, Any] | None] = mapped_column(JsonType)
    parameters: Mapped[dict[str, str]] = mapped_column(JsonType, default=dict)
    create_time: Mapped[int] = mapped_column(Integer)
    statistics_written_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))


class HiveColumnStatistics(Base):
    """Column statistics an engine wrote through the Hive Metastore API, kept as given
    (partition_id 0: the table's own)."""

    __tablename__ = "hms_column_statistics"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("catalog_tables.id", ondelete="CASCADE"), primary_key=True
    )
    partition_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    column_name: Mapped[str] = mapped_column(String(256), primary_key=True)
    engine: Mapped[str | None] = mapped_column(String(32))
    statistics: Mapped[dict[str, Any]] = mapped_column(JsonType)
    written_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class HiveLock(Base):
    """A lock a Hive client asked for (Hive's lock manager, docs/hive-metastore.md#locks):
    kept in the database so that every daemon on it grants from the same list. Ids are
    never reused (AUTOINCREMENT on SQLite), so an expired lock's id never names another."""

    __tablename__ = "hms_locks"
    __table_args__ = ({"sqlite_autoincrement": True},)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    state: Mapped[str] = mapped_column(String(16))  # "acquired" or "waiting"
    user_name: Mapped[str] = mapped_column(String(256))
    host_name: Mapped[str] = mapped_column(String(256))
    agent_info: Mapped[str | None] = mapped_column(String(1024))
    created_at: Mapped[float] = mapped_column(Float(53))  # seconds since the epoch
    last_heartbeat: Mapped[float] = mapped_column(Float(53), index=True)
    acquired_at: Mapped[float | None] = mapped_column(Float(53))


class HiveLockComponent(Base):
    """One object a lock covers: a database, a table of it, or a partition of the table."""

    __tablename__ = "hms_lock_components"

    lock_id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"),
        ForeignKey("hms_locks.id", ondelete="CASCADE"),
        primary_key=True,
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    database_name: Mapped[str] = mapped_column(String(128), index=True)
    table_name: Mapped[str | None] = mapped_column(String(256))
    partition_name: Mapped[str | None] = mapped_column(Text)
    lock_type: Mapped[str] = mapped_column(String(16))


class HiveNotification(Base):
    """Hive's notification log: one event per change a Hive client made through the API
    (CREATE_TABLE, ADD_PARTITION, ...), in commit order (docs/hive-metastore.md#notifications)."""

    __tablename__ = "hms_notifications"
    __table_args__ = ({"sqlite_autoincrement": True},)

    event_id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    event_time: Mapped[int] = mapped_column(Integer, index=True)  # seconds since the epoch
    event_type: Mapped[str] = mapped_column(String(32))
    database_name: Mapped[str | None] = mapped_column(String(128))
    table_name: Mapped[str | None] = mapped_column(String(256))
    message: Mapped[str] = mapped_column(Text)
    message_format: Mapped[str] = mapped_column(String(32))


class HiveFunction(Base):
    """A permanent function a Hive client created (CREATE FUNCTION): its class and the
    resources (jars, files) it needs, kept as the client gave them."""

    __tablename__ = "hms_functions"

    database_name: Mapped[str] = mapped_column(String(128), primary_key=True)
    function_name: Mapped[str] = mapped_column(String(256), primary_key=True)
    class_name: Mapped[str] = mapped_column(String(4000))
    owner_name: Mapped[str | None] = mapped_column(String(256))
    owner_type: Mapped[str | None] = mapped_column(String(16))
    create_time: Mapped[int] = mapped_column(Integer)
    function_type: Mapped[int] = mapped_column(Integer)
    resources: Mapped[list[Any]] = mapped_column(JsonType, default=list)


class SchedulerJob(Base):
    """A schedule of `statlas daemon`: APScheduler 3's job store table, column for column as
    its SQLAlchemyJobStore defines it (the job's pickled state, its next run as a UTC
    timestamp). Written only through APScheduler (pruner/daemon/schedules.py)."""

    __tablename__ = "apscheduler_jobs"

    id: Mapped[str] = mapped_column(Unicode(191), primary_key=True)
    next_run_time: Mapped[float | None] = mapped_column(Float(25), index=True)
    job_state: Mapped[bytes] = mapped_column(LargeBinary)


class DaemonPresence(Base):
    """One `statlas daemon` on this metastore as it last reported itself: where it serves,
    when it started, its latest heartbeat, and whether it leads (metastore/daemons.py). The
    leader lock decides who leads; this row is what the others and the console can see."""

    __tablename__ = "daemons"

    node: Mapped[str] = mapped_column(String(320), primary_key=True)  # "host:pid"
    host: Mapped[str] = mapped_column(String(256))
    pid: Mapped[int] = mapped_column(Integer)
    http_url: Mapped[str] = mapped_column(String(512))
    thrift_port: Mapped[int | None] = mapped_column(Integer)
    version: Mapped[str] = mapped_column(String(64))
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)
    leader_since: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
    stopped_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True))
