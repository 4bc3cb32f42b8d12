"""Server-side prepared statements: parameters are bound as data, by pasting escaped SQL literals.

Each `?` outside quotes, backticks and comments is replaced by a literal rendered from the binary
parameter; strings are quoted with every quote and backslash escaped, so a parameter can never end
its literal. The bound text is executed as one statement (multi=False), which closes the
second-statement injection that mysql-mimic's unescaped pasting allowed.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from server.protocol.constants import ColumnType
from server.protocol.errors import MalformedPacket
from server.protocol.packets import PayloadReader

# strings (with backslash escapes and doubled quotes), quoted identifiers, comments, or a placeholder
_TOKENS = re.compile(
    r"""'(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.|"")*"?|`(?:[^`]|``)*`?"""
    r"""|--(?=\s|$)[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z)|\?""",
    re.DOTALL,
)


def placeholder_positions(sql: str) -> list[int]:
    return [m.start() for m in _TOKENS.finditer(sql) if m.group() == "?"]


_ESCAPES = str.maketrans({"\\": "\\\\", "'": "\\'", '"': '\\"', "\x00": "\\0", "\n": "\\n", "\r": "\\r",
                          "\x1a": "\\Z"})


def quote_string(s: str) -> str:
    return "'" + s.translate(_ESCAPES) + "'"


def render_literal(value: object) -> str:
    """A Python value as a SQL literal that reads back as exactly that value."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else quote_string(repr(value))
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else quote_string(str(value))
    if isinstance(value, bytes | bytearray | memoryview):
        return "X'" + bytes(value).hex() + "'"
    if isinstance(value, dt.datetime):
        return quote_string(value.strftime("%Y-%m-%d %H:%M:%S") + (f".{value.microsecond:06d}"
                                                                     if value.microsecond else ""))
    if isinstance(value, dt.date):
        return quote_string(value.strftime("%Y-%m-%d"))
    if isinstance(value, dt.timedelta):
        return quote_string(_format_duration(value))
    if isinstance(value, dt.time):
        return quote_string(value.isoformat())
    return quote_string(str(value))


def _format_duration(d: dt.timedelta) -> str:
    micros = d.days * 86_400_000_000 + d.seconds * 1_000_000 + d.microseconds
    sign = "-" if micros < 0 else ""
    secs, us = divmod(abs(micros), 1_000_000)
    text = f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
    return text + (f".{us:06d}" if us else "")


@dataclass
class PreparedStatement:
    id: int
    sql: str
    placeholders: list[int]
    param_types: list[tuple[int, bool]] | None = None  # (type, unsigned) from the last execute that sent them
    long_data: dict[int, bytearray] = field(default_factory=dict)

    @property
    def param_count(self) -> int:
        return len(self.placeholders)

    def bind(self, literals: list[str]) -> str:
        parts, last = [], 0
        for pos, lit in zip(self.placeholders, literals, strict=True):
            parts += [self.sql[last:pos], lit]
            last = pos + 1
        parts.append(self.sql[last:])
        return "".join(parts)


_BLOBS = {ColumnType.TINY_BLOB, ColumnType.MEDIUM_BLOB, ColumnType.LONG_BLOB, ColumnType.BLOB, ColumnType.BIT,
          ColumnType.GEOMETRY}
_TEXTS = {ColumnType.VARCHAR, ColumnType.VAR_STRING, ColumnType.STRING, ColumnType.ENUM, ColumnType.SET,
          ColumnType.JSON}
_INTS = {ColumnType.TINY: 1, ColumnType.SHORT: 2, ColumnType.YEAR: 2, ColumnType.LONG: 4, ColumnType.INT24: 4,
         ColumnType.LONGLONG: 8}


class BadParameter(MalformedPacket):
    """A parameter the statement cannot use; answered as 1210, the connection stays open."""

    code = 1210
    sqlstate = "HY000"


def parse_execute(payload: bytes, stmt: PreparedStatement) -> list[str]:
    """COM_STMT_EXECUTE body (after stmt id) -> one SQL literal per placeholder."""
    r = PayloadReader(payload, 5)
    r.int1()  # cursor flags: results are always sent in full, as for statements without cursors
    r.int4()  # iteration count, always 1
    n = stmt.param_count
    if not n:
        return []
    null_bitmap = r.fixed((n + 7) // 8)
    if r.int1():
        raw = r.fixed(2 * n)
        stmt.param_types = [(raw[2 * i], bool(raw[2 * i + 1] & 0x80)) for i in range(n)]
    if stmt.param_types is None:
        raise BadParameter("Incorrect arguments to mysqld_stmt_execute")
    literals = []
    for i, (ptype, unsigned) in enumerate(stmt.param_types):
        if null_bitmap[i // 8] >> (i % 8) & 1:
            literals.append("NULL")
        elif i in stmt.long_data:
            data = bytes(stmt.long_data[i])
            literals.append(render_literal(data if ptype in _BLOBS else _text_or_bytes(data)))
        else:
            literals.append(render_literal(_read_value(r, ptype, unsigned)))
    stmt.long_data.clear()
    return literals


def _text_or_bytes(b: bytes) -> str | bytes:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b


def _read_value(r: PayloadReader, ptype: int, unsigned: bool) -> object:
    if ptype == ColumnType.NULL:
        return None
    if ptype in _INTS:
        return int.from_bytes(r.fixed(_INTS[ptype]), "little", signed=not unsigned)
    if ptype == ColumnType.FLOAT:
        # shortest text that reads back as the same float32
        v = struct.unpack("<f", r.fixed(4))[0]
        if math.isfinite(v):
            for digits in range(6, 10):
                if struct.unpack("<f", struct.pack("<f", float(f"{v:.{digits}g}")))[0] == v:
                    return float(f"{v:.{digits}g}")
        return v
    if ptype == ColumnType.DOUBLE:
        return struct.unpack("<d", r.fixed(8))[0]
    if ptype in (ColumnType.DECIMAL, ColumnType.NEWDECIMAL):
        text = r.lenenc_bytes().decode("ascii", "replace")
        try:
            return Decimal(text)
        except InvalidOperation:
            raise BadParameter(f"Incorrect DECIMAL value: '{text[:64]}'") from None
    if ptype in (ColumnType.DATE, ColumnType.DATETIME, ColumnType.TIMESTAMP):
        return _read_datetime(r, ptype)
    if ptype == ColumnType.TIME:
        return _read_time(r)
    if ptype in _TEXTS:
        return _text_or_bytes(r.lenenc_bytes())
    if ptype in _BLOBS:
        return r.lenenc_bytes()
    raise BadParameter(f"Unsupported parameter type {ptype}")


def _read_datetime(r: PayloadReader, ptype: int) -> object:
    n = r.int1()
    if n not in (0, 4, 7, 11):
        raise MalformedPacket()
    body = PayloadReader(r.fixed(n))
    if n == 0:
        return "0000-00-00" if ptype == ColumnType.DATE else "0000-00-00 00:00:00"
    y, mo, d = body.int2(), body.int1(), body.int1()
    h = mi = s = us = 0
    if n >= 7:
        h, mi, s = body.int1(), body.int1(), body.int1()
    if n == 11:
        us = body.int4()
    try:
        if ptype == ColumnType.DATE:
            return dt.date(y, mo, d)
        return dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        # zero or out-of-range parts: pass the text through, the statement decides what it means
        text = f"{y:04d}-{mo:02d}-{d:02d}"
        return text if ptype == ColumnType.DATE else f"{text} {h:02d}:{mi:02d}:{s:02d}"


def _read_time(r: PayloadReader) -> dt.timedelta:
    n = r.int1()
    if n not in (0, 8, 12):
        raise MalformedPacket()
    if n == 0:
        return dt.timedelta(0)
    body = PayloadReader(r.fixed(n))
    negative, days, h, mi, s = body.int1(), body.int4(), body.int1(), body.int1(), body.int1()
    us = body.int4() if n == 12 else 0
    delta = dt.timedelta(days=days, hours=h, minutes=mi, seconds=s, microseconds=us)
    return -delta if negative else delta
