"""mysql_native_password hashing and checking, and a small in-memory account list for the protocol layer
alone (its tests; the server itself logs users in through server.access.AccessControl, over the catalog).

Only the stage-2 hash SHA1(SHA1(password)) is kept (MySQL's `*HEX` spelling), which is all the
native-password challenge needs: the client proves it knows SHA1(password) without sending it.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import threading
from collections.abc import Mapping

PASSWORD_HASH = re.compile(r"\*[0-9A-Fa-f]{40}")


def native_password_hash(password: str) -> str:
    """MySQL's PASSWORD(): '*' + upper-case hex of SHA1(SHA1(password)); '' for an empty password."""
    if not password:
        return ""
    stage2 = hashlib.sha1(hashlib.sha1(password.encode()).digest()).digest()
    return "*" + stage2.hex().upper()


def scramble_native_password(password: str, salt: bytes) -> bytes:
    """What a client sends: SHA1(pw) XOR SHA1(salt + SHA1(SHA1(pw))). Used by tests and tools."""
    if not password:
        return b""
    stage1 = hashlib.sha1(password.encode()).digest()
    mask = hashlib.sha1(salt + hashlib.sha1(stage1).digest()).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


def check_native(stored: str | None, salt: bytes, auth_response: bytes) -> bool:
    """Verify a mysql_native_password scramble against a stored hash (None: no such user, checked with the
    same work so timing does not reveal which names exist)."""
    if stored is None:
        _verify(bytes(20), salt, auth_response or bytes(20))
        return False
    if stored == "":
        return auth_response == b""
    if len(auth_response) != 20:
        return False
    return _verify(bytes.fromhex(stored[1:]), salt, auth_response)


def check_plain(stored: str | None, password: str) -> bool:
    return stored is not None and hmac.compare_digest(stored, native_password_hash(password))


def _verify(stage2: bytes, salt: bytes, auth_response: bytes) -> bool:
    mask = hashlib.sha1(salt + stage2).digest()
    stage1 = bytes(a ^ b for a, b in zip(auth_response, mask, strict=False))
    return hmac.compare_digest(hashlib.sha1(stage1).digest(), stage2)


class UserStore:
    """Accounts in memory, by name (root with an empty password unless given): what MysqlServer needs from an
    account list (`login_native`), for the protocol layer on its own."""

    def __init__(self, initial_passwords: Mapping[str, str] | None = None) -> None:
        self._lock = threading.Lock()
        self._hashes: dict[str, str] = {"root": ""}
        for user, password in (initial_passwords or {}).items():
            self._hashes[user] = native_password_hash(password)

    def set_password(self, user: str, password: str) -> None:
        with self._lock:
            self._hashes[user] = native_password_hash(password)

    def login_native(self, user: str, host: str, salt: bytes, auth_response: bytes) -> str | None:
        """The logged-in identity (here the name), or None."""
        with self._lock:
            stored = self._hashes.get(user)
        return user if check_native(stored, salt, auth_response) else None
