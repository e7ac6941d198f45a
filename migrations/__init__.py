"""Alembic migrations of the statlas metastore (one tree for PostgreSQL and SQLite)."""
