"""Running a schema change job against the storage engine, one state step at a time, like storage.jobs.rollup.

A rewrite (the rows must be written again: a type conversion, a key column dropped or moved; `job.shadows`):

    PENDING      create the SHADOW indexes (the new schema of each changed index) and their tablets in one
                 commit: every load that begins from then on writes them too, its rows converted
    WAITING_TXN  wait for the loads that began before that (they may not write the shadows)
    RUNNING      per partition: read each origin index merged at the partition's visible version V, convert
                 the rows to the new schema (storage.tablet.convert: by column id, Doris's conversions, a
                 value that does not convert fails the job), shape them for the shadow (sort, aggregate by
                 the new keys) and commit one rowset per shadow tablet covering [0, V]; then the swap
    FINISHED     in one commit: each shadow takes its origin's name and place, the origins go, the table
                 takes the new definition (storage.catalog.schema_change_jobs)

Exactly once, as for a rollup: a load below the watershed is in V; one above it wrote the shadows itself
([v, v], skipped by the visibility rule when v <= V). Queries read the origin indexes until the swap.

An index change (ADD INDEX ... USING BITMAP, ALTER TABLE SET bloom_filter_columns), no shadows:

    PENDING      the new table definition is already committed (with the job): loads from then on write
                 segments with the new indexes
    WAITING_TXN  wait until the loads that began before the watershed (and so may write without them)
                 have published or aborted
    RUNNING      tablet by tablet (every index holding an indexed column): rewrite each rowset whose
                 segments lack an index the table now asks for, segment by segment with the new config
                 (same rows, same version range, new rowset id), and swap old -> new in one catalog commit
                 (Catalog.replace_rowsets); the old files go after the swap
    FINISHED     once every tablet is done

Loads and queries go on meanwhile: a reader sees either the old or the new rowset of a swap (one commit),
both hold the same rows, and rowsets published after the definition commit are not rewritten.
"""

from __future__ import annotations

import logging
import shutil
import threading
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from storage.catalog.model import (
    JOB_PENDING,
    JOB_RUNNING,
    JOB_WAITING_TXN,
    PARTITION_INIT_VERSION,
    MaterializedIndexMeta,
    OlapTable,
    Partition,
)
from storage.catalog.rollup_jobs import JobStateChanged
from storage.catalog.schema_change_jobs import SchemaChangeJob
from storage.engine import ScanRequest, StagedRowset, StorageEngine, segment_index_config, write_staged_rowset
from storage.jobs.alter import AlterJobRunner
from storage.jobs.rollup import index_of
from storage.segment.reader import SegmentReader
from storage.segment.schema_view import segment_for
from storage.segment.writer import SegmentIndexConfig, write_segment
from storage.tablet.aggregation import key_column_names

log = logging.getLogger(__name__)


def segment_has_indexes(path: Path, config: SegmentIndexConfig) -> bool:
    """Whether one segment file carries every bloom filter / bitmap index `config` asks for."""
    metas = {m.name: m for m in SegmentReader(path).footer.columns}
    return (all(metas[c].bloom_filter is not None for c in config.bloom_filter if c in metas)
            and all(metas[c].bitmap_index is not None for c in config.bitmap if c in metas))


class SchemaChangeJobRunner(AlterJobRunner[SchemaChangeJob]):
    """Advances index schema-change jobs. `gc_delay` seconds after a swap the old files are removed (a scan
    that listed the old rowsets just before the swap may still open them)."""

    def __init__(self, engine: StorageEngine, gc_delay: float = 5.0,
                 on_backfill: Callable[[SchemaChangeJob, Partition], None] | None = None) -> None:
        self.engine = engine
        self.catalog = engine.catalog
        self.gc_delay = gc_delay
        self.on_backfill = on_backfill  # called before each partition's back-fill commit (tests load there)

    kind = "schema change"

    def _start(self, job: SchemaChangeJob) -> SchemaChangeJob:
        if job.shadows:
            return self.catalog.start_rewrite_shadows(job.job_id)
        # an index change committed its definition with the job: starting is only the state change
        return self.catalog.set_schema_change_state(job.job_id, JOB_PENDING, JOB_WAITING_TXN)

    def _set_state(self, job: SchemaChangeJob, old: str, new: str) -> SchemaChangeJob:
        return self.catalog.set_schema_change_state(job.job_id, old, new)

    def _get(self, job_id: int) -> SchemaChangeJob | None:
        return self.catalog.get_schema_change_job(job_id)

    def cancel(self, job: SchemaChangeJob, msg: str) -> SchemaChangeJob:
        shutil.rmtree(self._staging(job), ignore_errors=True)
        return self.catalog.cancel_schema_change_job(job.job_id, msg) or \
            self.catalog.get_schema_change_job(job.job_id) or job

    def progress(self, job: SchemaChangeJob) -> str | None:
        if job.state != JOB_RUNNING:
            return None
        table = self.catalog.get_table_by_id(job.table_id)
        if table is None:
            return None
        if job.shadows:  # shadow tablets back-filled / all shadow tablets (Doris counts its convert tasks)
            done = {pid for pid, _ in job.backfilled}
            n = len(job.shadows)
            return (f"{n * sum(p.buckets for p in table.partitions if p.partition_id in done)}/"
                    f"{n * sum(p.buckets for p in table.partitions)}")
        total = len(self.catalog.tablets(table.table_id))
        return f"{len(job.done_tablets)}/{total}"

    # ------------------------------------------------------------ RUNNING: a rewrite

    def _run_rewrite(self, job: SchemaChangeJob) -> SchemaChangeJob:
        return self._backfill_partitions(job, self._backfill, self.catalog.finish_rewrite_job)

    def _backfill(self, job: SchemaChangeJob, listed: OlapTable, partition: Partition) -> SchemaChangeJob:
        """One partition's shadows at the partition's visible version now."""
        table, partition = self._now(partition)
        partition_id = partition.partition_id
        version = partition.visible_version
        staging = self._staging(job)
        shutil.rmtree(staging, ignore_errors=True)
        staged: list[StagedRowset] = []
        if version > PARTITION_INIT_VERSION:
            for origin_id, shadow_id in job.shadows:
                staged += self._convert(table, partition, version, index_of(table, origin_id),
                                        index_of(table, shadow_id), staging)
        if self.on_backfill is not None:
            self.on_backfill(job, partition)
        try:
            return self.engine.install_rowsets(
                staging, staged, -job.job_id,
                lambda rowsets: self.catalog.commit_rewrite_backfill(job.job_id, partition_id, version, rowsets))
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _convert(self, table: OlapTable, partition: Partition, version: int, origin: MaterializedIndexMeta,
                 shadow: MaterializedIndexMeta, staging: Path) -> list[StagedRowset]:
        """The shadow's rows of one partition at `version`, tablet by tablet (a shadow tablet holds the rows
        of the origin tablet with its bucket number: the load path routes both the same way)."""
        shadow_rows = self.engine.shadow_rows(table)
        if shadow_rows is None:
            raise JobStateChanged("the engine has no schema conversion")
        names = [c.name for c in origin.columns]
        placeholder = pa.schema([pa.field(n, pa.null()) for n in names])  # types only for an empty result
        targets = {t.bucket: t for t in self.catalog.tablets(table.table_id, partition.partition_id,
                                                              shadow.index_id)}
        indexes = segment_index_config(table, shadow)
        staged: list[StagedRowset] = []
        for tablet in self.catalog.tablets(table.table_id, partition.partition_id, origin.index_id):
            rows = self.engine.scan(ScanRequest(
                table=table, schema=placeholder, columns=names, partition_ids=[partition.partition_id],
                index_id=origin.index_id, versions={partition.partition_id: version},
                tablet_ids=[tablet.tablet_id])).table
            if rows.num_rows == 0:
                continue
            rs = write_staged_rowset(staging, targets[tablet.bucket], shadow, shadow_rows(rows, shadow),
                                     self.engine.max_segment_bytes, indexes=indexes)
            if rs is not None:
                staged.append(rs)
        return staged

    # ------------------------------------------------------------ RUNNING

    def _run(self, job: SchemaChangeJob) -> SchemaChangeJob:
        if job.shadows:
            return self._run_rewrite(job)
        table = self.catalog.get_table_by_id(job.table_id)
        if table is None:
            raise JobStateChanged(f"table {job.table_name} was dropped")
        indexes = {i.index_id: i for i in table.indexes}
        done = set(job.done_tablets)
        for tablet in self.catalog.tablets(table.table_id):
            if tablet.tablet_id in done or tablet.index_id not in indexes:
                continue
            self._rewrite_tablet(job, table, indexes[tablet.index_id], tablet.tablet_id)
        return self.catalog.set_schema_change_state(job.job_id, JOB_RUNNING, "FINISHED")

    def _rewrite_tablet(self, job: SchemaChangeJob, table: OlapTable, index: MaterializedIndexMeta,
                        tablet_id: int) -> None:
        config = segment_index_config(table, index)
        stale = []
        if config is not None:
            # rowsets a compaction already replaced are only kept for older snapshots: not worth an index
            retired = {s.rowset.rowset_id for s in self.catalog.stale_rowsets(tablet_id)}
            for rs in self.catalog.all_rowsets(tablet_id):
                if rs.rowset_id in retired:
                    continue
                if rs.kind == "DATA" and rs.num_segments > 0 and rs.txn_id < job.watershed_txn_id and not all(
                        segment_has_indexes(p, config) for p in self.engine.segment_paths(rs)):
                    stale.append(rs)
        if not stale:
            self.catalog.mark_tablet_done(job.job_id, tablet_id)
            return
        staging = self._staging(job)
        shutil.rmtree(staging, ignore_errors=True)
        stage = staging / str(tablet_id)
        stage.mkdir(parents=True, exist_ok=True)
        n_keys = len(key_column_names(index))
        by_new: dict[str, object] = {}
        staged: list[StagedRowset] = []
        for rs in stale:
            new_id = uuid.uuid4().hex
            size = 0
            wanted = self.engine.wanted_columns(index)
            for i, path in enumerate(self.engine.segment_paths(rs)):
                reader = SegmentReader(path)
                # a segment from before a schema change is rewritten in the current one
                data = (segment_for(reader, wanted).read([c.name for c in index.columns]) if wanted
                        else reader.read(reader.schema.names))
                size += write_segment(stage / f"{new_id}_{i}.dat", data, n_keys, index.short_key_column_count,
                                      config)
            staged.append(StagedRowset(tablet_id=tablet_id, partition_id=0, rowset_id=new_id,
                                       num_rows=rs.num_rows, num_segments=rs.num_segments, data_size=size,
                                       overlapping=rs.overlapping))
            by_new[new_id] = rs
        try:
            self.engine.install_rowsets(
                staging, staged, 0,
                lambda rowsets: self.catalog.replace_rowsets(
                    [rs.rowset_id for rs in stale],
                    [replace(by_new[r.rowset_id], rowset_id=r.rowset_id, data_size=r.data_size,  # type: ignore[type-var]
                             created_at=r.created_at) for r in rowsets],
                    job_id=job.job_id, tablet_id=tablet_id),
            )
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        old_paths = [p for rs in stale for p in self.engine.segment_paths(rs)]
        if self.gc_delay <= 0:
            _remove(old_paths)
        else:
            timer = threading.Timer(self.gc_delay, _remove, (old_paths,))
            timer.daemon = True
            timer.start()

    def _staging(self, job: SchemaChangeJob) -> Path:
        return self.engine.staging_root / f"schema_change_{job.job_id}"


def _remove(paths: list[Path]) -> None:
    for p in paths:
        p.unlink(missing_ok=True)
