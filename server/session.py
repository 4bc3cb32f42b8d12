"""A client session: parses statement text and dispatches each typed statement to its executor.

Runs in the protocol layer's worker threads (one statement at a time per connection). DDL goes to the
catalog, INSERT to the planner's binder and the storage engine, queries to the planner, SHOW / SET /
USE are answered from server state here.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.bind.bind_alter import (
    bind_add_index,
    bind_add_rollup,
    bind_drop_index,
    bind_drop_rollup,
    bind_set_bloom_properties,
)
from planner.bind.bind_alter_partition import (
    bind_add_partition,
    bind_add_partitions,
    bind_drop_partition,
    bind_modify_distribution,
    bind_modify_partition,
    bind_replace_partition,
)
from planner.bind.bind_delete import KeyDelete, bind_delete
from planner.bind.bind_schema_change import bind_schema_change
from planner.bind.create_table import CreateTableOptions, bind_create_table
from planner.bind.generated_columns import check_insert_targets, compute_generated
from planner.bind.partitions import COMMON_NAME, check_partition_name
from planner.bind.table_properties import ALTERABLE_PROPERTIES, bind_alter_properties
from planner.bind.views import ViewDefinition
from planner.context import QueryContext, TableSource
from planner.guard import QueryGuard
from planner.loads.files import bind_table_functions
from planner.loads.in_process import bind_rows
from planner.loads.pipeline import run_load, runs_on_spark, spark_available
from planner.loads.request import LoadCancelled, LoadOptions, LoadRequest
from planner.loads.route import check_partitions, overwrite_of, temp_partitions_view
from planner.loads.spark_run import map_query_on_spark
from planner.loads.spark_sources import OlapRef, file_stats, table_names
from planner.olap_source import OlapTableSource, arrow_schema
from planner.plan_cache import PlanCache, StatementKey
from planner.query import execute_cached, execute_query
from planner.scan_log import STATEMENT
from planner.sources import ArrowTableSource
from server import accounts, show, show_data, table_writes, views
from server.access import AccessControl, Identity, db_denied
from server.alter_jobs import AlterJobs
from server.audit import AuditLog, mask_passwords
from server.colocation import check_colocation
from server.config import MUTABLE_FE_KEYS, Config
from server.console.history import TableHistory
from server.deletes import SHOW_DELETE_COLUMNS, run_key_delete, run_predicate_delete, show_delete_rows
from server.dynamic_partitions import SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS, DynamicPartitions
from server.information_schema import InformationSchema
from server.loads.exports import ExportJob, ExportJobs
from server.loads.group_commit import GroupCommits
from server.loads.jobs import USER_CANCEL, LoadJobs
from server.loads.label_loads import LabelLoads
from server.loads.outfile import PROPERTY_KEYS as OUTFILE_KEYS
from server.loads.outfile import RESULT_COLUMNS as OUTFILE_COLUMNS
from server.loads.outfile import (
    ExportTask,
    OutfileSpec,
    mark_success,
    outfile_spec,
    prepare_directory,
    write_outfile,
)
from server.metrics import QueryStats, RecentStatement
from server.nodes import BACKEND_COLUMNS, FRONTEND_COLUMNS, backend_port, backend_rows, frontend_rows
from server.proc import proc_table
from server.profile import LIST_COLUMNS, ProfileStore, QueryProfile, new_query_id
from server.protocol.handler import ConnectionInfo
from server.resources import SHOW_RESOURCES_COLUMNS, Resources
from server.results import OkResult, Result, ResultSet, StatementError
from server.rollup_advisor import advise
from server.show_create import describe_all_rows, describe_rows
from server.show_partitions import auto_bucket_sizer, show_partitions
from server.show_tablets import show_tablets
from server.statement_privileges import check_statement
from server.variables import VERSION, SessionVariables
from sql import statements as st
from sql.dialect import quote_ident
from sql.limits import ExprLimits
from sql.parse import parse
from storage.catalog.model import PARTITION_INIT_VERSION, OlapTable, Partition
from storage.catalog.store import TXN_ABORTED, new_label
from storage.catalog.table_versions import RETENTION_PROPERTY, retention_seconds
from storage.catalog.views import View
from storage.compaction.manager import CompactionManager
from storage.engine import StorageEngine
from storage.tablet.delete_filter import delete_columns

log = logging.getLogger("dorislite.session")


_VALUES = re.compile(r"\bVALUES\b", re.IGNORECASE)  # an INSERT ... VALUES (Session.short)


@dataclass
class SessionContext:
    """State shared by every session of the process."""

    config: Config
    engine: StorageEngine
    users: AccessControl
    globals: Any
    server: Any = None
    ddl_lock: threading.Lock = field(default_factory=threading.Lock)
    http_base: str = "http://127.0.0.1:8040"  # the HTTP API's address (SHOW TABLETS' URLs), set at start
    audit: AuditLog | None = None  # log/fe.audit.log, set by the server
    fe_http_port: int = 8030  # the FE HTTP API's port, set at start
    started_at: float = field(default_factory=time.time)
    query_stats: QueryStats = field(default_factory=QueryStats)  # /metrics' query counters

    def __post_init__(self) -> None:
        self.information_schema = InformationSchema(self.engine.catalog)
        self.loads = LoadJobs(self.engine.root, progress=_spark_progress)
        self.alter_jobs = AlterJobs(self.engine, self.config)
        self.alter_jobs.start()  # its thread waits until the engine is opened
        self.dynamic_partitions = DynamicPartitions(self.engine, self.config)
        self.dynamic_partitions.start()  # waits for the engine too
        self.exports = ExportJobs(self.engine.root, progress=_spark_progress)
        self.group_commits = GroupCommits(self.engine)
        self.console_history = TableHistory(self.engine, self.config.get_int("console_sample_interval_seconds", 10),
                                            self.config.get_int("console_history_samples", 360))
        self.console_history.start()  # samples once the engine is open
        self.resources = Resources(self.engine.root)
        self.label_loads = LabelLoads(self)
        self.profiles = ProfileStore()
        self.plans = PlanCache(lambda: self.engine.catalog.schema_generation)
        self.compaction = CompactionManager(self.engine, self.config.be)
        self.compaction.start()  # its producer waits for the engine too


    def check_frontend_config(self, key: str) -> str | None:
        """Why `key` cannot be set at run time, or None."""
        if key not in self.config.fe:
            return f"Config '{key}' does not exist"
        if key not in MUTABLE_FE_KEYS:
            return f"Config '{key}' is not mutable"
        return None

    def set_frontend_config(self, configs: Sequence[tuple[str, str]]) -> None:
        """ADMIN SET FRONTEND CONFIG and the FE HTTP API's /api/_set_config: all or nothing, effective at once."""
        for key, _value in configs:
            problem = self.check_frontend_config(key)
            if problem is not None:
                raise doris_error(problem)
        for key, value in configs:
            if key == "max_bucket_num_per_partition" and not value.strip().lstrip("-").isdigit():
                raise doris_error(f"Invalid value for max_bucket_num_per_partition: {value}")
        for key, value in configs:
            self.config.set_fe(key, value)
            if key == "max_bucket_num_per_partition":
                self.engine.catalog.max_buckets_per_partition = int(value)
        if any(key == "dynamic_partition_debug_current_time" for key, _ in configs):
            self.dynamic_partitions.run_pass()  # the new clock's partitions exist when the statement returns
        elif any(key.startswith("dynamic_partition") for key, _ in configs):
            self.dynamic_partitions.kick()  # a new interval or switch takes effect now
        if any(key.startswith("expr_") for key, _ in configs):
            self.plans.clear()  # a kept plan was checked against the old bounds


def _spark_progress(job_group: str) -> tuple[int, int] | None:
    from storage.spark.load import spark_load_progress

    return spark_load_progress(job_group)


def doris_error(detail: str, code: int = 1105, sqlstate: str = "HY000") -> StatementError:
    return StatementError(f"errCode = 2, detailMessage = {detail}", code, sqlstate)


def no_database() -> StatementError:
    return StatementError("errCode = 2, detailMessage = No database selected", 1046, "3D000")


def _cancel_spark_group(job_group: str) -> None:
    from storage.spark.session import spark_session, spark_started

    if spark_started():
        spark_session().sparkContext.cancelJobGroup(job_group)


def _insert_info(label: str, txn_id: int) -> str:
    return f"{{'label':'{label}', 'status':'VISIBLE', 'txnId':'{txn_id}'}}"


class Session:
    """One connection's statement executor (implements server.protocol.handler.ConnectionHandler)."""

    def __init__(self, ctx: SessionContext, info: ConnectionInfo) -> None:
        self.ctx = ctx
        self.info = info
        self.database: str | None = None
        self.vars = SessionVariables(ctx.globals)
        self.warnings: list[tuple[str, int, str]] = []
        self._sql = ""  # the statement text a query profile records
        self._key: StatementKey | None = None  # a single-statement query's plan cache key
        self._key_memo: StatementKey | None = None  # the last text's key (_statement_key)
        self._profile: QueryProfile | None = None  # set while a profiled query runs
        self._guard: QueryGuard | None = None  # the running statement's KILL / timeout / memory bounds
        self.identity = info.identity if isinstance(info.identity, Identity) else Identity(info.user, "%", info.host)
        self.load_options = LoadOptions()  # how this session's INSERTs load (set by Stream Load, LOAD LABEL)

    @classmethod
    def acting_for(cls, ctx: SessionContext, identity: Identity, client: str, db: str) -> Session:
        """A session with no connection that runs statements as `identity` (Stream Load, LOAD, EXPORT jobs)."""
        return cls(ctx, ConnectionInfo(0, identity.name, client, db, 0, ctx.server, {}, identity))

    # -- ConnectionHandler ----------------------------------------------------------------------------
    def execute(self, sql: str, multi: bool) -> list[Result]:
        """Run a COM_QUERY text; every text is one line of the audit log."""
        started = time.perf_counter()
        STATEMENT.set(sql)  # the rollup advisor's scan log notes each scan's statement
        try:
            results = self._execute(sql, multi)
        except Exception as e:
            self._audit(sql, started, "ERR", int(getattr(e, "code", 1105) or 1105),
                        str(getattr(e, "message", None) or e))
            raise
        rows = sum(r.table.num_rows for r in results if isinstance(r, ResultSet))
        is_query = any(isinstance(r, ResultSet) for r in results)
        self._audit(sql, started, "EOF" if is_query else "OK", 0, "", rows, is_query)
        return results

    def _audit(self, sql: str, started: float, state: str, code: int, error: str, rows: int = 0,
               is_query: bool = False) -> None:
        millis = (time.perf_counter() - started) * 1000
        text = mask_passwords(sql.strip())
        self.ctx.query_stats.record(millis, is_query, state == "ERR", RecentStatement(
            time.time(), self.identity.name, self.database, text[:4000], millis, rows, state, error))
        audit = self.ctx.audit
        if audit is not None:
            audit.record(client=f"{self.info.host}", user=self.identity.name, db=self.database, state=state,
                         error_code=code, error=error, millis=millis, return_rows=rows, query_id=new_query_id(),
                         is_query=is_query, masked_stmt=text)

    def _execute(self, sql: str, multi: bool) -> list[Result]:
        cached = self._cached_query(sql)
        if cached is not None:
            return [cached]
        statements = parse(sql, self.vars.get("sql_mode"), self.expr_limits())
        self._sql = sql.strip()
        self._key = self._statement_key(sql) if len(statements) == 1 else None
        if not statements:
            if sql.strip():
                return [OkResult()]  # only comments, e.g. MariaDB's /*M!... */ that MySQL-family servers skip
            raise StatementError("Query was empty", 1065, "42000")
        if len(statements) > 1 and not multi:
            raise StatementError(
                "errCode = 2, detailMessage = Multiple statements in one query need the client's "
                "CLIENT_MULTI_STATEMENTS option", 1064, "42000")
        results: list[Result] = []
        for statement in statements:
            try:
                results.append(self.dispatch(statement))
            except Exception as error:
                error.results = results  # type: ignore[attr-defined]  # sent before the error
                raise
        return results

    def expr_limits(self) -> ExprLimits:
        config = self.ctx.config
        return ExprLimits(config.get_int("expr_depth_limit", 3000), config.get_int("expr_children_limit", 10000))

    def init_db(self, db: str) -> None:
        if db.lower() != "information_schema":
            if self.ctx.engine.catalog.get_database(db) is None:
                raise doris_error(f"Unknown database '{db}'", 1049, "42000")
            if not self.ctx.users.has_any(self.identity, db):
                raise db_denied(self.identity, db)
        self.database = db

    def _check_select(self, db: str | None, name: str) -> None:
        database = db or self.database
        if database:
            self.ctx.users.require_table(self.identity, "SELECT_PRIV", database, name)

    def _visible_rows(self, data: pa.Table) -> pa.Table:
        """An information_schema table with only the databases and tables this user may see (as Doris)."""
        names = {n.upper(): n for n in data.column_names}
        schema_col = names.get("TABLE_SCHEMA") or names.get("SCHEMA_NAME")
        if schema_col is None or data.num_rows == 0 or self.ctx.users.is_admin(self.identity):
            return data
        table_col = names.get("TABLE_NAME")
        # one visibility decision per distinct (database, table), applied to every row in one mask
        parts = [data.column(schema_col)] + ([data.column(table_col)] if table_col else [])
        pairs = pa.table({f"p{i}": pc.cast(c, pa.string()) for i, c in enumerate(parts)}).group_by(
            [f"p{i}" for i in range(len(parts))]).aggregate([])
        seen = [row for row in pairs.to_pylist()
                if row["p0"] is not None and self.visible(row["p0"], row.get("p1"))]
        if not seen:
            return data.slice(0, 0)
        keys = pc.binary_join_element_wise(*[pc.fill_null(pc.cast(c, pa.string()), "") for c in parts], "\x00")
        allowed = pa.array(["\x00".join(row[f"p{i}"] or "" for i in range(len(parts))) for row in seen])
        return data.filter(pc.is_in(keys, value_set=allowed))

    def visible(self, db: str, table: str | None = None) -> bool:
        """Whether SHOW and information_schema list the database (or table) to this user."""
        return db.lower() in ("information_schema", "mysql") or self.ctx.users.has_any(self.identity, db, table)

    def field_list(self, table: str) -> pa.Schema:
        return self._source(None, table).schema

    def close(self) -> None:
        pass

    # -- dispatch ---------------------------------------------------------------------------------------
    def _new_guard(self) -> QueryGuard:
        """The bounds of the statement about to run (read now: a SET inside a multi-statement applies after)."""
        limit = int(self.vars.get("exec_mem_limit") or 0)
        timeout = float(self.vars.get("query_timeout") or 0)
        return QueryGuard(mem_limit=limit if limit > 0 else None, timeout=timeout if timeout > 0 else None)

    def dispatch(self, statement: st.Statement) -> Result:
        self._guard = self._new_guard()
        if not (isinstance(statement, st.ShowSimple) and statement.kind.upper() in ("WARNINGS", "ERRORS")):
            self.warnings = []  # SHOW WARNINGS reports the previous statement's
        handler = self.HANDLERS.get(type(statement))
        if handler is None:
            raise doris_error(f"Unsupported statement: {type(statement).__name__}")
        if not isinstance(statement, st.SetPassword | st.AlterUser) and self.ctx.users.password_expired(self.identity):
            raise doris_error("Your password has expired. To log in you must change it using a client that supports "
                              "expired passwords.", 1820, "HY000")
        check_statement(self, statement)
        return handler(self, statement)

    # -- naming -----------------------------------------------------------------------------------------
    def _db(self, db: str | None) -> str:
        name = db or self.database
        if not name:
            raise no_database()
        return name

    def database_name(self, db: str | None) -> str:
        """The statement's database (named or current), which must exist."""
        name = self._db(db)
        if self.ctx.engine.catalog.get_database(name) is None:
            raise doris_error(f"Unknown database '{name}'", 1049, "42000")
        return name

    def _view_record(self, db: str | None, name: str) -> View | None:
        """The view `name` names, if it is one (every table a query names is asked: the names of a database's
        views are cached until the catalog changes, so a table costs no catalog query here)."""
        db_name = db or self.database
        if not db_name or db_name.lower() in ("information_schema", "mysql"):
            return None
        catalog = self.ctx.engine.catalog
        if name not in catalog.view_names(db_name):  # an unknown database has no views
            return None
        return catalog.get_view(db_name, name)

    def _view(self, db: str | None, name: str) -> ViewDefinition | None:
        view = self._view_record(db, name)
        return None if view is None else views.view_definition(view)

    def table(self, db: str | None, name: str) -> OlapTable:
        db_name = self._db(db)
        catalog = self.ctx.engine.catalog
        if catalog.get_database(db_name) is None:
            raise doris_error(f"Unknown database '{db_name}'", 1049, "42000")
        table = catalog.get_table(db_name, name)
        if table is None:
            raise doris_error(f"Table [{name}] does not exist in database [{db_name}].", 1146, "42S02")
        return table

    def _source(self, db: str | None, name: str) -> TableSource:
        db_name = db or self.database
        if db_name and db_name.lower() == "information_schema":
            data = self.ctx.information_schema.table(name)
            if data is None:
                raise doris_error(f"Table [{name}] does not exist in database [information_schema].",
                                  1146, "42S02")
            if name.lower() == "rollup_candidates" and not self.ctx.users.is_admin(self.identity):
                data = data.slice(0, 0)  # other users' statements and the values they filter by: ADMIN's only
            return ArrowTableSource(name, self._visible_rows(data))
        if db_name and db_name.lower() == "mysql" and name.lower() == "proc":
            from server.information_schema import _table

            return ArrowTableSource(name, _table("proc", []))
        return OlapTableSource(self.ctx.engine, self.table(db, name), db_name=self._db(db),
                               profile=self._profile.scans if self._profile is not None else None)

    # -- queries ----------------------------------------------------------------------------------------
    def query_context(self, extra: dict[str, TableSource] | None = None) -> QueryContext:
        functions: dict[str, Callable[..., Any]] = {
            "database": lambda: self.database,
            "schema": lambda: self.database,
            "user": lambda: f"{self.info.user}@{self.info.host}",
            "session_user": lambda: f"{self.info.user}@{self.info.host}",
            "system_user": lambda: f"{self.info.user}@{self.info.host}",
            "current_user": lambda: self.identity.text,
            "connection_id": lambda: self.info.connection_id,
            "version": lambda: VERSION,
        }
        resolve = self._source
        if extra:  # the statement's table-valued functions, bound to generated names
            def resolve(db: str | None, name: str) -> TableSource:
                return extra[name] if db is None and name in extra else self._source(db, name)
        return QueryContext(
            current_db=self.database,
            resolve_table=resolve,
            variables=lambda scope, name: self.vars.get(name, scope),
            functions=functions,
            guard=self._guard,
            resolve_view=self._view,
            check_access=self._check_select,
        )

    def run_query(self, expression: exp.Expression, key: StatementKey | None = None, strict_files: bool = False
                  ) -> pa.Table:
        """A query's rows; with `key` (the statement's cache key) its plan is cached when it may be reused;
        `strict_files`: a strict INSERT's files (a typed value that does not convert fails it)."""
        expression, files = bind_table_functions(expression, strict_files)
        ctx = self.query_context(files)
        plans = self.ctx.plans if key is not None and not files else None
        table = execute_query(expression, ctx, plans, key, self._profile.scans if self._profile else None)
        return self._select_limit(table) if isinstance(expression, exp.Select | exp.Union) else table

    def _select_limit(self, table: pa.Table) -> pa.Table:
        limit = int(self.vars.get("sql_select_limit"))
        return table.slice(0, limit) if limit < table.num_rows else table

    def _query(self, s: st.Query) -> Result:
        key = self._key if isinstance(s.expression, exp.Select | exp.Union) else None
        result = self._select(lambda: self.run_query(s.expression, key))
        assert result is not None
        return result

    def _select_into_outfile(self, s: st.SelectIntoOutfile) -> Result:
        spec = outfile_spec(s.path, s.format, s.properties, self.ctx.config)  # refused before the query runs
        table = self.run_query(s.query)
        rows = write_outfile(table, spec, backend_port(self.ctx)[0])
        return ResultSet(show.string_table(list(OUTFILE_COLUMNS), rows))

    def quick(self, sql: str) -> bool:
        """A SELECT with a kept plan whose runs usually take about a millisecond (ConnectionHandler.quick)."""
        return self.ctx.plans.quick(self._statement_key(sql), self.database)

    def short(self, sql: str) -> bool:
        """A statement that usually takes a few milliseconds (ConnectionHandler.short): a SELECT with such a kept
        plan, or an INSERT ... VALUES joining a group commit (it hands its rows over and waits)."""
        if sql.lstrip()[:6].upper() == "INSERT":
            return self._group_commit_setting() != "off_mode" and _VALUES.search(sql) is not None
        return self.ctx.plans.short(self._statement_key(sql), self.database)

    def _statement_key(self, sql: str) -> StatementKey:
        """The plan cache's key of a text: it reads differently under another sql_mode. The last one is kept:
        the connection asks `quick` and then runs the same text."""
        mode = self.vars.get("sql_mode")
        last = self._key_memo
        if last is None or last.text != sql or last.sql_mode != mode:
            last = self._key_memo = StatementKey(sql, mode)
        return last

    def _cached_query(self, sql: str) -> Result | None:
        """A SELECT run again from its cached plan (no parse, no planning); None when none is valid."""
        key = self._statement_key(sql)
        if not self.ctx.plans.holds(key, self.database):
            return None
        self._sql = sql.strip()
        self.warnings = []  # as dispatch does for every statement, before it can fail
        self._guard = self._new_guard()
        ctx = self.query_context()

        def run() -> pa.Table | None:
            table = execute_cached(key, ctx, self.ctx.plans, self._profile.scans if self._profile else None)
            return None if table is None else self._select_limit(table)

        return self._select(run)

    def _select(self, run: Callable[[], pa.Table | None]) -> Result | None:
        """Run a SELECT, recording a query profile when enable_profile is set (none when `run` finds
        nothing to run and returns None)."""
        if not self.vars.flag("enable_profile"):
            table = run()
            return None if table is None else ResultSet(table)
        profile = QueryProfile(new_query_id(), self.info.user, self.database or "", self._sql,
                               dt.datetime.now().replace(microsecond=0), time.perf_counter_ns())
        self._profile = profile
        table = None
        try:
            table = run()
            profile.state = "EOF"
        except Exception:
            profile.state = "ERR"
            raise
        finally:
            self._profile = None
            profile.total_ns = time.perf_counter_ns() - profile.start_ns
            profile.end = dt.datetime.now().replace(microsecond=0)
            if table is not None or profile.state == "ERR":
                self.ctx.profiles.add(profile)
        return None if table is None else ResultSet(table)

    def _show_query_profile(self, s: st.ShowQueryProfile) -> Result:
        path = s.path.strip()
        everyone = self.ctx.users.is_admin(self.identity)  # a user sees the profiles of their own queries
        if path in ("", "/"):
            rows = [p.list_row() for p in self.ctx.profiles.recent() if everyone or p.user == self.identity.name]
            return ResultSet(pa.table({name: pa.array([r[i] for r in rows], pa.string())
                                       for i, name in enumerate(LIST_COLUMNS)}))
        query_id = path.strip("/").split("/")[0]
        profile = self.ctx.profiles.get(query_id)
        if profile is None or not (everyone or profile.user == self.identity.name):
            raise doris_error(f"query id {query_id} does not exist")
        return ResultSet(pa.table({"Profile": pa.array(profile.text(), pa.string())}))

    def _explain(self, s: st.Explain) -> Result:
        from planner.explain import explain_query

        query, files = bind_table_functions(s.query)
        lines = explain_query(query, self.query_context(files), s.level)
        return ResultSet(pa.table({"Explain String(Nereids Planner)": pa.array(lines, pa.string())}))

    def _evaluate(self, value: exp.Expression) -> Any:
        """A SET value: identifiers and ON/OFF are words, anything else an expression."""
        if isinstance(value, exp.Var) and value.name.upper() == "DEFAULT":
            return None
        if isinstance(value, exp.Var | exp.Identifier) or (isinstance(value, exp.Column) and not value.table):
            return value.name
        if isinstance(value, exp.Boolean):
            return 1 if value.this else 0
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            return int(value.this)  # `SET autocommit = 0`, which clients send on every connect: no query for it
        if isinstance(value, exp.Literal) and value.is_string:
            return value.this
        result = self.run_query(exp.select(value.copy()))
        return result.column(0)[0].as_py() if result.num_rows else None

    # -- INSERT -----------------------------------------------------------------------------------------
    def insert(self, s: st.Insert, local: pa.Table | None = None) -> Result:
        """Every INSERT is a load job (SHOW LOAD), run by the load pipeline (planner.loads). `local`: the rows,
        already computed (UPDATE)."""
        table = self.table(s.db, s.table)
        db = self._db(s.db)
        label = s.label or new_label()
        used = self.ctx.engine.catalog.get_txn_by_label(table.db_id, label) if s.label else None  # new: unused
        if used is not None and used.status != TXN_ABORTED:
            raise doris_error(f"Label [{label}] has already been used.")
        strict = self.vars.flag("enable_insert_strict")
        if s.overwrite:
            self._check_normal_state(table)
        if s.temporary:  # the rows go to the named temporary partitions only (in-process: a small, staged load)
            table = temp_partitions_view(table, s.partitions)
            s = replace(s, partitions=())
        generated = any(c.generated is not None for c in table.columns)
        if generated and local is None:
            check_insert_targets(table.name, table.columns, s.columns, s.values)
        request = LoadRequest(
            engine=self.ctx.engine, table=table, label=label, strict=strict,
            now=self.query_context().statement_time(), target_columns=s.columns, values=s.values, query=s.query,
            rows=local, partitions=() if s.partitions == ("*",) else s.partitions,
            overwrite=overwrite_of(table, s.partitions) if s.overwrite else None, temporary=s.temporary,
            max_filter_ratio=float(self.vars.get("insert_max_filter_ratio") or 0), options=self.load_options,
            settings=dict(self.ctx.config.fe), resolve=self._olap_ref, runner=self,
            generate=(lambda data: self._generate(table, data)) if generated else None)
        mode = self._group_commit_mode(s, local)
        if mode is not None:
            return self._insert_group_commit(request, mode)
        files = file_stats(s.query) if s.query is not None else (0, 0)
        on_spark = runs_on_spark(request, self.database, self._sources(s.query) if s.query is not None else None,
                                 files[1], self.ctx.config.get_int("insert_spark_threshold_mb", 64) * 1024 * 1024)
        owned = self.load_options.job is None
        job = self.ctx.loads.start(label, db, table.name, self.info.user, self.info.connection_id, strict,
                                   int(self.vars.get("insert_timeout") or 14400), spark=on_spark, files=files) \
            if owned else self.load_options.job
        if on_spark:
            job.on_cancel(lambda: _cancel_spark_group(job.job_group))
        try:
            outcome = run_load(request, job, on_spark)
        except LoadCancelled:
            if owned:
                job.fail(USER_CANCEL)
            raise doris_error(f"Load [{label}] cancelled: {USER_CANCEL}", 1317, "70100") from None
        except Exception as e:
            if owned:
                job.fail((getattr(e, "message", None) or str(e)).removeprefix("errCode = 2, detailMessage = "))
            raise
        if owned:
            job.finish(outcome.txn_id, outcome.loaded_rows, outcome.filtered_rows)
        if outcome.txn_id is None:
            return OkResult(affected_rows=0, warnings=outcome.filtered_rows)
        if outcome.filtered_rows:
            self.warnings = [("Warning", 1265, f"{outcome.filtered_rows} rows were filtered: they do not fit "
                                               "the table (enable_insert_strict = false)")]
        return OkResult(affected_rows=outcome.loaded_rows, info=_insert_info(label, outcome.txn_id),
                        warnings=outcome.filtered_rows, txn_id=outcome.txn_id, label=label)

    def _group_commit_mode(self, s: st.Insert, local: pa.Table | None) -> str | None:
        """sync_mode / async_mode when this INSERT joins its table's group commit: VALUES (or a small Stream Load's
        rows) without a label of its own, partitions, OVERWRITE or a held two-phase load; None otherwise."""
        options = self.load_options
        mode = self._group_commit_setting()
        if mode == "off_mode" or local is not None or s.overwrite or s.temporary or s.partitions:
            return None
        if options.precommit or options.job is not None:
            return None
        if options.group_commit is None and (s.values is None or s.label):
            return None  # Doris groups INSERT ... VALUES; a labelled INSERT keeps its own transaction
        return mode

    def _group_commit_setting(self) -> str:
        """This session's group_commit: a Stream Load's header, else the session variable."""
        return (self.load_options.group_commit or str(self.vars.get("group_commit"))).lower()

    def _insert_group_commit(self, request: LoadRequest, mode: str) -> Result:
        data, filtered = bind_rows(request, every_partition=True)
        if data.num_rows == 0:
            return OkResult(affected_rows=0, warnings=filtered)
        accepted = self.ctx.group_commits.submit(request.table, data, mode)
        if filtered:
            self.warnings = [("Warning", 1265, f"{filtered} rows were filtered: they do not fit the table "
                                               "(enable_insert_strict = false)")]
        status = "VISIBLE" if accepted.visible else "PREPARE"
        return OkResult(affected_rows=accepted.rows, warnings=filtered, txn_id=accepted.txn_id, label=accepted.label,
                        info=f"{{'label':'{accepted.label}', 'status':'{status}', 'txnId':'{accepted.txn_id}'}}")

    def _generate(self, table: OlapTable, data: pa.Table) -> pa.Table:
        """The rows with their generated columns computed (a query over the rows), NOT NULL ones checked."""
        def run(query: exp.Select, rows: pa.Table) -> pa.Table:
            source = ArrowTableSource("rows", rows)
            ctx = self.query_context()
            ctx.resolve_table = lambda db, name: source
            return execute_query(query, ctx)

        data = compute_generated(data, table.columns, run)
        for c in table.columns:
            if c.generated is not None and not c.nullable and data.column(c.name).null_count:
                raise doris_error(f"Insert has filtered data in strict mode. Reason: column({c.name}) is a NOT NULL "
                                  "generated column and its expression is NULL for a row")
        return data

    def _sources(self, query: exp.Expression) -> list[OlapTable] | None:
        """The tables an INSERT ... SELECT reads (their sizes choose where it runs); None when it reads a view."""
        tables = []
        for db, name in table_names(query):
            try:
                tables.append(self.table(db, name))
            except StatementError:
                return None  # a view (or a missing table, which the statement reports itself)
        return tables

    def _olap_ref(self, db: str | None, name: str) -> OlapRef:
        """A table a Spark load reads, at the snapshot taken now (statement start)."""
        self._check_select(db, name)  # Spark reads the tables the query names: the same SELECT_PRIV
        source = self.table(db, name)
        return OlapRef(str(self.ctx.engine.root), self._db(db), source.name, arrow_schema(source),
                       self.ctx.engine.snapshot(source))

    # -- DELETE -----------------------------------------------------------------------------------------
    def _delete(self, s: st.Delete) -> Result:
        table = self.table(s.db, s.table)
        db = self._db(s.db)
        source = OlapTableSource(self.ctx.engine, table, db_name=db)
        bound = bind_delete(s, source, db, self.query_context(), self.vars.flag("delete_without_partition"))
        engine = self.ctx.engine
        if isinstance(bound, KeyDelete):  # the WHERE runs as a query over the merged rows
            return run_key_delete(engine, bound, execute_query(bound.query, self.query_context()))
        if any(j.shadows for j in self.ctx.alter_jobs.unfinished_schema_changes(table)):
            # Doris's DeleteHandler: no DELETE condition while a schema change rewrites the table
            raise doris_error(f"Table's state is not normal: {table.name}")
        return run_predicate_delete(engine, bound)

    def _show_proc(self, s: st.ShowProc) -> Result:
        """SHOW PROC: '/', '/backends', '/frontends' and '/colocation_group' (the rest of Doris's proc tree is not
        kept)."""
        path = "/" + s.path.strip().strip("/")
        found = proc_table(self.ctx, path)
        if found is None:
            element = path.strip("/").split("/")[0]
            raise doris_error(f"Path[{s.path}]'s element[{element}] doesn't exist")
        return ResultSet(show.string_table(*found))

    def _show_nodes(self, s: st.ShowNodes) -> Result:
        if s.kind == "BACKENDS":
            return ResultSet(show.string_table(list(BACKEND_COLUMNS), backend_rows(self.ctx)))
        return ResultSet(show.string_table(list(FRONTEND_COLUMNS), frontend_rows(self.ctx)))

    def _show_data(self, s: st.ShowData) -> Result:
        engine = self.ctx.engine
        if s.table is not None:
            table = show.string_table(list(show_data.TABLE_COLUMNS), show_data.table_rows(engine,
                                                                                        self.table(s.db, s.table)))
        elif s.db or self.database:
            db = self._db(s.db)
            if engine.catalog.get_database(db) is None:
                raise doris_error(f"Unknown database '{db}'", 1049, "42000")
            table = show.string_table(list(show_data.DB_COLUMNS), show_data.database_rows(engine, db))
        else:
            visible = {d.name for d in engine.catalog.list_databases() if self.visible(d.name)}
            table = show.string_table(list(show_data.ALL_COLUMNS), show_data.all_rows(engine, visible))
        return ResultSet(self._shown(table, order_by=s.order_by))

    def _show_delete(self, s: st.ShowDelete) -> Result:
        db = self._db(s.db)
        database = self.ctx.engine.catalog.get_database(db)
        if database is None:
            raise doris_error(f"Unknown database '{db}'", 1049, "42000")
        return ResultSet(show.string_table(list(SHOW_DELETE_COLUMNS), show_delete_rows(self.ctx.engine.catalog,
                                                                                        database.db_id)))

    # -- loads ------------------------------------------------------------------------------------------
    def _show_load(self, s: st.ShowLoad) -> Result:
        db = self._db(s.db)
        return ResultSet(self._shown(self.ctx.loads.show_rows(db), s.where, s.order_by, s.limit, s.offset))

    def _cancel_load(self, s: st.CancelLoad) -> Result:
        db = self._db(s.db)
        matched = set(self._shown(self.ctx.loads.show_rows(db), s.where).column("JobId").to_pylist())
        jobs = [j for j in self.ctx.loads.jobs(db) if str(j.job_id) in matched]
        if not jobs:
            raise doris_error("Load job does not exist")
        cancelled = [j for j in jobs if j.cancel()]
        if not cancelled:
            raise doris_error("There is no uncompleted job")
        for job in cancelled:
            job.wait_done(timeout=60.0)  # the load thread aborts the transaction and records CANCELLED
        return OkResult()

    # -- LOAD LABEL and resources -----------------------------------------------------------------------
    def _load_label(self, s: st.LoadLabel) -> Result:
        return self.ctx.label_loads.submit(s, self._db(s.db), self.identity, self.info.host, self.info.connection_id)

    def _create_resource(self, s: st.CreateResource) -> Result:
        self.ctx.resources.create(s.name, dict(s.properties), s.if_not_exists)
        return OkResult()

    def _drop_resource(self, s: st.DropResource) -> Result:
        self.ctx.resources.drop(s.name, s.if_exists)
        return OkResult()

    def _show_resources(self, s: st.ShowResources) -> Result:
        # Doris lists the resources one may use or grant (ADMIN: all of them)
        rows = [r for r in self.ctx.resources.rows()
                if self.ctx.users.has_resource(self.identity, ("USAGE_PRIV", "GRANT_PRIV"), r[0])]
        names = set(show.like_filter(sorted({r[0] for r in rows}), s.like))
        rows = [r for r in rows if r[0] in names]
        table = show.string_table(list(SHOW_RESOURCES_COLUMNS), rows)
        return ResultSet(self._shown(table, s.where))

    # -- EXPORT -----------------------------------------------------------------------------------------
    _EXPORT_KEYS = OUTFILE_KEYS | {"label", "columns", "format", "timeout", "parallelism", "data_consistency"}

    def _export_table(self, s: st.ExportTable) -> Result:
        db = self._db(s.db)
        table = self.table(db, s.table)
        check_partitions(table, s.partitions)
        props = dict(s.properties)
        unknown = sorted(k for k in props if k not in self._EXPORT_KEYS)
        if unknown:
            raise doris_error(f"Unknown properties: {unknown}")
        label = props.get("label") or f"export_{uuid.uuid4()}"
        if self.ctx.exports.label_used(db, label):
            raise doris_error(f"Label [{label}] has already been used.")
        names = {c.name.lower(): c.name for c in table.columns}
        columns = [c.strip().strip("`") for c in props.get("columns", "").split(",") if c.strip()]
        for c in columns:
            if c.lower() not in names:
                raise doris_error(f"Unknown column [{c}] in table [{table.name}]")
        fmt = props.get("format", "csv").strip().lower()
        outfile_props = tuple((k, v) for k, v in s.properties if k in OUTFILE_KEYS)
        spec = outfile_spec(s.path, fmt, outfile_props, self.ctx.config)  # refused now, not in the job
        try:
            timeout = int(props.get("timeout", "7200"))
        except ValueError:
            raise doris_error(f"Invalid timeout: {props['timeout']}") from None
        ident = quote_ident
        text = (f"SELECT {', '.join(ident(names[c.lower()]) for c in columns) or '*'} FROM {ident(db)}."
                f"{ident(table.name)}" + (f" PARTITION ({', '.join(ident(p) for p in s.partitions)})"
                                          if s.partitions else "")
                + (f" WHERE {s.where}" if s.where is not None else ""))
        [parsed] = parse(text)
        assert isinstance(parsed, st.Query)
        query = parsed.expression
        task = {"partitions": list(s.partitions) or ["*"], "max_file_size": props.get("max_file_size", ""),
                "delete_existing_files": props.get("delete_existing_files", ""), "columns": props.get("columns", ""),
                "format": fmt, "column_separator": spec.column_separator, "line_delimiter": spec.line_delimiter,
                "db": db, "tbl": table.name, "tablet_num": sum(p.buckets for p in table.partitions)}
        try:
            tasks = max(1, int(props.get("parallelism", "1")))
        except ValueError:
            raise doris_error(f"Invalid parallelism: {props['parallelism']}") from None
        chosen = [p for p in table.partitions if not s.partitions or p.name.lower() in {n.lower() for n in s.partitions}]
        size = sum(p.data_size for p in chosen)
        on_spark = spark_available() and not any(c.type.upper().startswith("LARGEINT") for c in table.columns) and \
            size >= self.ctx.config.get_int("export_spark_threshold_mb", 64) * 1024 * 1024
        identity, client, host = self.identity, self.info.host, backend_port(self.ctx)[0]

        def run(job: ExportJob) -> list[list[str]]:
            worker = Session.acting_for(self.ctx, identity, client, db)
            worker.vars.set("query_timeout", job.timeout, "session")
            if job.spark:
                return self._export_on_spark(worker, job, query, spec, chosen, tasks, host)
            result = worker.run_query(query)
            if job.cancelled:
                return []
            return write_outfile(result, spec, host)

        self.ctx.exports.submit(lambda job_id: ExportJob(job_id, label, db, table.name, s.path, task, timeout,
                                                         spark=on_spark), run)
        return OkResult()

    @staticmethod
    def _export_on_spark(worker: Session, job: ExportJob, query: exp.Expression, spec: OutfileSpec,
                         partitions: Sequence[Partition], tasks: int, host: str) -> list[list[str]]:
        """A large EXPORT: Spark reads the chosen partitions at the job's snapshot and `tasks` executors each write
        their own files, as OUTFILE writes them (the in-process result's types, so the same text)."""
        chosen = {p.partition_id for p in partitions}

        def resolve(db: str | None, name: str) -> OlapRef:
            ref = worker._olap_ref(db, name)
            return replace(ref, versions={pid: v for pid, v in ref.versions.items() if pid in chosen})

        # PARTITION (..) is the snapshot's partitions on Spark; the schema comes from the query as written
        schema = worker.run_query(exp.select("*").from_(exp.Subquery(this=query.copy(), alias="e")).limit(0)).schema
        spark_query = query.copy()
        for t in spark_query.find_all(exp.Table):
            t.set("partition", None)
        job.on_cancel(lambda: _cancel_spark_group(job.job_group))
        prepare_directory(spec)
        work_dir = worker.ctx.engine.root / "export_tasks" / str(job.job_id)
        try:
            rows = map_query_on_spark(spark_query, resolve, dict(worker.ctx.config.fe), job.job_group,
                                      ExportTask(spec, schema, host, uuid.uuid4().hex), tasks, work_dir)
        finally:
            shutil.rmtree(work_dir, ignore_errors=True)
        if job.cancelled:
            return []
        mark_success(spec)
        return rows

    def _show_export(self, s: st.ShowExport) -> Result:
        db = self._db(s.db)
        where = s.where.transform(lambda n: exp.column("JobId") if isinstance(n, exp.Column) and
                                  n.name.lower() == "id" else n) if s.where is not None else None
        return ResultSet(self._shown(self.ctx.exports.rows(db), where, s.order_by, s.limit, s.offset))

    def _cancel_export(self, s: st.CancelExport) -> Result:
        db = self._db(s.db)
        matched = self._shown(self.ctx.exports.rows(db), s.where).column("JobId").to_pylist()
        if not matched:
            raise doris_error("Export job not exist")
        if not self.ctx.exports.cancel([int(j) for j in matched]):
            raise doris_error("There is no uncompleted job")
        return OkResult()

    def cancel(self) -> None:
        """KILL QUERY of this connection (from another thread): interrupt its running query and cancel its
        running load, if any."""
        guard = self._guard
        if guard is not None:
            guard.cancel()
        for job in self.ctx.loads.running_for(self.info.connection_id):
            job.cancel()

    # -- DDL --------------------------------------------------------------------------------------------
    def _create_database(self, s: st.CreateDatabase) -> Result:
        self.ctx.engine.catalog.create_database(s.name, s.if_not_exists)
        return OkResult()

    def _drop_database(self, s: st.DropDatabase) -> Result:
        self.ctx.engine.catalog.drop_database(s.name, s.if_exists)
        if self.database == s.name:
            self.database = None
        return OkResult()

    def _use(self, s: st.Use) -> Result:
        self.init_db(s.db)
        return OkResult()

    def _create_table(self, s: st.CreateTable) -> Result:
        if s.query is not None:
            return table_writes.create_table_as_select(self, s)
        db = self._db(s.db)
        if self.ctx.engine.catalog.get_database(db) is None:
            raise doris_error(f"Unknown database '{db}'", 1049, "42000")
        dynamic = self.ctx.dynamic_partitions
        spec = bind_create_table(s, CreateTableOptions(dynamic.max_partitions, dynamic.bucket_policy()))
        with self.ctx.ddl_lock:
            check_colocation(self.ctx.engine.catalog, db, spec)
            table = self.ctx.engine.catalog.create_table(db, spec, s.if_not_exists)
        if table is not None:
            dynamic.after_create(table)
        return OkResult()

    def _drop_table(self, s: st.DropTable) -> Result:
        db = self._db(s.db)
        if self.ctx.engine.catalog.get_database(db) is None:
            raise doris_error(f"Unknown database '{db}'", 1049, "42000")
        self.ctx.engine.catalog.drop_table(db, s.name, s.if_exists)
        return OkResult()

    def _truncate(self, s: st.TruncateTable) -> Result:
        table = self.table(s.db, s.name)
        self._check_normal_state(table)
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.truncate_table(self._db(s.db), table.name, s.partitions or None)
        return OkResult()

    # -- ALTER TABLE ... PARTITION ----------------------------------------------------------------------
    def _add_partition(self, s: st.AddPartition) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        sizer = auto_bucket_sizer(self.ctx.config.get, self.ctx.engine.root)
        bound = bind_add_partition(table, s, sizer)
        if bound is not None:
            with self.ctx.ddl_lock:
                self.ctx.engine.catalog.add_partitions(table.table_id, [bound.item], [bound.buckets],
                                                       temporary=s.temporary)
        return OkResult()

    def _replace_partition(self, s: st.ReplacePartition) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        strict, use_temp_name = bind_replace_partition(table, s)
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.replace_partitions(table.table_id, s.names, s.temp_names, strict, use_temp_name)
        return OkResult()

    def _add_partitions(self, s: st.AddPartitions) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        bound = bind_add_partitions(table, s, auto_bucket_sizer(self.ctx.config.get, self.ctx.engine.root))
        if len(bound) > self.ctx.config.get_int("max_multi_partition_num", 4096):
            raise doris_error(f"The number of Multi partitions too much, should not exceed:"
                              f"{self.ctx.config.get_int('max_multi_partition_num', 4096)}")
        if bound:
            with self.ctx.ddl_lock:
                self.ctx.engine.catalog.add_partitions(table.table_id, [b.item for b in bound],
                                                       [b.buckets for b in bound])
        return OkResult()

    def _modify_distribution(self, s: st.ModifyDistribution) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        distribution = bind_modify_distribution(table, s)
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.set_distribution(table.table_id, distribution)
        return OkResult()

    def _drop_partition(self, s: st.DropPartition) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        names = bind_drop_partition(table, s)
        retention = table.props.get(RETENTION_PROPERTY, "0")
        if names and not s.force and not s.temporary and retention_seconds(table.props) > 0:
            kept = [n for n in names if (p := table.partition(n)) is not None and p.visible_version > PARTITION_INIT_VERSION]
            if kept:  # its rows are part of the versions time travel keeps: dropping them is asked for by name
                raise doris_error(f"Partition {kept[0]} of table {table.name} holds rows of the versions its "
                                  f"time_travel_retention ({retention}) keeps; DROP PARTITION {kept[0]} FORCE drops "
                                  "them, and those versions can no longer be read")
        if names:
            with self.ctx.ddl_lock:
                self.ctx.engine.catalog.drop_partitions(table.table_id, names, temporary=s.temporary)
        return OkResult()

    def _modify_partition(self, s: st.ModifyPartition) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        names, props = bind_modify_partition(table, s)
        if names and props:
            with self.ctx.ddl_lock:
                self.ctx.engine.catalog.modify_partition_properties(table.table_id, names, props)
        return OkResult()

    # -- ALTER TABLE ... ROLLUP -------------------------------------------------------------------------
    @staticmethod
    def _check_no_temp_partitions(table: OlapTable) -> None:
        """Doris: no schema change or rollup while the table has temporary partitions."""
        if table.temp_partitions:
            raise doris_error("Can not alter table when there are temp partitions in table")

    def _check_normal_state(self, table: OlapTable) -> None:
        if self.ctx.alter_jobs.unfinished(table):
            raise doris_error(f"Table[{table.name}]'s state(ROLLUP) is not NORMAL. Do not allow doing ALTER ops")
        if self.ctx.alter_jobs.unfinished_schema_changes(table):
            raise doris_error(
                f"Table[{table.name}]'s state(SCHEMA_CHANGE) is not NORMAL. Do not allow doing ALTER ops")

    # -- ADD / DROP INDEX, ALTER TABLE SET bloom filter properties --------------------------------------
    def _alter_indexes(self, table: OlapTable, index_defs: Any = None, properties: Any = None,
                       adds: bool = False) -> Result:
        """Commit the new definition at once; when it adds an index to a table holding data, the same
        commit creates the schema-change job that rewrites the rowsets written before it."""
        has_data = any(p.visible_version > PARTITION_INIT_VERSION for p in table.partitions)
        timeout = self.ctx.alter_jobs.default_timeout if adds and has_data else None
        with self.ctx.ddl_lock:
            job = self.ctx.engine.catalog.alter_table_indexes(table.table_id, index_defs, properties, timeout)
        if job is not None:
            self.ctx.alter_jobs.kick()
        return OkResult()

    def _add_index(self, s: st.AddIndex) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        defs = bind_add_index(table, s.index, s.if_not_exists)
        if defs is None:
            return OkResult()
        return self._alter_indexes(table, index_defs=defs, adds=(defs[-1].index_type or "").upper() == "BITMAP")

    def _drop_index(self, s: st.DropIndex) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        defs = bind_drop_index(table, s.name, s.if_exists)
        return OkResult() if defs is None else self._alter_indexes(table, index_defs=defs)

    def _alter_set_properties(self, s: st.AlterTableSetProperties) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        dynamic = {k: v for k, v in s.properties if k.lower().startswith("dynamic_partition.")}
        if dynamic:
            if len(dynamic) != len(s.properties):
                raise doris_error("Can not set dynamic_partition properties with other properties at once")
            self.ctx.dynamic_partitions.alter_properties(table, self._db(s.db), dynamic)
            return OkResult()
        if all(k.lower() in ALTERABLE_PROPERTIES for k, _ in s.properties):  # compaction, group commit, retention
            self.ctx.engine.catalog.set_table_properties(table.table_id,
                                                         bind_alter_properties(table.properties, s.properties))
            if any(k.lower() == RETENTION_PROPERTY for k, _ in s.properties):
                self.ctx.engine.readers.reschedule()  # the retained rowsets' deletion times follow the new window
            return OkResult()
        props = bind_set_bloom_properties(table, s.properties)
        before, after = table.props, dict(props)
        old_cols = {c.strip().lower() for c in before.get("bloom_filter_columns", "").split(",") if c.strip()}
        new_cols = {c.strip().lower() for c in after.get("bloom_filter_columns", "").split(",") if c.strip()}
        adds = bool(new_cols - old_cols) or (
            bool(new_cols) and before.get("bloom_filter_fpp") != after.get("bloom_filter_fpp"))
        return self._alter_indexes(table, properties=props, adds=adds)

    def _alter_rename(self, s: st.AlterTableRename) -> Result:
        """Renames are catalog changes (Doris: Env.renameTable / renameRollup / renamePartition)."""
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        if s.kind == "TABLE":
            if not COMMON_NAME.match(s.new):
                raise doris_error(f"Incorrect table name '{s.new}'", 1103, "42000")
        elif s.kind == "PARTITION":
            check_partition_name(s.new)
        elif not COMMON_NAME.match(s.new):
            raise doris_error(f"Incorrect index name '{s.new}'")
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.rename(table.table_id, s.kind, s.old, s.new)
        return OkResult()

    def _alter_columns(self, s: st.AlterColumns) -> Result:
        """ADD / DROP / MODIFY / RENAME COLUMN, ORDER BY: a light schema change is one catalog commit (the rows
        already written are read through the new schema); one that needs the rows rewritten starts a schema
        change job and returns, as Doris does (SHOW ALTER TABLE COLUMN follows it)."""
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        self._check_no_temp_partitions(table)
        self._check_delete_columns(table, s)
        change = bind_schema_change(table, s)
        catalog = self.ctx.engine.catalog
        with self.ctx.ddl_lock:
            if change.rewrite:
                catalog.create_rewrite_job(table.table_id, change.columns, change.indexes, change.partition_info,
                                           change.distribution, change.properties, change.index_defs,
                                           change.renames, change.rewrite, self.ctx.alter_jobs.default_timeout)
            else:
                catalog.change_schema(table.table_id, change.columns, change.indexes, change.partition_info,
                                      change.distribution, change.properties, change.index_defs, change.renames)
        if change.rewrite:
            self.ctx.alter_jobs.kick()
        return OkResult()

    def _check_delete_columns(self, table: OlapTable, s: st.AlterColumns) -> None:
        """A DELETE's condition needs the columns it names (renames rewrite the names in it): dropping one waits
        until compaction has applied the deletes that name it."""
        touched = {c.name.lower(): c.name for c in s.clauses if isinstance(c, st.DropColumn) and c.rollup is None}
        if not touched:
            return
        catalog = self.ctx.engine.catalog
        for tablet in catalog.tablets(table.table_id, index_id=table.base_index_id):
            deletes = [rs for rs in catalog.all_rowsets(tablet.tablet_id) if rs.kind == "DELETE"]
            for name in delete_columns(deletes):
                if name.lower() in touched:
                    raise doris_error(f"Column[{touched[name.lower()]}] is used by a DELETE condition not yet "
                                      "compacted away; run compaction on the table before dropping it")

    def _alter_comment(self, s: st.AlterTableComment) -> Result:
        table = self.table(s.db, s.table)
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.set_table_comment(table.table_id, s.comment)
        return OkResult()

    def _add_rollup(self, s: st.AddRollup) -> Result:
        """Asynchronous, as in Doris: the statement creates the jobs; SHOW ALTER TABLE ROLLUP follows them."""
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        self._check_no_temp_partitions(table)
        bound = bind_add_rollup(table, s, self.ctx.alter_jobs.default_timeout)
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.create_rollup_jobs(
                table.table_id, [(b.spec, b.source_index_id, b.timeout_second) for b in bound])
        self.ctx.alter_jobs.kick()
        return OkResult()

    def _drop_rollup(self, s: st.DropRollup) -> Result:
        table = self.table(s.db, s.table)
        self._check_normal_state(table)
        names = bind_drop_rollup(table, s)
        with self.ctx.ddl_lock:
            self.ctx.engine.catalog.drop_rollups(table.table_id, names)
        return OkResult()

    def _show_alter_rollup(self, s: st.ShowAlterTableRollup) -> Result:
        db = self._db(s.db)
        database = self.ctx.engine.catalog.get_database(db)
        if database is None:
            raise doris_error(f"Unknown database '{db}'", 1049, "42000")
        table = (self.ctx.alter_jobs.show_column_rows(database.db_id) if s.kind == "COLUMN"
                 else self.ctx.alter_jobs.show_rows(database.db_id))
        return ResultSet(self._shown(table, s.where, s.order_by, s.limit, s.offset))

    def _cancel_alter_rollup(self, s: st.CancelAlterTableRollup) -> Result:
        table = self.table(s.db, s.table)
        if s.kind == "COLUMN":
            sc = self.ctx.alter_jobs.unfinished_schema_changes(table)
            if not sc:
                raise doris_error(f"Table[{table.name}] is under NORMAL state. Use 'ALTER TABLE' instead.")
            if s.job_ids:
                sc = [j for j in sc if j.job_id in set(s.job_ids)]
            self.ctx.alter_jobs.cancel_schema_changes(sc)
            return OkResult()
        jobs = self.ctx.alter_jobs.unfinished(table)
        if not jobs:
            raise doris_error(f"Table[{table.name}] is not under ROLLUP. Use 'ALTER TABLE DROP ROLLUP' if you want to.")
        if s.job_ids:
            jobs = [j for j in jobs if j.job_id in set(s.job_ids)]
            if not jobs:
                raise doris_error(f"Table[{table.name}] is not under ROLLUP. Maybe it has old alter job")
        self.ctx.alter_jobs.cancel(jobs)
        return OkResult()

    # -- SHOW / DESC ------------------------------------------------------------------------------------
    def _describe(self, s: st.Describe) -> Result:
        view = self._view_record(s.db, s.name)
        if view is not None:
            return views.describe_view(self, self._db(s.db), view)
        table = self._describe_target(s.db, s.name)
        if isinstance(table, pa.Schema):
            rows = [(f.name, str(f.type).upper(), "Yes", "false", None, "") for f in table]
            return ResultSet(show.string_table(["Field", "Type", "Null", "Key", "Default", "Extra"], rows))
        if s.all:
            return ResultSet(show.string_table(
                ["IndexName", "IndexKeysType", "Field", "Type", "InternalType", "Null", "Key", "Default",
                 "Extra", "Visible", "DefineExpr", "WhereClause"], describe_all_rows(table)))
        return ResultSet(show.string_table(["Field", "Type", "Null", "Key", "Default", "Extra"],
                                           describe_rows(table)))

    def _describe_target(self, db: str | None, name: str) -> OlapTable | pa.Schema:
        if (db or self.database or "").lower() == "information_schema":
            return self._source(db, name).schema
        return self.table(db, name)

    def _show_create_table(self, s: st.ShowCreateTable) -> Result:
        if self._view_record(s.db, s.name) is not None:  # SHOW CREATE TABLE of a view shows the view, as Doris
            return views.show_create_view(self, s.db, s.name)
        return ResultSet(show.show_create(self.table(s.db, s.name)))

    def _show_create_view(self, s: st.ShowCreateView) -> Result:
        result = views.show_create_view(self, s.db, s.name)
        if result is None:
            raise doris_error(f"Unknown view '{s.name}'", 1146, "42S02")
        return result

    def _show_create_database(self, s: st.ShowCreateDatabase) -> Result:
        if s.name.lower() != "information_schema" and self.ctx.engine.catalog.get_database(s.name) is None:
            raise doris_error(f"Unknown database '{s.name}'", 1049, "42000")
        return ResultSet(show.string_table(["Database", "Create Database"],
                                           [(s.name, f"CREATE DATABASE `{s.name}`")]))

    def _show_databases(self, s: st.ShowDatabases) -> Result:
        names = ["information_schema"] + sorted(d.name for d in self.ctx.engine.catalog.list_databases()
                                                if self.visible(d.name))
        table = show.string_table(["Database"], [(n,) for n in show.like_filter(names, s.like)])
        return ResultSet(self._shown(table, s.where))

    def _show_tables(self, s: st.ShowTables) -> Result:
        db = self._db(s.db)
        if db.lower() == "information_schema":
            names = self.ctx.information_schema.table_names()
            kind = "SYSTEM VIEW"
        else:
            if self.ctx.engine.catalog.get_database(db) is None:
                raise doris_error(f"Unknown database '{db}'", 1049, "42000")
            catalog = self.ctx.engine.catalog
            kinds = {t.name: "BASE TABLE" for t in catalog.list_tables(db)}
            kinds.update({v.name: "VIEW" for v in catalog.list_views(db)})
            names = sorted(n for n in kinds if self.visible(db, n))
        names = show.like_filter(names, s.like)
        column = f"Tables_in_{db}"
        if s.full:
            table = show.string_table([column, "Table_type"], [(n, kind if db.lower() == "information_schema"
                                                                else kinds[n]) for n in names])
        else:
            table = show.string_table([column], [(n,) for n in names])
        return ResultSet(self._shown(table, s.where))

    def _show_columns(self, s: st.ShowColumns) -> Result:
        target = self._describe_target(s.db, s.table)
        if isinstance(target, pa.Schema):
            rows = [(f.name, str(f.type).upper(), "YES", "", None, "") for f in target]
            return ResultSet(show.string_table(["Field", "Type", "Null", "Key", "Default", "Extra"], rows))
        return ResultSet(self._shown(show.show_columns(target, s.full, s.like), s.where))

    def _show_index(self, s: st.ShowIndex) -> Result:
        return ResultSet(show.show_index(self.table(s.db, s.table)))

    def _show_table_status(self, s: st.ShowTableStatus) -> Result:
        db = self._db(s.db)
        catalog = self.ctx.engine.catalog
        if catalog.get_database(db) is None:
            return ResultSet(show.show_table_status([]))
        by_name = {t.name: t for t in catalog.list_tables(db) if self.visible(db, t.name)}
        tables = [by_name[n] for n in show.like_filter(sorted(by_name), s.like)]
        return ResultSet(self._shown(show.show_table_status(tables), s.where))

    def _show_variables(self, s: st.ShowVariables) -> Result:
        rows = self.vars.rows("global" if s.scope == "GLOBAL" else "session")
        keep = set(show.like_filter([r[0] for r in rows], s.like))
        table = show.string_table(["Variable_name", "Value", "Default_Value", "Changed"],
                                  [r for r in rows if r[0] in keep])
        return ResultSet(self._shown(table, s.where))

    def _show_simple(self, s: st.ShowSimple) -> Result:
        kind = s.kind.upper()
        if kind == "ENGINES":
            return ResultSet(show.show_engines())
        if kind in ("CHARSET", "CHARACTER SET"):
            return ResultSet(show.show_charset())
        if kind == "COLLATION":
            return ResultSet(show.show_collation())
        if kind == "PLUGINS":
            return ResultSet(show.show_plugins())
        if kind in ("WARNINGS", "ERRORS"):
            return ResultSet(show.string_table(["Level", "Code", "Message"], self.warnings))
        if kind == "STATUS":
            return ResultSet(show.string_table(["Variable_name", "Value"], []))
        if kind == "PROCESSLIST":
            return ResultSet(self._processlist())
        raise doris_error(f"Unsupported statement: SHOW {kind}")

    def _processlist(self) -> pa.Table:
        names = ["CurrentConnected", "Id", "User", "Host", "LoginTime", "Catalog", "Db", "Command", "Time",
                 "State", "QueryId", "Info"]
        rows = []
        everyone = self.ctx.users.is_admin(self.identity)
        for c in self.ctx.server.connections() if self.ctx.server is not None else []:
            get = c.get if isinstance(c, dict) else lambda k, c=c: getattr(c, k, None)
            if not everyone and get("user") != self.identity.name:
                continue  # a user sees only their own connections, as in Doris
            rows.append(("Yes" if get("id") == self.info.connection_id else "No", get("id"), get("user"),
                         get("host"), get("login_time"), "internal", get("db"), get("command"), get("time"),
                         get("state"), "", get("info")))
        return show.string_table(names, rows)

    def _show_dynamic_partition_tables(self, s: st.ShowDynamicPartitionTables) -> Result:
        db = self._db(s.db)
        if self.ctx.engine.catalog.get_database(db) is None:
            raise doris_error(f"Unknown database '{db}'", 1049, "42000")
        rows = [r for r in self.ctx.dynamic_partitions.show_rows(db) if self.visible(db, r[0])]
        table = show.string_table(SHOW_DYNAMIC_PARTITION_TABLES_COLUMNS, rows)
        return ResultSet(self._shown(table, s.where))

    def _show_partitions(self, s: st.ShowPartitions) -> Result:
        db = self._db(s.db)
        if db.lower() == "information_schema":
            self._source(s.db, s.table)  # an unknown name fails as a missing table
            raise doris_error(f"table type is not OLAP, tableName={s.table}, type=SCHEMA")
        table = self.table(s.db, s.table)
        return ResultSet(show_partitions(table, s.where, s.order_by, s.limit, s.offset, s.temporary))

    def _show_table_versions(self, s: st.ShowTableVersions) -> Result:
        table = self.table(s.db, s.table)
        tz = self.query_context().tzinfo()
        versions = self.ctx.engine.catalog.table_versions(table.table_id)
        return ResultSet(self._shown(show.show_table_versions(table, versions, tz), s.where, s.order_by, s.limit,
                                     s.offset))

    def _rollup_advice(self, s: st.AdminShowRollupAdvice) -> Result:
        table = self.table(s.db, s.table)
        return ResultSet(advise(self.ctx.engine, self._db(s.db), table, s.limit, self.vars.get("sql_mode"),
                                self.query_context()))

    def _show_tablets(self, s: st.ShowTablets) -> Result:
        table = self.table(s.db, s.table)
        return ResultSet(show_tablets(self.ctx.engine, table, s.partitions, s.where, s.order_by, s.limit, s.offset,
                                      self.ctx.http_base))

    def _show_config(self, s: st.ShowConfig) -> Result:
        rows = [(k, v, "string", str(k in MUTABLE_FE_KEYS).lower(), "false", "")
                for k, v in self.ctx.config.items_fe() if k != "root_password"]
        keep = set(show.like_filter([r[0] for r in rows], s.like))
        return ResultSet(show.string_table(["Key", "Value", "Type", "IsMutable", "MasterOnly", "Comment"],
                                           [r for r in rows if r[0] in keep]))

    def _admin_set_config(self, s: st.AdminSetConfig) -> Result:
        self.ctx.set_frontend_config(s.configs)
        return OkResult()

    def _shown(self, table: pa.Table, where: exp.Expression | None = None, order_by: Sequence[exp.Ordered] = (),
               limit: int | None = None, offset: int | None = None) -> pa.Table:
        """A SHOW output narrowed by its WHERE, ORDER BY and LIMIT [OFFSET] (one query over it)."""
        if where is None and not order_by and limit is None and not offset:
            return table
        query = exp.select("*").from_("show")
        if where is not None:
            query = query.where(where.copy())
        if order_by:
            query = query.order_by(*[o.copy() for o in order_by])
        if limit is not None:
            query = query.limit(limit)
        if offset:
            query = query.offset(offset)
        return self._over(table, query)

    def _over(self, table: pa.Table, query: exp.Select) -> pa.Table:
        """A query over a SHOW output (WHERE, ORDER BY), the output being the table `show`."""
        source = ArrowTableSource("show", table)
        ctx = self.query_context()
        ctx.resolve_table = lambda db, name: source
        return execute_query(query, ctx)

    # -- SET, users, connections ------------------------------------------------------------------------
    def _set(self, s: st.SetVariables) -> Result:
        for scope, name, value in s.assignments:
            evaluated = self._evaluate(value)
            self.vars.set(name, evaluated, scope.lower())
            if scope.upper() == "GLOBAL" and name.lower() == "max_allowed_packet" and self.ctx.server is not None:
                # connections opened from now on read statements up to the new size (as MySQL)
                self.ctx.server.max_allowed_packet = int(self.vars.get("max_allowed_packet", "global"))
        return OkResult()

    def _kill(self, s: st.Kill) -> Result:
        owner = next((c.user for c in self.ctx.server.connections() if c.id == s.connection_id), None) \
            if self.ctx.server is not None else None
        if owner is not None and not accounts.may_kill(self, owner):
            raise doris_error(f"You are not owner of thread or query: {s.connection_id}", 1095, "HY000")
        if self.ctx.server is None or not self.ctx.server.kill(s.connection_id, query_only=s.query_only):
            raise doris_error(f"Unknown thread id: {s.connection_id}", 1094, "HY000")
        return OkResult()

    def _transaction(self, s: st.Transaction) -> Result:
        return OkResult()  # every statement commits by itself; BEGIN/COMMIT/ROLLBACK are accepted no-ops

    HANDLERS: dict[type, Callable[[Session, Any], Result]] = {
        st.Query: _query,
        st.SelectIntoOutfile: _select_into_outfile,
        st.ExportTable: _export_table,
        st.LoadLabel: _load_label,
        st.CreateResource: _create_resource,
        st.DropResource: _drop_resource,
        st.ShowResources: _show_resources,
        st.ShowExport: _show_export,
        st.CancelExport: _cancel_export,
        st.Explain: _explain,
        st.Insert: insert,
        st.Delete: _delete,
        st.ShowDelete: _show_delete,
        st.ShowProc: _show_proc,
        st.ShowNodes: _show_nodes,
        st.ShowData: _show_data,
        st.ShowLoad: _show_load,
        st.ShowQueryProfile: _show_query_profile,
        st.CancelLoad: _cancel_load,
        st.CreateDatabase: _create_database,
        st.DropDatabase: _drop_database,
        st.Use: _use,
        st.CreateTable: _create_table,
        st.DropTable: _drop_table,
        st.TruncateTable: _truncate,
        st.AddPartition: _add_partition,
        st.DropPartition: _drop_partition,
        st.ReplacePartition: _replace_partition,
        st.ModifyPartition: _modify_partition,
        st.AddRollup: _add_rollup,
        st.AlterTableRename: _alter_rename,
        st.AlterTableComment: _alter_comment,
        st.AlterColumns: _alter_columns,
        st.AddPartitions: _add_partitions,
        st.ModifyDistribution: _modify_distribution,
        st.DropRollup: _drop_rollup,
        st.AddIndex: _add_index,
        st.DropIndex: _drop_index,
        st.AlterTableSetProperties: _alter_set_properties,
        st.ShowAlterTableRollup: _show_alter_rollup,
        st.CancelAlterTableRollup: _cancel_alter_rollup,
        st.Describe: _describe,
        st.ShowCreateTable: _show_create_table,
        st.ShowCreateView: _show_create_view,
        **views.SESSION_HANDLERS,
        **table_writes.SESSION_HANDLERS,
        st.ShowCreateDatabase: _show_create_database,
        st.ShowDatabases: _show_databases,
        st.ShowTables: _show_tables,
        st.ShowColumns: _show_columns,
        st.ShowIndex: _show_index,
        st.ShowTableStatus: _show_table_status,
        st.ShowVariables: _show_variables,
        st.ShowSimple: _show_simple,
        st.ShowPartitions: _show_partitions,
        st.ShowTablets: _show_tablets,
        st.ShowTableVersions: _show_table_versions,
        st.AdminShowRollupAdvice: _rollup_advice,
        st.ShowDynamicPartitionTables: _show_dynamic_partition_tables,
        st.ShowConfig: _show_config,
        st.AdminSetConfig: _admin_set_config,
        st.SetVariables: _set,
        **accounts.SESSION_HANDLERS,
        st.Kill: _kill,
        st.Transaction: _transaction,
    }

