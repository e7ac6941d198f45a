"""Roles and the roles file (servers.authorization), and the role each Hive Metastore call
needs (servers.hive_metastore.call_roles): every call the server serves is classified,
lookups follow the documented order, and every malformed roles file is refused with a
one-line message."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest
from hive_metastore import ThriftHiveMetastore as thrift_api
from hive_metastore import ttypes as hms
from hypothesis import given
from hypothesis import strategies as st

from metastore.errors import StatlasError
from servers.authorization import HTTP_TOKEN_PRINCIPAL, Role, Roles, denied_message
from servers.hive_metastore.authorizing_handler import AuthorizingHandler
from servers.hive_metastore.call_roles import (
    ADMIN_CALLS,
    READ_CALLS,
    SPECIAL_CALLS,
    WRITE_CALLS,
    required_role,
)
from servers.hive_metastore.handler import HiveMetastoreHandler
from servers.hive_metastore.server import Processor

LOCK_TYPES = [
    hms.LockType.SHARED_READ,
    hms.LockType.SHARED_WRITE,
    hms.LockType.EXCL_WRITE,
    hms.LockType.EXCLUSIVE,
]


def served_calls() -> set[str]:
    """The calls the server answers, decided by its Processor (over a handler that is never
    initialised: no database)."""
    return set(Processor(object.__new__(HiveMetastoreHandler))._handled)


# --- call roles ---------------------------------------------------------------------------


def test_every_served_call_is_classified_exactly_once() -> None:
    served = served_calls()
    assert served, "the server serves no call?"
    named = [*READ_CALLS, *WRITE_CALLS, *ADMIN_CALLS, *SPECIAL_CALLS]
    twice = sorted({name for name in named if named.count(name) > 1})
    assert not twice, f"classified more than once: {twice}"
    unclassified = sorted(served - set(named))
    assert not unclassified, f"served but not classified (they need admin): {unclassified}"
    not_served = sorted(set(named) - served)
    assert not not_served, f"classified but not served: {not_served}"


def test_served_calls_are_the_handlers_thrift_methods() -> None:
    generated = set(thrift_api.Processor(None)._processMap)
    expected = {n for n in generated if callable(getattr(HiveMetastoreHandler, n, None))}
    assert served_calls() == expected
    handler = AuthorizingHandler(object.__new__(HiveMetastoreHandler), Roles.everyone())
    assert set(Processor(handler)._handled) == expected  # the same calls with a roles file


def test_each_set_gives_its_role() -> None:
    for names, role in (
        (READ_CALLS, Role.READER),
        (WRITE_CALLS, Role.WRITER),
        (ADMIN_CALLS, Role.ADMIN),
    ):
        for name in names:
            assert required_role(name, ()) is role, name


@pytest.mark.parametrize(
    ("method", "role"),
    [
        ("get_table", Role.READER),
        ("get_partitions_by_filter", Role.READER),
        ("set_ugi", Role.READER),
        ("setMetaConf", Role.READER),
        ("shutdown", Role.READER),
        ("unlock", Role.READER),
        ("create_table", Role.WRITER),
        ("alter_table_with_environment_context", Role.WRITER),
        ("delete_table_column_statistics", Role.WRITER),
        ("fire_listener_event", Role.WRITER),
        ("drop_table", Role.ADMIN),
        ("drop_partition_by_name", Role.ADMIN),
        ("drop_database", Role.ADMIN),
        ("truncate_table", Role.ADMIN),  # not served: closed by default
        ("no_such_call", Role.ADMIN),
    ],
)
def test_classification_examples(method: str, role: Role) -> None:
    assert required_role(method, ()) is role


@given(st.text())
def test_a_call_not_classified_needs_admin(method: str) -> None:
    classified = READ_CALLS | WRITE_CALLS | ADMIN_CALLS | set(SPECIAL_CALLS)
    if method not in classified:
        assert required_role(method, ()) is Role.ADMIN


def lock_request(*types: int) -> hms.LockRequest:
    return hms.LockRequest(
        component=[
            hms.LockComponent(type=t, level=hms.LockLevel.TABLE, dbname="db", tablename="t")
            for t in types
        ],
        user="alice",
        hostname="host1",
    )


def test_shared_read_locks_are_a_readers() -> None:
    request = lock_request(hms.LockType.SHARED_READ, hms.LockType.SHARED_READ)
    assert required_role("lock", thrift_api.lock_args(rqst=request)) is Role.READER
    assert required_role("lock", (request,)) is Role.READER  # the handler's arguments


@pytest.mark.parametrize(
    "kind", [hms.LockType.SHARED_WRITE, hms.LockType.EXCL_WRITE, hms.LockType.EXCLUSIVE]
)
def test_any_other_lock_is_a_writers(kind: int) -> None:
    request = lock_request(hms.LockType.SHARED_READ, kind)
    assert required_role("lock", thrift_api.lock_args(rqst=request)) is Role.WRITER
    assert required_role("lock", (request,)) is Role.WRITER


@given(st.lists(st.sampled_from(LOCK_TYPES), min_size=1, max_size=6))
def test_lock_role_is_reader_exactly_when_every_component_reads(types: list[int]) -> None:
    expected = Role.READER if set(types) == {hms.LockType.SHARED_READ} else Role.WRITER
    assert required_role("lock", (lock_request(*types),)) is expected


@pytest.mark.parametrize("args", [(), None, thrift_api.lock_args(), (lock_request(99),)])
def test_a_lock_request_that_cannot_be_read_is_a_writers(args: object) -> None:
    assert required_role("lock", args) is Role.WRITER


# --- roles --------------------------------------------------------------------------------

ROLES = Roles(
    MappingProxyType(
        {
            "spark@STATLAS.TEST": Role.WRITER,
            "etl": Role.WRITER,
            "admin/ops": Role.ADMIN,
            "carol/host1": Role.ADMIN,
            "carol": Role.READER,
            HTTP_TOKEN_PRINCIPAL: Role.ADMIN,
        }
    ),
    Role.READER,
)


@pytest.mark.parametrize(
    ("principal", "role"),
    [
        ("spark@STATLAS.TEST", Role.WRITER),  # exact
        ("spark@OTHER.REALM", Role.READER),  # a whole principal names one realm only
        ("etl@STATLAS.TEST", Role.WRITER),  # short name
        ("etl/worker7@ELSEWHERE", Role.WRITER),
        ("etl", Role.WRITER),
        ("admin/ops@STATLAS.TEST", Role.ADMIN),  # without the realm
        ("admin@STATLAS.TEST", Role.READER),  # primary/instance is not the short name
        ("admin/other@STATLAS.TEST", Role.READER),
        ("carol/host1@STATLAS.TEST", Role.ADMIN),  # without the realm before short name
        ("carol/host2@STATLAS.TEST", Role.READER),
        ("ETL@STATLAS.TEST", Role.READER),  # principal names are case-sensitive
        ("alice@STATLAS.TEST", Role.READER),  # default
        (HTTP_TOKEN_PRINCIPAL, Role.ADMIN),
        (f"{HTTP_TOKEN_PRINCIPAL}@STATLAS.TEST", Role.READER),  # not the token's holder
        (f"{HTTP_TOKEN_PRINCIPAL}/host1@STATLAS.TEST", Role.READER),
    ],
)
def test_lookup_order(principal: str, role: Role) -> None:
    assert ROLES.role_of(principal) is role


def test_without_a_default_others_have_no_role() -> None:
    roles = Roles(MappingProxyType({"etl": Role.WRITER}), None)
    assert roles.role_of("bob@STATLAS.TEST") is None
    assert not roles.allows("bob@STATLAS.TEST", Role.READER)
    assert roles.allows("etl@STATLAS.TEST", Role.READER)
    assert roles.allows("etl@STATLAS.TEST", Role.WRITER)
    assert not roles.allows("etl@STATLAS.TEST", Role.ADMIN)


@given(st.sampled_from(list(Role)), st.sampled_from(list(Role)))
def test_a_role_allows_what_lower_roles_may(role: Role, needed: Role) -> None:
    roles = Roles(MappingProxyType({"p": role}), None)
    assert roles.allows("p@R", needed) == (role >= needed)


def test_everyone() -> None:
    assert Roles.everyone().role_of("anyone@ANYWHERE") is Role.ADMIN
    assert Roles.everyone().allows(HTTP_TOKEN_PRINCIPAL, Role.ADMIN)
    assert Roles.everyone(Role.READER).role_of("x") is Role.READER
    assert not Roles.everyone(Role.READER).allows("x", Role.WRITER)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roles.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_the_documented_example(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        default = "Reader"                 # role names in any case
        [principals]
        "spark@STATLAS.TEST" = "writer"   # a whole Kerberos principal
        "etl" = "WRITER"
        "admin/ops" = "admin"
        "api-token" = "Admin"
        """,
    )
    roles = Roles.load(path)
    assert roles.default is Role.READER
    assert dict(roles.principals) == {
        "spark@STATLAS.TEST": Role.WRITER,
        "etl": Role.WRITER,
        "admin/ops": Role.ADMIN,
        "api-token": Role.ADMIN,
    }
    assert roles.role_of("etl/host9@STATLAS.TEST") is Role.WRITER
    assert roles.role_of("bob@STATLAS.TEST") is Role.READER


def test_load_without_default_or_principals(tmp_path: Path) -> None:
    assert Roles.load(write(tmp_path, "")) == Roles(MappingProxyType({}), None)
    roles = Roles.load(write(tmp_path, '[principals]\n"a" = "reader"\n'))
    assert roles.default is None
    assert roles.role_of("b") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("default = \n", "is not valid TOML: Invalid value (at line 1, column 11)"),
        ("[principals]\nalice = reader\n", "is not valid TOML: Invalid value (at line 2"),
        ('alice = "reader"\n', ": unknown key 'alice' (the file has `default` and a"),
        ('[roles]\n"alice" = "reader"\n', ": unknown key 'roles'"),
        ('[principals]\nalice = "owner"\n', ": role 'owner' for 'alice' is not one of"),
        ('default = "superuser"\n', ": default role 'superuser' is not one of reader, writer"),
        ("[principals]\nalice = 3\n", ": the role for 'alice' must be a role name in quotes"),
        ("[principals]\nalice = true\n", "for 'alice' must be a role name in quotes, not a bool"),
        ("[principals]\nalice = [1]\n", "for 'alice' must be a role name in quotes, not an arr"),
        ("default = 1\n", ": default must be a role name in quotes, not an integer"),
        ('principals = "alice"\n', ": principals must be a table"),
        ('[principals]\n"" = "admin"\n', ": a principal's name is empty"),
    ],
)
def test_load_errors(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(StatlasError) as raised:
        Roles.load(path)
    shown = str(raised.value)
    assert shown.startswith(f"roles file {path}")
    assert message in shown
    assert "\n" not in shown


def test_unknown_role_message_lists_the_roles(tmp_path: Path) -> None:
    path = write(tmp_path, '[principals]\nalice = "owner"\n')
    with pytest.raises(StatlasError) as raised:
        Roles.load(path)
    assert str(raised.value) == (
        f"roles file {path}: role 'owner' for 'alice' is not one of reader, writer, admin"
    )


def test_load_missing_and_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "absent.toml"
    with pytest.raises(StatlasError, match=r"^roles file .*absent\.toml does not exist$"):
        Roles.load(missing)
    with pytest.raises(StatlasError, match=r"^roles file .* cannot be read: Is a directory$"):
        Roles.load(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"default = '\xff'\n")
    with pytest.raises(StatlasError, match=r"^roles file .*binary\.toml is not UTF-8 text"):
        Roles.load(binary)


def test_denied_messages() -> None:
    assert denied_message("alice@STATLAS.TEST", Role.READER, "drop_table", Role.ADMIN) == (
        "Permission denied: alice@STATLAS.TEST (role reader) may not drop_table: "
        "it needs the admin role"
    )
    assert denied_message("bob@STATLAS.TEST", None, "get_table", Role.READER) == (
        "Permission denied: bob@STATLAS.TEST has no role (not in the roles file and no "
        "default) and may not get_table: it needs the reader role"
    )
