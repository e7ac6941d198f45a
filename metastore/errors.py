"""The metastore's exceptions. Each message is one line a user can act on.

What each error means to a client is decided where it is presented: its HTTP status in
servers.http.errors, its exit code in statlas.exit_codes."""

from __future__ import annotations


class StatlasError(Exception):
    """Base of every error statlas raises on purpose; the CLI prints its message on one line."""

    def __str__(self) -> str:
        return " ".join(super().__str__().split())


class UnknownTable(StatlasError):
    pass


class UnknownColumn(StatlasError):
    pass


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


class ConcurrentModification(StatlasError):
    """Another writer changed the table between our read and our write."""


# what Hive clients are told through the Hive Metastore API (metastore.hive.catalog; the
# Thrift exceptions they become: servers.hive_metastore.thrift_errors)


class NoSuchObject(StatlasError):
    """A database, table or partition a Hive client named does not exist."""


class AlreadyExists(StatlasError):
    pass


class InvalidObject(StatlasError):
    """A Hive object that cannot be stored as given (a key type statlas cannot index, a
    partition value that does not parse as its key's type, clashing values)."""


class StaleParameter(StatlasError):
    """A change that expected a table parameter's value the table no longer has."""


class InvalidOperation(StatlasError):
    """A change Hive clients may ask for that statlas refuses (changing partition keys,
    dropping a database that still has tables)."""
