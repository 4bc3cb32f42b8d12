"""Doris's group commit: small loads into one table (INSERT ... VALUES with `SET group_commit = sync_mode |
async_mode`, a Stream Load with the `group_commit` header) are batched into one transaction per table every
`group_commit_interval_ms` (table property, Doris's default 10000) or once `group_commit_data_bytes` have
gathered, instead of one transaction, one set of segment files and one catalog commit per statement.

Each statement's rows are converted and checked when it arrives (its own errors stay its own). The batch's
transaction is begun with the batch, so every client is answered with its label and txnId: `async_mode` as soon as
its rows are in the write-ahead log (`<root>/wal/<table id>/<label>.<n>.arrow`, fsynced; 'status':'PREPARE'),
`sync_mode` once the batch is published ('status':'VISIBLE'). A batch's log files are removed after its publish;
at start the server loads whatever a previous process left in the log (each batch once: a label already published
is not loaded again), so acknowledged rows survive a kill -9."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

from storage.catalog.model import OlapTable
from storage.catalog.store import TXN_VISIBLE
from storage.engine import StorageEngine

log = logging.getLogger("dorislite.group_commit")

MODES = ("off_mode", "sync_mode", "async_mode")
DEFAULT_INTERVAL_MS = 10000
DEFAULT_DATA_BYTES = 134217728


def new_label() -> str:
    return f"group_commit_{uuid.uuid4().hex[:16]}_{uuid.uuid4().hex[:16]}"


@dataclass
class _Batch:
    table: OlapTable
    label: str
    txn_id: int
    deadline: float  # monotonic
    max_bytes: int
    parts: list[pa.Table] = field(default_factory=list)
    wal: list[Path] = field(default_factory=list)
    nbytes: int = 0
    logging: int = 0  # statements writing their log file now: the batch is published after them
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


@dataclass(frozen=True)
class Accepted:
    label: str
    txn_id: int
    rows: int
    visible: bool  # sync_mode: published; async_mode: in the log


class GroupCommits:
    def __init__(self, engine: StorageEngine) -> None:
        self.engine = engine
        self._batches: dict[int, _Batch] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._stopping = False
        self._thread: threading.Thread | None = None

    @property
    def wal_dir(self) -> Path:
        return Path(self.engine.root) / "wal"

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="group-commit", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Publish what is gathered, then stop (a clean shutdown leaves no log behind)."""
        with self._lock:
            self._stopping = True
            while any(b.logging for b in self._batches.values()):
                self._wake.wait(0.1)
            batches = list(self._batches.values())
            self._batches.clear()
            self._wake.notify_all()
        for batch in batches:
            self._publish(batch)

    # -- submitting -------------------------------------------------------------------------------------
    def submit(self, table: OlapTable, rows: pa.Table, mode: str) -> Accepted:
        """Add one statement's rows (converted and checked) to its table's open batch."""
        with self._lock:
            if self._stopping:
                raise RuntimeError("the server is stopping")
            batch = self._batches.get(table.table_id)
            if batch is None:
                batch = self._open(table)
            batch.parts.append(rows)
            batch.nbytes += rows.nbytes
            if batch.nbytes >= batch.max_bytes:
                batch.deadline = 0.0
            sequence = len(batch.parts)
            if mode == "async_mode":
                batch.logging += 1
        if mode == "async_mode":  # durable before the answer; other statements do not wait for this fsync
            try:
                path = self._log(batch, rows, sequence)
            finally:
                with self._lock:
                    batch.logging -= 1
                    self._wake.notify_all()
            with self._lock:
                batch.wal.append(path)
        with self._lock:
            self._wake.notify_all()
        if mode == "sync_mode":
            batch.done.wait()
            if batch.error is not None:
                raise batch.error
        return Accepted(batch.label, batch.txn_id, rows.num_rows, mode == "sync_mode")

    def _open(self, table: OlapTable) -> _Batch:
        props = table.props
        interval = _int(props.get("group_commit_interval_ms"), DEFAULT_INTERVAL_MS)
        label = new_label()
        txn_id = self.engine.catalog.begin_txn(table.db_id, table.table_id, label)
        batch = _Batch(table, label, txn_id, time.monotonic() + interval / 1000,
                       max(1, _int(props.get("group_commit_data_bytes"), DEFAULT_DATA_BYTES)))
        self._batches[table.table_id] = batch
        return batch

    def _log(self, batch: _Batch, rows: pa.Table, sequence: int) -> Path:
        folder = self.wal_dir / str(batch.table.table_id)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{batch.label}.{sequence}.arrow"
        with path.open("wb") as f:
            with ipc.new_file(f, rows.schema) as writer:
                writer.write_table(rows)
            f.flush()
            os.fsync(f.fileno())
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return path

    # -- publishing -------------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._lock:
                if self._stopping:
                    return
                now = time.monotonic()
                due = [b for b in self._batches.values() if b.deadline <= now and not b.logging]
                for b in due:
                    del self._batches[b.table.table_id]
                if not due:
                    nearest = min((b.deadline for b in self._batches.values()), default=now + 1.0)
                    self._wake.wait(max(0.001, nearest - now))
                    continue
            for batch in due:
                self._publish(batch)

    def _publish(self, batch: _Batch) -> None:
        try:
            rows = pa.concat_tables(batch.parts) if len(batch.parts) > 1 else batch.parts[0]
            self.engine.load(batch.table, rows, label=batch.label, strict=False, txn_id=batch.txn_id)
        except BaseException as e:  # noqa: BLE001 - every waiting client gets the batch's error
            batch.error = e
            log.error("group commit %s of table %d failed: %s", batch.label, batch.table.table_id, e)
            try:
                self.engine.abort(batch.txn_id, str(e)[:1000])
            except Exception:  # noqa: BLE001 - aborted by the load already
                pass
        finally:
            for path in batch.wal:
                path.unlink(missing_ok=True)
            batch.done.set()

    # -- recovery ---------------------------------------------------------------------------------------
    def replay(self) -> int:
        """Load what a previous process logged and did not publish; the rows loaded."""
        loaded = 0
        if not self.wal_dir.is_dir():
            return 0
        catalog = self.engine.catalog
        for folder in sorted(p for p in self.wal_dir.iterdir() if p.is_dir()):
            files = sorted(folder.glob("*.arrow"))
            table = catalog.get_table_by_id(int(folder.name)) if folder.name.isdigit() else None
            by_label: dict[str, list[Path]] = {}
            for path in files:
                by_label.setdefault(path.name.split(".")[0], []).append(path)
            for label, paths in by_label.items():
                try:
                    txn = catalog.get_txn_by_label(table.db_id, label) if table is not None else None
                    if table is not None and (txn is None or txn.status != TXN_VISIBLE):
                        parts = [ipc.open_file(pa.memory_map(str(p))).read_all() for p in paths]
                        replayed = f"{label}_replay" if txn is not None else label
                        result = self.engine.load(table, pa.concat_tables(parts), label=replayed, strict=False)
                        loaded += result.num_rows
                        log.info("group commit %s: %d logged rows loaded at start", label, result.num_rows)
                except Exception:  # noqa: BLE001 - a log that cannot load (table changed) is kept aside
                    log.exception("group commit log %s could not be loaded; kept in %s", label, folder / "failed")
                    (folder / "failed").mkdir(exist_ok=True)
                    for p in paths:
                        p.rename(folder / "failed" / p.name)
                    continue
                for p in paths:
                    p.unlink(missing_ok=True)
        return loaded


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text not in (None, "") else default
    except ValueError:
        return default
