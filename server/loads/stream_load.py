"""Stream Load (`curl --location-trusted -u user:pw -H "label:l1" -T data.csv http://host:8040/api/db/t/_stream_load`),
as Doris 2.1's documentation describes it, run as the INSERT ... SELECT FROM local(...) the request amounts to.

The HTTP server spools the body to a file (Content-Length or chunked, `Expect: 100-continue` answered, never held
whole in memory). The request's headers become one statement run by the user who authenticated, so privileges,
labels, the transaction, strict mode, partitions, type conversion and the audit log are INSERT's:

    INSERT INTO `db`.`t` [PARTITION (..) | TEMPORARY PARTITION (..)] WITH LABEL `l` (targets)
    SELECT <source column or derived expression per target> FROM
        (SELECT c1 AS `k1`, c2 AS `tmp` FROM local("file_path" = <spool>, "format" = .., ..)) AS __src
    [WHERE <where>]

`columns: k1, tmp, v = tmp * 10` names the file's columns in order (CSV; JSON fields by name) and derives others;
without it the file's columns are the table's, in order (JSON: the table's columns the file has). A body smaller than
fe.conf `stream_load_spark_threshold_mb` loads in-process, a larger one on Spark like any file load. The reply is
Doris's JSON (TxnId, Label, Status Success / Label Already Exists / Fail, counters, timings). With
`two_phase_commit: true` the rows are written and held; `PUT /api/{db}/_stream_load_2pc` with `txn_id` (or `label`)
and `txn_operation: commit | abort` publishes or drops them (held ones expire after fe.conf
stream_load_default_precommit_timeout_second, and do not survive a restart).
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.loads.files import FileScanOptions, file_schema
from planner.loads.request import LoadOptions
from server.access import Identity
from server.results import OkResult
from sql.dialect import quote_ident
from sql.parse import parse
from sql.text_statements.alter_columns import split_top

if TYPE_CHECKING:
    from server.session import SessionContext

_FORMATS = {"csv": ("csv", 0), "csv_with_names": ("csv", 1), "csv_with_names_and_types": ("csv", 2), "json": ("json", 0),
            "parquet": ("parquet", 0)}
_COMPRESS = {"gz": "gz", "gzip": "gz", "lz4": "lz4frame", "lz4frame": "lz4frame", "bz2": "bz2", "zstd": "zstd",
             "plain": "plain"}
_DERIVED = re.compile(r"^\s*(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+)$", re.S)


class StreamLoadError(Exception):
    def __init__(self, message: str, status: str = "Fail") -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _ident(name: str) -> str:
    return quote_ident(name.strip().strip("`"))


def _string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _columns(header: str) -> tuple[list[str], list[tuple[str, str]]]:
    """`k1, tmp, v = tmp * 10` -> (source names in file order, [(derived name, expression)])."""
    sources, derived = [], []
    for item in split_top(header):
        if not item:
            continue
        m = _DERIVED.match(item)
        if m is not None and not item.lstrip().startswith("("):
            derived.append((m.group(1).strip("`"), m.group(2).strip()))
        else:
            sources.append(item.strip().strip("`"))
    return sources, derived


def load_session(ctx: SessionContext, identity: Identity, client: str, db: str, settings: dict[str, str]) -> Any:
    """The session a load runs its INSERTs in, with the load's settings (Stream Load headers, LOAD properties):
    strict_mode and max_filter_ratio as Doris reads them, timezone, timeout, exec_mem_limit."""
    from server.session import Session

    session = Session.acting_for(ctx, identity, client, db)
    strict = settings.get("strict_mode", "false").strip().lower() == "true"
    ratio = float(settings.get("max_filter_ratio", "0") or 0)
    session.vars.set("enable_insert_strict", "true" if strict or ratio == 0 else "false", "session")
    session.vars.set("insert_max_filter_ratio", ratio, "session")
    for key, variable in (("timezone", "time_zone"), ("timeout", "insert_timeout"),
                          ("exec_mem_limit", "exec_mem_limit")):
        if settings.get(key):
            session.vars.set(variable, settings[key].strip(), "session")
    return session


class StreamLoad:
    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx

    def run(self, db: str, table: str, headers: dict[str, str], body: Path, identity: Identity,
            client: str) -> dict[str, Any]:
        started = time.perf_counter()
        label = headers.get("label", "").strip() or f"stream_load_{int(time.time() * 1000)}_{body.stem[-8:]}"
        reply: dict[str, Any] = {"TxnId": -1, "Label": label, "Comment": "", "TwoPhaseCommit": "false",
                                 "Status": "Fail", "Message": "", "NumberTotalRows": 0, "NumberLoadedRows": 0,
                                 "NumberFilteredRows": 0, "NumberUnselectedRows": 0,
                                 "LoadBytes": body.stat().st_size, "LoadTimeMs": 0, "BeginTxnTimeMs": 0,
                                 "StreamLoadPutTimeMs": 0, "ReadDataTimeMs": 0, "WriteDataTimeMs": 0,
                                 "CommitAndPublishTimeMs": 0}
        two_phase = headers.get("two_phase_commit", "false").strip().lower() == "true"
        reply["TwoPhaseCommit"] = "true" if two_phase else "false"
        group_commit = headers.get("group_commit", "").strip().lower()
        session = None
        try:
            session = load_session(self.ctx, identity, client, db, headers)
            if group_commit not in ("", "off_mode"):
                # Doris's checks; the rows then join their table's group commit batch
                if group_commit not in ("sync_mode", "async_mode"):
                    raise StreamLoadError(f"group_commit can only be [async_mode, sync_mode, off_mode], not "
                                          f"{group_commit}")
                if headers.get("label", "").strip():
                    raise StreamLoadError("label and group_commit can't be set at the same time")
                if two_phase:
                    raise StreamLoadError("group commit does not support two phase commit")
                label = reply["Label"] = f"group_commit_{uuid.uuid4().hex[:16]}"
                reply["GroupCommit"] = True
            sql, source_count = self.statement(session, db, table, headers, body, label)
            threshold = self.ctx.config.get_int("stream_load_spark_threshold_mb", 256) * 1024 * 1024
            # written now and published by PUT /api/{db}/_stream_load_2pc (txn_operation: commit) when two-phase
            session.load_options = LoadOptions(
                path="in_process" if two_phase or group_commit not in ("", "off_mode") or
                body.stat().st_size < threshold else "auto", precommit=two_phase, rejects=[],
                group_commit=group_commit if group_commit not in ("", "off_mode") else None)
            if two_phase:
                self.ctx.engine.expire_precommitted(self.precommit_timeout)
            [result] = session.execute(sql, False)
        except StreamLoadError as e:
            reply.update(Status=e.status, Message=e.message)
            return reply
        except Exception as e:  # noqa: BLE001 - every failure is the reply's Message, as Doris answers
            message = str(getattr(e, "message", None) or e).removeprefix("errCode = 2, detailMessage = ")
            if "has already been used" in message:
                reply.update(Status="Label Already Exists", ExistingJobStatus="FINISHED", Message=message)
            elif message.startswith(("Insert has filtered data", "Insert has too many filtered data")):
                reply.update(Message=f"[DATA_QUALITY_ERROR]too many filtered rows: {message}")
            else:
                reply["Message"] = message
            return reply
        finally:
            reply["LoadTimeMs"] = int((time.perf_counter() - started) * 1000)
            if session is not None and session.load_options.rejects:
                reply["ErrorURL"] = self._error_log(label, session.load_options.rejects)
        assert isinstance(result, OkResult) and session is not None
        selected = result.affected_rows + result.warnings
        # rows the WHERE left out (Doris's NumberUnselectedRows): the file's rows counted apart, only when asked
        total = int(session.run_query(parse(source_count)[0].expression).column(0)[0].as_py()) if source_count else selected
        if result.label:  # a group commit's label is its batch's
            reply["Label"] = result.label
        reply.update(Status="Success", Message="OK", TxnId=-1 if result.txn_id is None else result.txn_id,
                     NumberLoadedRows=result.affected_rows, NumberFilteredRows=result.warnings,
                     NumberUnselectedRows=max(0, total - selected), NumberTotalRows=max(total, selected))
        return reply

    @property
    def precommit_timeout(self) -> int:
        return self.ctx.config.get_int("stream_load_default_precommit_timeout_second", 3600)

    def two_phase(self, db: str, headers: dict[str, str], identity: Identity) -> dict[str, Any]:
        """PUT /api/{db}/_stream_load_2pc with `txn_id` (or `label`) and `txn_operation: commit | abort`."""
        engine = self.ctx.engine
        engine.expire_precommitted(self.precommit_timeout)
        operation = headers.get("txn_operation", "").strip().lower()
        try:
            if operation not in ("commit", "abort"):
                raise StreamLoadError("txn_operation must be commit or abort")
            database = engine.catalog.get_database(db)
            if database is None:
                raise StreamLoadError(f"Unknown database '{db}'")
            txn_text, label = headers.get("txn_id", "").strip(), headers.get("label", "").strip()
            if txn_text:
                if not txn_text.isdigit():
                    raise StreamLoadError(f"invalid txn_id: {txn_text}")
                txn = engine.catalog.get_txn(int(txn_text))
            elif label:
                txn = engine.catalog.get_txn_by_label(database.db_id, label)
            else:
                raise StreamLoadError("txn_id or label is required")
            if txn is None or txn.db_id != database.db_id:
                raise StreamLoadError(f"transaction [{txn_text or label}] not found")
            table = engine.catalog.get_table_by_id(txn.table_id)
            if table is not None:
                self.ctx.users.require_table(identity, "LOAD_PRIV", db, table.name)
            if operation == "commit":
                engine.commit_precommitted(txn.txn_id)
            else:
                engine.abort_precommitted(txn.txn_id)
        except StreamLoadError as e:
            return {"status": "Fail", "msg": f"errCode = 2, detailMessage = {e.message}"}
        except Exception as e:  # noqa: BLE001 - a refused commit (privilege, publish) is the reply's msg
            message = str(getattr(e, "message", None) or e)
            return {"status": "Fail", "msg": message if message.startswith("errCode") else
                    f"errCode = 2, detailMessage = {message}"}
        return {"status": "Success", "msg": f"transaction [{txn.txn_id}] {operation} successfully."}

    def _error_log(self, label: str, lines: list[str]) -> str:
        """The rejected rows with their reasons in a file; the URL that serves it (GET, the HTTP port)."""
        folder = error_log_dir(self.ctx.engine.root)
        name = f"error_log_{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}_{uuid.uuid4().hex[:8]}"
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return f"{self.ctx.http_base}/api/_load_error_log?file={name}"

    def statement(self, session: Any, db: str, table: str, headers: dict[str, str], body: Path,
                  label: str) -> tuple[str, str | None]:
        """The INSERT the request amounts to, and (with a WHERE) a count of the file's rows."""
        fmt = headers.get("format", "csv").strip().lower()
        if fmt not in _FORMATS:
            raise StreamLoadError(f"format {fmt} is not supported: csv, csv_with_names, csv_with_names_and_types, "
                                  "json, parquet")
        local_format, skip = _FORMATS[fmt]
        props = {"file_path": str(body), "format": local_format}
        if local_format == "csv":
            props["column_separator"] = headers.get("column_separator", "\\t")
            props["line_delimiter"] = headers.get("line_delimiter", "\\n")
            props["skip_lines"] = str(skip + int(headers.get("skip_lines", "0") or 0))
            if headers.get("trim_double_quotes"):
                props["trim_double_quotes"] = headers["trim_double_quotes"]
            for key in ("enclose", "escape"):
                if headers.get(key):
                    props[key] = headers[key]
        elif local_format == "json":
            props["strip_outer_array"] = headers.get("strip_outer_array", "false")
            props["read_json_by_line"] = headers.get("read_json_by_line", "true"
                                                     if headers.get("strip_outer_array", "false") != "true" else "false")
        compress = headers.get("compress_type", "").strip().lower()
        if compress:
            if compress not in _COMPRESS:
                raise StreamLoadError(f"compress_type {compress} is not supported")
            props["compress_type"] = _COMPRESS[compress]
        target = session.table(db, table)
        column_names = [c.name for c in target.columns if c.generated is None]
        header = headers.get("columns", "").strip()
        sources, derived = _columns(header) if header else ([], [])
        if local_format in ("json", "parquet"):  # fields by name
            inner, sources = self._json_source(props, headers, sources, column_names, header != "")
        else:
            sources = sources or ([] if header else column_names)
            inner = ", ".join(f"c{i + 1} AS {_ident(n)}" for i, n in enumerate(sources))
        if not sources:
            raise StreamLoadError("no column of the file maps to a column of the table")
        known = {c.lower(): c for c in column_names}
        targets = [(known[n.lower()], f"__src.{_ident(n)}") for n in sources if n.lower() in known]
        targets += [(known.get(n.lower(), n), f"({expr})") for n, expr in derived]
        tvf = ", ".join(f"{_string(k)} = {_string(v)}" for k, v in props.items())
        partitions = ""
        for key, word in (("partitions", "PARTITION"), ("temporary_partitions", "TEMPORARY PARTITION")):
            if headers.get(key):
                names = ", ".join(_ident(p) for p in headers[key].split(",") if p.strip())
                partitions = f" {word} ({names})"
        where = headers.get("where", "").strip()
        insert = (f"INSERT INTO {_ident(db)}.{_ident(table)}{partitions} WITH LABEL {_ident(label)} "
                  f"({', '.join(_ident(t) for t, _ in targets)}) SELECT {', '.join(e for _, e in targets)} FROM "
                  f"(SELECT {inner} FROM local({tvf})) AS __src" + (f" WHERE {where}" if where else ""))
        return insert, (f"SELECT count(*) FROM local({tvf})" if where else None)

    @staticmethod
    def _json_source(props: dict[str, str], headers: dict[str, str], sources: list[str], table_columns: list[str],
                     named: bool) -> tuple[str, list[str]]:
        """The inner SELECT over a JSON body: fields by name, or the `jsonpaths` (under `json_root`) in the
        columns' order."""
        if headers.get("json_root", "").strip():
            props["json_root"] = headers["json_root"].strip()
        paths = headers.get("jsonpaths", "").strip()
        if paths:
            props["jsonpaths"] = paths
        keys = [f.name for f in file_schema(FileScanOptions.parse("local", props))]
        if paths:
            names = sources or table_columns[:len(keys)]
            if len(names) != len(keys):
                raise StreamLoadError("the number of jsonpaths and of columns differ")
            return ", ".join(f"{_ident(k)} AS {_ident(n)}" for k, n in zip(keys, names, strict=True)), names
        present = {k.lower(): k for k in keys}
        wanted = sources if named else [c for c in table_columns if c.lower() in present]
        parts = [f"{_ident(present[n.lower()])} AS {_ident(n)}" if n.lower() in present else f"NULL AS {_ident(n)}"
                 for n in wanted]
        return ", ".join(parts), wanted


_PATH = re.compile(r"^/api/([^/]+)/([^/]+)/_stream_load$")
_TWO_PHASE_PATH = re.compile(r"^/api/([^/]+)/_stream_load_2pc$")


def error_log_dir(root: Path) -> Path:
    folder = Path(root) / "error_log"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def is_stream_load_path(path: str) -> bool:
    """/api/{db}/{table}/_stream_load or /api/{db}/_stream_load_2pc."""
    return _PATH.match(path) is not None or _TWO_PHASE_PATH.match(path) is not None


def stream_load_target(path: str) -> tuple[str, str] | None:
    m = _PATH.match(path)
    return (m.group(1), m.group(2)) if m else None


class StreamLoadApi:
    """PUT /api/{db}/{table}/_stream_load on the HTTP port: basic auth, then the spooled body loaded."""

    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self.loader = StreamLoad(ctx)

    @property
    def max_body_bytes(self) -> int:
        return self.ctx.config.get_int("streaming_load_max_mb", 10240) * 1024 * 1024

    def spool_dir(self) -> Path:
        folder = self.ctx.engine.staging_root / "stream_load"
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def streams(self, method: str, path: str) -> bool:
        return method == "PUT" and is_stream_load_path(path)

    def authenticate(self, headers: dict[str, str]) -> Identity | None:
        from server.access import basic_auth

        return basic_auth(self.ctx.users, headers)

    def handle_stream(self, path: str, headers: dict[str, str], body: Path, identity: Identity,
                      client: str) -> dict[str, Any]:
        two_phase = _TWO_PHASE_PATH.match(path)
        if two_phase is not None:
            return self.loader.two_phase(two_phase.group(1), headers, identity)
        target = stream_load_target(path)
        assert target is not None
        return self.loader.run(target[0], target[1], headers, body, identity, client)
