"""statlas's errors as the Thrift exceptions a Hive Metastore method declares, with
one-line messages; MetaException where the specific kind is not declared."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms

from metastore.errors import InvalidValue, StatlasError, UnknownTable
from metastore.hive import catalog as hc
from metastore.hive.locks import NoSuchLock

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

# which Thrift exception each kind of statlas error becomes, where the method declares it
_EXCEPTION_FOR: list[tuple[type[Exception], type[Exception]]] = [
    (hc.NoSuchObject, hms.NoSuchObjectException),
    (UnknownTable, hms.NoSuchObjectException),
    (hc.AlreadyExists, hms.AlreadyExistsException),
    (hc.InvalidObject, hms.InvalidObjectException),
    (InvalidValue, hms.InvalidObjectException),
    (hc.InvalidOperation, hms.InvalidOperationException),
    (NoSuchLock, hms.NoSuchLockException),
]


def _declared(method: str) -> list[type[Exception]]:
    """The exception types a method's reply may carry (from the generated result struct)."""
    result = getattr(thrift_api, f"{method}_result", None)
    spec = getattr(result, "thrift_spec", None) or ()
    return [entry[3][0] for entry in spec if entry is not None and entry[2].startswith("o")]


def thrift_errors(method: F) -> F:
    """statlas's errors as the Thrift exceptions the method declares (one-line messages);
    MetaException where the specific kind is not declared."""
    name = method.__name__
    declared = _declared(name)

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except StatlasError as error:
            raise _translate(error, declared) from None

    return cast(F, call)


def thrift_errors_of(method: str, work: Callable[[], T]) -> T:
    """Run `work` for Thrift method `method`, statlas's errors turned into the Thrift
    exceptions the method declares (as thrift_errors does for a handler method)."""
    try:
        return work()
    except StatlasError as error:
        raise _translate(error, _declared(method)) from None


def _translate(error: StatlasError, declared: list[type[Exception]]) -> Exception:
    message = str(error)
    chosen: Any = hms.MetaException
    for kind, exception in _EXCEPTION_FOR:
        if isinstance(error, kind) and exception in declared:
            chosen = exception
            break
    else:
        if hms.MetaException not in declared and declared:
            chosen = declared[0]
    result: Exception = chosen(message=message)
    return result
