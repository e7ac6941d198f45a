"""The Hive Metastore's per-connection calls: set_ugi, fb303's shutdown, getMetaConf and
setMetaConf (settings a client may change for its own connection, Hive's "metaConf" keys),
and get_config_value (docs/hive-metastore.md#settings)."""

from __future__ import annotations

import threading

from hive_metastore import ttypes as hms

from servers.hive_metastore.thrift_errors import thrift_errors

META_CONF_DEFAULTS = {
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.try.direct.sql.ddl": "true",
    "hive.metastore.client.socket.timeout": "600s",
    "hive.metastore.partition.name.whitelist.pattern": "",
    "hive.metastore.client.capability.check": "true",
    "hive.metastore.disallow.incompatible.col.type.changes": "true",
}
"""The settings Hive lets a client set for its connection (HiveConf's metaConfs), with
Hive's defaults. statlas keeps and answers them; none changes what statlas does (it has no
direct-SQL path to switch, and it checks no column type changes)."""

ANONYMOUS = "anonymous"  # an unauthenticated client that gave set_ugi no name


class SessionCalls:
    """Mixed into the handler: needs `warehouse` and `lock_timeout`. One thread serves one
    connection (servers.hive_metastore.server), so a connection's settings live in the thread."""

    warehouse: str
    lock_timeout: float
    _connection = threading.local()

    def _meta_conf(self) -> dict[str, str]:
        settings: dict[str, str] | None = getattr(self._connection, "meta_conf", None)
        if settings is None:
            settings = self._connection.meta_conf = {}
        return settings

    def begin_connection(self, principal: str | None) -> None:
        """A new connection on this thread: its Kerberos principal (None: unauthenticated,
        the client then goes by the name it gives set_ugi, or "anonymous")."""
        self._connection.meta_conf = {}
        self._connection.authenticated = principal is not None
        self._connection.principal = principal or ANONYMOUS

    def connection_principal(self) -> str:
        principal: str = getattr(self._connection, "principal", ANONYMOUS)
        return principal

    def set_ugi(self, user_name: str, group_names: list[str]) -> list[str]:
        """Hive's unauthenticated clients name their user here; a Kerberos principal is
        not replaced by a name the client asserts."""
        if user_name and not getattr(self._connection, "authenticated", False):
            self._connection.principal = user_name
        return [user_name, *(group_names or [])]

    def shutdown(self) -> None:
        """fb303's one-way shutdown: Hive's client sends it whenever it closes a connection;
        the connection's settings end with it."""
        self._connection.meta_conf = {}

    @thrift_errors
    def getMetaConf(self, key: str) -> str:
        if key not in META_CONF_DEFAULTS:
            raise hms.MetaException(message=f"Invalid configuration key {key}")
        return self._meta_conf().get(key, META_CONF_DEFAULTS[key])

    @thrift_errors
    def setMetaConf(self, key: str, value: str) -> None:
        if key not in META_CONF_DEFAULTS:
            raise hms.MetaException(message=f"Invalid configuration key {key}")
        self._meta_conf()[key] = value if value is not None else META_CONF_DEFAULTS[key]

    def get_config_value(self, name: str, defaultValue: str) -> str:
        """The server's value of the settings statlas has; the caller's default otherwise."""
        known = {
            "hive.metastore.warehouse.dir": self.warehouse,
            "metastore.warehouse.dir": self.warehouse,
            "hive.txn.timeout": f"{self.lock_timeout:g}s",
            "metastore.txn.timeout": f"{self.lock_timeout:g}s",
        }
        return known.get(name, defaultValue)
