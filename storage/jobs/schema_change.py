"""Running an index schema change (ADD INDEX ... USING BITMAP, ALTER TABLE SET bloom_filter_columns) against the
storage engine, one state step at a time, like storage.jobs.rollup.

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
from dataclasses import replace
from pathlib import Path

from storage.catalog.model import JOB_PENDING, JOB_RUNNING, JOB_WAITING_TXN, MaterializedIndexMeta, OlapTable
from storage.catalog.rollup_jobs import JobStateChanged
from storage.catalog.schema_change_jobs import SchemaChangeJob
from storage.engine import StagedRowset, StorageEngine, segment_index_config
from storage.jobs.alter import AlterJobRunner
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

    def __init__(self, engine: StorageEngine, gc_delay: float = 5.0) -> None:
        self.engine = engine
        self.catalog = engine.catalog
        self.gc_delay = gc_delay

    kind = "schema change"

    def _start(self, job: SchemaChangeJob) -> SchemaChangeJob:
        # the new definition was committed with the job: starting is only the state change
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
        total = len(self.catalog.tablets(table.table_id))
        return f"{len(job.done_tablets)}/{total}"

    # ------------------------------------------------------------ RUNNING

    def _run(self, job: SchemaChangeJob) -> SchemaChangeJob:
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
