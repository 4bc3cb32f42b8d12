"""Shared by the protocol tests: a fake statement handler and a MysqlServer on its own event-loop thread.

No tests here; test_protocol*.py import from this module.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

import pyarrow as pa

from server.auth import UserStore
from server.protocol import ConnectionInfo, MysqlServer
from server.results import OkResult, ResultSet
from sql.errors import SqlError

INSERT_INFO = "{'label':'label_ab12', 'status':'VISIBLE', 'txnId':'5'}"

TYPED = pa.table({
    "i8": pa.array([1, None], pa.int8()),
    "i32": pa.array([-7, 2**31 - 1], pa.int32()),
    "i64": pa.array([2**40, None], pa.int64()),
    "f64": pa.array([1.5, -0.25], pa.float64()),
    "dec": pa.array([Decimal("12.30"), Decimal("-0.05")], pa.decimal128(10, 2)),
    "d": pa.array([dt.date(2024, 2, 29), None], pa.date32()),
    "ts": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(1999, 12, 31, 23, 59, 59)], pa.timestamp("s")),
    "ts6": pa.array([dt.datetime(2024, 1, 2, 3, 4, 5, 123456), None], pa.timestamp("us")),
    "s": pa.array(["héllo", None], pa.string()),
    "b": pa.array([True, False], pa.bool_()),
})
TYPED_ROWS = [
    (1, -7, 2**40, 1.5, Decimal("12.30"), dt.date(2024, 2, 29), dt.datetime(2024, 1, 2, 3, 4, 5),
     dt.datetime(2024, 1, 2, 3, 4, 5, 123456), "héllo", 1),
    (None, 2**31 - 1, None, -0.25, Decimal("-0.05"), None, dt.datetime(1999, 12, 31, 23, 59, 59), None, None, 0),
]


def one(value: object, name: str = "v", type: pa.DataType | None = None) -> ResultSet:
    return ResultSet(pa.table({name: pa.array([value], type)}))


_STATEMENT_END = re.compile(r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`]|``)*`|--[^\n]*|;""", re.S)


def split_statements(sql: str) -> list[str]:
    parts, last = [], 0
    for m in _STATEMENT_END.finditer(sql):
        if m.group() == ";":
            parts.append(sql[last:m.start()])
            last = m.end()
    return [*parts, sql[last:]]


class FakeHandler:
    """Answers a handful of statements; splits multi-statement text on ';' outside quotes and comments."""

    closed: list[int] = []

    def __init__(self, info: ConnectionInfo) -> None:
        self.info = info
        self.database = info.database

    def execute(self, sql: str, multi: bool) -> list:
        parts = [p.strip() for p in split_statements(sql) if p.strip()]
        if len(parts) > 1 and not multi:
            raise SqlError("You have an error in your SQL syntax: multiple statements", 1064, "42000")
        results = []
        for part in parts:
            try:
                results.append(self._one(part))
            except SqlError as e:
                e.results = results  # type: ignore[attr-defined]
                raise
        return results

    def _one(self, sql: str):  # noqa: C901 - a lookup table would hide what each case does
        upper = sql.upper()
        if upper in ("SELECT 1", "SELECT @@VERSION_COMMENT LIMIT 1"):
            return one(1, "1", pa.int64()) if upper == "SELECT 1" else one("Doris version doris-fake", "@@version_comment")
        if upper.startswith("SELECT SLEEP("):
            time.sleep(float(sql[13:-1]))
            return one(0, "sleep", pa.int8())
        if upper in ("SELECT THREAD", "SELECT QUICK THREAD"):
            return one(threading.current_thread().name, "thread")
        if upper == "SELECT TYPED":
            return ResultSet(TYPED)
        if upper == "SELECT EMPTY":
            return ResultSet(TYPED.slice(0, 0))
        if upper.startswith("SELECT LEN "):
            return one(len(sql) - len("SELECT LEN "), "len", pa.int64())
        if upper.startswith("SELECT REPEAT "):
            return one("x" * int(sql.split()[2]), "r")
        if upper.startswith("SELECT CONNECTION_ID()"):
            return one(self.info.connection_id, "id", pa.int64())
        if upper.startswith("ECHO "):
            return one(sql[5:], "sql")
        if upper.startswith(("SET ", "COMMIT", "ROLLBACK")):
            return OkResult()
        if upper.startswith("INSERT"):
            return OkResult(affected_rows=3, info=INSERT_INFO)
        if upper.startswith("KILL "):
            if not self.info.server.kill(int(sql.split()[-1])):
                raise SqlError(f"Unknown thread id: {sql.split()[-1]}", 1094, "HY000")
            return OkResult()
        if upper == "SHOW PROCESSLIST":
            rows = self.info.server.processlist()
            return ResultSet(pa.table({"Id": [r.id for r in rows], "User": [r.user for r in rows],
                                       "Command": [r.command for r in rows],
                                       "Info": pa.array([r.info for r in rows], pa.string())}))
        if upper == "SELECT USER()":
            return one(f"{self.info.user}@{self.info.host}", "user")
        if upper == "SELECT DATABASE()":
            return one(self.database, "database", pa.string())
        if upper == "BAD":
            raise SqlError("bad statement", 1064, "42000")
        if upper == "CRASH":
            raise RuntimeError("\x1b[31mboom\x1b[0m\n  Traceback lines that must not reach the client")
        raise SqlError(f"fake handler does not know: {sql[:50]}", 1105, "HY000")

    def quick(self, sql: str) -> bool:
        """A statement known to take about a millisecond runs on the event loop's thread."""
        return sql.upper().startswith("SELECT QUICK")

    def init_db(self, db: str) -> None:
        if db not in ("db1", "information_schema"):
            raise SqlError(f"Unknown database '{db}'", 1049, "42000")
        self.database = db

    def field_list(self, table: str) -> pa.Schema:
        if table != "t":
            raise SqlError(f"Table '{table}' doesn't exist", 1146, "42S02")
        return pa.schema([("k", pa.int32()), ("name", pa.string())])

    def close(self) -> None:
        FakeHandler.closed.append(self.info.connection_id)


class ServerThread:
    """A MysqlServer running on an event loop in a background thread."""

    def __init__(self, users: UserStore | None = None, **kwargs: object) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = MysqlServer(FakeHandler, users or UserStore(), host="127.0.0.1", port=0, **kwargs)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> ServerThread:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(20)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    @property
    def port(self) -> int:
        return self.server.port


@contextmanager
def serve(users: UserStore | None = None, **kwargs: object) -> Iterator[ServerThread]:
    srv = ServerThread(users, **kwargs).start()
    try:
        yield srv
    finally:
        srv.stop()


# -- raw socket helpers -----------------------------------------------------------------------------

def raw_connect(port: int, timeout: float = 2.0) -> tuple[socket.socket, bytes]:
    """Connect and read the greeting; returns the socket and the 20-byte salt."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    greeting = read_packet(s)[1]
    assert greeting[0] == 10
    pos = greeting.index(b"\x00", 1) + 1 + 4
    salt1 = greeting[pos:pos + 8]
    pos += 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10
    salt2 = greeting[pos:pos + 12]
    return s, salt1 + salt2


def read_packet(s: socket.socket) -> tuple[int, bytes]:
    header = recv_exact(s, 4)
    length = int.from_bytes(header[:3], "little")
    return header[3], recv_exact(s, length)


def recv_exact(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def send_packet(s: socket.socket, payload: bytes, seq: int) -> None:
    s.sendall(len(payload).to_bytes(3, "little") + bytes((seq,)) + payload)


# long password, long flag, protocol 41, transactions, secure connection, multi results, plugin auth
CLIENT_CAPS = 0x1 | 0x4 | 0x200 | 0x2000 | 0x8000 | 0x20000 | 0x80000


def login_payload(user: bytes, auth: bytes = b"", caps: int = CLIENT_CAPS, nul: bool = True) -> bytes:
    body = struct.pack("<IIB", caps, 1 << 24, 33) + bytes(23) + user + (b"\x00" if nul else b"")
    if nul:
        body += bytes((len(auth),)) + auth + b"mysql_native_password\x00"
    return body


def raw_login(port: int, user: bytes = b"root", auth: bytes = b"") -> socket.socket:
    s, _ = raw_connect(port)
    send_packet(s, login_payload(user, auth), 1)
    seq, reply = read_packet(s)
    assert reply[0] == 0, reply
    return s


def closed_within(s: socket.socket, seconds: float) -> bool:
    """True if the peer closes the socket (after any pending packets) within `seconds`."""
    s.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if not s.recv(65536):
                return True
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return False
