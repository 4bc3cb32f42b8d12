"""The listening endpoint: accepts connections under a cap, tracks them for KILL and SHOW PROCESSLIST."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from server.auth import UserStore
from server.protocol.admission import Admission
from server.protocol.connection import Connection
from server.protocol.constants import ErrorCode
from server.protocol.handler import HandlerFactory
from server.protocol.packets import err_packet

log = logging.getLogger("server.protocol")

DEFAULT_PORT = 9030
DEFAULT_MAX_ALLOWED_PACKET = 16 * 1024 * 1024


@dataclass(frozen=True)
class ProcessInfo:
    """A SHOW PROCESSLIST row."""

    id: int
    user: str
    host: str
    db: str | None
    command: str
    time: int
    state: str
    info: str | None
    login_time: str = ""  # 'YYYY-MM-DD HH:MM:SS', Doris's LoginTime column


class MysqlServer:
    def __init__(self, handler_factory: HandlerFactory, user_store: UserStore, host: str = "127.0.0.1",
                 port: int = DEFAULT_PORT, max_connections: int = 1024, handshake_timeout: float = 10.0,
                 max_allowed_packet: int = DEFAULT_MAX_ALLOWED_PACKET, worker_threads: int = 32,
                 net_read_timeout: float = 30.0, net_write_timeout: float = 600.0) -> None:
        self.handler_factory = handler_factory
        self.users = user_store
        self.host = host
        self._requested_port = port
        self.max_connections = max_connections
        self.max_unauthenticated = max(1, min(max_connections, 64))
        self.ssl_context: ssl.SSLContext | None = None  # set: clients may upgrade to TLS (server/tls.py)
        self.require_secure_transport = False
        self.handshake_timeout = handshake_timeout
        self.max_allowed_packet = max_allowed_packet
        self.net_read_timeout = net_read_timeout  # a started packet must be complete within this
        self.net_write_timeout = net_write_timeout  # Doris's net_write_timeout default
        self.close_wait = 5.0  # how long stop/cleanup waits for a statement still running in a thread
        self.executor = ThreadPoolExecutor(max_workers=worker_threads, thread_name_prefix="mysql-worker")
        self.admission = Admission()  # statements running their Python at once
        self.questions = 0
        self.started_at = time.monotonic()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._connections: dict[int, Connection] = {}
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "server not started"
        return self._loop

    @property
    def port(self) -> int:
        """The bound port (differs from the requested one when that was 0)."""
        if self._server is None or not self._server.sockets:
            return self._requested_port
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.started_at = time.monotonic()
        self._server = await asyncio.start_server(self._accept, self.host, self._requested_port,
                                                  reuse_address=True, backlog=min(self.max_connections, 4096))
        log.info("MySQL protocol listening on %s:%d", self.host, self.port)

    async def serve_forever(self) -> None:
        if self._server is None:
            await self.start()
        assert self._server is not None
        with contextlib.suppress(asyncio.CancelledError):
            await self._server.serve_forever()

    async def stop(self) -> None:
        """Close the listener, drop every connection, wait briefly for their statements, stop the pool."""
        if self._server is not None:
            self._server.close()
        with self._lock:
            conns = list(self._connections.values())
        for conn in conns:
            conn.abort()
        tasks = [c.task for c in conns if c.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=self.close_wait + 2)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        self.executor.shutdown(wait=False, cancel_futures=True)

    # -- connections ------------------------------------------------------------------------------
    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Connection(self, reader, writer, next(self._ids))
        with self._lock:
            # connections still logging in have their own small cap: they cannot lock users out
            pending = sum(1 for c in self._connections.values() if not c.user)
            full = len(self._connections) >= self.max_connections or pending >= self.max_unauthenticated
            if not full:
                self._connections[conn.id] = conn
        if full:
            # sent in place of the greeting, as MySQL does
            writer.write(_packet(err_packet(ErrorCode.CON_COUNT_ERROR, "08004", "Too many connections")))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.drain(), 1)
            writer.close()
            return
        await conn.run()

    def unregister(self, conn: Connection) -> None:
        with self._lock:
            self._connections.pop(conn.id, None)

    def user_connections(self, user: str) -> int:
        with self._lock:
            return sum(1 for c in self._connections.values() if c.user == user)

    @property
    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    def kill(self, connection_id: int, query_only: bool = False) -> bool:
        """KILL [QUERY] id, from any thread. Without a handler `cancel()`, KILL QUERY only reports success."""
        with self._lock:
            conn = self._connections.get(connection_id)
        if conn is None:
            return False
        if query_only:
            cancel = getattr(conn.handler, "cancel", None)
            if callable(cancel):
                cancel()
            return True
        self._call_on_loop(conn.abort)
        return True

    def _call_on_loop(self, fn: object) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            fn()  # type: ignore[operator]
        else:
            self.loop.call_soon_threadsafe(fn)  # type: ignore[arg-type]

    def processlist(self) -> list[ProcessInfo]:
        now = time.monotonic()
        with self._lock:
            conns = list(self._connections.values())
        rows = []
        for c in sorted(conns, key=lambda c: c.id):
            db = getattr(c.handler, "database", None) or c.database
            rows.append(ProcessInfo(c.id, c.user, f"{c.host}:{c.port}", db, c.command, int(now - c.since),
                                    "executing" if c.command == "Query" else "", c.info, c.login_time))
        return rows

    connections = processlist

    def statistics(self) -> str:
        """COM_STATISTICS text (mysqladmin status)."""
        uptime = max(int(time.monotonic() - self.started_at), 1)
        return (f"Uptime: {uptime}  Threads: {self.connection_count}  Questions: {self.questions}  "
                f"Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: {self.questions / uptime:.3f}")


def _packet(payload: bytes, seq: int = 0) -> bytes:
    return len(payload).to_bytes(3, "little") + bytes((seq,)) + payload
