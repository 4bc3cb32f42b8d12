"""CREATE / ALTER / DROP USER, CREATE / DROP ROLE, GRANT / REVOKE, SHOW GRANTS / ALL GRANTS / ROLES and SET
PASSWORD, with Doris's rules and messages (server.access holds the model, storage.catalog.auth the records)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from server import show
from server.access import (
    ADMIN,
    BUILTIN_ROLES,
    GLOBAL_ONLY,
    INTERNAL,
    ROOT,
    need_privilege,
    parse_privileges,
)
from server.auth import PASSWORD_HASH, native_password_hash
from server.results import OkResult, Result, ResultSet
from sql import statements as st
from storage.catalog.auth import RESOURCES, UserRecord, role_grantee, user_grantee
from storage.errors import doris_error

if TYPE_CHECKING:
    from server.session import Session

SHOW_GRANTS_COLUMNS = ("UserIdentity", "Comment", "Password", "Roles", "GlobalPrivs", "CatalogPrivs",
                       "DatabasePrivs", "TablePrivs", "ColPrivs", "ResourcePrivs", "WorkloadGroupPrivs")
_POLICY_KEYS = ("failed_login_attempts", "password_lock_time", "password_expire", "password_history")


def _require_grant(session: Session) -> None:
    if not session.ctx.users.has(session.identity, "GRANT_PRIV"):  # ADMIN_PRIV holds it too
        raise need_privilege("GRANT")


def _hash(password: str | None, password_hash: str | None) -> str | None:
    if password_hash is not None:
        if password_hash and not PASSWORD_HASH.fullmatch(password_hash):
            raise doris_error("Password hash should be a 41-digit hexadecimal number")
        return password_hash.upper()
    return None if password is None else native_password_hash(password)


def _create_user(session: Session, s: st.CreateUser) -> Result:
    _require_grant(session)
    access = session.ctx.users
    if s.default_role is not None and s.default_role not in access.roles():
        raise doris_error(f"Role: {s.default_role} does not exist")
    attrs: dict[str, Any] = {"password_changed": time.time(), **dict(s.policy)}
    roles = (s.default_role,) if s.default_role else ()
    record = UserRecord(s.user.name, s.user.host, _hash(s.password, s.password_hash) or "", roles, s.comment, attrs)
    if not session.ctx.engine.catalog.put_user(record, create=True) and not s.if_not_exists:
        raise doris_error(f"Operation CREATE USER failed for {s.user.text} : user already exists", 1396, "HY000")
    return OkResult()


def _alter_user(session: Session, s: st.AlterUser) -> Result:
    access = session.ctx.users
    own = (s.user.name, s.user.host) == (session.identity.name, session.identity.host)
    if not own or s.policy or s.unlock:
        _require_grant(session)
    user = access.user(s.user.name, s.user.host)
    if user is None:
        if s.if_exists:
            return OkResult()
        raise doris_error(f"Operation ALTER USER failed for {s.user.text} : user does not exist", 1396, "HY000")
    attrs = {**user.attrs, **dict(s.policy)}
    if s.unlock:
        attrs.update(failures=0, locked_until=0)
    password = _hash(s.password, s.password_hash)
    if password is not None:
        attrs["password_changed"] = time.time()
    updated = replace(user, password=user.password if password is None else password, attrs=attrs,
                      comment=user.comment if s.comment is None else s.comment)
    session.ctx.engine.catalog.put_user(updated, create=False)
    return OkResult()


def _drop_user(session: Session, s: st.DropUser) -> Result:
    _require_grant(session)
    if s.user.name in (ROOT, ADMIN):
        raise doris_error(f"Can not drop system user {s.user.name}")
    if not session.ctx.engine.catalog.drop_user(s.user.name, s.user.host) and not s.if_exists:
        raise doris_error(f"Operation DROP USER failed for {s.user.text} : user does not exist", 1396, "HY000")
    return OkResult()


def _create_role(session: Session, s: st.CreateRole) -> Result:
    _require_grant(session)
    if not session.ctx.engine.catalog.create_role(s.name, s.comment) and not s.if_not_exists:
        raise doris_error(f"Role {s.name} already exists", 1396, "HY000") if s.name not in BUILTIN_ROLES else \
            doris_error(f"Can not create role {s.name}: it is a built-in role")
    return OkResult()


def _drop_role(session: Session, s: st.DropRole) -> Result:
    _require_grant(session)
    if s.name in BUILTIN_ROLES:
        raise doris_error(f"Can not drop built-in role {s.name}")
    if not session.ctx.engine.catalog.drop_role(s.name) and not s.if_exists:
        raise doris_error(f"Role {s.name} does not exist")
    return OkResult()


def _grant(session: Session, s: st.Grant) -> Result:
    access = session.ctx.users
    catalog = session.ctx.engine.catalog
    verb = "REVOKE" if s.revoke else "GRANT"
    if s.roles:  # GRANT 'r' TO user
        _require_grant(session)
        assert s.user is not None
        user = access.user(s.user.name, s.user.host)
        if user is None:
            raise doris_error(f"user {s.user.text} does not exist")
        known = access.roles()
        for role in s.roles:
            if role not in known:
                raise doris_error(f"Role: {role} does not exist")
        roles = set(user.roles) - set(s.roles) if s.revoke else set(user.roles) | set(s.roles)
        catalog.set_user_roles(user.name, user.host, roles)
        return OkResult()
    privs = parse_privileges(s.privileges)
    ctl, db, tbl = _resource_level(session, s, privs) if s.resource is not None else _table_level(session, s, privs)
    if s.role is not None:
        if s.role not in access.roles():
            raise doris_error(f"Role: {s.role} does not exist")
        if s.role in BUILTIN_ROLES:
            raise doris_error(f"Can not {verb.lower()} privileges of built-in role {s.role}")
        grantee = role_grantee(s.role)
    else:
        assert s.user is not None
        if access.user(s.user.name, s.user.host) is None:
            raise doris_error(f"user {s.user.text} does not exist")
        grantee = user_grantee(s.user.name, s.user.host)
    if s.revoke:
        catalog.change_grant(grantee, ctl, db, tbl, remove=privs)
    else:
        catalog.change_grant(grantee, ctl, db, tbl, add=privs)
    return OkResult()


def _table_level(session: Session, s: st.Grant, privs: frozenset[str]) -> tuple[str, str, str]:
    """GRANT ... ON ctl.db.tbl: Doris's GrantStmt.checkTablePrivileges rules, in its order."""
    access = session.ctx.users
    assert s.level is not None
    ctl, db, tbl = s.level
    if ctl not in ("*", INTERNAL):
        raise doris_error(f"Unknown catalog '{ctl}'")
    if ctl == "*" and (db != "*" or tbl != "*") or db == "*" and tbl != "*":
        raise doris_error("Invalid privilege level: a wildcard must be followed by wildcards")
    if privs & GLOBAL_ONLY and (ctl, db, tbl) != ("*", "*", "*"):
        raise doris_error(f"{' and '.join(sorted(privs & GLOBAL_ONLY))} can only be granted on *.*.*")
    # GRANT_PRIV at the level or above (ADMIN holds it everywhere); NODE_PRIV only from NODE_PRIV
    level_db = None if db == "*" else db
    level_tbl = None if tbl == "*" else tbl
    if not access.has(session.identity, "GRANT_PRIV", level_db, level_tbl):
        raise need_privilege("GRANT")
    if "NODE_PRIV" in privs and not access.has(session.identity, "NODE_PRIV"):
        raise need_privilege("NODE")
    if "USAGE_PRIV" in privs:
        raise doris_error("Can not grant/revoke USAGE_PRIV to/from database or table")
    return ctl, db, tbl


_NOT_ON_RESOURCES = ("NODE_PRIV", "ADMIN_PRIV", "SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV", "DROP_PRIV")


def _resource_level(session: Session, s: st.Grant, privs: frozenset[str]) -> tuple[str, str, str]:
    """GRANT ... ON RESOURCE 'name' | *: only USAGE_PRIV and GRANT_PRIV; RESOURCE * is the global level (Doris keeps
    it with the global privileges); the resource need not exist yet."""
    for priv in _NOT_ON_RESOURCES:
        if priv in privs:
            raise doris_error(f"Can not grant/revoke {priv} on resource to/from any other users or roles")
    assert s.resource is not None
    access = session.ctx.users
    everywhere = s.role is not None or s.resource == "*"
    if not (access.has(session.identity, "GRANT_PRIV") if everywhere else
            access.has_resource(session.identity, ("GRANT_PRIV",), s.resource)):
        raise need_privilege("GRANT")
    return ("*", "*", "*") if s.resource == "*" else (RESOURCES, s.resource, "*")


def _privs_text(privs: frozenset[str]) -> str:
    order = ("NODE_PRIV", "ADMIN_PRIV", "GRANT_PRIV", "SELECT_PRIV", "LOAD_PRIV", "ALTER_PRIV", "CREATE_PRIV",
             "DROP_PRIV", "USAGE_PRIV")
    return ",".join(p.removesuffix("_PRIV").title() + "_priv" for p in order if p in privs)


def grants_row(session: Session, user: UserRecord) -> list[str | None]:
    """One SHOW GRANTS row: the user's own grants and its roles' (built-in roles' global privileges)."""
    access = session.ctx.users
    levels: dict[str, dict[str, set[str]]] = {"global": {}, "catalog": {}, "db": {}, "table": {}, "resource": {}}
    grants = list(access.grants_of(user_grantee(user.name, user.host)))
    for role in user.roles:
        grants += access.grants_of(role_grantee(role))
        if role in BUILTIN_ROLES:
            levels["global"].setdefault("", set()).update(BUILTIN_ROLES[role])
    for g in grants:
        if g.ctl == RESOURCES:
            key, kind = g.db, "resource"
        elif g.ctl == "*":
            key, kind = "", "global"
        elif g.db == "*":
            key, kind = g.ctl, "catalog"
        elif g.tbl == "*":
            key, kind = f"{g.ctl}.{g.db}", "db"
        else:
            key, kind = f"{g.ctl}.{g.db}.{g.tbl}", "table"
        levels[kind].setdefault(key, set()).update(g.privs)

    def text(kind: str) -> str | None:
        """Doris's spelling: `Node_priv,Admin_priv` globally, `internal.db: Select_priv; ...` below."""
        if not levels[kind]:
            return None
        return "; ".join(f"{key}: {_privs_text(frozenset(p))}" if key else _privs_text(frozenset(p))
                         for key, p in sorted(levels[kind].items()))

    return [user.identity, user.comment, "Yes" if user.password else "No", ",".join(user.roles) or None,
            text("global"), text("catalog"), text("db"), text("table"), None, text("resource"), None]


def _show_grants(session: Session, s: st.ShowGrants) -> Result:
    access = session.ctx.users
    if s.every:
        _require_grant(session)
        users = access.users()
    elif s.user is not None and (s.user.name, s.user.host) != (session.identity.name, session.identity.host):
        _require_grant(session)
        found = access.user(s.user.name, s.user.host)
        if found is None:
            raise doris_error(f"user {s.user.text} does not exist")
        users = [found]
    else:
        found = access.user(session.identity.name, session.identity.host)
        users = [found] if found is not None else []
    rows = [grants_row(session, u) for u in users]
    return ResultSet(show.string_table(list(SHOW_GRANTS_COLUMNS), rows))


def _show_roles(session: Session, s: st.ShowRoles) -> Result:
    _require_grant(session)
    access = session.ctx.users
    members: dict[str, list[str]] = {}
    for u in access.users():
        for role in u.roles:
            members.setdefault(role, []).append(u.identity)
    rows = []
    for name, comment in sorted(access.roles().items()):
        rows.append([name, comment or "", ", ".join(members.get(name, [])) or None])
    return ResultSet(show.string_table(["Name", "Comment", "Users"], rows))


def _set_password(session: Session, s: st.SetPassword) -> Result:
    access = session.ctx.users
    name = s.user or session.identity.name
    host = s.host if s.user is not None and s.host is not None else (
        "%" if s.user is not None else session.identity.host)
    if (name, host) != (session.identity.name, session.identity.host):
        _require_grant(session)
    user = access.user(name, host) or (access.match(name, host) if s.host is None else None)
    if user is None:
        raise doris_error(f"user '{name}'@'{host}' does not exist")
    password = _hash(None, s.password) if s.hashed else native_password_hash(s.password)
    session.ctx.engine.catalog.put_user(replace(user, password=password or "",
                                                attrs={**user.attrs, "password_changed": time.time()}), create=False)
    return OkResult()


def may_kill(session: Session, owner: str | None) -> bool:
    """KILL: one's own connections; any with ADMIN_PRIV."""
    return owner == session.identity.name or session.ctx.users.is_admin(session.identity)


SESSION_HANDLERS: dict[type, Callable[[Session, Any], Result]] = {
    st.CreateUser: _create_user,
    st.AlterUser: _alter_user,
    st.DropUser: _drop_user,
    st.CreateRole: _create_role,
    st.DropRole: _drop_role,
    st.Grant: _grant,
    st.ShowGrants: _show_grants,
    st.ShowRoles: _show_roles,
    st.SetPassword: _set_password,
}
