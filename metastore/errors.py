"""The metastore's exceptions. Each message is one line a user can act on."""

from __future__ import annotations


class StatlasError(Exception):
    """Base of every error statlas raises on purpose; the CLI prints its message on one line."""

    exit_code = 2
    http_status = 400

    def __str__(self) -> str:
        return " ".join(super().__str__().split())


class UnknownTable(StatlasError):
    http_status = 404


class UnknownColumn(StatlasError):
    http_status = 404


class InvalidValue(StatlasError):
    """A value that does not parse as the type of the key or column it is meant for."""


class InvalidLookup(StatlasError):
    """A partition lookup that cannot be answered: empty lists, bad tuple files, bad --where."""


class RegistrationError(StatlasError):
    """A dataset whose layout cannot be registered (mixed keys, clashing values, no files)."""


class SchemaNotInitialised(StatlasError):
    pass


class MetastoreUnavailable(StatlasError):
    """The database cannot be reached or went away in the middle of a request."""

    exit_code = 3
    http_status = 503


class ConcurrentModification(StatlasError):
    """Another writer changed the table between our read and our write."""

    http_status = 409
