"""The BE-style HTTP API on be.conf `webserver_port` (Doris's 8040; 0 turns it off): compaction and tablet meta.

    GET  /api/compaction/show?tablet_id=N
    POST /api/compaction/run?tablet_id=N&compact_type=cumulative|base
    GET  /api/compaction/run_status[?tablet_id=N]
    GET  /api/meta/header/{tablet_id}           (SHOW TABLETS' MetaUrl)
    GET  /metrics, /api/health                  Prometheus metrics (doris_be_*) and liveness, without a login

Answers are Doris's JSON. Doris answers every request with HTTP 200; dorislite does too for answers about a
tablet ({"status": "Fail", "msg": "Tablet not found"}, a compaction that failed or found nothing to merge),
and uses 400 for malformed parameters (with Doris's messages), 404 for other paths and 405 for the wrong
method, so a script sees bad requests as such. A small asyncio HTTP/1.1 server: one request per connection,
bounded header size and read time; the handlers run in a thread (they read the catalog).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from server.access import PEER_HEADER, AccessControl, basic_auth
from storage.compaction.manager import CompactionManager
from storage.errors import StorageError

log = logging.getLogger("dorislite.http")

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 1024 * 1024
READ_TIMEOUT_SECONDS = 10.0
HTTP_WORKERS = 64  # requests handled at once per HTTP port
COMPACT_TYPES = ("cumulative", "base")

Reply = tuple[int, dict]


class BadRequest(Exception):
    pass


@dataclass(frozen=True)
class Page:
    """A reply that is not JSON: an HTML page, a stylesheet, an SVG (the console)."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"


def _fail(msg: str) -> dict:
    return {"status": "Fail", "msg": msg}


def _param(params: dict[str, list[str]], name: str) -> str:
    values = params.get(name)
    return values[0] if values else ""


def _id(params: dict[str, list[str]], name: str) -> int:
    """Doris's _check_param: 0 when absent; a value that is not a number is an error."""
    text = _param(params, name).strip()
    if not text:
        return 0
    if not text.isdigit():
        raise BadRequest(f"convert {name} failed, stoull")
    return int(text)


class CompactionApi:
    """The three compaction actions over a CompactionManager (no HTTP here: params in, status + JSON out).
    Every request needs basic auth of a user with ADMIN_PRIV (`access`; None: open, for the manager's tests)."""

    def __init__(self, manager: CompactionManager, access: AccessControl | None = None,
                 metrics: Callable[[], str] | None = None) -> None:
        self.manager = manager
        self.access = access
        self.metrics = metrics  # GET /metrics (Prometheus text), open as Doris's

    def show(self, params: dict[str, list[str]]) -> Reply:
        tablet_id = _id(params, "tablet_id")
        if tablet_id == 0:
            raise BadRequest("check param failed: missing tablet_id")
        shown = self.manager.show(tablet_id)
        return (200, shown) if shown is not None else (200, _fail("Tablet not found"))

    def run(self, params: dict[str, list[str]]) -> Reply:
        tablet_id = _id(params, "tablet_id")
        table_id = _id(params, "table_id")
        if tablet_id == 0 and table_id == 0:
            raise BadRequest("tablet id and table id can not be empty at the same time!")
        if tablet_id and table_id:
            raise BadRequest("tablet id and table id can not be set at the same time!")
        kind = _param(params, "compact_type")
        if kind not in COMPACT_TYPES:
            raise BadRequest(f"The compaction type '{kind}' is not supported")
        if table_id:
            raise BadRequest("table_id is only taken with compact_type=full, which dorislite does not run")
        try:
            self.manager.trigger(tablet_id, kind)
        except KeyError:
            return 200, _fail("Tablet not found")
        except StorageError as e:
            return 200, _fail(e.message)
        return 200, {"status": "Success", "msg": "compaction task is successfully triggered."}

    def run_status(self, params: dict[str, list[str]]) -> Reply:
        tablet_id = _id(params, "tablet_id")
        if tablet_id == 0:
            return 200, self.manager.run_status()
        if self.manager.find_tablet(tablet_id) is None:
            return 200, _fail("Tablet not found")
        return 200, self.manager.tablet_run_status(tablet_id)

    def meta_header(self, tablet_id_text: str) -> Reply:
        """GET /api/meta/header/{tablet_id} (SHOW TABLETS' MetaUrl): the tablet's meta as Doris's TabletMeta JSON
        names it: ids, state, the schema with each column's unique id, and the visible rowsets."""
        if not tablet_id_text.isdigit():
            raise BadRequest(f"convert tablet_id failed, {tablet_id_text}")
        found = self.manager.tablet_and_table(int(tablet_id_text))
        if found is None:
            return 200, _fail("Tablet not found")
        tablet, table = found
        index = next(i for i in table.indexes if i.index_id == tablet.index_id)
        catalog = self.manager.engine.catalog
        rowsets = sorted(catalog.all_rowsets(tablet.tablet_id), key=lambda r: (r.start_version, r.end_version))
        stale = {s.rowset.rowset_id for s in catalog.stale_rowsets(tablet.tablet_id)}
        meta = {
            "table_id": table.table_id, "partition_id": tablet.partition_id, "tablet_id": tablet.tablet_id,
            "index_id": index.index_id, "schema_hash": index.schema_hash, "shard_id": 0,
            "creation_time": int(table.create_time), "tablet_state": "PB_RUNNING",
            "schema": {
                "keys_type": table.keys_type,
                "column": [{"unique_id": c.unique_id, "name": c.name, "type": c.type, "is_key": c.is_key,
                            "aggregation": c.aggregation or "NONE", "is_nullable": c.nullable,
                            "default_value": c.default} for c in index.columns],
                "num_short_key_columns": index.short_key_column_count,
            },
            "rs_metas": [{"rowset_id_v2": r.rowset_id, "start_version": r.start_version,
                          "end_version": r.end_version, "num_rows": r.num_rows, "total_disk_size": r.data_size,
                          "num_segments": r.num_segments, "rowset_type": "BETA_ROWSET",
                          "rowset_state": "VISIBLE", "segments_overlap_pb": "OVERLAPPING" if r.overlapping
                          else "NONOVERLAPPING", "delete_predicate": r.delete_predicate}
                         for r in rowsets if r.rowset_id not in stale],
        }
        return 200, meta

    def load_error_log(self, params: dict[str, list[str]]) -> Reply:
        """GET /api/_load_error_log?file=...: a load's rejected rows (Stream Load's ErrorURL), as text."""
        name = _param(params, "file")
        if not name or "/" in name or name.startswith("."):
            raise BadRequest("file is required")
        path = Path(self.manager.engine.root) / "error_log" / name
        if not path.is_file():
            return 404, _fail("error log not found")
        return 200, path.read_text(encoding="utf-8")  # type: ignore[return-value]

    def routes(self) -> dict[str, tuple[str, Callable[[dict[str, list[str]]], Reply]]]:
        return {
            "/api/_load_error_log": ("GET", self.load_error_log),
            "/api/compaction/show": ("GET", self.show),
            "/api/compaction/run": ("POST", self.run),
            "/api/compaction/run_status": ("GET", self.run_status),
        }

    def handle(self, method: str, target: str, headers: dict[str, str] | None = None) -> Reply:
        if urlsplit(target).path.rstrip("/") == "/api/health":  # Doris's BE health check: no login
            return 200, {"status": "OK", "msg": "To Be Added"}
        if urlsplit(target).path.rstrip("/") == "/metrics" and self.metrics is not None and method == "GET":
            return 200, self.metrics()
        if self.access is not None:
            identity = basic_auth(self.access, headers or {})
            if identity is None:
                return 401, _fail("Unauthorized")
            if not self.access.is_admin(identity):
                return 403, _fail("Access denied; you need (at least one of) the ADMIN privilege(s) for this "
                                  "operation")
        parts = urlsplit(target)
        path = parts.path.rstrip("/") or "/"
        if path.startswith("/api/meta/header/"):
            if method != "GET":
                return 405, _fail(f"Method Not Allowed: {parts.path} takes GET")
            try:
                return self.meta_header(path.removeprefix("/api/meta/header/"))
            except BadRequest as e:
                return 400, _fail(str(e))
        route = self.routes().get(path)
        if route is None:
            return 404, _fail("Not Found")
        wanted, handler = route
        if method != wanted:
            return 405, _fail(f"Method Not Allowed: {parts.path} takes {wanted}")
        try:
            return handler(parse_qs(parts.query, keep_blank_values=True))
        except BadRequest as e:
            return 400, _fail(str(e))


class HttpApiServer:
    """Serves one API object (`handle(method, target, headers) -> (status, JSON[, extra headers])`) on `port`, and
    optionally a stream API whose requests carry large bodies (Stream Load): `streams(method, path)` says which; their
    body is spooled to a file (Content-Length or chunked, `Expect: 100-continue` answered) with an idle timeout per
    read instead of the whole-request one. `name` is the config key that sets the port, for the log."""

    def __init__(self, api: Any, host: str, port: int, name: str = "webserver_port", stream_api: Any = None) -> None:
        self.api = api
        self.stream_api = stream_api
        self.host = host
        self.requested_port = port
        self.name = name
        self._server: asyncio.AbstractServer | None = None
        # requests run here, not in asyncio's default pool (a handful of threads): a group-commit Stream Load waits
        # for its batch, and 64 of them waiting must not queue everything else behind them
        self._pool = ThreadPoolExecutor(max_workers=HTTP_WORKERS, thread_name_prefix="http-worker")

    async def _run(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(fn, *args))

    @property
    def port(self) -> int:
        """The bound port (0 when not listening)."""
        if self._server is None or not self._server.sockets:
            return 0
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> None:
        if self.requested_port <= 0:
            log.info("HTTP API disabled (%s = 0)", self.name)
            return
        try:
            self._server = await asyncio.start_server(self._serve, self.host, self.requested_port,
                                                      reuse_address=True)
        except OSError as e:  # the MySQL endpoint still serves; the API is what is missing
            log.error("HTTP API not started: cannot listen on %s:%d: %s", self.host, self.requested_port, e)
            return
        log.info("HTTP API (%s) listening on %s:%d", self.name, self.host, self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        extra: dict[str, str] = {}
        try:
            address = writer.get_extra_info("peername")
            peer = str(address[0]) if isinstance(address, tuple) and address else ""
            reply = await self._request(reader, writer, peer)
            status, body = reply[0], reply[1]
            extra = reply[2] if len(reply) > 2 else {}
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            status, body = 400, _fail("Bad Request")
        except Exception:  # noqa: BLE001 - never a traceback to the client
            log.exception("HTTP API request failed")
            status, body = 500, _fail("Internal Server Error")
        if isinstance(body, Page):
            payload, kind = body.body, body.content_type
        elif isinstance(body, str):  # a plain-text answer (an error log, metrics)
            payload, kind = body.encode(), "text/plain; charset=utf-8"
        else:
            payload, kind = json.dumps(body, indent=4, ensure_ascii=False).encode(), "application/json"
        more = "".join(f"{k}: {v}\r\n" for k, v in extra.items())
        head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: {kind}\r\n{more}"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n").encode()
        try:
            writer.write(head + payload)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: str = "") -> tuple:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_SECONDS)
        if len(head) > MAX_HEADER_BYTES:
            raise ValueError("header too large")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            raise ValueError("bad request line")
        method, target = parts[0].upper(), parts[1]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip() and name.strip().lower() != PEER_HEADER:
                headers[name.strip().lower()] = value.strip()
        if peer:
            headers[PEER_HEADER] = peer
        path = urlsplit(target).path
        if self.stream_api is not None and self.stream_api.streams(method, path):
            return await self._stream(reader, writer, path, headers, peer)
        length = int(headers.get("content-length") or 0)
        if length < 0 or length > MAX_BODY_BYTES:
            raise ValueError("bad body length")
        body = await asyncio.wait_for(reader.readexactly(length), READ_TIMEOUT_SECONDS) if length else b""
        if getattr(self.api, "takes_body", False):  # the console's forms (login, SQL)
            return await self._run(self.api.handle, method, target, headers, body)
        return await self._run(self.api.handle, method, target, headers)

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str,
                      headers: dict[str, str], peer: str) -> tuple:
        """A request with a large body: authenticated first, then its body spooled to a file, then handled."""
        api = self.stream_api
        identity = await self._run(api.authenticate, headers)
        if identity is None:
            return 401, {"status": "FAILED", "msg": "Unauthorized: need auth information (-u user:password)"}
        if headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
        spool = api.spool_dir() / f"body_{uuid.uuid4().hex}"
        try:
            size = await _spool_body(reader, headers, spool, api.max_body_bytes)
            if size is None:
                return 400, {"Status": "Fail", "Message": f"The body exceeds streaming_load_max_mb "
                                                          f"({api.max_body_bytes // (1024 * 1024)} MB)"}
            return 200, await self._run(api.handle_stream, path, headers, spool, identity, peer)
        finally:
            spool.unlink(missing_ok=True)


STREAM_IDLE_SECONDS = 60.0  # a stream body may take long; each read may not
_CHUNK = 1 << 20


async def _spool_body(reader: asyncio.StreamReader, headers: dict[str, str], path: Path, limit: int) -> int | None:
    """Write the request body to `path` (Content-Length or chunked); its size, or None when above `limit`."""
    total = 0
    with path.open("wb") as f:
        async def copy(n: int) -> None:
            nonlocal total
            while n:
                data = await asyncio.wait_for(reader.read(min(n, _CHUNK)), STREAM_IDLE_SECONDS)
                if not data:
                    raise asyncio.IncompleteReadError(b"", n)
                f.write(data)
                n -= len(data)
                total += len(data)

        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                line = await asyncio.wait_for(reader.readuntil(b"\r\n"), STREAM_IDLE_SECONDS)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    await asyncio.wait_for(reader.readuntil(b"\r\n"), STREAM_IDLE_SECONDS)  # end of trailers
                    break
                if total + size > limit:
                    return None
                await copy(size)
                await asyncio.wait_for(reader.readexactly(2), STREAM_IDLE_SECONDS)
        else:
            length = int(headers.get("content-length") or 0)
            if length < 0 or length > limit:
                return None
            await copy(length)
    return total
