"""Doris's account statements, read before sqlglot (which has no grammar for them):

    CREATE USER [IF NOT EXISTS] user [IDENTIFIED BY [PASSWORD] 'pw'] [DEFAULT ROLE 'r'] [policy ...] [COMMENT 'c']
    ALTER USER [IF EXISTS] user [IDENTIFIED BY [PASSWORD] 'pw'] [policy ...] [ACCOUNT_UNLOCK] [COMMENT 'c']
    DROP USER [IF EXISTS] user
    CREATE ROLE [IF NOT EXISTS] r [COMMENT 'c'] / DROP ROLE [IF EXISTS] r
    GRANT privs ON level TO user | ROLE 'r'      GRANT 'r1', 'r2' TO user
    REVOKE privs ON level FROM user | ROLE 'r'   REVOKE 'r1' FROM user
    SHOW GRANTS [FOR user] / SHOW ALL GRANTS / SHOW ROLES

user: 'name'[@'host'] (quoted or not, host '%' when omitted); level: *.*.*, ctl.db.tbl, *.*, db.*, db.tbl
(the internal catalog when only two parts are given), or RESOURCE 'name' | RESOURCE *;
policy: PASSWORD_HISTORY n | DEFAULT, PASSWORD_EXPIRE
DEFAULT | NEVER | INTERVAL n DAY | HOUR | SECOND, FAILED_LOGIN_ATTEMPTS n, PASSWORD_LOCK_TIME n unit | UNBOUNDED.
"""

from __future__ import annotations

import re

from sql import statements as st
from sql.errors import parse_error

_TOKEN = re.compile(r"\s*(?:'((?:[^'\\]|\\.|'')*)'|\"((?:[^\"\\]|\\.)*)\"|`((?:[^`]|``)*)`|([A-Za-z_0-9%.\-:]+)|(.))",
                    re.S)
_STARTS = re.compile(r"^\s*(CREATE\s+(USER|ROLE)|ALTER\s+USER|DROP\s+(USER|ROLE)|GRANT|REVOKE|SHOW\s+(ALL\s+)?GRANTS"
                     r"|SHOW\s+ROLES)\b", re.I)
_UNITS = {"DAY": 86400, "HOUR": 3600, "SECOND": 1}


def is_account_statement(text: str) -> bool:
    return _STARTS.match(text) is not None


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []  # (kind: str / word / sym, value)
        for m in _TOKEN.finditer(text.strip().rstrip(";")):
            single, double, back, word, sym = m.groups()
            if single is not None or double is not None:
                self.items.append(("str", (single if single is not None else double).replace("''", "'")))
            elif back is not None:
                self.items.append(("word", back.replace("``", "`")))
            elif word is not None:
                # `db.tbl`, `*.*`, `1.5` come as one word: split at dots outside numbers
                parts = word.split(".") if not re.fullmatch(r"\d+(\.\d+)?", word) else [word]
                for i, part in enumerate(parts):
                    if i:
                        self.items.append(("sym", "."))
                    if part:
                        self.items.append(("word", part))
            elif sym is not None and sym.strip():
                self.items.append(("sym", sym))
        self.pos = 0

    def error(self) -> Exception:
        near = " ".join(v for _, v in self.items[self.pos:self.pos + 3]) or "end of statement"
        return parse_error(f"errCode = 2, detailMessage = Syntax error in line 1:\n{self.text.strip()}\n"
                           f"Encountered: {near}")

    def peek(self, offset: int = 0) -> tuple[str, str] | None:
        i = self.pos + offset
        return self.items[i] if i < len(self.items) else None

    def at_end(self) -> bool:
        return self.pos >= len(self.items)

    def word(self, *words: str) -> bool:
        """Consume the words if they come next (case-insensitive)."""
        for i, w in enumerate(words):
            item = self.peek(i)
            if item is None or item[0] != "word" or item[1].upper() != w:
                return False
        self.pos += len(words)
        return True

    def expect(self, *words: str) -> None:
        if not self.word(*words):
            raise self.error()

    def sym(self, s: str) -> bool:
        item = self.peek()
        if item is not None and item == ("sym", s):
            self.pos += 1
            return True
        return False

    def name(self) -> str:
        item = self.peek()
        if item is None or item[0] not in ("str", "word"):
            raise self.error()
        self.pos += 1
        return item[1]

    def string(self) -> str:
        item = self.peek()
        if item is None or item[0] != "str":
            raise self.error()
        self.pos += 1
        return item[1]

    def number(self) -> int:
        item = self.peek()
        if item is None or not item[1].isdigit():
            raise self.error()
        self.pos += 1
        return int(item[1])

    def user(self) -> st.UserIdent:
        name = self.name()
        host = "%"
        if self.sym("@"):
            if self.sym("["):  # @['domain']: a domain name, kept as the host text
                host = self.name()
                self.sym("]")
            else:
                host = self.name()
        return st.UserIdent(name, host)

    def done(self) -> None:
        if not self.at_end():
            raise self.error()


def parse_account_statement(text: str) -> st.Statement:
    r = _Reader(text)
    if r.word("CREATE", "USER"):
        if_not = r.word("IF", "NOT", "EXISTS")
        return _user_options(r, st.CreateUser(user=r.user(), if_not_exists=if_not))
    if r.word("ALTER", "USER"):
        if_exists = r.word("IF", "EXISTS")
        return _user_options(r, st.AlterUser(user=r.user(), if_exists=if_exists))
    if r.word("DROP", "USER"):
        if_exists = r.word("IF", "EXISTS")
        out = st.DropUser(r.user(), if_exists)
        r.done()
        return out
    if r.word("CREATE", "ROLE"):
        if_not = r.word("IF", "NOT", "EXISTS")
        name = r.name()
        comment = r.string() if r.word("COMMENT") else ""
        r.done()
        return st.CreateRole(name, if_not, comment)
    if r.word("DROP", "ROLE"):
        if_exists = r.word("IF", "EXISTS")
        name = r.name()
        r.done()
        return st.DropRole(name, if_exists)
    if r.word("SHOW", "ALL", "GRANTS"):
        r.done()
        return st.ShowGrants(None, every=True)
    if r.word("SHOW", "GRANTS"):
        user = r.user() if r.word("FOR") else None
        r.done()
        return st.ShowGrants(user)
    if r.word("SHOW", "ROLES"):
        r.done()
        return st.ShowRoles()
    revoke = r.word("REVOKE")
    if not revoke:
        r.expect("GRANT")
    return _grant(r, revoke)


def _user_options(r: _Reader, s: st.CreateUser | st.AlterUser) -> st.Statement:
    fields: dict = {}
    policy: dict = {}
    while not r.at_end():
        if r.word("IDENTIFIED", "BY"):
            if r.word("PASSWORD"):
                fields["password_hash"] = r.string()
            else:
                fields["password"] = r.string()
        elif isinstance(s, st.CreateUser) and r.word("DEFAULT", "ROLE"):
            fields["default_role"] = r.name()
        elif r.word("PASSWORD_HISTORY"):
            policy["password_history"] = 0 if r.word("DEFAULT") else r.number()
        elif r.word("PASSWORD_EXPIRE"):
            if r.word("DEFAULT") or r.word("NEVER"):
                policy["password_expire"] = 0
            else:
                r.expect("INTERVAL")
                n = r.number()
                unit = r.name().upper()
                if unit not in _UNITS:
                    raise r.error()
                policy["password_expire"] = n * _UNITS[unit] / 86400
        elif r.word("FAILED_LOGIN_ATTEMPTS"):
            policy["failed_login_attempts"] = r.number()
        elif r.word("PASSWORD_LOCK_TIME"):
            if r.word("UNBOUNDED"):
                policy["password_lock_time"] = "UNBOUNDED"
            else:
                n = r.number()
                unit = r.name().upper()
                if unit not in _UNITS:
                    raise r.error()
                policy["password_lock_time"] = n * _UNITS[unit]
        elif isinstance(s, st.AlterUser) and r.word("ACCOUNT_UNLOCK"):
            fields["unlock"] = True
        elif r.word("COMMENT"):
            fields["comment"] = r.string()
        else:
            raise r.error()
    return type(s)(**{**s.__dict__, **fields, "policy": tuple(sorted(policy.items()))})


def _grant(r: _Reader, revoke: bool) -> st.Statement:
    target_word = "FROM" if revoke else "TO"
    if r.peek() is not None and r.peek()[0] == "str":  # GRANT 'r1', 'r2' TO user
        roles = [r.string()]
        while r.sym(","):
            roles.append(r.string())
        r.expect(target_word)
        user = r.user()
        r.done()
        return st.Grant(privileges=(), level=None, user=user, role=None, roles=tuple(roles), revoke=revoke)
    privs = []
    while True:
        words = [r.name()]
        while r.peek() is not None and r.peek()[0] == "word" and r.peek()[1].upper() not in ("ON",) \
                and r.peek(1) is not None and r.peek(1)[1] != ".":
            words.append(r.name())
        privs.append(" ".join(words))
        if not r.sym(","):
            break
    r.expect("ON")
    if r.word("WORKLOAD", "GROUP") or r.word("CLUSTER") or r.word("STAGE"):
        raise parse_error("errCode = 2, detailMessage = Workload group, cluster and stage privileges are not "
                          "supported: this server has none of them")
    resource = None
    if r.word("RESOURCE"):  # ON RESOURCE 'spark0' | ON RESOURCE *
        resource = "*" if r.sym("*") else r.string() if r.peek() is not None and r.peek()[0] == "str" else r.name()
    parts = [_level_part(r)] if resource is None else ["*", "*", "*"]
    while r.sym("."):
        parts.append(_level_part(r))
    if len(parts) > 3:
        raise r.error()
    level = tuple(parts) if len(parts) == 3 else ("internal", *parts) if len(parts) == 2 else None
    if level is None:
        raise r.error()
    if parts[0] == "*" and len(parts) == 2:  # *.* is global
        level = ("*", "*", "*")
    r.expect(target_word)
    if r.word("ROLE"):
        role = r.name()
        r.done()
        return st.Grant(privileges=tuple(privs), level=None if resource else level, user=None, role=role,
                        revoke=revoke, resource=resource)
    user = r.user()
    r.done()
    return st.Grant(privileges=tuple(privs), level=None if resource else level, user=user, role=None, revoke=revoke,
                    resource=resource)


def _level_part(r: _Reader) -> str:
    if r.sym("*"):
        return "*"
    return r.name()
