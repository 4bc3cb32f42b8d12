"""LOAD LABEL (Doris's Broker Load, and Spark Load WITH RESOURCE) from files on this machine: an asynchronous job
(the statement returns at once; SHOW LOAD follows it: PENDING, ETL for Spark, LOADING, FINISHED or CANCELLED).

Each DATA INFILE clause and path becomes the INSERT ... SELECT FROM local(...) a Stream Load with the same
settings would run (server/stream_load.py builds it: columns and SET, WHERE, separators, format, partitions),
run by the user who submitted the load. Every INSERT writes and holds its rows (engine.hold); when all are
written they are published one after another, and when one fails the others are dropped: one label, all the
tables, all or nothing (the publishes are separate catalog commits, so a crash between them is the one gap)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from planner.loads.pipeline import spark_available
from planner.loads.request import LoadCancelled, LoadOptions
from server.loads.jobs import USER_CANCEL, LoadJob
from server.loads.stream_load import StreamLoad, StreamLoadError, load_session
from server.results import OkResult
from sql import statements as st
from sql.errors import analysis_error

if TYPE_CHECKING:
    from server.access import Identity
    from server.session import SessionContext

log = logging.getLogger("dorislite.loads")

_LOAD_KEYS = frozenset({"timeout", "max_filter_ratio", "strict_mode", "timezone", "exec_mem_limit",
                        "load_parallelism", "send_batch_parallelism", "load_to_single_tablet", "priority",
                        "skip_lines", "trim_double_quotes", "enclose", "escape"})


def _local_path(path: str) -> str:
    if path.lower().startswith("file://"):
        return path[len("file://"):]
    if "://" in path:
        raise analysis_error(f"dorislite reads files on its own disk only (file:///path or /path): {path}")
    return path


def _headers(desc: st.DataDescription, props: dict[str, str]) -> dict[str, str]:
    """The Stream Load headers that describe the same load."""
    headers = {k: v for k, v in props.items() if k in ("skip_lines", "trim_double_quotes", "enclose", "escape")}
    headers.update(dict(desc.properties))
    if desc.column_separator is not None:
        headers["column_separator"] = desc.column_separator
    if desc.line_delimiter is not None:
        headers["line_delimiter"] = desc.line_delimiter
    headers["format"] = desc.format or "csv"
    if desc.columns or desc.sets:
        headers["columns"] = ", ".join([*(f"`{c}`" for c in desc.columns), *desc.sets])
    if desc.where:
        headers["where"] = desc.where
    if desc.partitions:
        headers["partitions"] = ",".join(desc.partitions)
    return headers


class LabelLoads:
    def __init__(self, ctx: SessionContext) -> None:
        self.ctx = ctx
        self.loader = StreamLoad(ctx)

    def submit(self, s: st.LoadLabel, db: str, identity: Identity, client: str, connection_id: int) -> OkResult:
        """Check what can be checked now (tables, files, label, resource), register the job, run it."""
        props = dict(s.properties)
        unknown = sorted(k for k in props if k not in _LOAD_KEYS)
        if unknown:
            raise analysis_error(f"Unknown properties: {unknown}")
        catalog = self.ctx.engine.catalog
        database = catalog.get_database(db)
        if database is None:
            raise analysis_error(f"Unknown database '{db}'", 1049, "42000")
        used = any(j.label == s.label and j.state != "CANCELLED" for j in self.ctx.loads.jobs(db))
        txn = catalog.get_txn_by_label(database.db_id, s.label)
        if used or (txn is not None and txn.status != "ABORTED"):
            raise analysis_error(f"Label [{s.label}] has already been used.")
        for desc in s.descriptions:
            if catalog.get_table(db, desc.table) is None:
                raise analysis_error(f"Table [{desc.table}] does not exist in database [{db}].", 1146, "42S02")
            self.ctx.users.require_table(identity, "LOAD_PRIV", db, desc.table)
            for path in desc.paths:
                _local_path(path)
        if s.kind == "SPARK":
            resource = s.resource or ""
            if self.ctx.resources.get(resource) is not None and \
                    not self.ctx.users.has_resource(identity, ("USAGE_PRIV",), resource):
                raise analysis_error(f"USAGE denied to user '{identity.name}'@'{identity.client}' for resource "
                                     f"'{resource}'")
            self.ctx.resources.check_usable(resource, self.ctx.config)
            if not spark_available():
                raise analysis_error("Spark is not available to this server (pyspark is not installed)")
        try:
            timeout = int(props.get("timeout", "14400"))
            float(props.get("max_filter_ratio", "0") or 0)
        except ValueError:
            raise analysis_error("timeout and max_filter_ratio must be numbers") from None
        job = self.ctx.loads.start(s.label, db, s.descriptions[0].table, identity.name, connection_id,
                                   props.get("strict_mode", "false").lower() == "true", timeout,
                                   spark=s.kind == "SPARK", kind=s.kind, comment=s.comment)
        threading.Thread(target=self._run, args=(s, db, job, identity, client), name=f"load-{job.job_id}",
                         daemon=True).start()
        return OkResult()

    def _run(self, s: st.LoadLabel, db: str, job: LoadJob, identity: Identity, client: str) -> None:
        props = dict(s.properties)
        engine = self.ctx.engine
        held: list[int] = []
        loaded = filtered = 0
        try:
            session = load_session(self.ctx, identity, client, db, {**props, "timeout": str(job.timeout)})
            session.load_options = LoadOptions(path="spark" if s.kind == "SPARK" else "auto", precommit=True, job=job)
            if s.kind == "SPARK":
                job.etl()
            items = [(desc, _local_path(path)) for desc in s.descriptions for path in desc.paths]
            for i, (desc, path) in enumerate(items):
                if job.cancelled:
                    raise LoadCancelled()
                label = s.label if i == 0 else f"{s.label}__{i}"
                sql, _ = self.loader.statement(session, db, desc.table, _headers(desc, props), Path(path), label)
                [result] = session.execute(sql, False)
                assert isinstance(result, OkResult)
                if result.txn_id is not None:
                    held.append(result.txn_id)
                loaded += result.affected_rows
                filtered += result.warnings
            if job.cancelled:
                raise LoadCancelled()
            for txn_id in list(held):
                engine.commit_precommitted(txn_id)
                held.remove(txn_id)
            job.finish(job.txn_id, loaded, filtered)
        except BaseException as e:  # noqa: BLE001 - every failure ends the job CANCELLED with its reason
            for txn_id in held:
                try:
                    engine.abort_precommitted(txn_id, "the load failed")
                except Exception:  # noqa: BLE001 - already gone
                    log.debug("aborting held txn %s", txn_id, exc_info=True)
            if isinstance(e, LoadCancelled) or job.cancelled:
                job.fail(USER_CANCEL)
            else:
                message = e.message if isinstance(e, StreamLoadError) else getattr(e, "message", None) or str(e)
                job.fail(str(message).removeprefix("errCode = 2, detailMessage = "))
