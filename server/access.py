"""Doris's privilege model over the catalog's users, roles and grants (storage.catalog.auth): who may log in
from where, and what each identity may do, with Doris's messages.

Identities are 'name'@'host' with host '%', an address, or a pattern (`%` any run, `_` one character); a login
takes the most specific identity whose pattern matches the client (exact before patterns before '%', as Doris
orders them). Privileges: NODE_PRIV, ADMIN_PRIV, GRANT_PRIV, SELECT_PRIV, LOAD_PRIV, ALTER_PRIV, CREATE_PRIV,
DROP_PRIV, USAGE_PRIV, granted on `*.*.*` (global), `internal.*.*` (catalog), `internal.db.*` (database) or
`internal.db.tbl` (table), USAGE_PRIV and GRANT_PRIV also on a resource (RESOURCE * is the global level), to a
user or a role; ADMIN_PRIV holds every privilege but NODE_PRIV. Built-in roles
`operator` (NODE + ADMIN) and `admin` (ADMIN); built-in users root (operator) and admin (admin).

Every decision reads an in-memory view rebuilt when the catalog's generation moves, so a check on the query
path is a few dictionary lookups.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from server.auth import check_native, check_plain, native_password_hash
from storage.catalog.auth import RESOURCES, Grant, UserRecord, role_grantee, user_grantee
from storage.catalog.store import Catalog
from storage.errors import StorageError, doris_error

PRIVILEGES = ("NODE_PRIV", "ADMIN_PRIV", "GRANT_PRIV", "SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV",
              "DROP_PRIV", "USAGE_PRIV")
GLOBAL_ONLY = frozenset({"NODE_PRIV", "ADMIN_PRIV"})
BUILTIN_ROLES = {"operator": frozenset({"NODE_PRIV", "ADMIN_PRIV"}), "admin": frozenset({"ADMIN_PRIV"})}
ROOT, ADMIN = "root", "admin"
INTERNAL = "internal"
INFORMATION_SCHEMA = "information_schema"


@dataclass(frozen=True)
class Identity:
    """A logged-in user: the matched account ('name'@'pattern') and where the client is."""

    name: str
    host: str  # the account's host pattern
    client: str = "%"  # the client's address (Doris's messages name it)

    @property
    def text(self) -> str:
        return f"'{self.name}'@'{self.host}'"


def host_matches(pattern: str, host: str) -> bool:
    if pattern == "%":
        return True
    regex = "^" + "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern) + "$"
    return re.match(regex, host) is not None


def _specificity(pattern: str) -> tuple[int, int]:
    """Exact addresses first, then patterns with more fixed characters, '%' last."""
    wild = pattern.count("%") + pattern.count("_")
    return (0 if wild == 0 else 1 if pattern != "%" else 2, -len(pattern.replace("%", "").replace("_", "")))


def access_denied(what: str, identity: Identity, obj: str, code: int = 1142) -> StorageError:
    """Doris's ERR_TABLEACCESS_DENIED_ERROR: `SELECT command denied to user 'u'@'h' for table 'ctl: db: t'`."""
    return doris_error(f"{what} command denied to user '{identity.name}'@'{identity.client}' for table '{obj}'",
                       code, "42000")


def need_privilege(*privs: str) -> StorageError:
    """Doris's ERR_SPECIFIC_ACCESS_DENIED_ERROR (1227)."""
    return doris_error(f"Access denied; you need (at least one of) the {'/'.join(privs)} privilege(s) for this "
                       "operation", 1227, "42000")


def db_denied(identity: Identity, db: str) -> StorageError:
    """Doris's ERR_DBACCESS_DENIED_ERROR (1044)."""
    return doris_error(f"Access denied for user '{identity.name}'@'{identity.client}' to database '{db}'", 1044,
                       "42000")


@dataclass
class _View:
    generation: int
    users: list[UserRecord]
    roles: dict[str, str]
    # grantee -> [(ctl, db, tbl, privs)], the user's roles resolved at check time
    grants: dict[str, list[Grant]]
    by_identity: dict[tuple[str, str], UserRecord]


class AccessControl:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._lock = threading.Lock()
        self._view: _View | None = None
        self._privs: dict[tuple[str, str], list[Grant]] = {}

    # -- bootstrap -----------------------------------------------------------------------------------
    def bootstrap(self, root_password: str | None, legacy_users: Path | None = None) -> str | None:
        """Create root and admin on a fresh catalog (root's password: `root_password`, or a generated one,
        returned so the caller can print it once; admin gets an unusable password until root sets one), or
        migrate a storage folder's older `users.json` (its hashes, every user global ADMIN as before)."""
        if self.catalog.has_auth_users():
            return None
        generated = None
        legacy: dict[str, str] = {}
        if legacy_users is not None and legacy_users.exists():
            legacy = {str(u): str(h) for u, h in json.loads(legacy_users.read_text()).get("users", {}).items()}
        if legacy:
            for name, hash_ in legacy.items():
                roles = ("operator",) if name == ROOT else ("admin",)
                self.catalog.put_user(UserRecord(name, "%", hash_, roles, attrs={"password_changed": time.time()}),
                                      create=True)
            legacy_users.rename(legacy_users.with_suffix(".json.migrated"))  # type: ignore[union-attr]
        else:
            if root_password is None:
                generated = root_password = secrets.token_urlsafe(12)
            self.catalog.put_user(UserRecord(ROOT, "%", native_password_hash(root_password), ("operator",), "ROOT",
                                             attrs={"password_changed": time.time()}), create=True)
            # no password anyone knows: closed until root gives it one (SET PASSWORD FOR 'admin' = ...)
            self.catalog.put_user(UserRecord(ADMIN, "%", native_password_hash(secrets.token_hex(32)), ("admin",),
                                             "ADMIN", attrs={"password_changed": time.time()}), create=True)
        for name in BUILTIN_ROLES:
            self.catalog.create_role(name)
        self._view = None
        return generated

    # -- the in-memory view --------------------------------------------------------------------------
    def _current(self) -> _View:
        generation = self.catalog.generation
        view = self._view
        if view is not None and view.generation == generation:
            return view
        with self._lock:
            users, roles, grants = self.catalog.auth_snapshot()
            by_grantee: dict[str, list[Grant]] = {}
            for g in grants:
                by_grantee.setdefault(g.grantee, []).append(g)
            self._view = _View(generation, users, roles, by_grantee, {(u.name, u.host): u for u in users})
            self._privs = {}
            return self._view

    def users(self) -> list[UserRecord]:
        return list(self._current().users)

    def roles(self) -> dict[str, str]:
        return dict(self._current().roles)

    def user(self, name: str, host: str) -> UserRecord | None:
        return self._current().by_identity.get((name, host))

    def match(self, name: str, client: str) -> UserRecord | None:
        found = [u for u in self._current().users if u.name == name and host_matches(u.host, client)]
        return min(found, key=lambda u: _specificity(u.host)) if found else None

    def grants_of(self, grantee: str) -> list[Grant]:
        return list(self._current().grants.get(grantee, []))

    def _effective(self, identity: Identity) -> list[Grant]:
        view = self._current()
        key = (identity.name, identity.host)
        got = self._privs.get(key)
        if got is not None:
            return got
        user = view.by_identity.get(key)
        out: list[Grant] = []
        if user is not None:
            out += view.grants.get(user_grantee(user.name, user.host), [])
            for role in user.roles:
                if role in BUILTIN_ROLES:
                    out.append(Grant(role_grantee(role), "*", "*", "*", BUILTIN_ROLES[role]))
                out += view.grants.get(role_grantee(role), [])
        self._privs[key] = out
        return out

    # -- login ---------------------------------------------------------------------------------------
    def login_native(self, name: str, client: str, salt: bytes, auth_response: bytes) -> Identity | None:
        user = self.match(name, client)
        ok = check_native(user.password if user is not None else None, salt, auth_response)
        return self._after_login(user, client, ok)

    def login_plain(self, name: str, client: str, password: str) -> Identity | None:
        user = self.match(name, client)
        ok = check_plain(user.password if user is not None else None, password)
        return self._after_login(user, client, ok)

    def _after_login(self, user: UserRecord | None, client: str, ok: bool) -> Identity | None:
        """FAILED_LOGIN_ATTEMPTS n PASSWORD_LOCK_TIME t: n failures in a row lock the account for t seconds
        (a correct password during the lock fails too)."""
        if user is None:
            return None
        attrs = user.attrs
        now = time.time()
        if attrs.get("locked_until", 0) > now:
            return None
        limit = int(attrs.get("failed_login_attempts", 0) or 0)
        if not ok:
            if limit > 0:
                failures = int(attrs.get("failures", 0)) + 1
                update = {"failures": failures}
                if failures >= limit:
                    lock = attrs.get("password_lock_time", 86400)
                    update = {"failures": 0, "locked_until": float("inf") if lock == "UNBOUNDED" else now + float(lock)}
                self.catalog.update_user_attrs(user.name, user.host, update)
            return None
        if limit > 0 and attrs.get("failures"):
            self.catalog.update_user_attrs(user.name, user.host, {"failures": 0})
        return Identity(user.name, user.host, client)

    def max_user_connections(self, identity: Identity) -> int:
        """Connections one user may hold at once (Doris's user property max_user_connections, 100)."""
        user = self.user(identity.name, identity.host)
        return int((user.attrs if user is not None else {}).get("max_user_connections", 100))

    def password_expired(self, identity: Identity) -> bool:
        user = self.user(identity.name, identity.host)
        if user is None:
            return False
        days = user.attrs.get("password_expire")
        return bool(days) and time.time() > float(user.attrs.get("password_changed", 0)) + float(days) * 86400

    # -- checks --------------------------------------------------------------------------------------
    def has(self, identity: Identity, priv: str, db: str | None = None, tbl: str | None = None) -> bool:
        """Whether `identity` holds `priv` at the level named (None: the global level) or above."""
        for g in self._effective(identity):
            if priv not in g.privs and ("ADMIN_PRIV" not in g.privs or priv == "NODE_PRIV") or g.ctl == RESOURCES:
                continue
            if g.ctl == "*" or db is not None and _covers(g, db, tbl):  # a global check needs a global grant
                return True
        return False

    def has_resource(self, identity: Identity, privs: Iterable[str], resource: str) -> bool:
        """One of `privs` on the resource: granted on it, on RESOURCE * (a global grant, as Doris keeps it), or
        ADMIN_PRIV."""
        wanted = set(privs)
        for g in self._effective(identity):
            if not (wanted & g.privs or "ADMIN_PRIV" in g.privs):
                continue
            if g.ctl == "*" or g.ctl == RESOURCES and g.db == resource:
                return True
        return False

    def has_any(self, identity: Identity, db: str, tbl: str | None = None) -> bool:
        """Any privilege on the database (or table), or on something inside it: what SHOW and USE ask."""
        for g in self._effective(identity):
            if not g.privs or g.ctl == RESOURCES:
                continue
            if g.ctl == "*" or g.db == "*":
                return True
            if _same(g.db, db) and (tbl is None or g.tbl == "*" or _same(g.tbl, tbl)):
                return True
        return False

    def is_admin(self, identity: Identity) -> bool:
        return self.has(identity, "ADMIN_PRIV")

    @staticmethod
    def denied_table(what: str, identity: Identity, db: str, tbl: str) -> StorageError:
        return access_denied(what, identity, f"{INTERNAL}: {db}: {tbl}")

    @staticmethod
    def denied_db(identity: Identity, db: str) -> StorageError:
        return db_denied(identity, db)

    def require_table(self, identity: Identity, priv: str, db: str, tbl: str) -> None:
        if db.lower() == INFORMATION_SCHEMA:
            return  # filtered by what the user may see, as Doris does
        if not self.has(identity, priv, db, tbl):
            raise access_denied(priv.removesuffix("_PRIV"), identity, f"{INTERNAL}: {db}: {tbl}")

    def require_db(self, identity: Identity, priv: str, db: str) -> None:
        if not self.has(identity, priv, db):
            raise db_denied(identity, db)

    def require_global(self, identity: Identity, *privs: str) -> None:
        if not any(self.has(identity, p) for p in privs):
            raise need_privilege(*(p.removesuffix("_PRIV") for p in privs))


def _same(a: str, b: str | None) -> bool:
    return b is not None and a.lower() == b.lower()


def _covers(g: Grant, db: str | None, tbl: str | None) -> bool:
    if g.db == "*":
        return True
    if not _same(g.db, db):
        return False
    return g.tbl == "*" or (tbl is not None and _same(g.tbl, tbl))


def parse_privileges(names: Iterable[str]) -> frozenset[str]:
    """GRANT's privilege list: SELECT_PRIV or SELECT, ...; ALL and READ_WRITE are Doris's SELECT, LOAD, ALTER,
    CREATE and DROP, READ_ONLY is SELECT."""
    out: set[str] = set()
    for raw in names:
        name = raw.strip().upper().replace(" ", "_")
        if name in ("ALL", "ALL_PRIVILEGES", "READ_WRITE"):
            out |= {"SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV", "DROP_PRIV"}
            continue
        if name == "READ_ONLY":
            out.add("SELECT_PRIV")
            continue
        if not name.endswith("_PRIV"):
            name += "_PRIV"
        if name not in PRIVILEGES:
            raise doris_error(f"Unknown privilege type {raw.strip()}")
        out.add(name)
    return frozenset(out)


def privilege_level(ctl: str, db: str, tbl: str) -> str:
    if ctl == "*":
        return "GLOBAL"
    if db == "*":
        return "CATALOG"
    return "DATABASE" if tbl == "*" else "TABLE"


def with_password(user: UserRecord, password_hash: str) -> UserRecord:
    return replace(user, password=password_hash, attrs={**user.attrs, "password_changed": time.time()})


PEER_HEADER = "x-dorislite-peer"  # set by the HTTP server from the socket: the client's address


def basic_auth(access: AccessControl, headers: dict[str, str]) -> Identity | None:
    """The identity HTTP basic auth names (Doris's `-u user:passwd`; `user@cluster` takes the user), or None."""
    auth = headers.get("authorization", "")
    if not auth.lower().startswith("basic "):
        return None
    try:
        user, _, password = base64.b64decode(auth[6:].strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return access.login_plain(user.split("@", 1)[0], headers.get(PEER_HEADER, "127.0.0.1"), password)
