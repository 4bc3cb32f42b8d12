"""The catalog side of index schema changes (ADD INDEX ... USING BITMAP, bloom_filter_columns): jobs persisted
in SQLite and the rowset swap they end with.

A job is created in the same commit that changes the table definition (index_defs / properties), so every
load that begins from then on writes segments with the new indexes; `watershed_txn_id` is the next txn id.
The job then rewrites, tablet by tablet, every rowset whose segments lack the indexes (the ones published
before that commit) and swaps old -> new with `replace_rowsets`, one catalog transaction per tablet.

A rewrite job (a type change, a key column dropped or reordered: the rows must be written again) is Doris's
SchemaChangeJobV2 with shadow indexes: created PENDING with the new definition; its SHADOW indexes (one per
changed index, named `__doris_shadow_<index>`) and their tablets appear in one commit (from then on every load
writes them too, converted); each partition's back-fill is committed in one; the swap (shadows become the
indexes, the origins go, the table takes the new definition) is one more. The origin tablets are remembered in
`replaced_tablets`: a load that wrote them and the shadow publishes the shadow rows only.

`SchemaChangeCatalog` is a mixin of `storage.catalog.store.Catalog`.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from storage.catalog.job_tables import SCHEMA_CHANGE_JOBS
from storage.catalog.model import (
    INDEX_NORMAL,
    INDEX_SHADOW,
    JOB_CANCELLED,
    JOB_DONE_STATES,
    JOB_FINISHED,
    JOB_PENDING,
    JOB_RUNNING,
    JOB_WAITING_TXN,
    SHADOW_PREFIX,
    Column,
    DistributionInfo,
    IndexDef,
    MaterializedIndexMeta,
    OlapTable,
    PartitionInfo,
    Rowset,
    SchemaChangeJob,
)
from storage.catalog.rollup_jobs import JobStateChanged, insert_backfill

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

SCHEMA_CHANGE_SCHEMA = SCHEMA_CHANGE_JOBS.schema + """;
CREATE TABLE IF NOT EXISTS replaced_tablets (tablet_id INTEGER PRIMARY KEY, index_id INTEGER NOT NULL)
"""


class SchemaChangeCatalog:
    """Index schema-change jobs, table definition changes and rowset swaps (mixed into Catalog)."""

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
        @staticmethod
        def _delete_index(c: sqlite3.Connection, index_id: int, remember: bool = True) -> list[int]: ...
        def _notify_dropped(self, tablet_ids: list[int]) -> None: ...
        def _alterable(self, c: sqlite3.Connection, table_id: int) -> OlapTable: ...
        def _with_ids(self, c: sqlite3.Connection, cols: Sequence[Column],
                      fresh: dict[str, int]) -> tuple[Column, ...]: ...
        @staticmethod
        def _apply_definition(c: sqlite3.Connection, table_id: int, columns: Sequence[Column],
                              indexes: Sequence[MaterializedIndexMeta], partition_info: PartitionInfo,
                              distribution: DistributionInfo, properties: Sequence[tuple[str, str]],
                              index_defs: Sequence[IndexDef], renames: Sequence[tuple[str, str]]) -> None: ...

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
            table = self._alterable(c, table_id)
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
        dropped: list[int] = []
        with self._write() as c:
            job = SCHEMA_CHANGE_JOBS.get(c, job_id)
            if job is None or job.done:
                return None
            job = replace(job, state=JOB_CANCELLED, msg=msg, finish_time=time.time())
            if job.previous_index_defs is not None:
                c.execute("UPDATE tables SET index_defs = ?, properties = ?, update_time = ? WHERE table_id = ?",
                          (job.previous_index_defs, job.previous_properties, time.time(), job.table_id))
            for _, shadow in job.shadows:  # a rewrite's shadow indexes go; the table never saw the new schema
                dropped += self._delete_index(c, shadow)
            SCHEMA_CHANGE_JOBS.save(c, job)
        self._notify_dropped(dropped)
        return job

    # ------------------------------------------------------------ rewrite jobs

    def create_rewrite_job(self, table_id: int, columns: Sequence[Column], indexes: Sequence[MaterializedIndexMeta],
                           partition_info: PartitionInfo, distribution: DistributionInfo,
                           properties: Sequence[tuple[str, str]], index_defs: Sequence[IndexDef],
                           renames: Sequence[tuple[str, str]], rewrite: Sequence[int],
                           timeout: int) -> SchemaChangeJob:
        """A PENDING rewrite job holding the new definition (new columns get their unique ids now); the indexes
        `rewrite` names get shadows. The table is unchanged until the job finishes."""
        with self._write() as c:
            table = self._alterable(c, table_id)
            fresh: dict[str, int] = {}
            base = self._with_ids(c, columns, fresh)
            definition = {
                "columns": [asdict(col) for col in base],
                "indexes": [{"index_id": i.index_id, "short_key_column_count": i.short_key_column_count,
                             "columns": [asdict(col) for col in self._with_ids(c, i.columns, fresh)]}
                            for i in indexes],
                "partition_info": asdict(partition_info), "distribution": asdict(distribution),
                "properties": [list(p) for p in properties], "index_defs": [asdict(d) for d in index_defs],
                "renames": [list(r) for r in renames],
            }
            job = SchemaChangeJob(
                job_id=self._allocate(c), db_id=table.db_id, table_id=table_id, table_name=table.name,
                index_id=table.base_index_id, create_time=time.time(), timeout_second=timeout,
                schema_version=len(SCHEMA_CHANGE_JOBS.jobs(c, table_id=table_id)) + 1,
                shadows=tuple((origin, self._allocate(c)) for origin in rewrite),
                new_definition=json.dumps(definition, ensure_ascii=False))
            SCHEMA_CHANGE_JOBS.save(c, job)
            return job

    def start_rewrite_shadows(self, job_id: int) -> SchemaChangeJob:
        """PENDING -> WAITING_TXN in one commit: each SHADOW index with one tablet per bucket per partition, so
        every load that begins from now on writes them too; the watershed is the next txn id."""
        with self._write() as c:
            job = self._sc_job_in(c, job_id, JOB_PENDING)
            table = self._load_table(c, job.table_id)
            assert table is not None
            new = _definition_indexes(job)
            by_id = {i.index_id: i for i in table.indexes}
            for k, (origin_id, shadow_id) in enumerate(job.shadows):
                origin = by_id.get(origin_id)
                if origin is None:
                    raise JobStateChanged(f"index {origin_id} of table {table.name} no longer exists")
                columns, short_keys = new[origin_id]
                self._insert_index(c, table.table_id, len(table.indexes) + k, MaterializedIndexMeta(
                    index_id=shadow_id, name=SHADOW_PREFIX + origin.name, columns=columns,
                    keys_type=table.keys_type, short_key_column_count=short_keys,
                    schema_hash=secrets.randbits(31), state=INDEX_SHADOW))
                for p in table.partitions:
                    first = self._allocate(c, p.buckets)
                    c.executemany("INSERT INTO tablets VALUES (?, ?, ?, ?, ?)",
                                  [(first + b, table.table_id, p.partition_id, shadow_id, b)
                                   for b in range(p.buckets)])
            watershed = c.execute("SELECT value FROM counters WHERE name = 'txn'").fetchone()[0]
            job = replace(job, state=JOB_WAITING_TXN, watershed_txn_id=watershed)
            SCHEMA_CHANGE_JOBS.save(c, job)
            return job

    def commit_rewrite_backfill(self, job_id: int, partition_id: int, version: int,
                                rowsets: Sequence[Rowset]) -> SchemaChangeJob:
        """One partition's back-fill of every shadow in one commit: versions [0, version] (as a rollup's)."""
        with self._write() as c:
            job = self._sc_job_in(c, job_id, JOB_RUNNING)
            if c.execute("SELECT 1 FROM partitions WHERE partition_id = ?", (partition_id,)).fetchone() is None:
                raise JobStateChanged(f"partition {partition_id} no longer exists")
            insert_backfill(c, job.job_id, partition_id, version, rowsets, [s for _, s in job.shadows])
            job = replace(job, backfilled=(*job.backfilled, (partition_id, version)))
            SCHEMA_CHANGE_JOBS.save(c, job)
            return job

    def finish_rewrite_job(self, job_id: int) -> SchemaChangeJob:
        """RUNNING -> FINISHED in one commit, if every current partition is back-filled: each shadow takes its
        origin's name and place (the base's too), the origins go with their tablets and rowsets, and the table
        takes the new definition."""
        dropped: list[int] = []
        with self._write() as c:
            job = self._sc_job_in(c, job_id, JOB_RUNNING)
            table = self._load_table(c, job.table_id)
            assert table is not None and job.new_definition is not None
            done = {pid for pid, _ in job.backfilled}
            if any(p.partition_id not in done for p in table.partitions):
                return job
            by_id = {i.index_id: i for i in table.indexes}
            position = {r[0]: r[1] for r in c.execute("SELECT index_id, position FROM indexes WHERE table_id = ?",
                                                      (table.table_id,))}
            for origin_id, shadow_id in job.shadows:
                c.executemany("INSERT OR REPLACE INTO replaced_tablets VALUES (?, ?)", [
                    (r[0], shadow_id) for r in c.execute("SELECT tablet_id FROM tablets WHERE index_id = ?",
                                                         (origin_id,)).fetchall()])
                dropped += self._delete_index(c, origin_id, remember=False)
                c.execute("UPDATE indexes SET state = ?, name = ?, position = ? WHERE index_id = ?",
                          (INDEX_NORMAL, by_id[origin_id].name, position[origin_id], shadow_id))
                if origin_id == table.base_index_id:
                    c.execute("UPDATE tables SET base_index_id = ? WHERE table_id = ?", (shadow_id, table.table_id))
            d = json.loads(job.new_definition)
            rewritten = {o for o, _ in job.shadows}
            kept = [MaterializedIndexMeta(index_id=i, name=by_id[i].name, columns=cols, keys_type=table.keys_type,
                                          short_key_column_count=n)
                    for i, (cols, n) in _definition_indexes(job).items() if i not in rewritten and i in by_id]
            self._apply_definition(
                c, table.table_id, tuple(Column(**col) for col in d["columns"]), kept,
                PartitionInfo(d["partition_info"]["type"], tuple(d["partition_info"]["columns"])),
                DistributionInfo(**{**d["distribution"], "columns": tuple(d["distribution"]["columns"])}),
                [tuple(p) for p in d["properties"]],
                [IndexDef(**{**x, "columns": tuple(x["columns"]),
                             "properties": tuple(tuple(p) for p in x["properties"])}) for x in d["index_defs"]],
                [tuple(r) for r in d["renames"]])
            job = replace(job, state=JOB_FINISHED, finish_time=time.time())
            SCHEMA_CHANGE_JOBS.save(c, job)
        self._notify_dropped(dropped)
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


def _definition_indexes(job: SchemaChangeJob) -> dict[int, tuple[tuple[Column, ...], int]]:
    """origin index id -> (its columns, short key column count) in the job's new definition."""
    assert job.new_definition is not None
    return {i["index_id"]: (tuple(Column(**col) for col in i["columns"]), i["short_key_column_count"])
            for i in json.loads(job.new_definition)["indexes"]}
