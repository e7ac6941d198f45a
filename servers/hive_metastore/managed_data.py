"""The files of managed tables, as Hive's metastore keeps them
(docs/hive-metastore.md#managed-tables): a table's directory is made when the table is
created, moves when a managed table at its default location is renamed, and is deleted
when a managed table is dropped, but only inside a data root: the warehouse or the
table's database's directory. Paths are compared after resolving `..` and links, so
neither leads a delete outside the roots; a link inside a directory being deleted is
removed, never followed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterable

from metastore.hive.catalog import InvalidOperation

log = logging.getLogger("statlas.hms")


class DataDirectoryError(InvalidOperation):
    """A table's directory that cannot be made or moved."""


def _real(path: str) -> str:
    return os.path.realpath(path)


def is_inside(path: str | None, roots: Iterable[str | None]) -> bool:
    """Whether `path` lies strictly inside one of `roots` (both resolved; the filesystem's
    root is never a data root)."""
    if not path or not path.startswith("/"):
        return False
    real = _real(path)
    for root in roots:
        if not root or not root.startswith("/"):
            continue
        base = _real(root)
        if base == "/" or real == base:
            continue
        if os.path.commonpath([real, base]) == base:
            return True
    return False


def make_directory(path: str | None) -> bool:
    """Make a local directory (and its parents) if missing; whether it was made."""
    if not path or not path.startswith("/") or os.path.isdir(path):
        return False
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as error:
        raise DataDirectoryError(
            f"{path} is not a directory or unable to create one: {error.strerror}"
        ) from None
    return True


def remove_made(path: str | None, made: bool) -> None:
    """Undo make_directory after the change it was made for failed."""
    if made and path:
        with contextlib.suppress(OSError):
            os.rmdir(path)


def delete_directory(
    path: str | None, roots: Iterable[str | None], protected: Iterable[str | None] = ()
) -> bool:
    """Delete a directory's tree if it lies inside a data root and neither is nor holds a
    protected directory (the warehouse, any database's directory); whether it was deleted."""
    roots = list(roots)
    if not path or not os.path.isdir(path) or os.path.islink(path):
        if path:
            log.info("kept %s: not a directory", path)
        return False
    if not is_inside(path, roots):
        log.info("kept %s: outside the data roots %s", path, ", ".join(r for r in roots if r))
        return False
    real = _real(path)
    for kept in protected:
        if kept and kept.startswith("/"):
            held = _real(kept)
            if os.path.commonpath([real, held]) == real:
                log.info("kept %s: it is or holds %s", path, kept)
                return False
    shutil.rmtree(path)
    log.info("deleted %s", path)
    return True


def move_directory(source: str, target: str, what: str) -> bool:
    """Move a table's directory (source missing and target present: moved already, as by an
    earlier attempt of the same change); whether anything moved."""
    if not os.path.exists(source):
        return False
    if os.path.exists(target):
        raise DataDirectoryError(f"New location for this table {what} already exists : {target}")
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.rename(source, target)
    except OSError as error:
        raise DataDirectoryError(
            f"cannot move {source} to {target} for {what}: {error.strerror}"
        ) from None
    log.info("moved %s to %s", source, target)
    return True
