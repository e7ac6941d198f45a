"""Roles: what a principal may do over the Hive Metastore API and the HTTP API. A principal
is a Kerberos name ("alice@EXAMPLE.COM", "spark/host1@EXAMPLE.COM") or the HTTP API's bearer
token's holder ("api-token"). A reader may read, a writer may also change metadata, an admin
may also drop and delete data. Without a roles file every authenticated principal is an
admin (`Roles.everyone`, Hive's default with SASL and no authorizer). The roles file (TOML):

    default = "reader"                # optional: principals not named below (absent: nothing)
    [principals]
    "spark@EXAMPLE.COM" = "writer"    # a whole Kerberos principal
    "etl" = "writer"                  # a short name: etl@ANY, etl/any-host@ANY
    "admin/ops" = "admin"             # primary/instance in any realm
    "api-token" = "admin"             # the HTTP API's bearer token's holder

A principal's role is the first found of: its exact name, its name without the realm
("alice/host@R": "alice/host"), its short name (before the first "/" or "@"), `default`.
"api-token" is matched by exact name only (a Kerberos "api-token@R" is not the token's
holder). Role names are case-insensitive; principal names are not (Kerberos's are not).
"""

from __future__ import annotations

import enum
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from metastore.errors import StatlasError

HTTP_TOKEN_PRINCIPAL = "api-token"
"""The name the HTTP API's bearer token's holder goes by in the roles file."""


class Role(enum.IntEnum):
    """Ordered: a role may do what every lower role may."""

    READER = 1
    WRITER = 2
    ADMIN = 3

    @property
    def label(self) -> str:
        return self.name.lower()


ROLE_NAMES = ", ".join(role.label for role in Role)  # "reader, writer, admin"
_TOML_TYPES = {bool: "a boolean", int: "an integer", float: "a float", list: "an array"}


def _parse_role(value: object, principal: str | None, path: Path) -> Role:
    """A role name from the file (any case) for `principal` (None: the default)."""
    whose = "" if principal is None else f" for {principal!r}"
    if not isinstance(value, str):
        kind = "a table" if isinstance(value, dict) else _TOML_TYPES.get(type(value), "a date")
        what = "default" if principal is None else f"the role{whose}"
        raise StatlasError(f"roles file {path}: {what} must be a role name in quotes, not {kind}")
    try:
        return Role[value.strip().upper()]
    except KeyError:
        what = "default role" if principal is None else "role"
        raise StatlasError(
            f"roles file {path}: {what} {value!r}{whose} is not one of {ROLE_NAMES}"
        ) from None


def _realmless(principal: str) -> str:
    """The name without its realm: "alice/host@R" -> "alice/host"."""
    return principal.rpartition("@")[0] if "@" in principal else principal


def _short(principal: str) -> str:
    """The part before the first "/" or "@": "alice/host@R" -> "alice"."""
    return principal.split("@", 1)[0].split("/", 1)[0]


@dataclass(frozen=True)
class Roles:
    """Each principal's role; `default` is the role of principals not named (None: they may
    do nothing)."""

    principals: Mapping[str, Role]
    default: Role | None

    @classmethod
    def everyone(cls, role: Role = Role.ADMIN) -> Roles:
        """No roles file: every authenticated principal has `role` (admin)."""
        return cls(MappingProxyType({}), role)

    @classmethod
    def load(cls, path: Path) -> Roles:
        """The roles file at `path`; StatlasError (one line naming the file) if it is
        missing, unreadable, not TOML, or names an unknown key or role."""
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise StatlasError(f"roles file {path} does not exist") from None
        except UnicodeDecodeError as error:
            raise StatlasError(f"roles file {path} is not UTF-8 text: {error.reason}") from None
        except OSError as error:
            raise StatlasError(f"roles file {path} cannot be read: {error.strerror}") from None
        try:
            document = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise StatlasError(f"roles file {path} is not valid TOML: {error}") from None
        unknown = sorted(set(document) - {"default", "principals"})
        if unknown:
            raise StatlasError(
                f"roles file {path}: unknown key {unknown[0]!r} (the file has `default` and "
                "a [principals] table of principal = role)"
            )
        default = document.get("default")
        table = document.get("principals", {})
        if not isinstance(table, dict):
            raise StatlasError(
                f"roles file {path}: principals must be a table ([principals]) of principal = role"
            )
        principals: dict[str, Role] = {}
        for name, value in table.items():
            if not name:
                raise StatlasError(f"roles file {path}: a principal's name is empty")
            principals[name] = _parse_role(value, name, path)
        return cls(
            MappingProxyType(principals),
            None if default is None else _parse_role(default, None, path),
        )

    def role_of(self, principal: str) -> Role | None:
        """The principal's role: by exact name, name without realm, short name, default."""
        found = self.principals.get(principal)
        if found is not None:
            return found
        for name in (_realmless(principal), _short(principal)):
            if name != HTTP_TOKEN_PRINCIPAL:
                found = self.principals.get(name)
                if found is not None:
                    return found
        return self.default

    def allows(self, principal: str, needed: Role) -> bool:
        role = self.role_of(principal)
        return role is not None and role >= needed


def denied_message(principal: str, role: Role | None, action: str, needed: Role) -> str:
    """The one line a refused call answers (and the log says)."""
    if role is None:
        who = f"{principal} has no role (not in the roles file and no default) and"
    else:
        who = f"{principal} (role {role.label})"
    return f"Permission denied: {who} may not {action}: it needs the {needed.label} role"
