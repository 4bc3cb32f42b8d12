"""Running an ADD ROLLUP job (Doris's RollupJobV2) against the storage engine, one state step at a time.

    PENDING      create the SHADOW index and its tablets (one catalog commit): every load that begins
                 from now on writes the rollup too; the watershed is the next transaction id
    WAITING_TXN  wait until the loads that began before the watershed (and so may not write the rollup)
                 have published or aborted
    RUNNING      per partition: read the source index merged at the partition's visible version V,
                 shape the rows for the rollup (the load memtable: project, sort, aggregate) bucket by
                 bucket, and commit one rowset per rollup tablet covering versions [0, V]
    FINISHED     SHADOW -> NORMAL in one commit (only if every current partition is back-filled)

Why no row is missed or counted twice. A load with a txn id below the watershed may not write the rollup,
but WAITING_TXN lets it publish (or abort) first, so its version is <= V and the back-fill, which read the
source at V, holds its rows. A load above the watershed writes the rollup itself ([v, v] rowsets): if
v <= V the back-fill holds it too, and the visibility rule takes the wider [0, V] rowset and skips the
[v, v] one; if v > V it sits on top of the back-fill. A load above the watershed that bound an older
table snapshot (no shadow index in it) gets its rollup rowsets built at commit
(`StorageEngine._complete_indexes`).

Steps are driven from outside (server.alter_jobs runs them on a thread, tests call `step` by hand);
each returns the job as the catalog now holds it. A CANCEL or DROP TABLE between two steps wins: the
next catalog commit of the job finds the state changed and the step stops (JobStateChanged).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from storage.catalog.model import (
    PARTITION_INIT_VERSION,
    MaterializedIndexMeta,
    OlapTable,
    Partition,
    RollupJob,
)
from storage.catalog.rollup_jobs import JobStateChanged
from storage.engine import ScanRequest, StagedRowset, StorageEngine, segment_index_config, write_staged_rowset
from storage.jobs.alter import AlterJobRunner

log = logging.getLogger(__name__)



class RollupJobRunner(AlterJobRunner[RollupJob]):
    """Advances rollup jobs. `on_backfill(job, partition)` is a hook called before each partition's
    back-fill commit (tests interleave loads there)."""

    def __init__(self, engine: StorageEngine, on_backfill: Callable[[RollupJob, Partition], None] | None = None
                 ) -> None:
        self.engine = engine
        self.catalog = engine.catalog
        self.on_backfill = on_backfill

    kind = "rollup"

    def _start(self, job: RollupJob) -> RollupJob:
        return self.catalog.start_shadow_index(job.job_id)

    def _set_state(self, job: RollupJob, old: str, new: str) -> RollupJob:
        return self.catalog.set_rollup_job_state(job.job_id, old, new)

    def _get(self, job_id: int) -> RollupJob | None:
        return self.catalog.get_rollup_job(job_id)

    def cancel(self, job: RollupJob, msg: str) -> RollupJob:
        cancelled = self.catalog.cancel_rollup_job(job.job_id, msg)
        shutil.rmtree(self._staging(job), ignore_errors=True)
        return cancelled or self.catalog.get_rollup_job(job.job_id) or job

    # ------------------------------------------------------------ RUNNING

    def _run(self, job: RollupJob) -> RollupJob:
        return self._backfill_partitions(job, self._backfill, self.catalog.finish_rollup_job)

    def _backfill(self, job: RollupJob, table: OlapTable, partition: Partition) -> RollupJob:
        current, fresh = self._now(partition)
        version = fresh.visible_version
        rollup = index_of(current, job.rollup_index_id)
        source = index_of(current, job.base_index_id)
        staging = self._staging(job)
        shutil.rmtree(staging, ignore_errors=True)
        staged: list[StagedRowset] = []
        if version > PARTITION_INIT_VERSION:
            staged = self._build(current, fresh, version, source, rollup, staging)
        if self.on_backfill is not None:
            self.on_backfill(job, fresh)
        try:
            return self.engine.install_rowsets(
                staging, staged, -job.job_id,
                lambda rowsets: self.catalog.commit_backfill(job.job_id, fresh.partition_id, version, rowsets),
            )
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _build(self, table: OlapTable, partition: Partition, version: int, source: MaterializedIndexMeta,
               rollup: MaterializedIndexMeta, staging: Path) -> list[StagedRowset]:
        """The rollup's rows of one partition at `version`, bucket by bucket: a rollup tablet holds the rows
        of the source tablet with the same bucket number (the load path routes both the same way)."""
        names = [c.name for c in rollup.columns]
        # the scan only needs Arrow types for an empty result, which is skipped anyway
        placeholder = pa.schema([pa.field(n, pa.null()) for n in names])
        targets = {t.bucket: t for t in self.catalog.tablets(table.table_id, partition.partition_id,
                                                              rollup.index_id)}
        staged: list[StagedRowset] = []
        indexes = segment_index_config(table, rollup)
        for tablet in self.catalog.tablets(table.table_id, partition.partition_id, source.index_id):
            rows = self.engine.scan(ScanRequest(
                table=table, schema=placeholder, columns=names, partition_ids=[partition.partition_id],
                index_id=source.index_id, versions={partition.partition_id: version},
                tablet_ids=[tablet.tablet_id],
            )).table
            if rows.num_rows == 0:
                continue
            rs = write_staged_rowset(staging, targets[tablet.bucket], rollup, rows, self.engine.max_segment_bytes,
                                     indexes=indexes)
            if rs is not None:
                staged.append(rs)
        return staged

    def _staging(self, job: RollupJob) -> Path:
        return self.engine.staging_root / f"rollup_{job.job_id}"


def index_of(table: OlapTable, index_id: int) -> MaterializedIndexMeta:
    index = next((i for i in table.indexes if i.index_id == index_id), None)
    if index is None:
        raise JobStateChanged(f"index {index_id} of table {table.name} no longer exists")
    return index
