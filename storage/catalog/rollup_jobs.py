"""The catalog side of rollups: ADD ROLLUP jobs persisted in SQLite, and every index change they make.

Each step of a job that changes what loads or queries see is one catalog transaction that also checks
the job's state (compare-and-set), so a CANCEL, a DROP TABLE or a restart between two steps can never
leave a half-built index visible: creating the SHADOW index and its tablets, adding the back-fill
rowsets of one partition, turning SHADOW into NORMAL, dropping the shadow index on cancel.

`RollupCatalog` is a mixin of `storage.catalog.store.Catalog` (it uses its connection and helpers).
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from storage.catalog.job_tables import ROLLUP_JOBS, table_busy
from storage.catalog.model import (
    INDEX_NORMAL,
    INDEX_SHADOW,
    JOB_CANCELLED,
    JOB_FINISHED,
    JOB_PENDING,
    JOB_RUNNING,
    JOB_WAITING_TXN,
    MaterializedIndexMeta,
    OlapTable,
    RollupJob,
    RollupSpec,
    Rowset,
)
from storage.errors import doris_error

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

ROLLUP_SCHEMA = ROLLUP_JOBS.schema + """;
CREATE TABLE IF NOT EXISTS dropped_rollup_tablets (tablet_id INTEGER PRIMARY KEY)
"""


class JobStateChanged(Exception):
    """A job step found the job (or its table) no longer in the state the step started from."""


def not_normal_state(table_name: str) -> Exception:
    """Doris's OlapTable.checkNormalStateForAlter: one ALTER job per table at a time."""
    return doris_error(f"Table[{table_name}]'s state(ROLLUP) is not NORMAL. Do not allow doing ALTER ops")


def insert_backfill(c: sqlite3.Connection, job_id: int, partition_id: int, version: int, rowsets: Sequence[Rowset],
                    index_ids: Sequence[int]) -> None:
    """An ALTER job's back-fill of one partition, in the caller's transaction: rowsets [0, version] in tablets of
    the job's own indexes (`index_ids`) only, and the partition's size grown by them."""
    marks = ",".join("?" * len(index_ids))
    tablets = {r[0] for r in c.execute(f"SELECT tablet_id FROM tablets WHERE partition_id = ? AND index_id IN "
                                       f"({marks})", (partition_id, *index_ids))}
    now = time.time()
    for rs in rowsets:
        if rs.tablet_id not in tablets:
            raise JobStateChanged(f"tablet {rs.tablet_id} is not a tablet the job builds")
        c.execute("INSERT INTO rowsets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (rs.rowset_id, rs.tablet_id, 0, version, rs.num_rows, rs.num_segments, rs.data_size, -job_id,
                   rs.kind, None, int(rs.overlapping), now))
    c.execute("UPDATE partitions SET data_size = data_size + ? WHERE partition_id = ?",
              (sum(rs.data_size for rs in rowsets), partition_id))


class RollupCatalog:
    """Rollup jobs and rollup indexes (mixed into Catalog)."""

    if TYPE_CHECKING:  # provided by Catalog
        def _write(self) -> AbstractContextManager[sqlite3.Connection]: ...
        def _read(self) -> AbstractContextManager[sqlite3.Connection]: ...
        @staticmethod
        def _allocate(c: sqlite3.Connection, n: int = 1, counter: str = "id") -> int: ...
        @staticmethod
        def _load_table(c: sqlite3.Connection, table_id: int) -> OlapTable | None: ...
        @staticmethod
        def _insert_index(c: sqlite3.Connection, table_id: int, position: int,
                          meta: MaterializedIndexMeta) -> None: ...
        def _notify_dropped(self, tablet_ids: list[int]) -> None: ...

    # ------------------------------------------------------------ reading jobs

    def rollup_jobs(self, db_id: int | None = None, table_id: int | None = None) -> list[RollupJob]:
        with self._read() as c:
            return ROLLUP_JOBS.jobs(c, db_id, table_id)

    def get_rollup_job(self, job_id: int) -> RollupJob | None:
        with self._read() as c:
            return ROLLUP_JOBS.get(c, job_id)

    def prepared_txns_below(self, table_id: int, txn_id: int) -> list[int]:
        """Loads into the table still running that began before `txn_id` (WAITING_TXN waits for them)."""
        with self._read() as c:
            return [r[0] for r in c.execute(
                "SELECT txn_id FROM transactions WHERE table_id = ? AND txn_id < ? AND status = 'PREPARE'",
                (table_id, txn_id))]

    # ------------------------------------------------------------ job transitions

    def _alterable(self, c: sqlite3.Connection, table_id: int) -> OlapTable:
        """The table, which must exist and have no unfinished ALTER job (in the caller's transaction)."""
        table = self._load_table(c, table_id)
        if table is None:
            raise doris_error(f"Unknown table id {table_id}", 1051, "42S02")
        if table_busy(c, table_id):
            raise not_normal_state(table.name)
        return table

    def create_rollup_jobs(self, table_id: int, requests: Sequence[tuple[RollupSpec, int, int]]) -> list[RollupJob]:
        """New PENDING jobs, one per (spec, source index id, timeout seconds), all or none. Rejected while the
        table has an unfinished job, and when a name is taken (checked here again: two sessions may race)."""
        with self._write() as c:
            table = self._alterable(c, table_id)
            taken = {i.name for i in table.indexes}
            jobs = []
            now = time.time()
            for spec, source_id, timeout in requests:
                if spec.name in taken:
                    raise doris_error(f"Rollup index[{spec.name}] already exists")
                taken.add(spec.name)
                source = next(i for i in table.indexes if i.index_id == source_id)
                job_id = self._allocate(c)
                job = RollupJob(
                    job_id=job_id, db_id=table.db_id, table_id=table_id, table_name=table.name,
                    base_index_id=source_id, base_index_name=source.name, rollup=spec,
                    rollup_index_id=self._allocate(c), create_time=now, timeout_second=timeout,
                )
                ROLLUP_JOBS.save(c, job)
                jobs.append(job)
            return jobs

    def _job_in(self, c: sqlite3.Connection, job_id: int, *states: str) -> RollupJob:
        job = ROLLUP_JOBS.get(c, job_id)
        if job is None:
            raise JobStateChanged(f"job {job_id} does not exist")
        if job.state not in states:
            raise JobStateChanged(f"job {job_id} is {job.state}")
        return job

    def _job_table(self, c: sqlite3.Connection, job: RollupJob) -> OlapTable:
        table = self._load_table(c, job.table_id)
        if table is None:
            raise JobStateChanged(f"table {job.table_name} was dropped")
        return table

    def start_shadow_index(self, job_id: int) -> RollupJob:
        """PENDING -> WAITING_TXN in one commit: the SHADOW index and one tablet per bucket per partition,
        so every load that begins from now on writes the rollup too; the watershed is the next txn id."""
        with self._write() as c:
            job = self._job_in(c, job_id, JOB_PENDING)
            table = self._job_table(c, job)
            meta = MaterializedIndexMeta(
                index_id=job.rollup_index_id, name=job.rollup.name, columns=job.rollup.columns,
                keys_type=table.keys_type, short_key_column_count=job.rollup.short_key_column_count,
                schema_hash=secrets.randbits(31), state=INDEX_SHADOW,
            )
            self._insert_index(c, table.table_id, len(table.indexes), meta)
            for p in table.partitions:
                first = self._allocate(c, p.buckets)
                c.executemany("INSERT INTO tablets VALUES (?, ?, ?, ?, ?)",
                              [(first + b, table.table_id, p.partition_id, meta.index_id, b)
                               for b in range(p.buckets)])
            watershed = c.execute("SELECT value FROM counters WHERE name = 'txn'").fetchone()[0]
            job = replace(job, state=JOB_WAITING_TXN, watershed_txn_id=watershed)
            ROLLUP_JOBS.save(c, job)
            return job

    def set_rollup_job_state(self, job_id: int, expected: str, state: str) -> RollupJob:
        with self._write() as c:
            job = replace(self._job_in(c, job_id, expected), state=state)
            ROLLUP_JOBS.save(c, job)
            return job

    def commit_backfill(self, job_id: int, partition_id: int, version: int, rowsets: Sequence[Rowset]) -> RollupJob:
        """One partition's back-fill, visible to the job in one commit: the rowsets cover versions
        [0, version] of the rollup tablets, so the visibility rule prefers them over any [v-v] rowset a
        load at v <= version wrote, while loads after `version` stay on top of them."""
        with self._write() as c:
            job = self._job_in(c, job_id, JOB_RUNNING)
            table = self._job_table(c, job)
            partition = next((p for p in table.partitions if p.partition_id == partition_id), None)
            if partition is None:
                raise JobStateChanged(f"partition {partition_id} no longer exists")
            insert_backfill(c, job.job_id, partition_id, version, rowsets, [job.rollup_index_id])
            job = replace(job, backfilled=(*job.backfilled, (partition_id, version)))
            ROLLUP_JOBS.save(c, job)
            return job

    def finish_rollup_job(self, job_id: int) -> RollupJob:
        """RUNNING -> FINISHED, SHADOW -> NORMAL in one commit, if every current partition is back-filled
        (a TRUNCATE may have replaced one meanwhile: then the job stays RUNNING)."""
        with self._write() as c:
            job = self._job_in(c, job_id, JOB_RUNNING)
            table = self._job_table(c, job)
            done = {pid for pid, _ in job.backfilled}
            if any(p.partition_id not in done for p in table.partitions):
                return job
            c.execute("UPDATE indexes SET state = ? WHERE index_id = ?", (INDEX_NORMAL, job.rollup_index_id))
            job = replace(job, state=JOB_FINISHED, finish_time=time.time())
            ROLLUP_JOBS.save(c, job)
            return job

    def cancel_rollup_job(self, job_id: int, msg: str) -> RollupJob | None:
        """Any unfinished state -> CANCELLED with `msg`; the shadow index, its tablets and rowsets go in the
        same commit (their files right after). None if the job had already finished."""
        with self._write() as c:
            try:
                job = self._job_in(c, job_id, JOB_PENDING, JOB_WAITING_TXN, JOB_RUNNING)
            except JobStateChanged:
                return None
            dropped = self._delete_index(c, job.rollup_index_id)
            job = replace(job, state=JOB_CANCELLED, msg=msg, finish_time=time.time())
            ROLLUP_JOBS.save(c, job)
        self._notify_dropped(dropped)
        return job

    # ------------------------------------------------------------ rollup indexes

    def drop_rollups(self, table_id: int, names: Sequence[str]) -> None:
        """ALTER TABLE ... DROP ROLLUP: the indexes, their tablets and rowsets in one commit, files after."""
        dropped: list[int] = []
        with self._write() as c:
            table = self._alterable(c, table_id)
            by_name = {i.name: i for i in table.indexes if i.state == INDEX_NORMAL}
            for name in names:
                if name == table.name:
                    raise doris_error("Cannot drop base index by using DROP ROLLUP or DROP MATERIALIZED VIEW.")
                if name not in by_name:
                    raise doris_error(f"Materialized view [{name}] does not exist in table [{table.name}]")
            for name in dict.fromkeys(names):
                dropped += self._delete_index(c, by_name[name].index_id)
            c.execute("UPDATE tables SET update_time = ? WHERE table_id = ?", (time.time(), table_id))
        self._notify_dropped(dropped)

    @staticmethod
    def _delete_index(c: sqlite3.Connection, index_id: int, remember: bool = True) -> list[int]:
        tablet_ids = [r[0] for r in c.execute("SELECT tablet_id FROM tablets WHERE index_id = ?", (index_id,))]
        c.execute(  # the partitions' data size counts every index's copy
            "UPDATE partitions SET data_size = MAX(0, data_size - (SELECT COALESCE(SUM(r.data_size), 0) FROM "
            "rowsets r JOIN tablets t ON r.tablet_id = t.tablet_id WHERE t.index_id = ? AND "
            "t.partition_id = partitions.partition_id)) WHERE partition_id IN "
            "(SELECT partition_id FROM tablets WHERE index_id = ?)", (index_id, index_id))
        c.execute("DELETE FROM rowsets WHERE tablet_id IN (SELECT tablet_id FROM tablets WHERE index_id = ?)",
                  (index_id,))
        # remembered so that a load which still writes them publishes without them (Catalog.publish)
        if remember:
            c.executemany("INSERT OR IGNORE INTO dropped_rollup_tablets VALUES (?)", [(t,) for t in tablet_ids])
        c.execute("DELETE FROM tablets WHERE index_id = ?", (index_id,))
        c.execute("DELETE FROM indexes WHERE index_id = ?", (index_id,))
        return tablet_ids
