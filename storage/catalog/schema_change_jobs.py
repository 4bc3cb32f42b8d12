"""The catalog side of index schema changes (ADD INDEX ... USING BITMAP, bloom_filter_columns): jobs persisted
in SQLite and the rowset swap they end with.

A job is created in the same commit that changes the table definition (index_defs / properties), so every
load that begins from then on writes segments with the new indexes; `watershed_txn_id` is the next txn id.
The job then rewrites, tablet by tablet, every rowset whose segments lack the indexes (the ones published
before that commit) and swaps old -> new with `replace_rowsets`, one catalog transaction per tablet.

`SchemaChangeCatalog` is a mixin of `storage.catalog.store.Catalog`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from storage.catalog.model import (
    JOB_CANCELLED,
    JOB_DONE_STATES,
    JOB_PENDING,
    JOB_RUNNING,
    IndexDef,
    OlapTable,
    Rowset,
)
from storage.catalog.rollup_jobs import JobStateChanged, _busy, not_normal_state
from storage.errors import doris_error

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

SCHEMA_CHANGE_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_change_jobs (
    job_id INTEGER PRIMARY KEY, db_id INTEGER NOT NULL, table_id INTEGER NOT NULL, state TEXT NOT NULL,
    record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS schema_change_jobs_by_table ON schema_change_jobs (table_id)
"""


@dataclass(frozen=True)
class SchemaChangeJob:
    """One index schema change (Doris's SchemaChangeJobV2 for a light index change):
    PENDING -> WAITING_TXN -> RUNNING -> FINISHED | CANCELLED. `done_tablets`: tablets already swapped."""

    job_id: int
    db_id: int
    table_id: int
    table_name: str
    index_id: int  # the base index (SHOW ALTER's IndexId / OriginIndexId)
    state: str = JOB_PENDING
    watershed_txn_id: int = -1
    msg: str = ""
    create_time: float = 0.0
    finish_time: float | None = None
    timeout_second: int = 86400
    schema_version: int = 1
    done_tablets: tuple[int, ...] = ()
    # the table's index definition before the change (the catalog's JSON texts), restored by CANCEL
    previous_index_defs: str | None = None
    previous_properties: str | None = None

    @property
    def done(self) -> bool:
        return self.state in JOB_DONE_STATES


def _job_from(text: str) -> SchemaChangeJob:
    d = json.loads(text)
    return SchemaChangeJob(**{**d, "done_tablets": tuple(d["done_tablets"])})


def _save(c: sqlite3.Connection, job: SchemaChangeJob) -> None:
    c.execute("INSERT OR REPLACE INTO schema_change_jobs VALUES (?, ?, ?, ?, ?)",
              (job.job_id, job.db_id, job.table_id, job.state,
               json.dumps(asdict(job), separators=(",", ":"))))


class SchemaChangeCatalog:
    """Index schema-change jobs, table definition changes and rowset swaps (mixed into Catalog)."""

    if TYPE_CHECKING:  # provided by Catalog
        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...
        @staticmethod
        def _allocate(c: sqlite3.Connection, n: int = 1, counter: str = "id") -> int: ...
        @staticmethod
        def _load_table(c: sqlite3.Connection, table_id: int) -> OlapTable | None: ...

    def schema_change_jobs(self, db_id: int | None = None, table_id: int | None = None) -> list[SchemaChangeJob]:
        sql, args = "SELECT record FROM schema_change_jobs WHERE 1 = 1", []
        if db_id is not None:
            sql, args = sql + " AND db_id = ?", [*args, db_id]
        if table_id is not None:
            sql, args = sql + " AND table_id = ?", [*args, table_id]
        with self._read() as c:
            return [_job_from(r[0]) for r in c.execute(sql + " ORDER BY job_id", args).fetchall()]

    def get_schema_change_job(self, job_id: int) -> SchemaChangeJob | None:
        with self._read() as c:
            row = c.execute("SELECT record FROM schema_change_jobs WHERE job_id = ?", (job_id,)).fetchone()
        return None if row is None else _job_from(row[0])

    def alter_table_indexes(self, table_id: int, index_defs: Sequence[IndexDef] | None = None,
                            properties: Sequence[tuple[str, str]] | None = None,
                            job_timeout: int | None = None) -> SchemaChangeJob | None:
        """Commit a new index definition (index_defs and / or properties) at once. With `job_timeout` (the
        change adds indexes and the table holds data) a PENDING schema-change job is created in the same
        commit; returned. Rejected while the table has an unfinished ALTER job."""
        with self._write() as c:
            table = self._load_table(c, table_id)
            if table is None:
                raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
            if _busy(c, table_id):
                raise not_normal_state(table.name)
            previous = c.execute("SELECT index_defs, properties FROM tables WHERE table_id = ?",
                                 (table_id,)).fetchone()
            if index_defs is not None:
                c.execute("UPDATE tables SET index_defs = ? WHERE table_id = ?",
                          (json.dumps([asdict(d) for d in index_defs], ensure_ascii=False), table_id))
            if properties is not None:
                c.execute("UPDATE tables SET properties = ? WHERE table_id = ?",
                          (json.dumps([list(p) for p in properties], ensure_ascii=False), table_id))
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
            if job_timeout is None:
                return None
            done = [r[0] for r in c.execute("SELECT record FROM schema_change_jobs WHERE table_id = ?",
                                            (table_id,))]
            job = SchemaChangeJob(
                job_id=self._allocate(c), db_id=table.db_id, table_id=table_id, table_name=table.name,
                index_id=table.base_index_id, create_time=time.time(), timeout_second=job_timeout,
                schema_version=len(done) + 1,
                previous_index_defs=previous[0], previous_properties=previous[1],
                watershed_txn_id=c.execute("SELECT value FROM counters WHERE name = 'txn'").fetchone()[0],
            )
            _save(c, job)
            return job

    def _sc_job_in(self, c: sqlite3.Connection, job_id: int, *states: str) -> SchemaChangeJob:
        row = c.execute("SELECT record FROM schema_change_jobs WHERE job_id = ?", (job_id,)).fetchone()
        if row is None:
            raise JobStateChanged(f"job {job_id} does not exist")
        job = _job_from(row[0])
        if job.state not in states:
            raise JobStateChanged(f"job {job_id} is {job.state}")
        if self._load_table(c, job.table_id) is None:
            raise JobStateChanged(f"table {job.table_name} was dropped")
        return job

    def set_schema_change_state(self, job_id: int, expected: str, state: str) -> SchemaChangeJob:
        with self._write() as c:
            job = self._sc_job_in(c, job_id, expected)
            job = replace(job, state=state, finish_time=time.time() if state in JOB_DONE_STATES else None)
            _save(c, job)
            return job

    def cancel_schema_change_job(self, job_id: int, msg: str) -> SchemaChangeJob | None:
        """Unfinished -> CANCELLED, and the table's index definition is what it was before the ALTER (as
        Doris drops the shadow schema): new loads stop writing the index. Rowsets already rewritten keep the
        extra index pages; they are correct data and the scan uses an index only where a segment has it."""
        with self._write() as c:
            row = c.execute("SELECT record FROM schema_change_jobs WHERE job_id = ?", (job_id,)).fetchone()
            if row is None or _job_from(row[0]).done:
                return None
            job = replace(_job_from(row[0]), state=JOB_CANCELLED, msg=msg, finish_time=time.time())
            if job.previous_index_defs is not None:
                c.execute("UPDATE tables SET index_defs = ?, properties = ?, update_time = ? WHERE table_id = ?",
                          (job.previous_index_defs, job.previous_properties, time.time(), job.table_id))
            _save(c, job)
            return job

    def replace_rowsets(self, old_ids: Sequence[str], new_rowsets: Sequence[Rowset],
                        job_id: int | None = None, tablet_id: int | None = None) -> None:
        """Swap rowsets in one commit: every `old_ids` rowset is deleted and every new one inserted (each with
        the versions of the rowset it replaces), so a reader sees either all old or all new. Fails (nothing
        changed) if any old rowset is gone (a truncate, a drop, a concurrent swap). With `job_id`, the job
        must still be RUNNING, and `tablet_id` is recorded as done in the same commit."""
        with self._write() as c:
            job = self._sc_job_in(c, job_id, JOB_RUNNING) if job_id is not None else None
            old: list[sqlite3.Row] = []
            for rid in old_ids:
                r = c.execute("SELECT tablet_id, data_size FROM rowsets WHERE rowset_id = ?", (rid,)).fetchone()
                if r is None:
                    raise JobStateChanged(f"rowset {rid} no longer exists")
                old.append(r)
            c.executemany("DELETE FROM rowsets WHERE rowset_id = ?", [(rid,) for rid in old_ids])
            for rs in new_rowsets:
                c.execute("INSERT INTO rowsets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                          (rs.rowset_id, rs.tablet_id, rs.start_version, rs.end_version, rs.num_rows,
                           rs.num_segments, rs.data_size, rs.txn_id, rs.kind, rs.delete_predicate,
                           int(rs.overlapping), rs.created_at))
            delta: dict[int, int] = {}
            for r in old:
                delta[r["tablet_id"]] = delta.get(r["tablet_id"], 0) - r["data_size"]
            for rs in new_rowsets:
                delta[rs.tablet_id] = delta.get(rs.tablet_id, 0) + rs.data_size
            for tid, d in delta.items():
                c.execute("UPDATE partitions SET data_size = MAX(0, data_size + ?) WHERE partition_id = "
                          "(SELECT partition_id FROM tablets WHERE tablet_id = ?)", (d, tid))
            if job is not None and tablet_id is not None:
                _save(c, replace(job, done_tablets=(*job.done_tablets, tablet_id)))

    def mark_tablet_done(self, job_id: int, tablet_id: int) -> SchemaChangeJob:
        with self._write() as c:
            job = self._sc_job_in(c, job_id, JOB_RUNNING)
            job = replace(job, done_tablets=(*job.done_tablets, tablet_id))
            _save(c, job)
            return job
