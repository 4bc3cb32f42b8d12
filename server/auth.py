"""Users and their mysql_native_password hashes.

Only the stage-2 hash SHA1(SHA1(password)) is kept (MySQL's `*HEX` spelling), which is all the
native-password challenge needs: the client proves it knows SHA1(password) without sending it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

DEFAULT_USERS = ("root", "admin")
_HASH = re.compile(r"\*[0-9A-Fa-f]{40}")  # Doris's built-in accounts, both with an empty password


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


class UserStore:
    """Thread-safe user table; persisted to `path` (JSON, replaced atomically) when one is given.

    `initial_passwords` seeds accounts the first time only: once the file exists, it wins.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None,
                 initial_passwords: Mapping[str, str] | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._hashes: dict[str, str] = {}
        self._loaded_from_file = self._path is not None and self._path.exists()
        if self._loaded_from_file:
            data = json.loads(self._path.read_text(encoding="utf-8"))
            self._hashes = {str(u): str(h) for u, h in data.get("users", {}).items()}
            return
        self._hashes = {u: "" for u in DEFAULT_USERS}
        for user, password in (initial_passwords or {}).items():
            self._hashes[user] = native_password_hash(password)
        if self._path is not None:
            self._save()

    # -- queries ----------------------------------------------------------------------------------
    def has_password_file(self) -> bool:
        """Whether the users came from an existing file (so config-given passwords no longer apply)."""
        return self._loaded_from_file

    def has_user(self, user: str) -> bool:
        with self._lock:
            return user in self._hashes

    def users(self) -> list[str]:
        with self._lock:
            return sorted(self._hashes)

    def password_hash(self, user: str) -> str | None:
        with self._lock:
            return self._hashes.get(user)

    def check_plain(self, user: str, password: str) -> bool:
        """Verify a clear-text password (HTTP basic auth). Unknown users fail like a wrong password does."""
        stored = self.password_hash(user)
        return stored is not None and hmac.compare_digest(stored, native_password_hash(password))

    def check(self, user: str, salt: bytes, auth_response: bytes) -> bool:
        """Verify a mysql_native_password scramble. Unknown users fail like a wrong password does."""
        with self._lock:
            stored = self._hashes.get(user)
        if stored is None:
            # same work as a real check, so timing does not reveal which user names exist
            _verify(bytes(20), salt, auth_response or bytes(20))
            return False
        if stored == "":
            return auth_response == b""
        if len(auth_response) != 20:
            return False
        return _verify(bytes.fromhex(stored[1:]), salt, auth_response)

    # -- changes ----------------------------------------------------------------------------------
    def add_user(self, user: str, password: str = "") -> None:
        with self._lock:
            if user in self._hashes:
                raise ValueError(f"user '{user}' already exists")
            self._hashes[user] = native_password_hash(password)
            self._save()

    def set_password(self, user: str, password: str) -> None:
        with self._lock:
            if user not in self._hashes:
                raise KeyError(user)
            self._hashes[user] = native_password_hash(password)
            self._save()

    def set_password_hash(self, user: str, password_hash: str) -> None:
        """SET PASSWORD ... = '*HEX': store an already hashed password ('' clears it)."""
        if password_hash and not _HASH.fullmatch(password_hash):
            raise ValueError("password hash should be a 41-digit hexadecimal number")
        with self._lock:
            if user not in self._hashes:
                raise KeyError(user)
            self._hashes[user] = password_hash.upper()
            self._save()

    def drop_user(self, user: str) -> None:
        with self._lock:
            if user not in self._hashes:
                raise KeyError(user)
            del self._hashes[user]
            self._save()

    def _save(self) -> None:
        """Write to a temp file in the same folder, fsync, then rename: a crash leaves old or new, never half."""
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"users": self._hashes}, indent=1, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=".users-", dir=self._path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _verify(stage2: bytes, salt: bytes, auth_response: bytes) -> bool:
    mask = hashlib.sha1(salt + stage2).digest()
    stage1 = bytes(a ^ b for a, b in zip(auth_response, mask, strict=False))
    return hmac.compare_digest(hashlib.sha1(stage1).digest(), stage2)
