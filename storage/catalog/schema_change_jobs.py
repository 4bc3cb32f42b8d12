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
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from storage.catalog.job_tables import SCHEMA_CHANGE_JOBS, table_busy
from storage.catalog.model import (
    JOB_CANCELLED,
    JOB_DONE_STATES,
    JOB_RUNNING,
    IndexDef,
    OlapTable,
    Rowset,
    SchemaChangeJob,
)
from storage.catalog.rollup_jobs import JobStateChanged, not_normal_state
from storage.errors import doris_error

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

SCHEMA_CHANGE_SCHEMA = SCHEMA_CHANGE_JOBS.schema


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
        with self._read() as c:
            return SCHEMA_CHANGE_JOBS.jobs(c, db_id, table_id)

    def get_schema_change_job(self, job_id: int) -> SchemaChangeJob | None:
        with self._read() as c:
            return SCHEMA_CHANGE_JOBS.get(c, job_id)

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
            if table_busy(c, table_id):
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
            done = SCHEMA_CHANGE_JOBS.jobs(c, table_id=table_id)
            job = SchemaChangeJob(
                job_id=self._allocate(c), db_id=table.db_id, table_id=table_id, table_name=table.name,
                index_id=table.base_index_id, create_time=time.time(), timeout_second=job_timeout,
                schema_version=len(done) + 1,
                previous_index_defs=previous[0], previous_properties=previous[1],
                watershed_txn_id=c.execute("SELECT value FROM counters WHERE name = 'txn'").fetchone()[0],
            )
            SCHEMA_CHANGE_JOBS.save(c, job)
            return job

    def _sc_job_in(self, c: sqlite3.Connection, job_id: int, *states: str) -> SchemaChangeJob:
        job = SCHEMA_CHANGE_JOBS.get(c, job_id)
        if job is None:
            raise JobStateChanged(f"job {job_id} does not exist")
        if job.state not in states:
            raise JobStateChanged(f"job {job_id} is {job.state}")
        if self._load_table(c, job.table_id) is None:
            raise JobStateChanged(f"table {job.table_name} was dropped")
        return job

    def set_schema_change_state(self, job_id: int, expected: str, state: str) -> SchemaChangeJob:
        with self._write() as c:
            job = self._sc_job_in(c, job_id, expected)
            job = replace(job, state=state, finish_time=time.time() if state in JOB_DONE_STATES else None)
            SCHEMA_CHANGE_JOBS.save(c, job)
            return job

    def cancel_schema_change_job(self, job_id: int, msg: str) -> SchemaChangeJob | None:
        """Unfinished -> CANCELLED, and the table's index definition is what it was before the ALTER (as
        Doris drops the shadow schema): new loads stop writing the index. Rowsets already rewritten keep the
        extra index pages; they are correct data and the scan uses an index only where a segment has it."""
        with self._write() as c:
            job = SCHEMA_CHANGE_JOBS.get(c, job_id)
            if job is None or job.done:
                return None
            job = replace(job, state=JOB_CANCELLED, msg=msg, finish_time=time.time())
            if job.previous_index_defs is not None:
                c.execute("UPDATE tables SET index_defs = ?, properties = ?, update_time = ? WHERE table_id = ?",
                          (job.previous_index_defs, job.previous_properties, time.time(), job.table_id))
            SCHEMA_CHANGE_JOBS.save(c, job)
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
                SCHEMA_CHANGE_JOBS.save(c, replace(job, done_tablets=(*job.done_tablets, tablet_id)))

    def mark_tablet_done(self, job_id: int, tablet_id: int) -> SchemaChangeJob:
        with self._write() as c:
            job = self._sc_job_in(c, job_id, JOB_RUNNING)
            job = replace(job, done_tablets=(*job.done_tablets, tablet_id))
            SCHEMA_CHANGE_JOBS.save(c, job)
            return job
