"""One compaction of one tablet: its input rowsets (consecutive versions [a..b]) merged into ONE rowset [a-b].

The merge is a streaming, vectorized k-way merge. Every input segment is a run sorted by the index's keys
(a load's memtable and every earlier compaction wrote it sorted). Runs are read `batch` rows at a time;
each round

1. tops up every run whose buffer fell under half a batch (one `SegmentReader.read` of a row range);
2. takes the bound: the smallest last buffered key among runs not yet exhausted; no run can later produce
   a key below it, so every buffered row with a key < bound (<= for DUPLICATE, whose equal keys need not
   meet) is final;
3. cuts those rows off every buffer, concatenates them oldest version first, sorts them stably by key
   (so equal keys stay in version order) and aggregates them per the model with the same function loads
   and merge-on-read use (storage/tablet/aggregation.py): AGGREGATE and UNIQUE rows with equal keys become
   one, DUPLICATE keeps every row;
4. appends the result to the output, which is written as segments of at most `max_segment_bytes` with
   the loads' segment writer and the table's index configuration (short key, zone maps, ordinal, bloom
   filters, bitmap indexes all rebuilt).

Memory: the run buffers hold at most about 2 x batch rows per input segment (a run's keys are unique for
AGGREGATE / UNIQUE, so a bound never waits on one key), and batch = MERGE_BUDGET_ROWS / segments (at least
MIN_BATCH_ROWS): about 2 x MERGE_BUDGET_ROWS rows while the permits (= segments merged at once, see
scheduling.PermitPool) stay under MERGE_BUDGET_ROWS / MIN_BATCH_ROWS, and growing with the permits past
that; plus one output segment (<= max_segment_bytes, as the segment writer lays a file out column by
column). Never the tablet's size.

Base compaction merges DELETE rowsets among its inputs physically: each run loses the rows that a delete
predicate of a higher version matches (the read path's own delete filter), and the output keeps none of
them. Cumulative compaction never has a DELETE rowset among its inputs (the policy stops at one).

Publishing: the output is staged under <root>/staging/compaction_<id>/ and renamed into the tablet's
folder by StorageEngine.install_rowsets, whose publish step is Catalog.publish_compaction (one commit;
fails cleanly if an input disappeared: truncate, drop partition, drop table). A crash before that commit
leaves only files no rowset references, which StorageEngine.open() removes. The inputs become stale rowsets
handed to the engine's reader registry, which deletes them once no scan reads them.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.catalog.compaction import CompactionConflict
from storage.catalog.model import KEYS_DUP, MaterializedIndexMeta, OlapTable, Rowset, Tablet
from storage.errors import StorageError
from storage.segment.reader import SegmentReader
from storage.segment.row_ranges import RowRanges
from storage.segment.schema_view import WantedColumn, segment_for
from storage.segment.writer import SegmentIndexConfig, write_segment
from storage.tablet.aggregation import aggregate_index, key_column_names, sort_by_keys
from storage.workers import run_in_worker

if TYPE_CHECKING:
    from storage.engine import StagedRowset, StorageEngine

MERGE_BUDGET_ROWS = 1 << 20
ALL_VERSIONS = 1 << 62
MIN_BATCH_ROWS = 4096
MAX_BATCH_ROWS = 1 << 16


@dataclass(frozen=True)
class MergeStats:
    input_rowsets: int
    input_segments: int
    input_rows: int
    input_bytes: int
    output_rows: int
    output_segments: int
    bytes_written: int
    rows_deleted: int  # removed by delete predicates (base compaction)
    seconds: float


@dataclass(frozen=True)
class CompactionOutput:
    rowset: Rowset
    stats: MergeStats


def batch_rows_for(segments: int, budget_rows: int = MERGE_BUDGET_ROWS) -> int:
    """Rows read per segment per round: the budget shared by the segments merged at once."""
    return max(MIN_BATCH_ROWS, min(MAX_BATCH_ROWS, budget_rows // max(segments, 1)))


# ------------------------------------------------------------------------------------------ delete filter


def apply_delete_predicates(data: pa.Table, version: int, deletes: Sequence[Rowset]) -> tuple[pa.Table, int]:
    """`data` (rows of a rowset ending at `version`) without the rows a DELETE rowset of a higher version
    among `deletes` removes, and how many: the read path's own delete filter (storage/tablet/delete_filter)."""
    if not deletes or data.num_rows == 0:
        return data, 0
    from storage.tablet.delete_filter import apply_deletes, deletes_above

    return apply_deletes(data, deletes_above(deletes, version))


# ------------------------------------------------------------------------------------------ the k-way merge


def _strip(table: pa.Table, schema: pa.Schema) -> pa.Table:
    table = table.replace_schema_metadata(None)
    return table if table.schema.equals(schema) else table.cast(schema)


class _Run:
    """One input segment read batch by batch; rows already handed to the merge are cut off the buffer."""

    def __init__(self, reader: SegmentReader, columns: list[str], schema: pa.Schema, version: int,
                 deletes: Sequence[Rowset]) -> None:
        self.reader = reader
        self.columns = columns
        self.schema = schema
        self.version = version
        self.deletes = deletes
        self.next_row = 0
        self.buffer = schema.empty_table()
        self.rows_read = 0
        self.rows_deleted = 0

    @property
    def exhausted(self) -> bool:
        return self.next_row >= self.reader.num_rows

    def fill(self, rows: int) -> None:
        """Read up to `rows` more rows (more if the delete filter removed every one read)."""
        while not self.exhausted:
            end = min(self.reader.num_rows, self.next_row + rows)
            got = _strip(self.reader.read(self.columns, RowRanges([self.next_row], [end])), self.schema)
            self.next_row = end
            self.rows_read += got.num_rows
            kept, removed = apply_delete_predicates(got, self.version, self.deletes)
            self.rows_deleted += removed
            if kept.num_rows:
                self.buffer = pa.concat_tables([self.buffer, kept]) if self.buffer.num_rows else kept
                return

    def take(self, n: int) -> pa.Table:
        head = self.buffer.slice(0, n)
        self.buffer = self.buffer.slice(n)
        return head


def _rows_below(table: pa.Table, keys: Sequence[str], bound: dict[str, pa.Scalar], inclusive: bool) -> int:
    """How many leading rows of key-sorted `table` have a key < `bound` (<= when inclusive); NULL is the
    smallest key value, as Doris sorts."""
    n = table.num_rows
    less = np.zeros(n, dtype=bool)
    equal = np.ones(n, dtype=bool)
    for k in keys:
        col = table.column(k)
        b = bound[k]
        if not b.is_valid:
            equal &= col.is_null().to_numpy(zero_copy_only=False)
            continue
        lt = pc.fill_null(pc.less(col, b), True).to_numpy(zero_copy_only=False)
        eq = pc.fill_null(pc.equal(col, b), False).to_numpy(zero_copy_only=False)
        less |= equal & lt
        equal &= eq
    return int(np.count_nonzero(less | equal if inclusive else less))


def _bound(runs: Sequence[_Run], keys: Sequence[str]) -> dict[str, pa.Scalar]:
    """The smallest last buffered key among `runs`."""
    lasts = pa.concat_tables([r.buffer.select(keys).slice(r.buffer.num_rows - 1, 1) for r in runs])
    i = 0
    if lasts.num_rows > 1:
        i = pc.sort_indices(lasts, sort_keys=[(k, "ascending", "at_start") for k in keys])[0].as_py()
    return {k: lasts.column(k)[i] for k in keys}


class _SegmentSink:
    """The output rowset's segments: buffered up to max_segment_bytes, then written with the loads' writer."""

    def __init__(self, directory: Path, rowset_id: str, index: MaterializedIndexMeta,
                 indexes: SegmentIndexConfig | None, max_segment_bytes: int) -> None:
        self.directory = directory
        self.rowset_id = rowset_id
        self.num_keys = len(key_column_names(index))
        self.short_keys = index.short_key_column_count
        self.indexes = indexes
        self.max_bytes = max_segment_bytes
        self.parts: list[pa.Table] = []
        self.buffered = 0
        self.segments = 0
        self.rows = 0
        self.bytes_written = 0

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self.parts.append(table)
        self.buffered += table.nbytes
        if self.buffered >= self.max_bytes:
            self._flush(final=False)

    def finish(self) -> None:
        self._flush(final=True)

    def _flush(self, final: bool) -> None:
        if not self.parts:
            return
        data = pa.concat_tables(self.parts).combine_chunks() if len(self.parts) > 1 else self.parts[0]
        per_segment = max(1, int(self.max_bytes * data.num_rows / max(data.nbytes, 1)))
        start = 0
        while data.num_rows - start >= per_segment or (final and start < data.num_rows):
            self._write(data.slice(start, min(per_segment, data.num_rows - start)))
            start += per_segment
        rest = data.slice(start) if start < data.num_rows else None
        self.parts = [rest] if rest is not None else []
        self.buffered = rest.nbytes if rest is not None else 0

    def _write(self, data: pa.Table) -> None:
        path = self.directory / f"{self.rowset_id}_{self.segments}.dat"
        self.bytes_written += write_segment(path, data, self.num_keys, self.short_keys, self.indexes)
        self.segments += 1
        self.rows += data.num_rows


def merge_segments(paths_by_rowset: Sequence[tuple[Rowset, Sequence[Path]]], index: MaterializedIndexMeta,
                   sink: _SegmentSink, deletes: Sequence[Rowset] = (),
                   batch_rows: int | None = None, wanted: Sequence[WantedColumn] | None = None) -> tuple[int, int]:
    """Merge the segments (rowsets oldest first) into `sink`; returns (rows read, rows deleted). `wanted`: the
    index's current columns, when segments may predate a schema change (the output has the new schema)."""
    keys = key_column_names(index)
    columns = [c.name for c in index.columns]
    readers = [(rs, segment_for(SegmentReader(p), wanted) if wanted else SegmentReader(p))
               for rs, paths in paths_by_rowset for p in paths]
    if not readers:
        return 0, 0
    first = readers[0][1].schema
    try:
        schema = pa.schema([first.field(c) for c in columns])
    except KeyError as e:
        raise StorageError(f"segment {readers[0][1].name} lacks column {e}") from None
    runs = [_Run(r, columns, schema, rs.end_version, deletes) for rs, r in readers if r.num_rows]
    batch = batch_rows or batch_rows_for(len(runs))
    inclusive = index.keys_type == KEYS_DUP
    force: set[int] = set()
    while True:
        for i, run in enumerate(runs):
            if i in force or (run.buffer.num_rows <= batch // 2 and not run.exhausted):
                run.fill(batch)
        force.clear()
        open_runs = [r for r in runs if not r.exhausted]
        if open_runs:
            bound = _bound(open_runs, keys)
            cuts = [_rows_below(r.buffer, keys, bound, inclusive) if r.buffer.num_rows else 0 for r in runs]
        else:
            cuts = [r.buffer.num_rows for r in runs]
        pieces = [run.take(n) for run, n in zip(runs, cuts, strict=True) if n]
        if pieces:
            merged = pa.concat_tables(pieces) if len(pieces) > 1 else pieces[0]
            if len(pieces) > 1:  # one run alone is sorted and (AGG / UNIQUE) unique already
                merged = aggregate_index(sort_by_keys(merged, keys), index)
            sink.add(merged)
        elif open_runs:
            # every buffered row sits at the bound: read on in the runs that end there
            lasts = [i for i, r in enumerate(runs) if not r.exhausted and
                     _rows_below(r.buffer.slice(r.buffer.num_rows - 1), keys, bound, True)]
            force.update(lasts)
        if not open_runs and not any(r.buffer.num_rows for r in runs):
            break
    sink.finish()
    return sum(r.rows_read for r in runs), sum(r.rows_deleted for r in runs)


@dataclass(frozen=True)
class Merged:
    """What merge_to_stage wrote (it may run in a compaction worker process: plain values only)."""

    rows_read: int
    rows_deleted: int
    rows: int
    segments: int
    bytes_written: int


def merge_to_stage(stage: Path, rowset_id: str, index: MaterializedIndexMeta, indexes: SegmentIndexConfig | None,
                   max_segment_bytes: int, paths_by_rowset: Sequence[tuple[Rowset, Sequence[Path]]],
                   deletes: Sequence[Rowset], batch_rows: int | None, wanted: Sequence[WantedColumn] | None
                   ) -> Merged:
    """Merge the input segments into "<rowset_id>_<n>.dat" files under `stage`: files in, files out, nothing
    else of the server's, so a worker process can run it (storage/workers.py)."""
    sink = _SegmentSink(stage, rowset_id, index, indexes, max_segment_bytes)
    rows_read, rows_deleted = merge_segments(paths_by_rowset, index, sink, deletes, batch_rows, wanted)
    return Merged(rows_read, rows_deleted, sink.rows, sink.segments, sink.bytes_written)


# ------------------------------------------------------------------------------------------ one compaction


def compact_rowsets(engine: StorageEngine, table: OlapTable, index: MaterializedIndexMeta, tablet: Tablet,
                    inputs: Sequence[Rowset], start_version: int, end_version: int,
                    batch_rows: int | None = None) -> CompactionOutput:
    """Merge `inputs` (one tablet's rowsets, consecutive versions, oldest first) into one rowset
    [start_version-end_version], publish it in place of the inputs and retire them. Raises
    CompactionConflict (nothing changed) if an input went away meanwhile."""
    from storage.engine import StagedRowset, segment_index_config

    started = time.perf_counter()
    inputs = sorted(inputs, key=lambda r: (r.start_version, r.end_version))
    data_inputs = [rs for rs in inputs if rs.kind == "DATA"]
    rowset_id = uuid.uuid4().hex
    staging = engine.staging_root / f"compaction_{tablet.tablet_id}_{rowset_id}"
    stage = staging / str(tablet.tablet_id)
    stage.mkdir(parents=True, exist_ok=True)
    try:
        try:
            merged = run_in_worker("compaction merge", engine.compaction_processes, merge_to_stage, stage, rowset_id,
                                   index, segment_index_config(table, index), engine.max_segment_bytes,
                                   [(rs, engine.segment_paths(rs)) for rs in data_inputs],
                                   [rs for rs in inputs if rs.kind == "DELETE"], batch_rows,
                                   engine.wanted_columns(index))
        except FileNotFoundError:
            live = {rs.rowset_id for rs in engine.catalog.rowsets(tablet.tablet_id, ALL_VERSIONS)}
            gone = [rs.rowset_id for rs in inputs if rs.rowset_id not in live]
            if gone:  # replaced or dropped meanwhile, and its files deleted
                raise CompactionConflict(f"rowset {gone[0]} of tablet {tablet.tablet_id} no longer exists") from None
            raise
        staged: StagedRowset = StagedRowset(
            tablet_id=tablet.tablet_id, partition_id=tablet.partition_id, rowset_id=rowset_id, num_rows=merged.rows,
            num_segments=merged.segments, data_size=merged.bytes_written, overlapping=False)
        published: list[Rowset] = []

        def publish(rowsets: list[Rowset]) -> None:
            out = replace(rowsets[0], start_version=start_version, end_version=end_version)
            engine.catalog.publish_compaction([rs.rowset_id for rs in inputs], out)
            published.append(out)

        engine.install_rowsets(staging, [staged], 0, publish)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    engine.retire(inputs)
    stats = MergeStats(
        input_rowsets=len(inputs), input_segments=sum(rs.num_segments for rs in data_inputs),
        input_rows=merged.rows_read,
        input_bytes=sum(rs.data_size for rs in inputs), output_rows=merged.rows, output_segments=merged.segments,
        bytes_written=merged.bytes_written, rows_deleted=merged.rows_deleted, seconds=time.perf_counter() - started)
    return CompactionOutput(published[0], stats)
