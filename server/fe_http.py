"""The FE-style HTTP API on fe.conf `http_port` (Doris's 8030; 0 turns it off), Doris's JSON envelope
({"msg", "code", "data", "count"}), HTTP basic auth against the server's users:

    GET|POST /api/_set_config?key=value[&key2=value2][&persist=false]   runtime FE config (ADMIN SET FRONTEND CONFIG)
    GET      /api/show_proc?path=/colocation_group                      SHOW PROC
    GET      /api/bootstrap, /api/health                                 liveness for scripts and load balancers
    GET      /metrics                                                    Prometheus metrics (doris_fe_*)
    GET      /, /login, /console/...                                     the web console (server/console)
    GET      /api/backends?is_alive=true, /rest/v1/system?path=//backends where to send Stream Loads (connectors)
    GET      /api/{db}/{table}/_schema                                   a table's columns (connectors)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from server.access import Identity, basic_auth
from server.console.app import ConsoleApi
from server.loads.stream_load import is_stream_load_path
from server.metrics import frontend_metrics
from server.nodes import backend_port
from server.proc import proc_table
from sql.types import parse_type
from storage.catalog.partition_items import internal_type_name

if TYPE_CHECKING:
    from server.session import SessionContext

Reply = tuple[int, dict]
_SCHEMA_PATH = re.compile(r"^/api/([^/]+)/([^/]+)/_schema/?$")
_RESERVED = {"persist", "reset_persist"}


def _ok(data: Any) -> dict:
    return {"msg": "success", "code": 0, "data": data, "count": 0}


def _error(code: int, msg: str, data: Any = None) -> dict:
    return {"msg": msg, "code": code, "data": data, "count": 0}


def _proc_path(params: dict[str, list[str]]) -> str:
    return "/" + (params.get("path", ["/"])[-1]).strip().strip("/")


def _no_proc(params: dict[str, list[str]]) -> dict:
    return _error(1, f"Path[{_proc_path(params)}] doesn't exist")


class FrontendApi:
    takes_body = True  # the console's forms

    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self.console = ConsoleApi(ctx)

    def set_config(self, params: dict[str, list[str]]) -> Reply:
        applied: dict[str, str] = {}
        errors = []
        for key, values in params.items():
            if key in _RESERVED:
                continue
            value = values[-1]
            problem = self.ctx.check_frontend_config(key)
            if problem is not None:
                errors.append({"config_name": key, "config_value": value, "err_info": problem})
                continue
            try:
                self.ctx.set_frontend_config([(key, value)])
            except Exception as e:  # noqa: BLE001 - a value the config refuses is reported per key
                errors.append({"config_name": key, "config_value": value,
                               "err_info": getattr(e, "message", None) or str(e)})
                continue
            applied[key] = value
        persist = "" if params.get("persist", ["false"])[-1].lower() != "true" else \
            "persisting configs is not supported: the change lasts until restart"
        return 200, _ok({"set": applied, "err": errors, "persist": persist})

    def _proc(self, params: dict[str, list[str]]) -> tuple[list[str], list[dict]] | None:
        """The proc path the `path` parameter names: its columns and rows as dicts; None when it is not kept."""
        found = proc_table(self.ctx, _proc_path(params))
        if found is None:
            return None
        columns, rows = found
        return columns, [dict(zip(columns, row, strict=True)) for row in rows]

    def show_proc(self, params: dict[str, list[str]]) -> Reply:
        found = self._proc(params)
        return (200, _ok(found[1])) if found else (200, _no_proc(params))

    def backends(self, params: dict[str, list[str]]) -> Reply:
        """GET /api/backends?is_alive=true: where the Spark / Flink connectors send their Stream Loads."""
        host, port = backend_port(self.ctx)
        return 200, _ok({"backends": [{"ip": host, "http_port": port, "is_alive": True}]})

    def system(self, params: dict[str, list[str]]) -> Reply:
        """GET /rest/v1/system?path=//backends: the proc tree as the older connectors read it."""
        found = self._proc(params)
        if found is None:
            return 200, _no_proc(params)
        columns, rows = found
        return 200, _ok({"href_columns": [], "parent_url": "/rest/v1/system?path=/", "column_names": columns,
                         "rows": rows})

    def login(self, params: dict[str, list[str]]) -> Reply:
        return 200, _ok(None)

    def table_schema(self, db: str, table: str, identity: Identity) -> Reply:
        """GET /api/{db}/{table}/_schema (Doris's TableSchemaAction), what the connectors map columns with."""
        catalog = self.ctx.engine.catalog
        found = catalog.get_table(db, table) if catalog.get_database(db) is not None else None
        if found is None:
            return 200, _error(1, f"Table [{table}] does not exist in database [{db}].")
        if not self.ctx.users.has_any(identity, db, table):
            return 200, _error(1, f"SELECT command denied to user '{identity.name}' for table '{db}.{table}'")
        props = []
        for column in found.columns:
            t = parse_type(column.type)
            name = internal_type_name(column.type)
            if t.name == "DECIMAL":  # PrimitiveType's DECIMALV3 names: by the storage width
                name = "DECIMAL32" if (t.precision or 9) <= 9 else "DECIMAL64" if (t.precision or 9) <= 18 else \
                    "DECIMAL128"
            info = {"type": name, "comment": column.comment or "",
                    "name": column.name, "aggregation_type": "" if column.is_key or not column.aggregation or
                    column.aggregation == "NONE" else column.aggregation,
                    "is_nullable": "Yes" if column.nullable else "No"}
            if t.name == "DECIMAL":
                info.update(precision=str(t.precision), scale=str(t.scale))
            props.append(info)
        return 200, _ok({"properties": props, "keysType": found.keys_type, "status": 200})

    def bootstrap(self, params: dict[str, list[str]]) -> Reply:
        return 200, _ok({"replayedJournalId": 0, "queryPort": self.ctx.config.get_int("query_port", 9030),
                         "rpcPort": 0, "version": ""})

    def metrics(self, params: dict[str, list[str]]) -> tuple[int, str]:
        """GET /metrics: Prometheus text (doris_fe_*), open as Doris's."""
        return 200, frontend_metrics(self.ctx)

    def health(self, params: dict[str, list[str]]) -> Reply:
        return 200, _ok({"online_backend_num": 1, "total_backend_num": 1})

    def routes(self) -> dict[str, tuple[tuple[str, ...], bool, Callable[[dict[str, list[str]]], Reply]]]:
        """path -> (methods, needs auth, handler)."""
        return {
            "/api/_set_config": (("GET", "POST"), True, self.set_config),
            "/api/show_proc": (("GET",), True, self.show_proc),
            "/api/backends": (("GET",), False, self.backends),
            "/rest/v1/system": (("GET",), True, self.system),
            "/rest/v1/login": (("GET", "POST"), True, self.login),
            "/api/bootstrap": (("GET",), False, self.bootstrap),
            "/api/health": (("GET",), False, self.health),
            "/metrics": (("GET",), False, self.metrics),
        }

    def handle(self, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b"") -> tuple:
        parts = urlsplit(target)
        if self.console.handles(parts.path):
            return self.console.handle(method, target, headers or {}, body)
        if method == "PUT" and is_stream_load_path(parts.path):
            # as Doris's FE: a Stream Load is redirected to the backend's HTTP port (curl --location-trusted)
            return 307, _ok("redirect to the backend"), {"Location": f"{self.ctx.http_base}{target}"}
        route = self.routes().get(parts.path.rstrip("/") or "/")
        schema = _SCHEMA_PATH.match(parts.path)
        if route is None and schema is not None and method == "GET":
            identity = basic_auth(self.ctx.users, headers or {})
            if identity is None:
                return 401, _error(401, "Unauthorized", "Need auth information.")
            return self.table_schema(unquote(schema.group(1)), unquote(schema.group(2)), identity)
        if route is None:
            return 404, _error(404, "Not Found")
        methods, needs_auth, handler = route
        if method not in methods:
            return 405, _error(405, f"Method Not Allowed: {parts.path} takes {' or '.join(methods)}")
        if needs_auth:
            identity = basic_auth(self.ctx.users, headers or {})
            if identity is None:
                return 401, _error(401, "Unauthorized", "Need auth information.")
            if not self.ctx.users.is_admin(identity):
                return 403, _error(403, "Forbidden", "Access denied; you need (at least one of) the ADMIN "
                                                    "privilege(s) for this operation")
        return handler(parse_qs(parts.query, keep_blank_values=True))
