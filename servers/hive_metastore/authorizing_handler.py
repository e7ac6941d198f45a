"""The handler as the Thrift processor sees it when a roles file is given: every call first
checks the connection's principal's role (servers.authorization,
servers.hive_metastore.call_roles); a call the role does not allow answers Hive's
MetaException (a TApplicationException with the same message where the call declares none)
before anything runs (docs/hive-metastore.md#authorization)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from thrift.Thrift import TApplicationException, TType

from servers.authorization import Roles, denied_message
from servers.hive_metastore.call_roles import required_role
from servers.hive_metastore.handler import HiveMetastoreHandler

log = logging.getLogger("statlas.hms")

OPEN_CALLS = frozenset({"set_ugi"})
"""Calls anyone may make: an unauthenticated client names itself with set_ugi before it has
a role (with Kerberos the name it gives is not taken)."""


def declares_meta_exception(method: str) -> bool:
    """Whether the call's result can carry a MetaException (lock, for one, cannot: a refusal
    is then answered as a TApplicationException with the same message)."""
    result = getattr(thrift_api, f"{method}_result", None)
    spec = getattr(result, "thrift_spec", None) or ()
    return any(
        field is not None and field[1] == TType.STRUCT and field[3][0] is hms.MetaException
        for field in spec
    )


class AuthorizingHandler:
    """Wraps the handler's public methods; `partitions_reply` (the streamed partition
    lists) is checked as the call it answers."""

    def __init__(self, handler: HiveMetastoreHandler, roles: Roles) -> None:
        self._handler = handler
        self._roles = roles
        self._calls: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        call = self._calls.get(name)
        if call is not None:
            return call
        target = getattr(self._handler, name)
        if name.startswith("_") or name in OPEN_CALLS or not callable(target):
            return target
        call = self._checked(name, target)
        self._calls[name] = call
        return call

    def _checked(self, name: str, target: Callable[..., Any]) -> Callable[..., Any]:
        handler, roles = self._handler, self._roles
        declared = name == "partitions_reply" or declares_meta_exception(name)

        def checked(*arguments: Any) -> Any:
            method = arguments[0] if name == "partitions_reply" else name
            needed = required_role(method, arguments)
            principal = handler.connection_principal()
            role = roles.role_of(principal)
            if role is None or role < needed:
                message = denied_message(principal, role, method, needed)
                log.warning("%s", message)
                if declared:
                    raise hms.MetaException(message=message)
                raise TApplicationException(TApplicationException.UNKNOWN, message)
            return target(*arguments)

        return checked
