"""Connection phase packets: the v10 greeting, the client's HandshakeResponse41, auth switch, COM_CHANGE_USER."""

from __future__ import annotations

import secrets
import struct
from dataclasses import dataclass, field

from server.protocol.constants import (
    NATIVE_PASSWORD,
    SERVER_CAPABILITIES,
    SERVER_CHARSET,
    SERVER_VERSION,
    Capabilities,
    ServerStatus,
)
from server.protocol.errors import MalformedPacket
from server.protocol.packets import PayloadReader

_SALT_ALPHABET = bytes(range(0x21, 0x7F))  # printable, never NUL: some clients treat the salt as a C string


def new_salt() -> bytes:
    return bytes(secrets.choice(_SALT_ALPHABET) for _ in range(20))


def greeting(connection_id: int, salt: bytes, ssl: bool = False) -> bytes:
    """The initial handshake; `ssl` offers CLIENT_SSL (the client may then upgrade to TLS)."""
    caps = int(SERVER_CAPABILITIES) | (int(Capabilities.CLIENT_SSL) if ssl else 0)
    return b"".join((
        b"\x0a", SERVER_VERSION.encode() + b"\x00",
        struct.pack("<I", connection_id & 0xFFFFFFFF),
        salt[:8], b"\x00",
        struct.pack("<H", caps & 0xFFFF),
        bytes((SERVER_CHARSET,)),
        struct.pack("<H", ServerStatus.SERVER_STATUS_AUTOCOMMIT),
        struct.pack("<H", caps >> 16),
        bytes((len(salt) + 1,)), bytes(10),
        salt[8:], b"\x00",
        NATIVE_PASSWORD.encode() + b"\x00",
    ))


def auth_switch_request(salt: bytes) -> bytes:
    return b"\xfe" + NATIVE_PASSWORD.encode() + b"\x00" + salt + b"\x00"


@dataclass
class LoginRequest:
    capabilities: int
    max_packet: int
    charset: int
    user: str
    auth_response: bytes
    database: str | None
    plugin: str | None
    attrs: dict[str, str] = field(default_factory=dict)
    ssl_request: bool = False


def _text(b: bytes) -> str:
    return b.decode("utf-8", "replace")


def parse_login(payload: bytes) -> LoginRequest:
    r = PayloadReader(payload)
    caps = r.int4()
    if not caps & Capabilities.CLIENT_PROTOCOL_41:
        raise MalformedPacket("pre-4.1 clients are not supported")
    max_packet, charset = r.int4(), r.int1()
    r.fixed(23)
    if caps & Capabilities.CLIENT_SSL and not r.remaining:
        return LoginRequest(caps, max_packet, charset, "", b"", None, None, ssl_request=True)
    user = _text(r.nul_bytes())
    if caps & Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        auth = r.lenenc_bytes()
    elif caps & Capabilities.CLIENT_SECURE_CONNECTION:
        auth = r.fixed(r.int1())
    else:
        auth = r.nul_bytes()
    database = None
    if caps & Capabilities.CLIENT_CONNECT_WITH_DB and r.remaining:
        database = _text(r.nul_bytes()) or None
    plugin = None
    if caps & Capabilities.CLIENT_PLUGIN_AUTH and r.remaining:
        plugin = _text(r.nul_bytes())
    attrs = _attrs(r) if caps & Capabilities.CLIENT_CONNECT_ATTRS and r.remaining else {}
    return LoginRequest(caps, max_packet, charset, user, auth, database, plugin, attrs)


@dataclass
class ChangeUserRequest:
    user: str
    auth_response: bytes
    database: str | None
    plugin: str | None


def parse_change_user(payload: bytes, caps: int) -> ChangeUserRequest:
    r = PayloadReader(payload, 1)
    user = _text(r.nul_bytes())
    auth = r.fixed(r.int1()) if caps & Capabilities.CLIENT_SECURE_CONNECTION else r.nul_bytes()
    database = (_text(r.nul_bytes()) or None) if r.remaining else None
    plugin = None
    if r.remaining >= 2:
        r.int2()  # character set
        if caps & Capabilities.CLIENT_PLUGIN_AUTH and r.remaining:
            plugin = _text(r.nul_bytes())
    return ChangeUserRequest(user, auth, database, plugin)


def _attrs(r: PayloadReader) -> dict[str, str]:
    block = PayloadReader(r.lenenc_bytes())
    out: dict[str, str] = {}
    while block.remaining:
        key = _text(block.lenenc_bytes())
        out[key] = _text(block.lenenc_bytes())
    return out
