"""The role each Hive Metastore call needs (servers.authorization): readers read, writers
change metadata, admins drop and delete data. Every call the handler serves is named below,
classified by what statlas's handler does (not only by its name); `lock` depends on the
locks it asks for. A call named nowhere needs admin, so a new call is closed until it is
classified (tests/servers/test_authorization.py fails until it is).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from hive_metastore import ttypes as hms

from servers.authorization import Role

READ_CALLS = frozenset(
    {
        # connection: the caller's own session (set_ugi names an unauthenticated caller;
        # setMetaConf and fb303's shutdown change only this connection's settings)
        "set_ugi",
        "getMetaConf",
        "setMetaConf",
        "get_config_value",
        "shutdown",
        # databases and tables
        "get_database",
        "get_databases",
        "get_all_databases",
        "get_table",
        "get_table_req",
        "get_table_objects_by_name",
        "get_table_objects_by_name_req",
        "get_tables",
        "get_all_tables",
        "get_tables_by_type",
        "get_table_meta",
        "get_table_names_by_filter",
        "get_fields",
        "get_schema",
        # partitions
        "get_partition",
        "get_partition_with_auth",
        "get_partition_by_name",
        "get_partition_names",
        "get_partition_names_ps",
        "get_partition_values",
        "get_partitions",
        "get_partitions_with_auth",
        "get_partitions_ps",
        "get_partitions_ps_with_auth",
        "get_partitions_by_names",
        "get_partitions_by_names_req",
        "get_partitions_by_filter",
        "get_partitions_by_expr",
        "get_num_partitions_by_filter",
        # statistics
        "get_table_statistics_req",
        "get_partitions_statistics_req",
        "get_table_column_statistics",
        "get_partition_column_statistics",
        # functions
        "get_function",
        "get_functions",
        "get_all_functions",
        # notification log
        "get_current_notificationEventId",
        "get_next_notification",
        "get_notification_events_count",
        # locks by id: a reader's own SHARED_READ lock must be kept alive and released
        "check_lock",
        "heartbeat",
        "unlock",
        "show_locks",
    }
)

WRITE_CALLS = frozenset(
    {
        "create_database",
        "alter_database",
        "create_table",
        "create_table_with_environment_context",
        "alter_table",  # a managed table renamed moves its directory, deleting nothing
        "alter_table_with_environment_context",
        "alter_table_with_cascade",
        "add_partition",
        "add_partition_with_environment_context",
        "add_partitions",
        "add_partitions_req",
        "append_partition",
        "alter_partition",
        "alter_partition_with_environment_context",
        "alter_partitions",
        "alter_partitions_with_environment_context",
        "alter_partitions_req",
        "rename_partition",
        "update_table_column_statistics",
        "update_partition_column_statistics",
        "set_aggr_stats_for",
        "delete_table_column_statistics",  # statistics are metadata: no data is deleted
        "delete_partition_column_statistics",
        "fire_listener_event",
        "create_function",
        "alter_function",
    }
)

ADMIN_CALLS = frozenset(
    {
        # drops: with deleteData a managed table's (or partition's) files go too
        "drop_database",
        "drop_table",
        "drop_table_with_environment_context",
        "drop_partition",
        "drop_partition_with_environment_context",
        "drop_partition_by_name",
        "drop_partition_by_name_with_environment_context",
        "drop_partitions_req",
        "drop_function",
    }
)


def _lock_request(args: object) -> object:
    """The LockRequest in a call's arguments: the generated `lock_args`, the handler's
    positional arguments (a tuple whose first is the request), or the request itself."""
    if isinstance(args, tuple | list) and args:
        args = args[0]
    return getattr(args, "rqst", args)


def lock_role(args: object) -> Role:
    """A lock of SHARED_READ components only is a reader's (what a query takes); any
    SHARED_WRITE, EXCL_WRITE or EXCLUSIVE component (a commit's), or a request that cannot
    be read, a writer's."""
    components = getattr(_lock_request(args), "component", None)
    if not isinstance(components, list):
        return Role.WRITER
    reading = all(getattr(c, "type", None) == hms.LockType.SHARED_READ for c in components)
    return Role.READER if reading else Role.WRITER


SPECIAL_CALLS: Mapping[str, Callable[[object], Role]] = MappingProxyType({"lock": lock_role})
"""Calls whose role depends on their arguments."""

_FIXED = {
    **dict.fromkeys(READ_CALLS, Role.READER),
    **dict.fromkeys(WRITE_CALLS, Role.WRITER),
    **dict.fromkeys(ADMIN_CALLS, Role.ADMIN),
}


def required_role(method: str, args: object) -> Role:
    """The role Thrift call `method` with `args` needs; admin for a call not classified."""
    special = SPECIAL_CALLS.get(method)
    if special is not None:
        return special(args)
    return _FIXED.get(method, Role.ADMIN)
