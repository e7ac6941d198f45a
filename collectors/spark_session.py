"""The SparkSession statlas collects with: local[*] by default, any master by URL."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any

from collectors.jvm_scan import scan_jar
from metastore.errors import StatlasError

DEFAULT_MASTER = "local[*]"


def spark_master(master: str | None = None) -> str:
    """--master wins over STATLAS_SPARK_MASTER, which wins over local[*]."""
    return master or os.environ.get("STATLAS_SPARK_MASTER") or DEFAULT_MASTER


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None) -> Any:
    """A SparkSession on `master` (an existing session of this process is reused). `conf`
    adds Spark settings (e.g. spark.sql.catalogImplementation=hive); spark-defaults.conf
    in $SPARK_CONF_DIR applies as with any PySpark program."""
    from pyspark.sql import SparkSession

    chosen = spark_master(master)
    if chosen.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no network lookup of the host
    builder = (
        SparkSession.builder.master(chosen)
        .appName("statlas-collect")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # per-partition sketches of every column add up (a few hundred MB for TPC-H SF 1
        # by day): room on the driver, and results streamed (collectors/collect.py)
        .config("spark.driver.memory", os.environ.get("STATLAS_SPARK_DRIVER_MEMORY", "4g"))
        .config("spark.driver.maxResultSize", "0")
        # results of up to 100 MB come back with the task, not through the block manager
        # (where a busy driver was seen to lose them: TaskResultLost)
        .config("spark.task.maxDirectResultSize", str(100 * 1024 * 1024))
        # partition values are read as the directory's text and typed by statlas itself
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    )
    settings = dict(conf or {})
    try:
        jar = scan_jar()  # the one-pass collection scan (collectors.jvm_scan), built if need be
    except StatlasError as error:  # collections fall back to Spark's aggregates
        logging.getLogger(__name__).warning("%s; collecting with Spark's aggregates", error)
        jar = None
    if jar is not None:
        given = settings.get("spark.jars")
        settings["spark.jars"] = f"{given},{jar}" if given else str(jar)
    for key, value in settings.items():
        builder = builder.config(key, value)
    if (conf or {}).get("spark.sql.catalogImplementation") == "hive":
        builder = builder.enableHiveSupport()
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


# Spark lists more than 32 paths with a Spark job of one task per path
# (spark.sql.sources.parallelPartitionDiscovery.threshold). In local mode that job runs on
# the driver's own cores, and its overhead is all it adds: TPC-H lineitem's 2,526 day
# directories were listed in 7 s by the job and in 0.4 s by the driver
DRIVER_LISTING = {"spark.sql.sources.parallelPartitionDiscovery.threshold": str(2**31 - 1)}


def listing_settings(session: Any) -> dict[str, str]:
    """The settings a table's files are listed under: by the driver in local mode (no
    listing job), as Spark decides elsewhere (a cluster lists remote stores in parallel)."""
    return DRIVER_LISTING if str(session.sparkContext.master).startswith("local") else {}


@contextlib.contextmanager
def session_settings(session: Any, settings: Mapping[str, str]) -> Iterator[None]:
    """`settings` in force in `session` for the duration of the block, then the previous
    values back (unset ones unset again): the session may be the caller's own."""
    before = {key: session.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        session.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


class LazySession:
    """The SparkSession of one command, started on first use (a collection with nothing to
    scan, of a table registered from a directory, never starts Spark) and shared by every
    table the command collects: one start-up for a warehouse, not one per table."""

    def __init__(
        self,
        master: str | None = None,
        conf: Mapping[str, str] | None = None,
        session: Any = None,
    ) -> None:
        self.master, self.conf = master, dict(conf or {})
        self._session = session

    @classmethod
    def of(cls, spark: Any, master: str | None, conf: Mapping[str, str] | None) -> LazySession:
        """`spark` as a LazySession: itself if it is one, else around the caller's session
        (None: one started on `master` with `conf` when first needed)."""
        return spark if isinstance(spark, LazySession) else cls(master, conf, spark)

    @property
    def started(self) -> bool:
        return self._session is not None

    def get(self) -> Any:
        if self._session is None:
            self._session = spark_session(self.master, self.conf)
        return self._session
