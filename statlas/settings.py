"""Settings shared by every command: where the metastore is and where Spark runs."""

from __future__ import annotations

import os
from dataclasses import dataclass

from metastore.engine import DEFAULT_DB_URL

DEFAULT_SPARK_MASTER = "local[*]"


@dataclass(frozen=True)
class Settings:
    db_url: str
    spark_master: str

    @staticmethod
    def load(db_url: str | None = None, spark_master: str | None = None) -> Settings:
        """Command-line values win over STATLAS_DB_URL / STATLAS_SPARK_MASTER, then defaults."""
        return Settings(
            db_url=db_url or os.environ.get("STATLAS_DB_URL") or DEFAULT_DB_URL,
            spark_master=spark_master
            or os.environ.get("STATLAS_SPARK_MASTER")
            or DEFAULT_SPARK_MASTER,
        )
