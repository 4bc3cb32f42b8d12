"""ALTER TABLE ... ADD ROLLUP jobs: the scheduler thread that runs them and what SHOW ALTER TABLE ROLLUP shows.

Jobs live in the catalog (storage.catalog.rollup_jobs), so they survive a restart: an unfinished job
resumes where its last committed step left it (a RUNNING back-fill redoes the partition it was on).
The steps themselves are storage.jobs.rollup.RollupJobRunner's; this module decides when they run:
at most `max_running_rollup_job_num_per_table` jobs per table at a time (the others wait in PENDING),
every `alter_scheduler_interval_ms`, or at once when a job is created. `alter_job_scheduler_enable = false`
keeps the thread off; `run_once()` then advances jobs by hand (tests).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import pyarrow as pa

from server.config import Config
from storage.catalog.model import JOB_RUNNING, JOB_WAITING_TXN, SHADOW_PREFIX, OlapTable, RollupJob
from storage.catalog.schema_change_jobs import SchemaChangeJob
from storage.engine import StorageEngine
from storage.jobs.rollup import RollupJobRunner
from storage.jobs.schema_change import SchemaChangeJobRunner

log = logging.getLogger("dorislite.alter")

SHOW_ALTER_ROLLUP_COLUMNS = (
    "JobId", "TableName", "CreateTime", "FinishTime", "BaseIndexName", "RollupIndexName", "RollupId",
    "TransactionId", "State", "Msg", "Progress", "Timeout",
)
SHOW_ALTER_COLUMN_COLUMNS = (
    "JobId", "TableName", "CreateTime", "FinishTime", "IndexName", "IndexId", "OriginIndexId", "SchemaVersion",
    "TransactionId", "State", "Msg", "Progress", "Timeout",
)
USER_CANCELLED = "user cancelled"
WAITING_TXN_POLL = 0.05  # seconds between looks while a job waits for loads that began before it


def _time(t: float | None) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


class AlterJobs:
    def __init__(self, engine: StorageEngine, config: Config) -> None:
        self.engine = engine
        self.runner = RollupJobRunner(engine)
        self.schema_change = SchemaChangeJobRunner(engine)
        self.enabled = config.get_bool("alter_job_scheduler_enable", True)
        self.interval = config.get_int("alter_scheduler_interval_ms", 1000) / 1000
        self.max_running = max(1, config.get_int("max_running_rollup_job_num_per_table", 1))
        self.default_timeout = config.get_int("alter_table_timeout_second", 86400)
        self._wake = threading.Event()
        self._run_lock = threading.Lock()  # one scheduler pass at a time (thread or by hand)
        self._thread: threading.Thread | None = None

    # -- the scheduler --------------------------------------------------------------------------------
    def start(self) -> None:
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="alter-job-scheduler", daemon=True)
            self._thread.start()

    def kick(self) -> None:
        """Run the scheduler now (a job was created)."""
        self._wake.set()

    def _loop(self) -> None:
        self.engine.opened.wait()  # the storage root is swept at open(): no job runs before that
        while True:
            waiting = False
            try:
                waiting = self.run_once()
            except Exception:  # noqa: BLE001 - the scheduler must outlive any one failure
                log.exception("alter job scheduler pass failed")
            # a job waiting for loads to finish looks again soon: a small load takes milliseconds
            self._wake.wait(min(self.interval, WAITING_TXN_POLL) if waiting else self.interval)
            self._wake.clear()

    def run_once(self) -> bool:
        """Advance every runnable job as far as it goes now (done, or blocked waiting for loads); whether
        some job is left waiting for loads."""
        with self._run_lock:
            by_table: dict[int, list[RollupJob]] = {}
            for job in self.engine.catalog.rollup_jobs():
                if not job.done:
                    by_table.setdefault(job.table_id, []).append(job)
            states = []
            for jobs in by_table.values():
                for job in jobs[: self.max_running]:  # oldest first: later ones of a batch wait in PENDING
                    states.append(self._run(job))
            for sc in self.engine.catalog.schema_change_jobs():
                if not sc.done:
                    states.append(self._run_schema_change(sc))
            return JOB_WAITING_TXN in states

    def _run_schema_change(self, job: SchemaChangeJob) -> str:
        try:
            return self.schema_change.run_to_end(job).state
        except Exception as e:  # noqa: BLE001 - a failed job ends CANCELLED with the reason, like Doris
            log.exception("schema change job %s failed", job.job_id)
            return self.schema_change.cancel(job, str(e)[:500] or type(e).__name__).state

    def _run(self, job: RollupJob) -> str:
        try:
            return self.runner.run_to_end(job).state
        except Exception as e:  # noqa: BLE001 - a failed job ends CANCELLED with the reason, like Doris
            log.exception("rollup job %s failed", job.job_id)
            return self.runner.cancel(job, str(e)[:500] or type(e).__name__).state

    # -- statements -----------------------------------------------------------------------------------
    def unfinished(self, table: OlapTable) -> list[RollupJob]:
        return [j for j in self.engine.catalog.rollup_jobs(table_id=table.table_id) if not j.done]

    def cancel(self, jobs: Sequence[RollupJob]) -> None:
        for job in jobs:
            self.runner.cancel(job, USER_CANCELLED)

    def unfinished_schema_changes(self, table: OlapTable) -> list[SchemaChangeJob]:
        return [j for j in self.engine.catalog.schema_change_jobs(table_id=table.table_id) if not j.done]

    def cancel_schema_changes(self, jobs: Sequence[SchemaChangeJob]) -> None:
        for job in jobs:
            self.schema_change.cancel(job, USER_CANCELLED)

    def show_column_rows(self, db_id: int) -> pa.Table:
        """SHOW ALTER TABLE COLUMN: the index schema-change jobs of the database."""
        rows = []
        for j in self.engine.catalog.schema_change_jobs(db_id=db_id):
            table = self.engine.catalog.get_table_by_id(j.table_id)
            names = {i.index_id: i.name.removeprefix(SHADOW_PREFIX) for i in table.indexes} if table else {}
            # a rewrite: a row per changed index (IndexId the new one); an index change: the base index
            for origin, index in j.shadows or ((j.index_id, j.index_id),):
                name = names.get(index) or names.get(origin) or j.table_name
                rows.append((str(j.job_id), j.table_name, _time(j.create_time), _time(j.finish_time), name,
                             str(index), str(origin), f"{j.schema_version}:0", str(j.watershed_txn_id),
                             j.state, j.msg, self.schema_change.progress(j), str(j.timeout_second)))
        arrays = [pa.array([r[i] for r in rows], pa.string()) for i in range(len(SHOW_ALTER_COLUMN_COLUMNS))]
        return pa.Table.from_arrays(arrays, names=list(SHOW_ALTER_COLUMN_COLUMNS))

    def show_rows(self, db_id: int) -> pa.Table:
        rows = [self._row(j) for j in self.engine.catalog.rollup_jobs(db_id=db_id)]
        arrays = [pa.array([r[i] for r in rows], pa.string()) for i in range(len(SHOW_ALTER_ROLLUP_COLUMNS))]
        return pa.Table.from_arrays(arrays, names=list(SHOW_ALTER_ROLLUP_COLUMNS))

    def _row(self, job: RollupJob) -> tuple[str | None, ...]:
        return (
            str(job.job_id), job.table_name, _time(job.create_time), _time(job.finish_time), job.base_index_name,
            job.rollup.name, str(job.rollup_index_id), str(job.watershed_txn_id), job.state, job.msg,
            self._progress(job), str(job.timeout_second),
        )

    def _progress(self, job: RollupJob) -> str | None:
        """RUNNING: back-filled rollup tablets / all rollup tablets (Doris counts its replica tasks)."""
        if job.state != JOB_RUNNING:
            return None
        table = self.engine.catalog.get_table_by_id(job.table_id)
        if table is None:
            return None
        done = {pid for pid, _ in job.backfilled}
        total = sum(p.buckets for p in table.partitions)
        finished = sum(p.buckets for p in table.partitions if p.partition_id in done)
        return f"{finished}/{total}"
