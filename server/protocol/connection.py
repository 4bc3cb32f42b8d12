"""One client connection: login, then the command loop. Statements run in the server's thread pool."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from server.protocol.constants import (
    NATIVE_PASSWORD,
    SERVER_CAPABILITIES,
    Capabilities,
    Commands,
    ErrorCode,
    ServerStatus,
)
from server.protocol.errors import MalformedPacket, PacketTooLarge, ProtocolError, error_fields
from server.protocol.handler import ConnectionHandler, ConnectionInfo
from server.protocol.handshake import (
    auth_switch_request,
    greeting,
    new_salt,
    parse_change_user,
    parse_login,
)
from server.protocol.packets import PayloadReader, eof_packet, err_packet, lenenc_int, ok_packet
from server.protocol.prepared import PreparedStatement, parse_execute, placeholder_positions
from server.protocol.resultset import (
    WireColumn,
    batches,
    binary_rows,
    column_definition,
    frame_rows,
    framed_header,
    result_columns,
    small_text_rows,
    text_rows,
    wire_columns,
)
from server.protocol.stream import PacketStream
from server.results import OkResult, Result, ResultSet
from sql.types import CHARSET_BINARY, MysqlType

if TYPE_CHECKING:
    from server.protocol.server import MysqlServer

log = logging.getLogger("server.protocol")
T = TypeVar("T")

LOGIN_MAX_PACKET = 64 * 1024  # a login packet is small; don't let strangers make us buffer 16 MiB
MAX_PREPARED_STATEMENTS = 16382  # MySQL's max_prepared_stmt_count default
AUTOCOMMIT = int(ServerStatus.SERVER_STATUS_AUTOCOMMIT)
MORE_RESULTS = int(ServerStatus.SERVER_MORE_RESULTS_EXISTS)
_PARAM_COLUMN = WireColumn("?", MysqlType.VAR_STRING, 0, 0, 0, CHARSET_BINARY)


RELEASE_AFTER_BYTES = 64 * 1024 * 1024
INLINE_ROWS = 256  # a small batch is encoded on the event loop: two worker-thread trips cost more


class AccessDenied(Exception):
    pass


class Connection:
    def __init__(self, server: MysqlServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 connection_id: int) -> None:
        self.server = server
        self.id = connection_id
        self.writer = writer
        self.stream = PacketStream(reader, writer, LOGIN_MAX_PACKET, server.net_read_timeout,
                                   server.net_write_timeout)
        peer = writer.get_extra_info("peername") or ("", 0)
        self.host, self.port = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else (str(peer), 0)
        self.user = ""
        self.identity: Any = None  # what the account list's login returned
        self.secure = False  # upgraded to TLS
        self.database: str | None = None
        self.caps = 0
        self.multi_statements = False
        self.attrs: dict[str, str] = {}
        self.handler: ConnectionHandler | None = None
        self.statements: dict[int, PreparedStatement] = {}
        self._next_stmt_id = 1
        self.salt = b""
        # SHOW PROCESSLIST state; written on the event loop, read under the server's lock
        self.command = "Connect"
        self.info: str | None = None
        self.since = time.monotonic()
        self.login_time = time.strftime("%Y-%m-%d %H:%M:%S")
        self.task: asyncio.Task[None] | None = None
        self._inflight: concurrent.futures.Future[Any] | None = None

    # -- lifecycle --------------------------------------------------------------------------------
    async def run(self) -> None:
        self.task = asyncio.current_task()
        try:
            if await self._login():
                self.stream.max_packet = self.server.max_allowed_packet
                await self._command_loop()
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, asyncio.CancelledError):
            pass  # client went away, stalled mid-packet, was killed, or the server is stopping
        except ProtocolError as e:
            await self._fatal(e.code, e.sqlstate, e.message, drain=isinstance(e, PacketTooLarge))
        except AccessDenied:
            pass
        except Exception:
            log.exception("connection %d failed", self.id)
        finally:
            await self._cleanup()

    async def _fatal(self, code: int, state: str, message: str, drain: bool) -> None:
        """Send a last ERR, let the client read it, and give up on the connection."""
        with contextlib.suppress(Exception):
            self.stream.write(err_packet(code, state, message))
            await asyncio.wait_for(self.stream.flush(), 2)
            await self.stream.discard_input(budget=3.0 if drain else 1.0, idle=0.3 if drain else 0.1)

    async def _cleanup(self) -> None:
        # the transport closes first, so a stop() or KILL never waits on a slow statement to drop the client
        self.writer.close()
        try:
            with contextlib.suppress(Exception):
                if self._inflight is not None and not self._inflight.done():
                    # a statement is still running in its thread: nobody will read its answer, so stop it
                    # (KILL of the connection, a client gone, the server stopping), then let it finish
                    cancel = getattr(self.handler, "cancel", None)
                    if callable(cancel):
                        cancel()
                    await asyncio.wait_for(asyncio.wrap_future(self._inflight), self.server.close_wait)
            if self.handler is not None:
                handler, self.handler = self.handler, None
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.wrap_future(self.server.executor.submit(handler.close)),
                                           self.server.close_wait)
        finally:
            self.server.unregister(self)

    def abort(self) -> None:
        """Drop the connection now (KILL, server stop). Event-loop thread only."""
        self.writer.transport.abort()
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        # keep the thread's own future: if this task is cancelled, cleanup still waits for the thread
        fut = self.server.executor.submit(fn, *args)
        self._inflight = fut
        return await asyncio.wrap_future(fut)

    def _admitted(self, short: bool, fn: Callable[..., T], *args: Any) -> T:
        with self.server.admission.admit(short):
            return fn(*args)

    def _state(self, command: str, info: str | None = None) -> None:
        self.command, self.info, self.since = command, info, time.monotonic()

    # -- connection phase -------------------------------------------------------------------------
    async def _login(self) -> bool:
        try:
            req = await asyncio.wait_for(self._authenticate(), self.server.handshake_timeout)
        except TimeoutError:
            log.info("connection %d: handshake timed out", self.id)
            return False
        except MalformedPacket:
            await self._fatal(ErrorCode.HANDSHAKE_ERROR, "08S01", "Bad handshake", drain=False)
            return False
        self._state("Sleep")
        try:
            await self._open_handler(req.database)
        except Exception as e:
            await self._send_error(e)
            return False
        self.stream.write(ok_packet())
        await self.stream.flush()
        return True

    async def _authenticate(self) -> Any:
        self.salt = new_salt()
        tls = self.server.ssl_context
        self.stream.write(greeting(self.id, self.salt, ssl=tls is not None))
        await self.stream.flush()
        req = parse_login(await self.stream.read())
        if req.ssl_request:
            if tls is None:
                raise MalformedPacket("SSL is not enabled on this server")
            await _start_tls(self.stream.reader, self.stream.writer, tls)  # the same reader and writer carry TLS
            self.secure = True
            req = parse_login(await self.stream.read())
        elif self.server.require_secure_transport:
            self.stream.write(err_packet(3159, "HY000", "Connections using insecure transport are prohibited "
                                                        "while --require_secure_transport=ON."))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.stream.flush(), 2)
            raise AccessDenied()
        self.caps = req.capabilities & (int(SERVER_CAPABILITIES) | int(Capabilities.CLIENT_SSL))
        auth = req.auth_response
        if self.caps & Capabilities.CLIENT_PLUGIN_AUTH and req.plugin and req.plugin != NATIVE_PASSWORD:
            # e.g. caching_sha2_password from MySQL 8 clients: ask for mysql_native_password instead
            self.stream.write(auth_switch_request(self.salt))
            await self.stream.flush()
            auth = await self.stream.read()
        self.identity = await self._check_password(req.user, auth)
        limit_of = getattr(self.server.users, "max_user_connections", None)
        limit = limit_of(self.identity) if limit_of is not None else None
        if limit is not None and self.server.user_connections(req.user) >= limit:
            self.stream.write(err_packet(1203, "42000", f"User {req.user} already has more than "
                                                        "'max_user_connections' active connections"))
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.stream.flush(), 2)
            raise AccessDenied()
        self.user, self.attrs = req.user, req.attrs
        self.multi_statements = bool(self.caps & Capabilities.CLIENT_MULTI_STATEMENTS)
        return req

    async def _check_password(self, user: str, auth: bytes) -> Any:
        """The logged-in identity. A wrong password and an unknown user get the same 1045, then the connection
        is closed."""
        identity = await self._in_thread(self.server.users.login_native, user, self.host, self.salt, auth)
        if identity is not None:
            return identity
        log.info("connection %d: access denied for %r from %s", self.id, user, self.host)
        using = "YES" if auth else "NO"
        self.stream.write(err_packet(ErrorCode.ACCESS_DENIED, "28000",
                                     f"Access denied for user '{user}'@'{self.host}' (using password: {using})"))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.stream.flush(), 2)
        raise AccessDenied()

    async def _open_handler(self, database: str | None) -> None:
        info = ConnectionInfo(self.id, self.user, self.host, database, self.caps, self.server, dict(self.attrs),
                              self.identity)
        self.handler = await self._in_thread(self.server.handler_factory, info)
        if database:
            await self._in_thread(self.handler.init_db, database)
        self.database = database

    # -- command phase ----------------------------------------------------------------------------
    async def _command_loop(self) -> None:
        while True:
            self._state("Sleep")
            payload = await self.stream.read(new_command=True)
            if not payload:
                self.stream.write(err_packet(ErrorCode.MALFORMED_PACKET, "HY000", "Malformed communication packet."))
                await self.stream.flush()
                continue
            command = _COMMANDS.get(payload[0])
            try:
                if command is None:
                    self.stream.write(err_packet(ErrorCode.UNKNOWN_COM, "08S01", "Unknown command"))
                elif await command(self, payload) is False:
                    return
            except ProtocolError as e:
                if e.fatal:
                    raise
                self.stream.write(err_packet(e.code, e.sqlstate, e.message))
            except (asyncio.CancelledError, ConnectionError, AccessDenied):
                raise
            except Exception as e:
                await self._send_error(e)
            await self.stream.flush()

    async def _send_error(self, e: BaseException) -> None:
        code, state, message = error_fields(e)  # an internal error is logged there, not sent
        self.stream.write(err_packet(code, state, message))
        await self.stream.flush()

    def _require_handler(self) -> ConnectionHandler:
        assert self.handler is not None
        return self.handler

    async def _execute(self, sql: str, multi: bool, binary: bool) -> None:
        self.server.questions += 1
        self._state("Query", sql[:1024])
        try:
            handler = self._require_handler()
            quick = getattr(handler, "quick", None)
            if quick is not None and quick(sql):
                results = handler.execute(sql, multi)
            else:
                short = getattr(handler, "short", None)
                results = await self._in_thread(self._admitted, short is not None and short(sql), handler.execute,
                                                sql, multi)
        except Exception as e:
            partial = getattr(e, "results", None)
            if isinstance(partial, list) and partial and self.caps & Capabilities.CLIENT_MULTI_RESULTS:
                await self._send_results(partial, binary, more_after=True)
            raise
        if isinstance(results, OkResult | ResultSet):  # tolerate a bare Result
            results = [results]
        # (a table's nbytes costs ~15 us, a point lookup's whole encoding about as much: small answers are
        # not asked; 256 rows are not 64 MB but for blobs, whose memory then only goes back to the allocator)
        size = sum(r.table.nbytes for r in results if isinstance(r, ResultSet) and r.table.num_rows > INLINE_ROWS)
        await self._send_results(results, binary)
        if size >= RELEASE_AFTER_BYTES:
            # a large answer is gone with this statement: give its memory back to the system, not just to the
            # allocator (20 clients reading a 240 MB result kept gigabytes after they left)
            del results
            await self._in_thread(pa.default_memory_pool().release_unused)

    async def _send_results(self, results: list[Result], binary: bool, more_after: bool = False) -> None:
        if not results:
            results = [OkResult()]
        if len(results) > 1 and not self.caps & Capabilities.CLIENT_MULTI_RESULTS:
            results = results[-1:]
        for i, result in enumerate(results):
            status = AUTOCOMMIT | (MORE_RESULTS if more_after or i < len(results) - 1 else 0)
            if isinstance(result, ResultSet) and result.table.num_columns:
                await self._send_result_set(result, status, binary)
            else:
                ok = result if isinstance(result, OkResult) else OkResult()
                self.stream.write(ok_packet(ok.affected_rows, ok.last_insert_id, status, ok.warnings, ok.info))
            await self.stream.flush()

    async def _send_result_set(self, rs: ResultSet, status: int, binary: bool) -> None:
        columns, definitions = result_columns(rs)
        header = framed_header(definitions, status, self.stream.seq)
        if header is not None:
            self.stream.write_framed(header, len(definitions) + 2)
        else:
            for payload in (lenenc_int(len(columns)), *definitions, eof_packet(status)):
                self.stream.write(payload)
        encode = binary_rows if binary else text_rows
        for batch in batches(rs):
            if batch.num_rows <= INLINE_ROWS and not binary:  # cheaper here than two trips to a worker thread
                for payload in small_text_rows(batch, columns):
                    self.stream.write(payload)
                continue
            if batch.num_rows <= INLINE_ROWS:
                rows = encode(batch, columns)
                framed = frame_rows(rows, self.stream.seq)
            else:
                rows = await self._in_thread(encode, batch, columns)
                framed = await self._in_thread(frame_rows, rows, self.stream.seq)
            if framed is None:  # some row is 16 MiB or more: frame row by row
                for row in rows:
                    self.stream.write(row.as_py())
            else:
                self.stream.write_framed(framed, len(rows))
            await self.stream.flush()
        self.stream.write(eof_packet(status))

    # -- commands ---------------------------------------------------------------------------------
    async def com_query(self, payload: bytes) -> None:
        await self._execute(payload[1:].decode("utf-8", "replace"), self.multi_statements, binary=False)

    async def com_init_db(self, payload: bytes) -> None:
        db = payload[1:].decode("utf-8", "replace")
        self._state("Init DB", db)
        await self._in_thread(self._require_handler().init_db, db)
        self.database = db
        self.stream.write(ok_packet())

    async def com_ping(self, payload: bytes) -> None:
        self.stream.write(ok_packet())

    async def com_quit(self, payload: bytes) -> bool:
        return False

    async def com_field_list(self, payload: bytes) -> None:
        r = PayloadReader(payload, 1)
        end = payload.find(b"\x00", 1)
        # a table name without its NUL is taken whole (mysql-mimic loops forever on it)
        table = (r.rest() if end < 0 else r.nul_bytes()).decode("utf-8", "replace")
        self._state("Field List", table)
        schema: pa.Schema = await self._in_thread(self._require_handler().field_list, table)
        for col in wire_columns(schema):
            self.stream.write(column_definition(col, table=table, schema=self.database or "", field_list=True))
        self.stream.write(eof_packet())

    async def com_statistics(self, payload: bytes) -> None:
        self.stream.write(self.server.statistics().encode())

    async def com_process_kill(self, payload: bytes) -> bool:
        target = PayloadReader(payload, 1).int4()
        if target == self.id:
            self.stream.write(ok_packet())
            return False
        if not self.server.kill(target):
            self.stream.write(err_packet(ErrorCode.NO_SUCH_THREAD, "HY000", f"Unknown thread id: {target}"))
        else:
            self.stream.write(ok_packet())
        return True

    async def com_set_option(self, payload: bytes) -> None:
        option = PayloadReader(payload, 1).int2()
        if option not in (0, 1):
            self.stream.write(err_packet(ErrorCode.UNKNOWN_COM, "08S01", "Unknown command"))
            return
        self.multi_statements = option == 0
        self.stream.write(eof_packet())

    async def com_reset_connection(self, payload: bytes) -> None:
        self.statements.clear()
        # the session state goes, the current database stays (as in MySQL)
        await self._replace_handler(getattr(self.handler, "database", None) or self.database)
        self.stream.write(ok_packet())

    async def com_change_user(self, payload: bytes) -> None:
        req = parse_change_user(payload, self.caps)
        auth = req.auth_response
        if self.caps & Capabilities.CLIENT_PLUGIN_AUTH and req.plugin and req.plugin != NATIVE_PASSWORD:
            self.salt = new_salt()
            self.stream.write(auth_switch_request(self.salt))
            await self.stream.flush()
            auth = await self.stream.read()
        self.identity = await self._check_password(req.user, auth)
        self.user = req.user
        self.statements.clear()
        await self._replace_handler(req.database)
        self.stream.write(ok_packet())

    async def _replace_handler(self, database: str | None) -> None:
        if self.handler is not None:
            old, self.handler = self.handler, None
            await self._in_thread(old.close)
        await self._open_handler(database)

    # -- prepared statements ----------------------------------------------------------------------
    async def com_stmt_prepare(self, payload: bytes) -> None:
        if len(self.statements) >= MAX_PREPARED_STATEMENTS:
            self.stream.write(err_packet(1461, "42000", "Can't create more than max_prepared_stmt_count statements"))
            return
        sql = payload[1:].decode("utf-8", "replace")
        stmt = PreparedStatement(self._next_stmt_id, sql, placeholder_positions(sql))
        if stmt.param_count > 0xFFFF:
            self.stream.write(err_packet(1390, "HY000", "Prepared statement contains too many placeholders"))
            return
        self._next_stmt_id = (self._next_stmt_id % 0xFFFFFFFF) + 1
        self.statements[stmt.id] = stmt
        # column count 0: the columns are only known once the statement runs
        self.stream.write(b"\x00" + stmt.id.to_bytes(4, "little") + b"\x00\x00"
                          + stmt.param_count.to_bytes(2, "little") + b"\x00\x00\x00")
        if stmt.param_count:
            for _ in range(stmt.param_count):
                self.stream.write(column_definition(_PARAM_COLUMN))
            self.stream.write(eof_packet())

    def _statement(self, payload: bytes, command: str) -> PreparedStatement:
        stmt_id = PayloadReader(payload, 1).int4()
        stmt = self.statements.get(stmt_id)
        if stmt is None:
            raise _UnknownStatement(stmt_id, command)
        return stmt

    async def com_stmt_execute(self, payload: bytes) -> None:
        stmt = self._statement(payload, "mysqld_stmt_execute")
        try:
            literals = parse_execute(payload, stmt)
        finally:
            stmt.long_data.clear()
        await self._execute(stmt.bind(literals), multi=False, binary=True)

    async def com_stmt_send_long_data(self, payload: bytes) -> None:
        # never answered, not even with an error
        r = PayloadReader(payload, 1)
        stmt = self.statements.get(r.int4())
        param = r.int2()
        if stmt is None or param >= stmt.param_count:
            return
        buf = stmt.long_data.setdefault(param, bytearray())
        if len(buf) + r.remaining > self.server.max_allowed_packet:
            raise PacketTooLarge()
        buf += r.rest()

    async def com_stmt_close(self, payload: bytes) -> None:
        self.statements.pop(PayloadReader(payload, 1).int4(), None)

    async def com_stmt_reset(self, payload: bytes) -> None:
        self._statement(payload, "mysqld_stmt_reset").long_data.clear()
        self.stream.write(ok_packet())

    async def com_stmt_fetch(self, payload: bytes) -> None:
        self._statement(payload, "mysqld_stmt_fetch")
        self.stream.write(err_packet(ErrorCode.UNKNOWN_STMT_HANDLER, "HY000", "Cursors are not supported"))


class _UnknownStatement(ProtocolError):
    code = ErrorCode.UNKNOWN_STMT_HANDLER

    def __init__(self, stmt_id: int, command: str) -> None:
        super().__init__(f"Unknown prepared statement handler ({stmt_id}) given to {command}")


_COMMANDS: dict[int, Callable[[Connection, bytes], Any]] = {
    Commands.COM_QUERY: Connection.com_query,
    Commands.COM_INIT_DB: Connection.com_init_db,
    Commands.COM_PING: Connection.com_ping,
    Commands.COM_QUIT: Connection.com_quit,
    Commands.COM_FIELD_LIST: Connection.com_field_list,
    Commands.COM_STATISTICS: Connection.com_statistics,
    Commands.COM_PROCESS_KILL: Connection.com_process_kill,
    Commands.COM_SET_OPTION: Connection.com_set_option,
    Commands.COM_RESET_CONNECTION: Connection.com_reset_connection,
    Commands.COM_CHANGE_USER: Connection.com_change_user,
    Commands.COM_STMT_PREPARE: Connection.com_stmt_prepare,
    Commands.COM_STMT_EXECUTE: Connection.com_stmt_execute,
    Commands.COM_STMT_SEND_LONG_DATA: Connection.com_stmt_send_long_data,
    Commands.COM_STMT_CLOSE: Connection.com_stmt_close,
    Commands.COM_STMT_RESET: Connection.com_stmt_reset,
    Commands.COM_STMT_FETCH: Connection.com_stmt_fetch,
}


async def _start_tls(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, context: ssl.SSLContext) -> None:
    """StreamWriter.start_tls, minding the bytes the reader already took off the socket: a client sends its TLS
    ClientHello right behind the SSL request, often in the same segment, and those bytes must reach TLS."""
    early = bytes(reader._buffer)  # noqa: SLF001 - no public way to take back what the reader buffered
    reader._buffer.clear()  # noqa: SLF001
    transport = writer.transport
    upgrade = asyncio.ensure_future(writer.start_tls(context))
    if early:
        await asyncio.sleep(0)  # start_tls installs its TLS protocol on the transport first
        protocol = transport.get_protocol()
        view = memoryview(early)
        while view:
            buffer = protocol.get_buffer(len(view))  # type: ignore[attr-defined]
            n = min(len(buffer), len(view))
            buffer[:n] = view[:n]
            protocol.buffer_updated(n)  # type: ignore[attr-defined]
            view = view[n:]
    await upgrade
