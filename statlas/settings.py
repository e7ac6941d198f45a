"""Settings shared by every command: where the metastore is."""

from __future__ import annotations

import os
from dataclasses import dataclass

from metastore.engine import DEFAULT_DB_URL


@dataclass(frozen=True)
class Settings:
    db_url: str

    @staticmethod
    def load(db_url: str | None = None) -> Settings:
        """--db wins over STATLAS_DB_URL, which wins over ./statlas.db (embedded SQLite)."""
        return Settings(db_url=db_url or os.environ.get("STATLAS_DB_URL") or DEFAULT_DB_URL)
