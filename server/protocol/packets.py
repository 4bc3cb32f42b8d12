"""Payload primitives: a bounds-checked reader and the OK / ERR / EOF packets.

The reader raises MalformedPacket on any overrun, so a truncated or unterminated field can never
make a parser loop or read past the payload (mysql-mimic's compiled reader loops forever there).
"""

from __future__ import annotations

import struct

from server.protocol.constants import ServerStatus
from server.protocol.errors import MalformedPacket


class PayloadReader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data = data
        self.pos = pos

    @property
    def remaining(self) -> int:
        return len(self.data) - self.pos

    def fixed(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise MalformedPacket(f"need {n} bytes at {self.pos}, have {self.remaining}")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def int1(self) -> int:
        return self.fixed(1)[0]

    def int2(self) -> int:
        return int.from_bytes(self.fixed(2), "little")

    def int3(self) -> int:
        return int.from_bytes(self.fixed(3), "little")

    def int4(self) -> int:
        return int.from_bytes(self.fixed(4), "little")

    def int8(self) -> int:
        return int.from_bytes(self.fixed(8), "little")

    def lenenc_int(self) -> int:
        first = self.int1()
        if first < 0xFB:
            return first
        if first == 0xFC:
            return self.int2()
        if first == 0xFD:
            return self.int3()
        if first == 0xFE:
            return self.int8()
        raise MalformedPacket(f"bad length-encoded integer prefix 0x{first:02x}")

    def lenenc_bytes(self) -> bytes:
        return self.fixed(self.lenenc_int())

    def nul_bytes(self) -> bytes:
        end = self.data.find(b"\x00", self.pos)
        if end < 0:
            raise MalformedPacket("text field without terminating NUL")
        out = self.data[self.pos:end]
        self.pos = end + 1
        return out

    def rest(self) -> bytes:
        out = self.data[self.pos:]
        self.pos = len(self.data)
        return out


def lenenc_int(n: int) -> bytes:
    if n < 0xFB:
        return bytes((n,))
    if n < 1 << 16:
        return b"\xfc" + n.to_bytes(2, "little")
    if n < 1 << 24:
        return b"\xfd" + n.to_bytes(3, "little")
    return b"\xfe" + n.to_bytes(8, "little")


def lenenc_str(b: bytes) -> bytes:
    return lenenc_int(len(b)) + b


def ok_packet(affected_rows: int = 0, last_insert_id: int = 0, status: int = ServerStatus.SERVER_STATUS_AUTOCOMMIT,
              warnings: int = 0, info: str = "") -> bytes:
    # The spec says string<EOF>, but MySQL, MariaDB and Doris servers send it length-encoded and the
    # mysql CLI (libmariadb) rejects anything else as a malformed packet.
    head = b"\x00" + lenenc_int(affected_rows) + lenenc_int(last_insert_id) + struct.pack(
        "<HH", status, min(warnings, 0xFFFF))
    return head + lenenc_str(info.encode("utf-8", "replace")) if info else head


def eof_packet(status: int = ServerStatus.SERVER_STATUS_AUTOCOMMIT, warnings: int = 0) -> bytes:
    return b"\xfe" + struct.pack("<HH", min(warnings, 0xFFFF), status)


MAX_ERROR_MESSAGE = 8192


def err_packet(code: int, sqlstate: str, message: str) -> bytes:
    state = (sqlstate.encode("ascii", "replace") + b"HY000")[:5]
    text = message.encode("utf-8", "replace")[:MAX_ERROR_MESSAGE]
    return b"\xff" + struct.pack("<H", code & 0xFFFF) + b"#" + state + text
