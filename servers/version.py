"""The installed statlas release, as the HTTP API, the daemon list and the console show it."""

from __future__ import annotations

from importlib import metadata


def statlas_version() -> str:
    """The version of the installed `statlas` distribution ("0.0.0" when run from a tree
    that was never installed)."""
    try:
        return metadata.version("statlas")
    except metadata.PackageNotFoundError:
        return "0.0.0"
