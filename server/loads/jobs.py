"""Load jobs: every INSERT (in-process or on Spark) as a job SHOW LOAD lists and CANCEL LOAD / KILL QUERY
can stop.

The catalog's transactions say whether data became visible; this registry adds what SHOW LOAD shows and
the catalog does not keep (user, row counts, progress, error message, times). Jobs are appended as JSON
lines to `<root>/load_jobs.jsonl` on each state change, so finished loads are still listed after a
restart; a job the previous process left PENDING/LOADING is marked CANCELLED at start (its transaction
was never published: the storage engine removes its staged files and the catalog keeps it unpublished).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TextIO

import pyarrow as pa

log = logging.getLogger("dorislite.loads")

PENDING, ETL, LOADING, FINISHED, CANCELLED = "PENDING", "ETL", "LOADING", "FINISHED", "CANCELLED"
KEEP_JOBS = 10000  # finished jobs remembered (Doris drops them after label_keep_max_second)
FIRST_JOB_ID = 10000

SHOW_LOAD_COLUMNS = (
    "JobId", "Label", "State", "Progress", "Type", "EtlInfo", "TaskInfo", "ErrorMsg", "CreateTime",
    "EtlStartTime", "EtlFinishTime", "LoadStartTime", "LoadFinishTime", "URL", "JobDetails", "TransactionId",
    "ErrorTablets", "User", "Comment",
)

USER_CANCEL = "user cancel"


@dataclass
class LoadJob:
    job_id: int
    label: str
    db: str
    table: str
    user: str
    connection_id: int
    strict: bool = True
    timeout: int = 14400
    state: str = PENDING
    txn_id: int | None = None
    create_time: float = field(default_factory=time.time)
    load_start_time: float | None = None
    finish_time: float | None = None
    loaded_rows: int = 0
    filtered_rows: int = 0
    error_type: str | None = None  # LOAD_RUN_FAIL / USER_CANCEL
    error_msg: str | None = None
    spark: bool = False  # runs on Spark (progress comes from its job group)
    kind: str = "INSERT"  # SHOW LOAD's Type: INSERT, BROKER (LOAD LABEL), SPARK (LOAD ... WITH RESOURCE)
    comment: str = ""
    file_number: int = 0  # the files an INSERT ... SELECT FROM local() reads
    file_size: int = 0

    # not persisted: the live run
    def __post_init__(self) -> None:
        self._lock = threading.RLock()
        self._cancelled = False
        self._committing = False
        self._on_cancel: Callable[[], None] | None = None
        self._registry: LoadJobs | None = None
        self._done = threading.Event()

    @property
    def job_group(self) -> str:
        return f"dorislite-load-{self.job_id}"

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    @property
    def done(self) -> bool:
        return self.state in (FINISHED, CANCELLED)

    # -- LoadHandle (planner.loads.request) ----------------------------------------------------------------
    def loading(self, txn_id: int) -> None:
        self._update(state=LOADING, txn_id=txn_id, load_start_time=self.load_start_time or time.time())

    def etl(self) -> None:
        """A Spark Load's ETL phase (Spark reads and converts the files)."""
        self._update(state=ETL)

    @contextlib.contextmanager
    def commit_guard(self) -> Iterator[None]:
        with self._lock:
            self._committing = True
            yield

    # -- transitions ------------------------------------------------------------------------------------
    def on_cancel(self, callback: Callable[[], None]) -> None:
        self._on_cancel = callback

    def cancel(self) -> bool:
        """Ask the running load to stop; False when it already finished or is publishing."""
        with self._lock:
            if self.done or self._committing:
                return False
            self._cancelled = True
        if self._on_cancel is not None:
            try:
                self._on_cancel()
            except Exception:  # noqa: BLE001 - the load notices the flag anyway
                log.exception("cancelling load %s", self.label)
        return True

    def wait_done(self, timeout: float) -> bool:
        return self._done.wait(timeout)

    def finish(self, txn_id: int | None, loaded: int, filtered: int) -> None:
        self._update(state=FINISHED, txn_id=txn_id if txn_id is not None else self.txn_id, loaded_rows=loaded,
                     filtered_rows=filtered, finish_time=time.time())
        if self._registry is not None:
            self._registry.count(loaded, self.file_size)
        self._done.set()

    def fail(self, message: str) -> None:
        kind = "USER_CANCEL" if self._cancelled else "LOAD_RUN_FAIL"
        self._update(state=CANCELLED, error_type=kind, error_msg=message, finish_time=time.time())
        self._done.set()

    def _update(self, **changes: object) -> None:
        with self._lock:
            for key, value in changes.items():
                setattr(self, key, value)
        if self._registry is not None:
            self._registry.persist(self)

    def record(self) -> dict:
        # the fields (plain values) one by one: asdict deep-copies them, a tenth of a small INSERT's time
        return {f.name: getattr(self, f.name) for f in fields(self)}


def show_time(t: float | None) -> str | None:
    """A job's time as SHOW LOAD / SHOW EXPORT print it."""
    return None if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


class LoadJobs:
    """The process's load jobs, newest last."""

    def __init__(self, root: Path, progress: Callable[[str], tuple[int, int] | None] | None = None) -> None:
        self.path = Path(root) / "load_jobs.jsonl"
        self._lock = threading.Lock()
        self._jobs: dict[int, LoadJob] = {}
        self._progress = progress
        self._rows = self._bytes = 0
        self._out: TextIO | None = None
        self._load()

    def count(self, rows: int, size: int) -> None:
        with self._lock:
            self._rows += rows
            self._bytes += size

    def totals(self) -> tuple[int, int]:
        """Rows loaded and file bytes read by the loads finished since the process started (metrics)."""
        with self._lock:
            return self._rows, self._bytes

    # -- persistence ------------------------------------------------------------------------------------
    def _load(self) -> None:
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    data = json.loads(line)
                    self._jobs[data["job_id"]] = LoadJob(**data)
                except (ValueError, TypeError, KeyError):
                    continue  # a line torn by a crash
        for job in self._jobs.values():
            if not job.done:
                job.state, job.error_type = CANCELLED, "LOAD_RUN_FAIL"
                job.error_msg = "load interrupted: the server stopped before the load finished"
                job.finish_time = job.finish_time or time.time()
        keep = sorted(self._jobs)[-KEEP_JOBS:]
        self._jobs = {i: self._jobs[i] for i in keep}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(j.record()) + "\n" for j in self._jobs.values()))
        os.replace(tmp, self.path)
        for job in self._jobs.values():
            job._registry = self

    def persist(self, job: LoadJob) -> None:
        line = json.dumps(job.record()) + "\n"
        with self._lock:
            if self._out is None:  # kept open: each INSERT appends three lines (opening a file costs ~0.4 ms)
                self._out = self.path.open("a", encoding="utf-8")
            self._out.write(line)
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None

    # -- jobs ---------------------------------------------------------------------------------------------
    def start(self, label: str, db: str, table: str, user: str, connection_id: int, strict: bool,
              timeout: int, spark: bool, files: tuple[int, int] = (0, 0), kind: str = "INSERT",
              comment: str = "") -> LoadJob:
        with self._lock:
            job_id = max(self._jobs, default=FIRST_JOB_ID - 1) + 1
            job = LoadJob(job_id, label, db, table, user, connection_id, strict, timeout, spark=spark,
                          file_number=files[0], file_size=files[1], kind=kind, comment=comment)
            job._registry = self
            self._jobs[job_id] = job
        self.persist(job)
        return job

    def jobs(self, db: str | None = None) -> list[LoadJob]:
        with self._lock:
            return [j for j in self._jobs.values() if db is None or j.db == db]

    def running_for(self, connection_id: int) -> list[LoadJob]:
        return [j for j in self.jobs() if j.connection_id == connection_id and not j.done]

    # -- SHOW LOAD --------------------------------------------------------------------------------------
    def _progress_text(self, job: LoadJob) -> str:
        if job.state == FINISHED:
            return "ETL:100%; LOAD:100%"
        if job.state == PENDING or job.load_start_time is None:
            return "ETL:0%; LOAD:0%"
        done, total = (self._progress(job.job_group) or (0, 0)) if (self._progress and job.spark) else (0, 0)
        pct = int(100 * done / total) if total else 0
        return f"ETL:100%; LOAD:{min(pct, 99) if job.state == LOADING else pct}%"

    def show_rows(self, db: str) -> pa.Table:
        rows = []
        for j in self.jobs(db):
            progress = self._progress_text(j)
            details = {"Unfinished backends": {}, "ScannedRows": j.loaded_rows + j.filtered_rows,
                       "TaskNumber": 1, "LoadBytes": j.file_size, "All backends": {}, "FileNumber": j.file_number,
                       "FileSize": j.file_size}
            rows.append((
                str(j.job_id), j.label, j.state, progress, j.kind,
                f"unselected.rows=0; dpp.abnorm.ALL={j.filtered_rows}; dpp.norm.ALL={j.loaded_rows}",
                f"cluster:N/A; timeout(s):{j.timeout}; max_filter_ratio:{0.0 if j.strict else 1.0}",
                None if j.error_msg is None else f"type:{j.error_type}; msg:{j.error_msg}",
                show_time(j.create_time), show_time(j.create_time), show_time(j.load_start_time),
                show_time(j.load_start_time), show_time(j.finish_time), None, json.dumps(details), None if j.txn_id is None else str(j.txn_id),
                "{}", j.user, j.comment,
            ))
        arrays = [pa.array([r[i] for r in rows], pa.string()) for i in range(len(SHOW_LOAD_COLUMNS))]
        return pa.Table.from_arrays(arrays, names=list(SHOW_LOAD_COLUMNS))
