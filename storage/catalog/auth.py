"""Users, roles and privilege grants in the catalog (Doris's Auth: UserIdentity 'name'@'host', roles,
privileges at global / catalog / database / table level), in the same SQLite file as everything else, so they
are durable and crash-safe like the rest. Only password hashes are kept (MySQL's `*HEX` of SHA1(SHA1(pw))).

Storage only: the rules (who may do what, Doris's messages) live in server.access. `AuthCatalog` is a mixin of
`storage.catalog.store.Catalog`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

AUTH_SCHEMA = """
CREATE TABLE IF NOT EXISTS auth_users (
    name TEXT NOT NULL, host TEXT NOT NULL, password TEXT NOT NULL, roles TEXT NOT NULL, comment TEXT NOT NULL,
    attrs TEXT NOT NULL, PRIMARY KEY (name, host));
CREATE TABLE IF NOT EXISTS auth_roles (name TEXT PRIMARY KEY, comment TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS auth_grants (
    grantee TEXT NOT NULL, ctl TEXT NOT NULL, db TEXT NOT NULL, tbl TEXT NOT NULL, privs TEXT NOT NULL,
    PRIMARY KEY (grantee, ctl, db, tbl))
"""


@dataclass(frozen=True)
class UserRecord:
    name: str
    host: str  # '%', an exact address, or a pattern with % and _
    password: str  # '*HEX' hash, '' for none
    roles: tuple[str, ...] = ()
    comment: str = ""
    # password policy and limits: failed_login_attempts, password_lock_time (s), password_expire (days),
    # password_changed (unix s), locked_until (unix s), max_user_connections ...
    attrs: dict = field(default_factory=dict)

    @property
    def identity(self) -> str:
        return f"'{self.name}'@'{self.host}'"


@dataclass(frozen=True)
class Grant:
    grantee: str  # "user:'name'@'host'" or "role:name"
    ctl: str  # '*', 'internal', or RESOURCES (then `db` is the resource's name)
    db: str  # '*' or a database
    tbl: str  # '*' or a table
    privs: frozenset[str]


RESOURCES = "resource"  # the `ctl` of a grant on one resource (GRANT USAGE_PRIV ON RESOURCE 'spark0')


def user_grantee(name: str, host: str) -> str:
    return f"user:'{name}'@'{host}'"


def role_grantee(role: str) -> str:
    return f"role:{role}"


def _user(r: sqlite3.Row) -> UserRecord:
    return UserRecord(r["name"], r["host"], r["password"], tuple(json.loads(r["roles"])), r["comment"],
                      json.loads(r["attrs"]))


class AuthCatalog:
    """Users, roles and grants (mixed into Catalog). Each method is one transaction; callers check the rules."""

    if TYPE_CHECKING:  # provided by Catalog
        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    # -- reading ------------------------------------------------------------------------------------
    def auth_snapshot(self) -> tuple[list[UserRecord], dict[str, str], list[Grant]]:
        """(users, role name -> comment, grants), read in one transaction."""
        with self._read() as c:
            users = [_user(r) for r in c.execute("SELECT * FROM auth_users ORDER BY name, host")]
            roles = {r["name"]: r["comment"] for r in c.execute("SELECT * FROM auth_roles ORDER BY name")}
            grants = [Grant(r["grantee"], r["ctl"], r["db"], r["tbl"], frozenset(json.loads(r["privs"])))
                      for r in c.execute("SELECT * FROM auth_grants ORDER BY grantee, ctl, db, tbl")]
        return users, roles, grants

    def has_auth_users(self) -> bool:
        with self._read() as c:
            return c.execute("SELECT 1 FROM auth_users LIMIT 1").fetchone() is not None

    # -- users --------------------------------------------------------------------------------------
    def put_user(self, user: UserRecord, create: bool) -> bool:
        """Insert (`create`: False if the identity exists) or replace a user; True when written."""
        with self._write() as c:
            exists = c.execute("SELECT 1 FROM auth_users WHERE name = ? AND host = ?",
                               (user.name, user.host)).fetchone() is not None
            if create and exists or not create and not exists:
                return False
            c.execute("INSERT OR REPLACE INTO auth_users VALUES (?, ?, ?, ?, ?, ?)",
                      (user.name, user.host, user.password, json.dumps(list(user.roles)), user.comment,
                       json.dumps(user.attrs, sort_keys=True)))
            return True

    def update_user_attrs(self, name: str, host: str, attrs: dict) -> None:
        """Login bookkeeping (failed attempts, lock time): merged into the user's attrs."""
        with self._write() as c:
            row = c.execute("SELECT attrs FROM auth_users WHERE name = ? AND host = ?", (name, host)).fetchone()
            if row is not None:
                merged = {**json.loads(row[0]), **attrs}
                c.execute("UPDATE auth_users SET attrs = ? WHERE name = ? AND host = ?",
                          (json.dumps(merged, sort_keys=True), name, host))

    def drop_user(self, name: str, host: str) -> bool:
        with self._write() as c:
            gone = c.execute("DELETE FROM auth_users WHERE name = ? AND host = ?", (name, host)).rowcount
            c.execute("DELETE FROM auth_grants WHERE grantee = ?", (user_grantee(name, host),))
            return bool(gone)

    # -- roles --------------------------------------------------------------------------------------
    def create_role(self, name: str, comment: str = "") -> bool:
        with self._write() as c:
            if c.execute("SELECT 1 FROM auth_roles WHERE name = ?", (name,)).fetchone():
                return False
            c.execute("INSERT INTO auth_roles VALUES (?, ?)", (name, comment))
            return True

    def drop_role(self, name: str) -> bool:
        """The role, its grants, and its membership of every user, in one commit."""
        with self._write() as c:
            gone = c.execute("DELETE FROM auth_roles WHERE name = ?", (name,)).rowcount
            c.execute("DELETE FROM auth_grants WHERE grantee = ?", (role_grantee(name),))
            for r in c.execute("SELECT name, host, roles FROM auth_users").fetchall():
                roles = [x for x in json.loads(r["roles"]) if x != name]
                c.execute("UPDATE auth_users SET roles = ? WHERE name = ? AND host = ?",
                          (json.dumps(roles), r["name"], r["host"]))
            return bool(gone)

    # -- grants -------------------------------------------------------------------------------------
    def change_grant(self, grantee: str, ctl: str, db: str, tbl: str, add: Iterable[str] = (),
                     remove: Iterable[str] = ()) -> None:
        with self._write() as c:
            row = c.execute("SELECT privs FROM auth_grants WHERE grantee = ? AND ctl = ? AND db = ? AND tbl = ?",
                            (grantee, ctl, db, tbl)).fetchone()
            privs = set(json.loads(row[0])) if row is not None else set()
            privs = (privs | set(add)) - set(remove)
            if privs:
                c.execute("INSERT OR REPLACE INTO auth_grants VALUES (?, ?, ?, ?, ?)",
                          (grantee, ctl, db, tbl, json.dumps(sorted(privs))))
            else:
                c.execute("DELETE FROM auth_grants WHERE grantee = ? AND ctl = ? AND db = ? AND tbl = ?",
                          (grantee, ctl, db, tbl))

    def set_user_roles(self, name: str, host: str, roles: Iterable[str]) -> None:
        with self._write() as c:
            c.execute("UPDATE auth_users SET roles = ? WHERE name = ? AND host = ?",
                      (json.dumps(sorted(set(roles))), name, host))
