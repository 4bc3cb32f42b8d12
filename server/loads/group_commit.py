"""Doris's group commit: small loads into one table (INSERT ... VALUES with `SET group_commit = sync_mode |
async_mode`, a Stream Load with the `group_commit` header) are batched into one transaction per table every
`group_commit_interval_ms` (table property, Doris's default 10000) or once `group_commit_data_bytes` have
gathered, instead of one transaction, one set of segment files and one catalog commit per statement.

Each statement's rows are converted and checked when it arrives (its own errors stay its own). The batch's
transaction is begun with the batch, so every client is answered with its label and txnId: `async_mode` as soon as
its rows are in the write-ahead log (`<root>/wal/<table id>/<label>.arrow`, one Arrow stream per batch that each
statement appends to; 'status':'PREPARE'), `sync_mode` once the batch is published ('status':'VISIBLE'). The log is
fsynced before an answer, and one fsync answers every statement that appended before it began (the log's own group
commit), so 16 writers do not queue for 16 fsyncs. A batch's log is removed after its publish; at start the server
loads whatever a previous process left in the log, up to the last whole record (each batch once: a label already
published is not loaded again), so acknowledged rows survive a kill -9."""

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

from server.protocol.admission import give_way
from storage.catalog.model import OlapTable
from storage.catalog.store import TXN_VISIBLE
from storage.engine import StorageEngine, fsync_dir

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
    wal: _Log | None = None
    nbytes: int = 0
    logging: int = 0  # statements writing to the log now: the batch is published after them
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None


class _Log:
    """One batch's write-ahead log: an Arrow IPC stream, appended record by record, fsynced in groups."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.schema = schema
        self._file = path.open("wb")
        self._writer = ipc.new_stream(self._file, schema)
        self._append = threading.Lock()
        self._sync = threading.Lock()
        self.appended = 0  # records written (not yet all durable)
        self.durable = 0  # records covered by a finished fsync
        self._file.flush()
        os.fsync(self._file.fileno())
        fsync_dir(path.parent)  # the file itself survives a crash, not just its bytes

    def append(self, rows: pa.Table) -> None:
        """Write `rows` and return once they are on disk."""
        if rows.schema != self.schema:
            rows = rows.cast(self.schema)
        with self._append:
            self._writer.write_table(rows)
            self._file.flush()
            self.appended += 1
            mine = self.appended
        with self._sync:  # whoever syncs covers everything appended before it started
            if self.durable < mine:
                with self._append:
                    covered = self.appended
                os.fsync(self._file.fileno())
                self.durable = covered

    def close(self) -> None:
        with self._append:
            self._file.close()

    def remove(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)


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
            if mode == "async_mode":
                batch.logging += 1
                if batch.wal is None:
                    batch.wal = _Log(self.wal_dir / str(table.table_id) / f"{batch.label}.arrow", rows.schema)
        give_way()  # what is left is waiting for a disk or for the batch: other statements run meanwhile
        if mode == "async_mode":  # durable before the answer
            try:
                batch.wal.append(rows)
            finally:
                with self._lock:
                    batch.logging -= 1
                    self._wake.notify_all()
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
            if batch.wal is not None:
                batch.wal.remove()
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
                        parts = [part for p in paths for part in _records(p)]
                        replayed = f"{label}_replay" if txn is not None else label
                        if parts:
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


def _records(path: Path) -> list[pa.Table]:
    """The whole records of a log; a record cut short by the crash was never acknowledged."""
    out: list[pa.Table] = []
    try:
        with pa.OSFile(str(path), "rb") as f:
            if f.read(6) == b"ARROW1":  # a log of an earlier version: one whole file per statement
                return [ipc.open_file(pa.memory_map(str(path))).read_all()]
            f.seek(0)
            reader = ipc.open_stream(f)
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    break
                out.append(pa.Table.from_batches([batch]))
    except (pa.ArrowInvalid, OSError) as e:
        log.warning("group commit log %s ends in a partial record (%s): loading what precedes it", path, e)
    return out


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text not in (None, "") else default
    except ValueError:
        return default
