"""EXPORT TABLE jobs: run in the background (the statement returns at once), listed by SHOW EXPORT with Doris's
columns, stopped by CANCEL EXPORT. A job writes the table's rows (its partitions, WHERE and columns) as
SELECT ... INTO OUTFILE would (server/loads/outfile.py): in-process, or, for a table past fe.conf
export_spark_threshold_mb, by `parallelism` Spark tasks that each write their own files (Progress follows them). Jobs are appended to `<root>/export_jobs.jsonl` on each state
change, so finished ones are still listed after a restart; one a previous process left running is CANCELLED."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa

from server.loads.jobs import show_time

log = logging.getLogger("dorislite.exports")

PENDING, EXPORTING, FINISHED, CANCELLED = "PENDING", "EXPORTING", "FINISHED", "CANCELLED"
SHOW_EXPORT_COLUMNS = ("JobId", "Label", "State", "Progress", "TaskInfo", "Path", "CreateTime", "StartTime",
                       "FinishTime", "Timeout", "ErrorMsg", "OutfileInfo")
KEEP_JOBS = 10000


@dataclass
class ExportJob:
    job_id: int
    label: str
    db: str
    table: str
    path: str
    task_info: dict
    timeout: int = 7200
    state: str = PENDING
    progress: int = 0
    create_time: float = field(default_factory=time.time)
    start_time: float | None = None
    finish_time: float | None = None
    error_msg: str | None = None
    outfile_info: list = field(default_factory=list)
    spark: bool = False  # large: Spark's executors write the files

    def __post_init__(self) -> None:
        self._cancelled = threading.Event()
        self._on_cancel: Callable[[], None] | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def job_group(self) -> str:
        return f"dorislite-export-{self.job_id}"

    def on_cancel(self, callback: Callable[[], None]) -> None:
        self._on_cancel = callback

    def _cancel(self) -> None:
        self._cancelled.set()
        if self._on_cancel is not None:
            try:
                self._on_cancel()
            except Exception:  # noqa: BLE001 - the job notices the flag anyway
                log.exception("cancelling export %s", self.label)

    def record(self) -> dict:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}


class ExportJobs:
    def __init__(self, root: Path, progress: Callable[[str], tuple[int, int] | None] | None = None) -> None:
        self.path = Path(root) / "export_jobs.jsonl"
        self._progress = progress  # a Spark job group's (finished, total) tasks
        self._lock = threading.Lock()
        self._jobs: dict[int, ExportJob] = {}
        self._next_id = 20000
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                job = ExportJob(**json.loads(line))
            except (ValueError, TypeError):
                continue  # a torn last line
            self._jobs[job.job_id] = job
            self._next_id = max(self._next_id, job.job_id + 1)
        for job in self._jobs.values():
            if job.state in (PENDING, EXPORTING):
                job.state, job.error_msg, job.finish_time = CANCELLED, "the server restarted", time.time()
        self._rewrite()

    def _rewrite(self) -> None:
        jobs = sorted(self._jobs.values(), key=lambda j: j.job_id)[-KEEP_JOBS:]
        self._jobs = {j.job_id: j for j in jobs}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("".join(json.dumps(j.record()) + "\n" for j in jobs), encoding="utf-8")
        tmp.replace(self.path)

    def _persist(self, job: ExportJob) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(job.record()) + "\n")

    def jobs(self) -> list[ExportJob]:
        with self._lock:
            return list(self._jobs.values())

    def label_used(self, db: str, label: str) -> bool:
        with self._lock:
            return any(j.db == db and j.label == label and j.state != CANCELLED for j in self._jobs.values())

    def submit(self, make: Callable[[int], ExportJob], run: Callable[[ExportJob], list[list[str]]]) -> ExportJob:
        """Register the job `make` builds with its id and run it in a thread: `run` writes the files and returns
        the OUTFILE result rows."""
        with self._lock:
            job = make(self._next_id)
            self._next_id += 1
            self._jobs[job.job_id] = job
        self._persist(job)
        threading.Thread(target=self._run, args=(job, run), name=f"export-{job.job_id}", daemon=True).start()
        return job

    def _run(self, job: ExportJob, run: Callable[[ExportJob], list[list[str]]]) -> None:
        if job.cancelled:
            return
        job.state, job.start_time = EXPORTING, time.time()
        self._persist(job)
        try:
            rows = run(job)
            if job.cancelled:
                return
            job.outfile_info = [[{"fileNumber": r[0], "totalRows": r[1], "fileSize": r[2], "url": r[3]}]
                                for r in rows]  # one entry per task (Doris: per outfile statement)
            job.state, job.progress = FINISHED, 100
        except Exception as e:  # noqa: BLE001 - the job's ErrorMsg, as Doris shows it
            if not job.cancelled:
                job.state = CANCELLED
                job.error_msg = f"type:RUN_FAIL; msg:{getattr(e, 'message', None) or e}"
        finally:
            job.finish_time = job.finish_time or time.time()
            self._persist(job)

    def cancel(self, job_ids: list[int]) -> int:
        """Cancel the PENDING / EXPORTING jobs among `job_ids`; how many."""
        n = 0
        for job_id in job_ids:
            job = self._jobs.get(job_id)
            if job is None or job.state not in (PENDING, EXPORTING):
                continue
            job._cancel()
            job.state, job.error_msg, job.finish_time = CANCELLED, "type:USER_CANCEL; msg:user cancel", time.time()
            self._persist(job)
            n += 1
        return n

    def _percent(self, job: ExportJob) -> int:
        if job.state != EXPORTING or not job.spark or self._progress is None:
            return job.progress
        done, total = self._progress(job.job_group) or (0, 0)
        return min(99, int(100 * done / total)) if total else 0

    def rows(self, db: str) -> pa.Table:
        with self._lock:
            jobs = sorted((j for j in self._jobs.values() if j.db == db), key=lambda j: j.job_id)
        rows = [[str(j.job_id), j.label, j.state, f"{self._percent(j)}%", json.dumps(j.task_info), j.path,
                 show_time(j.create_time), show_time(j.start_time), show_time(j.finish_time), str(j.timeout),
                 j.error_msg, json.dumps(j.outfile_info) if j.outfile_info else None] for j in jobs]
        columns = list(zip(*rows, strict=True)) if rows else [[] for _ in SHOW_EXPORT_COLUMNS]
        return pa.table({name: pa.array(list(col), pa.string()) for name, col in zip(SHOW_EXPORT_COLUMNS, columns,
                                                                                     strict=True)})
