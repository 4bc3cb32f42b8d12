"""The storage engine: loads (route -> bucket -> memtable -> staged segments -> one publish) and scans
(visible rowsets at a snapshot -> index-pruned segment reads -> merge-on-read).

Files live at <root>/data/<tablet_id>/<rowset_id>_<n>.dat. A load writes into <root>/staging/txn_<id>/,
renames into the data folders and only then publishes in one catalog commit: until that commit nothing
references the files, and `open()` deletes whatever no committed rowset references (crash recovery), so a
kill -9 at any moment neither loses committed data nor exposes part of a load.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa

from storage.catalog.model import (
    KEYS_DUP,
    Column,
    MaterializedIndexMeta,
    OlapTable,
    Rowset,
    Tablet,
    is_rewrite_shadow,
)
from storage.catalog.store import Catalog, new_label, schema_changed_error
from storage.compaction.policy import CompactionConfig
from storage.compaction.readers import DEFAULT_STALE_SWEEP_SECONDS, ReadHold, RowsetReaders
from storage.compaction.time_series import policy_for
from storage.compaction.version_limit import check_version_limit
from storage.errors import StorageError, doris_error
from storage.predicate import ColumnPredicate
from storage.segment import column_cache
from storage.segment.bloom_filter import DEFAULT_FPP as DEFAULT_BLOOM_FILTER_FPP
from storage.segment.page import CODECS
from storage.segment.reader import Narrowed, SegmentReader, forget_segments, open_segment, rows_only
from storage.segment.schema_view import WantedColumn, segment_for
from storage.segment.writer import SegmentIndexConfig, write_segments
from storage.stats import ScanStats
from storage.tablet.aggregation import aggregate_index, key_column_names, merge_parts
from storage.tablet.bucket_hash import pmod, random_buckets, spark_hash
from storage.tablet.convert import Converter, default_scalar, rows_as
from storage.tablet.delete_filter import apply_deletes, delete_columns, delete_rowsets, deletes_above
from storage.tablet.memtable import build_memtable
from storage.tablet.partition_router import NO_PARTITION, route_partitions
from storage.tablet.predicate_filter import predicate_mask
from storage.tablet.scan_cache import MIN_ROWSETS, KeptScan, TabletScanCache
from storage.workers import DEFAULT_PROCESSES, run_in_worker

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_MAX_SEGMENT_BYTES = 256 * 1024 * 1024
TABLET_SCAN_CACHE_BYTES = 128 * 1024 * 1024  # rows kept from whole-tablet scans of many small rowsets
# below this many rows left after index narrowing, tablets are read on the calling thread: handing a few
# pages to scan threads costs more (GIL hand-offs, wake-ups) than it saves
PARALLEL_SCAN_MIN_ROWS = 64 * 1024
# ... and below this many rows per segment left to read on average: a segment's scan is then mostly Python
# (narrowing, a few pages, GIL held) and threads only contend for the GIL (a bloom probe's false-positive
# pages spread over 35 segments: 5.4 ms serial, 6.9 ms on scan threads)
PARALLEL_SCAN_MIN_SEGMENT_ROWS = 64 * 1024
STRICT_MODE_FILTERED = "Insert has filtered data in strict mode"


@dataclass(frozen=True)
class Overwrite:
    """INSERT OVERWRITE's target: these partitions, or (None) the partitions the new rows fall into
    (PARTITION(*))."""

    partition_ids: frozenset[int] | None

    def targets(self, touched: Sequence[int]) -> frozenset[int]:
        return frozenset(touched) if self.partition_ids is None else self.partition_ids


@dataclass(frozen=True)
class HeldLoad:
    """A load written and held for its second phase (engine.hold): what commit() needs, and since when."""

    staged: list[StagedRowset]
    partition_ids: list[int]
    overwrite: Overwrite | None
    since: float


@dataclass(frozen=True)
class LoadResult:
    txn_id: int
    label: str
    num_rows: int  # rows loaded (before the model's aggregation), Doris's "rows affected"
    status: str = "VISIBLE"
    filtered_rows: int = 0


@dataclass(frozen=True)
class StagedRowset:
    """A rowset written into a transaction's staging folder, not yet visible."""

    tablet_id: int
    partition_id: int
    rowset_id: str
    num_rows: int
    num_segments: int
    data_size: int
    overlapping: bool = False  # True if its segments' key ranges may overlap (then reads merge them)


@dataclass(frozen=True)
class ScanRequest:
    table: OlapTable
    schema: pa.Schema  # Arrow schema of the base columns (from the caller; used for empty results)
    columns: Sequence[str]
    predicates: Sequence[ColumnPredicate] = ()
    partition_ids: Sequence[int] | None = None
    index_id: int | None = None  # None = base index
    versions: Mapping[int, int] | None = None  # partition_id -> snapshot version; None = visible now
    merge: bool = True  # merge-on-read for AGG/UNIQUE (False: raw rows of every rowset)
    tablet_ids: Sequence[int] | None = None  # bucket pruning by the planner; None = all tablets
    exact: bool = True  # False: the predicates only narrow (indexes, zone maps); the caller filters the rows


@dataclass
class ScanResult:
    table: pa.Table
    stats: ScanStats = field(default_factory=ScanStats)


_scan_pools: dict[int, ThreadPoolExecutor] = {}
_scan_pools_lock = threading.Lock()


def _scan_pool(threads: int) -> ThreadPoolExecutor:
    """A process-wide tablet scan pool per thread count (scan_one never submits to it: no deadlock)."""
    with _scan_pools_lock:
        pool = _scan_pools.get(threads)
        if pool is None:
            pool = _scan_pools[threads] = ThreadPoolExecutor(threads - 1, thread_name_prefix="tabletscan")
        return pool


def _narrowed_rows(n: Narrowed) -> int:
    ranges, ids, _ = n
    return len(ids) if ids is not None else ranges.count()


def staging_path(root: Path, txn_id: int) -> Path:
    """A transaction's staging folder under a storage root (also computed by Spark tasks, which have no engine)."""
    return Path(root) / "staging" / f"txn_{txn_id}"


def reject_masks(table: OlapTable, data: pa.Table) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """(partition position of every row, [(reason, rows failing that check)]) with checks in Doris's order:
    NOT NULL columns first, then "no partition for this tuple"."""
    checks: list[tuple[str, np.ndarray]] = []
    for col in table.columns:
        if not col.nullable:
            nulls = data.column(col.name).is_null().to_numpy(zero_copy_only=False)
            if nulls.any():
                checks.append((f"null value for not null column, column={col.name}", nulls))
    positions = route_partitions(table, data)
    checks.append(("no partition for this tuple", positions == NO_PARTITION))
    return positions, checks


def segment_index_config(table: OlapTable, index: MaterializedIndexMeta) -> SegmentIndexConfig | None:
    """The bloom filter (`bloom_filter_columns` / `bloom_filter_fpp` properties) and bitmap (`INDEX ... USING
    BITMAP`) indexes of the columns `index` holds, as the segment writer takes them; None when there are
    none. The one place a load, a Spark task, a rollup build or a rollup completion derives them from."""
    by_lower = {c.name.lower(): c.name for c in index.columns}
    props = table.props
    fpp = float(props.get("bloom_filter_fpp") or DEFAULT_BLOOM_FILTER_FPP)
    bloom = {by_lower[n]: fpp for n in (c.strip().lower() for c in props.get("bloom_filter_columns", "").split(","))
             if n in by_lower}
    bitmap = frozenset(by_lower[c.lower()] for d in table.index_defs if d.index_type.upper() == "BITMAP"
                       for c in d.columns if c.lower() in by_lower)
    config = SegmentIndexConfig(bloom, bitmap, CODECS.get(props.get("compression", "LZ4").upper(), "LZ4"),
                                {c.name: c.unique_id for c in index.columns})
    return config if config else None


def write_staged_rowset(staging: Path, tablet: Tablet, index: MaterializedIndexMeta, rows: pa.Table,
                        max_segment_bytes: int, presorted: bool = False,
                        indexes: SegmentIndexConfig | None = None) -> StagedRowset | None:
    """Shape `rows` for the index (unless `presorted`: already projected, sorted and aggregated) and write
    its segments into `staging`/<tablet_id>/ (a transaction's staging folder), with the bloom filter and
    bitmap indexes `indexes` asks for (see segment_index_config)."""
    data = rows if presorted else build_memtable(rows, index)
    if data.num_rows == 0:
        return None
    rowset_id = uuid.uuid4().hex
    stage = staging / str(tablet.tablet_id)
    stage.mkdir(parents=True, exist_ok=True)
    infos = write_segments(stage, rowset_id, data, len(key_column_names(index)), index.short_key_column_count,
                           max_segment_bytes, indexes)
    return StagedRowset(tablet_id=tablet.tablet_id, partition_id=tablet.partition_id, rowset_id=rowset_id,
                        num_rows=data.num_rows, num_segments=len(infos),
                        data_size=sum(i.data_size for i in infos))


def _base_memtable(rows: pa.Table, index: MaterializedIndexMeta) -> pa.Table:
    """build_memtable for rows already sorted by the base index's keys (the Spark path sorts them in the
    shuffle): project + aggregate, skipping a second sort."""
    by_lower = {name.lower(): name for name in rows.column_names}
    projected = rows.select([by_lower[c.name.lower()] for c in index.columns])
    return aggregate_index(projected.rename_columns([c.name for c in index.columns]), index).combine_chunks()


PARALLEL_WRITE_ROWS = 100_000  # a load this large writes its tablets in parallel
# a load up to this size is written in a load worker process (storage/workers.py): its rows travel by a copy
# (~1 ms for 100,000 rows), its sorting, encoding and writing leave the server's interpreter; larger ones stay
# here (their copy would double their memory)
WORKER_LOAD_MAX_BYTES = 64 * 1024 * 1024
WORKER_LOAD_MAX_PARTITIONS = 256  # the table's metadata is shipped with the rows

ShadowRows = Callable[[pa.Table, MaterializedIndexMeta], pa.Table]  # base rows -> a shadow index's columns


def write_routed_rows(staging: Path, table: OlapTable, tablets: Mapping[tuple[int, int, int], Tablet],
                      rows: pa.Table, positions: np.ndarray, max_segment_bytes: int, *,
                      random_bucket: int | None = None,
                      base_sorted: bool = False,
                      shadow_rows: ShadowRows | None = None) -> tuple[list[StagedRowset], list[int]]:
    """The load write path shared by the in-process load and Spark tasks: bucket the rows (partition
    positions already routed), build each touched tablet's memtable for every index and write its staged
    rowset into `staging`. `tablets` maps (partition_id, index_id, bucket) -> Tablet. For RANDOM
    distribution `random_bucket` (a Spark task's partition number) pins the task's rows to one bucket per
    partition instead of round robin; `base_sorted` says rows are already sorted by the base keys."""
    if rows.num_rows == 0:
        return [], []
    dist = table.distribution
    hashes = spark_hash([rows.column(c) for c in dist.columns]) if dist.type.upper() == "HASH" else None
    buckets = np.zeros(rows.num_rows, dtype=np.int64)
    for pos in np.unique(positions):
        sel = positions == pos
        n_buckets = table.partitions[pos].buckets
        if hashes is not None:
            buckets[sel] = pmod(hashes[sel], n_buckets)
        elif random_bucket is not None:
            buckets[sel] = random_bucket % n_buckets
        else:
            buckets[sel] = random_buckets(int(sel.sum()), n_buckets)
    max_buckets = max(p.buckets for p in table.partitions)
    group = positions * max_buckets + buckets
    order = np.argsort(group, kind="stable")  # stable: load order (and a presorted order) survives
    sorted_groups = group[order]
    cuts = np.flatnonzero(np.diff(sorted_groups)) + 1
    touched: set[int] = set()
    configs = {index.index_id: segment_index_config(table, index) for index in table.indexes}

    def write_group(idx: np.ndarray) -> list[StagedRowset]:
        out: list[StagedRowset] = []
        g = int(group[idx[0]])
        partition = table.partitions[g // max_buckets]
        bucket = g % max_buckets
        part_rows = rows if len(idx) == rows.num_rows else rows.take(pa.array(idx))
        touched.add(partition.partition_id)
        for index in table.indexes:
            tablet = tablets.get((partition.partition_id, index.index_id, bucket))
            if tablet is None:
                raise doris_error(f"tablet for partition {partition.name} bucket {bucket} not found")
            if is_rewrite_shadow(index):
                if shadow_rows is not None:
                    rs = write_staged_rowset(staging, tablet, index, shadow_rows(part_rows, index),
                                             max_segment_bytes, indexes=configs[index.index_id])
                    if rs is not None:
                        out.append(rs)
                continue
            if base_sorted and index.index_id == table.base_index_id:
                rs = write_staged_rowset(staging, tablet, index, _base_memtable(part_rows, index),
                                         max_segment_bytes, presorted=True, indexes=configs[index.index_id])
            else:
                rs = write_staged_rowset(staging, tablet, index, part_rows, max_segment_bytes,
                                         indexes=configs[index.index_id])
            if rs is not None:
                out.append(rs)
        return out

    groups = np.split(order, cuts)
    if len(groups) > 1 and rows.num_rows >= PARALLEL_WRITE_ROWS:
        # tablets are independent files, and sorting, encoding and compressing release the GIL: a large load
        # writes its buckets on the machine's cores (a Spark task writes one bucket, and Spark runs them in parallel)
        with ThreadPoolExecutor(max_workers=min(len(groups), os.cpu_count() or 2)) as pool:
            written = list(pool.map(write_group, groups))
    else:
        written = [write_group(idx) for idx in groups]
    return [rs for group_rowsets in written for rs in group_rowsets], sorted(touched)


def fsync_dir(path: Path) -> None:
    """Make a folder's entries (a new or removed file) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class StorageEngine:
    def __init__(self, root: Path, config: Mapping[str, str] | None = None, *,
                 catalog: Catalog | None = None) -> None:
        """`catalog` given: a reader over an existing root (Spark read tasks, a user's PySpark code next to a
        running server) that creates nothing and only uses the catalog it was handed (opened read-only)."""
        self.root = Path(root)
        self.config = dict(config or {})
        self.data_dir = self.root / "data"
        self.staging_root = self.root / "staging"
        if catalog is not None:
            self.catalog = catalog
        else:
            self.root.mkdir(parents=True, exist_ok=True)
            self.data_dir.mkdir(exist_ok=True)
            self.staging_root.mkdir(exist_ok=True)
            self.catalog = Catalog(self.root)
            self.catalog.on_tablets_dropped(self._remove_tablet_dirs)
        self.max_segment_bytes = int(self.config.get("max_segment_bytes", DEFAULT_MAX_SEGMENT_BYTES))
        self.compaction_processes = int(self.config.get("compaction_worker_processes", DEFAULT_PROCESSES))
        self.load_processes = int(self.config.get("load_worker_processes", DEFAULT_PROCESSES))
        # loads written and held for a second phase (Stream Load two_phase_commit): txn -> what commit() needs;
        # in memory only (the catalog keeps them PREPARE), so a restart aborts them with the other unfinished
        self._precommitted: dict[int, HeldLoad] = {}
        self._precommit_lock = threading.Lock()
        page_cache_off = str(self.config.get("disable_storage_page_cache", "false")).lower() == "true"
        if "storage_page_cache_limit" in self.config or "disable_storage_page_cache" in self.config:
            column_cache.configure(self.config.get("storage_page_cache_limit"), page_cache_off)
        self.scan_threads = int(self.config.get("scan_thread_num", min(4, os.cpu_count() or 1)))
        self.tablet_scans = TabletScanCache(0 if page_cache_off else TABLET_SCAN_CACHE_BYTES)
        self.opened = threading.Event()  # set once open() swept the root: background jobs wait for it
        # scans hold the rowsets they read; rowsets a compaction replaced are deleted once none does
        self.readers = RowsetReaders(self._remove_stale, self._unlink_rowsets, lambda: float(
            self.config.get("tablet_rowset_stale_sweep_time_sec") or DEFAULT_STALE_SWEEP_SECONDS),
            lambda rowsets: max(self.catalog.tablet_retentions(rs.tablet_id for rs in rowsets).values(), default=0.0))
        self.compaction_config = CompactionConfig.from_mapping(self.config)
        # set by the compaction manager: asked for a cumulative compaction of a tablet near the version limit
        self.compaction_trigger: Callable[[int, str], object] | None = None
        # Doris type text -> Arrow type, set by the server (sql.types owns the mapping): reading segments
        # through a changed schema (storage.segment.schema_view) needs the current types
        self.arrow_type: Callable[[str], pa.DataType] | None = None
        # a schema change's value conversion (Doris's cast rules, sql.types / planner own them), set by the server
        self.convert: Converter | None = None
        self._wanted: dict[tuple[int, int], tuple[tuple[Column, ...], tuple[WantedColumn, ...]]] = {}

    def wanted_columns(self, index: MaterializedIndexMeta) -> tuple[WantedColumn, ...] | None:
        """The columns a reader of `index` asks segments for (current names, ids, types, defaults); None when
        the engine has no type mapping (segments are then read as written)."""
        if self.arrow_type is None:
            return None
        key = (index.index_id, id(index.columns))  # the catalog hands the same tuple until the schema changes
        hit = self._wanted.get(key)
        if hit is not None and hit[0] is index.columns:
            return hit[1]
        got = tuple(WantedColumn(c.name, c.unique_id, t, default_scalar(c, t))
                    for c in index.columns for t in [self.arrow_type(c.type)])
        if len(self._wanted) > 1024:
            self._wanted.clear()
        self._wanted[key] = (index.columns, got)
        return got

    # ------------------------------------------------------------ lifecycle

    def open(self) -> None:
        """Crash recovery: drop staging folders and every file no committed rowset references."""
        shutil.rmtree(self.staging_root, ignore_errors=True)
        self.staging_root.mkdir(exist_ok=True)
        # compaction inputs: no reader survives a restart, but time travel reads its tables' retained ones
        stale = self.catalog.stale_rowsets()
        retention = self.catalog.tablet_retentions(s.rowset.tablet_id for s in stale)
        now = time.time()
        retained = [s for s in stale if s.stale_time + retention.get(s.rowset.tablet_id, 0.0) > now]
        kept = {s.rowset.rowset_id for s in retained}
        self.catalog.remove_stale_rowsets(None if not kept else [  # (None: every mark, a dropped tablet's too)
            s.rowset.rowset_id for s in stale if s.rowset.rowset_id not in kept])
        rowset_ids = self.catalog.all_rowset_ids()
        tablet_ids = self.catalog.all_tablet_ids()
        removed = 0
        for tablet_dir in self.data_dir.iterdir():
            if not tablet_dir.is_dir() or not tablet_dir.name.isdigit() or int(tablet_dir.name) not in tablet_ids:
                if tablet_dir.is_dir():
                    shutil.rmtree(tablet_dir, ignore_errors=True)
                else:
                    tablet_dir.unlink(missing_ok=True)
                removed += 1
                continue
            for f in tablet_dir.iterdir():
                if f.name.rsplit("_", 1)[0] not in rowset_ids:
                    f.unlink(missing_ok=True)
                    removed += 1
        if removed:
            log.info("storage open: removed %d unreferenced files/folders", removed)
        for s in retained:  # queued again, for what is left of their retention
            self.readers.retire([s.rowset], time.monotonic() - max(0.0, now - s.stale_time))
        aborted = self.catalog.abort_prepared_txns("load interrupted: the server stopped before it was published")
        if aborted:
            log.info("storage open: aborted %d unpublished transactions", aborted)
        self.opened.set()

    def close(self) -> None:
        self.catalog.close()

    def tablet_dir(self, tablet_id: int) -> Path:
        return self.data_dir / str(tablet_id)

    def segment_paths(self, rowset: Rowset) -> list[Path]:
        d = self.tablet_dir(rowset.tablet_id)
        return [d / f"{rowset.rowset_id}_{i}.dat" for i in range(rowset.num_segments)]

    def staging_dir(self, txn_id: int) -> Path:
        """Where a transaction's writers (in-process or Spark tasks) put segment files before publish."""
        return staging_path(self.root, txn_id)

    def _remove_tablet_dirs(self, tablet_ids: list[int]) -> None:
        for tablet_id in tablet_ids:
            d = self.tablet_dir(tablet_id)
            forget_segments(d.glob("*.dat"))  # their shared readers would otherwise sit in the LRU until pushed out
            shutil.rmtree(d, ignore_errors=True)

    def _remove_stale(self, rowsets: list[Rowset]) -> None:
        self.catalog.remove_stale_rowsets([rs.rowset_id for rs in rowsets])

    def _unlink_rowsets(self, rowsets: list[Rowset]) -> None:
        for rs in rowsets:
            paths = self.segment_paths(rs)
            forget_segments(paths)
            for path in paths:
                path.unlink(missing_ok=True)

    def snapshot(self, table: OlapTable, temporary: bool = False) -> dict[int, int]:
        """partition_id -> visible version now: the versions a query reads for its whole duration (of the
        temporary partitions instead, for `t TEMPORARY PARTITION (..)`)."""
        current = self.catalog.get_table_by_id(table.table_id) or table
        return {p.partition_id: p.visible_version
                for p in (current.temp_partitions if temporary else current.partitions)}

    # ------------------------------------------------------------ load

    def load(self, table: OlapTable, data: pa.Table, label: str | None = None, strict: bool = True,
             overwrite: Overwrite | None = None, temporary: bool = False, precommit: bool = False,
             txn_id: int | None = None) -> LoadResult:
        """Load `data` (exactly the base columns, in order, with their final Arrow types) as one transaction;
        with `overwrite`, the data replaces that of the partitions it names; with `temporary`, the rows go to
        the temporary partitions `table.partitions` names; with `precommit`, the rows are written but published
        only by commit_precommitted (abort_precommitted drops them). `txn_id`: a transaction begun already with
        `label` (group commit answers its clients with it before the rows are written)."""
        current = self.catalog.get_table_by_id(table.table_id)
        if current is None:
            raise doris_error(f"Unknown table '{table.name}'", 1051, "42S02")
        if temporary:
            wanted = {p.partition_id for p in table.partitions}
            current = replace(current, partitions=tuple(p for p in current.temp_partitions
                                                        if p.partition_id in wanted))
            if len(current.partitions) != len(wanted):
                raise doris_error(f"a temporary partition of table {table.name} was dropped", 1735, "HY000")
        data = self._conform(current, data)
        label = label or new_label()
        if txn_id is None:
            txn_id = self.catalog.begin_txn(current.db_id, current.table_id, label)
        try:
            keep, filtered, reason = self._filter_rows(current, data)
            if filtered and strict:
                raise doris_error(f"{STRICT_MODE_FILTERED}. Reason: {reason}", 1105, "HY000")
            if filtered and filtered == data.num_rows:
                raise doris_error("all partitions have no load data", 1064, "HY000")
            positions = keep[1]
            rows = data.filter(pa.array(keep[0])) if filtered else data
            staged, partition_ids = self._write_load(txn_id, current, rows, positions)
            if precommit:
                self.hold(txn_id, staged, partition_ids, overwrite)
            else:
                self.commit(txn_id, staged, partition_ids, overwrite)
        except BaseException as e:
            self.abort(txn_id, str(e))
            raise
        return LoadResult(txn_id=txn_id, label=label, num_rows=rows.num_rows,
                          status="PRECOMMITTED" if precommit else "VISIBLE", filtered_rows=filtered)

    def hold(self, txn_id: int, staged: list[StagedRowset], partition_ids: list[int],
             overwrite: Overwrite | None = None) -> None:
        """Keep a written load for commit_precommitted / abort_precommitted instead of publishing it."""
        with self._precommit_lock:
            self._precommitted[txn_id] = HeldLoad(list(staged), list(partition_ids), overwrite, time.monotonic())

    def expire_precommitted(self, max_age_seconds: float) -> list[int]:
        """Abort the pre-committed loads older than `max_age_seconds` (Doris's precommit timeout)."""
        now = time.monotonic()
        with self._precommit_lock:
            old = [t for t, held in self._precommitted.items() if now - held.since > max_age_seconds]
        for txn_id in old:
            try:
                self.abort_precommitted(txn_id, "the pre-committed transaction timed out")
            except StorageError:
                pass  # committed or aborted meanwhile
        return old

    def _take_precommitted(self, txn_id: int) -> HeldLoad:
        with self._precommit_lock:
            held = self._precommitted.pop(txn_id, None)
        if held is None:
            txn = self.catalog.get_txn(txn_id)
            if txn is None:
                raise doris_error(f"transaction [{txn_id}] not found")
            raise doris_error(f"transaction [{txn_id}] is already {txn.status.lower()}" if txn.status != "PREPARE"
                              else f"transaction [{txn_id}] is not pre-committed")
        return held

    def commit_precommitted(self, txn_id: int) -> None:
        """The second phase of a two-phase load: publish what load(precommit=True) wrote."""
        held = self._take_precommitted(txn_id)
        try:
            self.commit(txn_id, held.staged, held.partition_ids, held.overwrite)
        except BaseException as e:
            self.abort(txn_id, str(e))
            raise

    def abort_precommitted(self, txn_id: int, reason: str = "user abort") -> None:
        self._take_precommitted(txn_id)
        self.abort(txn_id, reason)

    @staticmethod
    def _conform(table: OlapTable, data: pa.Table) -> pa.Table:
        names = [c.name for c in table.columns]
        if [n.lower() for n in data.column_names] != [n.lower() for n in names]:
            raise StorageError(f"load columns {data.column_names} do not match table columns {names}")
        return data.rename_columns(names)

    @staticmethod
    def _filter_rows(table: OlapTable, data: pa.Table) -> tuple[tuple[np.ndarray, np.ndarray], int, str]:
        """((keep mask, partition position of kept rows), number filtered, first reason)."""
        positions, checks = reject_masks(table, data)
        keep = np.ones(data.num_rows, dtype=bool)
        reason = ""
        for why, failed in checks:
            if (failed & keep).any():
                reason = reason or why
                keep &= ~failed
        filtered = int(data.num_rows - keep.sum())
        return (keep, positions[keep]), filtered, reason

    def tablet_map(self, table: OlapTable) -> dict[tuple[int, int, int], Tablet]:
        """(partition_id, index_id, bucket) -> Tablet of every tablet of `table`."""
        return {(t.partition_id, t.index_id, t.bucket): t for t in self.catalog.tablets(table.table_id)}

    def _write_load(self, txn_id: int, table: OlapTable, rows: pa.Table,
                    positions: np.ndarray) -> tuple[list[StagedRowset], list[int]]:
        """Bucket the rows and write one staged rowset per touched tablet of every index."""
        if rows.num_rows == 0:
            return [], []
        tablets = self.tablet_map(table)
        indexed = {key[1] for key in tablets}
        if any(index.index_id not in indexed for index in table.indexes):
            # the table was read before a schema change swapped an index, its tablets after: as at publish
            raise schema_changed_error(txn_id)
        if (len(table.partitions) <= WORKER_LOAD_MAX_PARTITIONS and rows.nbytes <= WORKER_LOAD_MAX_BYTES
                and not any(is_rewrite_shadow(i) for i in table.indexes)):
            # written in a worker process (the rows and the table's metadata travel): a small load is mostly
            # fixed costs per segment in Python, a larger one sorts and encodes; either way the server's
            # interpreter is free for other statements
            touched = {table.partitions[int(pos)].partition_id for pos in np.unique(positions)}
            return run_in_worker("load", self.load_processes, write_routed_rows, self.staging_dir(txn_id), table,
                                 {k: t for k, t in tablets.items() if k[0] in touched}, rows, positions,
                                 self.max_segment_bytes)
        return write_routed_rows(self.staging_dir(txn_id), table, tablets, rows, positions,
                                 self.max_segment_bytes, shadow_rows=self.shadow_rows(table))

    def shadow_rows(self, table: OlapTable) -> ShadowRows | None:
        """Rows of `table`'s base schema as a schema change's shadow index holds them (None without the
        server's type mapping and conversion)."""
        arrow_type, convert = self.arrow_type, self.convert
        if arrow_type is None or convert is None:
            return None
        return lambda rows, index: rows_as(rows, table.columns, index.columns, arrow_type, convert)

    def write_rowset(self, txn_id: int, tablet: Tablet, index: MaterializedIndexMeta, rows: pa.Table,
                     presorted: bool = False) -> StagedRowset | None:
        """Shape `rows` for the index (unless `presorted`: already projected, sorted and aggregated) and
        write its segments into the transaction's staging folder."""
        return write_staged_rowset(self.staging_dir(txn_id), tablet, index, rows, self.max_segment_bytes, presorted)

    def commit(self, txn_id: int, staged: Sequence[StagedRowset], partition_ids: Sequence[int],
               overwrite: Overwrite | None = None) -> dict[int, int]:
        """Move staged files into their tablets' folders, then publish every rowset in one catalog commit;
        with `overwrite`, the rowsets replace the named partitions' data (the replaced rowsets are retired
        as a compaction's inputs are: deleted once no scan reads them)."""
        staged = [*staged, *self._complete_indexes(txn_id, staged)]
        if overwrite is None and staged:
            txn = self.catalog.get_txn(txn_id)
            table = self.catalog.get_table_by_id(txn.table_id) if txn is not None else None
            limit = policy_for(table.props if table is not None else {}, self.compaction_config).version_limit
            check_version_limit(self.catalog, [s.tablet_id for s in staged], self.compaction_config,
                                self.compaction_trigger, limit)  # -235: too many versions in a tablet
        replaced: list[Rowset] = []
        targets = () if overwrite is None else overwrite.targets(partition_ids)
        versions = self.install_rowsets(
            self.staging_dir(txn_id), staged, txn_id,
            lambda rowsets: self.catalog.publish(txn_id, rowsets, partition_ids, overwrite=targets,
                                                 replaced=replaced))
        shutil.rmtree(self.staging_dir(txn_id), ignore_errors=True)
        self.retire(replaced)
        return versions

    def install_rowsets(self, staging: Path, staged: Sequence[StagedRowset], txn_id: int,
                        publish: Callable[[list[Rowset]], T]) -> T:
        """Rename staged segment files into their tablets' folders, then run `publish` (the one catalog
        commit that references them); if it fails, the moved files are removed again."""
        moved: list[Path] = []
        try:
            for tablet_id in {s.tablet_id for s in staged}:
                self.tablet_dir(tablet_id).mkdir(parents=True, exist_ok=True)
            for s in staged:
                src_dir = staging / str(s.tablet_id)
                for i in range(s.num_segments):
                    name = f"{s.rowset_id}_{i}.dat"
                    dst = self.tablet_dir(s.tablet_id) / name
                    os.replace(src_dir / name, dst)
                    moved.append(dst)
            for tablet_id in {s.tablet_id for s in staged}:
                fsync_dir(self.tablet_dir(tablet_id))
            now = time.time()
            rowsets = [Rowset(rowset_id=s.rowset_id, tablet_id=s.tablet_id, start_version=0, end_version=0,
                              num_rows=s.num_rows, num_segments=s.num_segments, data_size=s.data_size,
                              txn_id=txn_id, overlapping=s.overlapping, created_at=now) for s in staged]
            return publish(rowsets)
        except BaseException:
            for path in moved:
                path.unlink(missing_ok=True)
            raise

    def _complete_indexes(self, txn_id: int, staged: Sequence[StagedRowset]) -> list[StagedRowset]:
        """Rollup rowsets a load did not write because its table snapshot predates the rollup's SHADOW index
        (a Spark load binds the table before it begins its transaction): built here from the load's own
        base rowsets, so no load that began after the index appeared is missing from it. A shadow index
        created after this check belongs to a job that waits for this transaction (txn id < watershed)."""
        txn = self.catalog.get_txn(txn_id) if staged else None
        table = self.catalog.get_table_by_id(txn.table_id) if txn is not None else None
        if table is None or len(table.indexes) == 1:
            return []
        tablets = self.tablet_map(table)
        by_id = {t.tablet_id: t for t in tablets.values()}
        written = {s.tablet_id for s in staged}
        extra: list[StagedRowset] = []
        for s in staged:
            base = by_id.get(s.tablet_id)
            if base is None or base.index_id != table.base_index_id:
                continue
            missing = [(index, tablets[(base.partition_id, index.index_id, base.bucket)]) for index in table.indexes
                       if index.index_id != table.base_index_id
                       and tablets[(base.partition_id, index.index_id, base.bucket)].tablet_id not in written]
            if not missing:
                continue
            paths = [self.staging_dir(txn_id) / str(s.tablet_id) / f"{s.rowset_id}_{i}.dat"
                     for i in range(s.num_segments)]
            readers = [SegmentReader(p) for p in paths]
            rows = pa.concat_tables([r.read(r.schema.names) for r in readers])
            shadow_rows = self.shadow_rows(table)
            for index, tablet in missing:
                if is_rewrite_shadow(index):
                    if shadow_rows is None:
                        raise StorageError(f"no conversion for the schema change of table {table.name}")
                    shaped = shadow_rows(rows, index)
                else:
                    shaped = rows
                rs = write_staged_rowset(self.staging_dir(txn_id), tablet, index, shaped, self.max_segment_bytes,
                                         indexes=segment_index_config(table, index))
                if rs is not None:
                    extra.append(rs)
        return extra

    def retire(self, rowsets: Sequence[Rowset]) -> None:
        """Rowsets a newer one replaced (compaction, INSERT OVERWRITE): their decoded columns leave the column
        cache at once (new queries read the replacement; an older snapshot still reading them decodes pages),
        their files go once no scan holds them."""
        column_cache.COLUMNS.forget({os.fspath(p) for rs in rowsets for p in self.segment_paths(rs)})
        self.readers.retire(rowsets)

    def abort(self, txn_id: int, reason: str = "") -> None:
        shutil.rmtree(self.staging_dir(txn_id), ignore_errors=True)
        self.catalog.abort_txn(txn_id, reason[:1000])

    # ------------------------------------------------------------ scan

    def scan(self, req: ScanRequest) -> ScanResult:
        with self.readers.reading() as hold:  # the rowsets it looks up stay on disk until it returns
            return self._scan(req, hold)

    def _scan(self, req: ScanRequest, hold: ReadHold) -> ScanResult:
        table = req.table
        index = table.base_index if req.index_id is None else next(
            (i for i in table.indexes if i.index_id == req.index_id), None)
        if index is None:
            raise StorageError(f"index {req.index_id} not found in table {table.name}")
        canon = {c.name.lower(): c.name for c in index.columns}
        is_key = {c.name: c.is_key for c in index.columns}
        try:
            requested = [canon[c.lower()] for c in req.columns]
        except KeyError as e:
            raise StorageError(f"Unknown column {e.args[0]} in index {index.name}") from None
        predicates = [ColumnPredicate(canon[p.column.lower()], p.op, p.values) for p in req.predicates
                      if p.column.lower() in canon]
        merging = req.merge and index.keys_type != KEYS_DUP
        keys = key_column_names(index)
        # every pushed predicate is evaluated exactly here (the planner may drop the Filter above); without a
        # merge the segment scan reads predicate columns itself (late materialisation), a merge reads them
        # with the keys and filters the merged rows
        read_cols = list(dict.fromkeys(requested + (keys + [p.column for p in predicates] if merging else [])))
        # before a merge only key predicates may prune: a value predicate could drop an older row of a key
        # whose merged value would match (or keep one whose merged value would not)
        prune = [p for p in predicates if is_key[p.column]] if merging else predicates

        versions = dict(req.versions) if req.versions is not None else self.snapshot(table)
        partition_ids = [pid for pid in (req.partition_ids if req.partition_ids is not None else versions)
                         if pid in versions]
        tablets = [t for pid in partition_ids for t in self.catalog.tablets(table.table_id, pid, index.index_id)]
        if req.tablet_ids is not None:
            wanted = set(req.tablet_ids)
            tablets = [t for t in tablets if t.tablet_id in wanted]
        rowsets_by_tablet = hold.lookup(lambda: self.catalog.rowsets_for_tablets(tablets, versions))

        # DELETE versions: their conditions' columns are read too, and rows of older rowsets matching them go
        deletes = {tid: delete_rowsets(rs) for tid, rs in rowsets_by_tablet.items()}
        read_cols = self._with_delete_columns(read_cols, canon, deletes.values(), index)

        stats = ScanStats()
        wanted = self.wanted_columns(index)
        # an AGGREGATE table distributed at random holds equal keys in several tablets: they merge across tablets
        # (Doris aggregates above such a scan), so the value predicates wait for that merge
        across = merging and table.distribution.type == "RANDOM" and len(tablets) > 1
        # a whole-tablet read of many small rowsets extends the rows kept from the last one (tablet/scan_cache.py)
        kept: dict[int, tuple[list[tuple[int, int]], KeptScan | None]] = {}
        kept_as = (index.index_id, tuple(read_cols), merging)
        if not predicates and read_cols and not across and self.tablet_scans.max_bytes:
            for t in tablets:
                rowsets = rowsets_by_tablet[t.tablet_id]
                if deletes[t.tablet_id] or len(rowsets) < MIN_ROWSETS:
                    continue
                data = [rs for rs in rowsets if rs.kind == "DATA"]
                path = [(rs.start_version, rs.end_version) for rs in data]
                found = self.tablet_scans.extends((t.tablet_id, kept_as), path, wanted)
                kept[t.tablet_id] = (path, None if found is None else found[0])
                if found is not None:
                    rowsets_by_tablet[t.tablet_id] = data[found[1]:]
        segments = {t.tablet_id: self._segments(rowsets_by_tablet[t.tablet_id], prune, stats, not merging, wanted)
                    for t in tablets}

        def scan_one(tablet: Tablet) -> tuple[pa.Table | None, ScanStats]:
            own = ScanStats()  # per tablet, merged below: tablets are read on several threads
            started = time.perf_counter_ns()
            part = self._scan_tablet(segments[tablet.tablet_id], index, read_cols, prune, merging, own,
                                     () if merging or not req.exact else predicates, deletes[tablet.tablet_id])
            if tablet.tablet_id in kept:
                path, hit = kept[tablet.tablet_id]
                part = self._extend_kept(hit, part, index, merging)
                if part is not None:
                    self.tablet_scans.keep((tablet.tablet_id, kept_as), path, wanted, part)
            if across:
                own.scan_time_ns += time.perf_counter_ns() - started
                return (None if part is None or part.num_rows == 0 else part), own
            if merging and part is not None and part.num_rows and predicates and req.exact:
                before = part.num_rows
                part = part.filter(pa.array(predicate_mask(part, predicates)))
                own.rows_vector_pred_filtered += before - part.num_rows
            own.rows_returned += 0 if part is None else part.num_rows
            own.scan_time_ns += time.perf_counter_ns() - started
            return (None if part is None or part.num_rows == 0 else part.select(requested)), own

        busy = [t for t in tablets if segments[t.tablet_id] or kept.get(t.tablet_id, ((), None))[1] is not None]
        per_segment = [_narrowed_rows(n) if n is not None else r.num_rows
                       for t in busy for _, readers in segments[t.tablet_id] for r, n in readers]
        left = sum(per_segment)
        if (len(busy) > 1 and self.scan_threads > 1 and left >= PARALLEL_SCAN_MIN_ROWS
                and left >= PARALLEL_SCAN_MIN_SEGMENT_ROWS * len(per_segment)):
            # pyarrow/IO release the GIL; the pool lives across queries (starting threads per query cost
            # ~1 ms) and the calling thread reads the first tablet itself
            futures = [_scan_pool(self.scan_threads).submit(scan_one, t) for t in busy[1:]]
            results = [scan_one(busy[0])] + [f.result() for f in futures]
        else:
            results = [scan_one(t) for t in busy]
        pieces: list[pa.Table] = []
        for part, own in results:
            stats.merge(own)
            if part is not None:
                pieces.append(part)
        if across and pieces:
            merged = merge_parts(pieces, index) if len(pieces) > 1 else pieces[0]
            if predicates and req.exact and merged.num_rows:
                before = merged.num_rows
                merged = merged.filter(pa.array(predicate_mask(merged, predicates)))
                stats.rows_vector_pred_filtered += before - merged.num_rows
            stats.rows_returned = merged.num_rows
            pieces = [merged.select(requested)] if merged.num_rows else []
        if not pieces:
            return ScanResult(self._output_schema(req, requested).empty_table(), stats)
        if not requested:  # COUNT(*) without columns: Arrow cannot concatenate row counts alone
            return ScanResult(rows_only(sum(p.num_rows for p in pieces)), stats)
        result = pa.concat_tables(pieces, promote_options="none") if len(pieces) > 1 else pieces[0]
        return ScanResult(result.rename_columns(list(req.columns)), stats)

    @staticmethod
    def _extend_kept(hit: KeptScan | None, newer: pa.Table | None, index: MaterializedIndexMeta,
                     merging: bool) -> pa.Table | None:
        """A kept scan's rows with those of the rowsets after it, as one read of all of them gives."""
        if hit is None or newer is None:
            return newer if hit is None else hit.rows
        if merging:  # the kept rows hold each key once, merged; the newer rowsets' rows come after them
            return merge_parts([hit.rows, newer], index)
        return pa.concat_tables([hit.rows, newer])

    @staticmethod
    def _with_delete_columns(read_cols: list[str], canon: Mapping[str, str], deletes: Iterable[list[Rowset]],
                             index: MaterializedIndexMeta) -> list[str]:
        names = delete_columns(d for ds in deletes for d in ds)
        missing = [n for n in names if n.lower() not in canon]
        if missing:
            raise StorageError(f"delete condition column {missing[0]} is not in index {index.name}")
        return list(dict.fromkeys(read_cols + [canon[n.lower()] for n in names]))

    def _segments(self, rowsets: Sequence[Rowset], prune: Sequence[ColumnPredicate], stats: ScanStats,
                  narrow: bool, wanted: tuple[WantedColumn, ...] | None = None
                  ) -> list[tuple[Rowset, list[tuple[SegmentReader, Narrowed | None]]]]:
        """The DATA rowsets' segments that may hold matching rows: the segment zone maps first (one
        comparison per predicate on cached metadata), then, when `narrow`, the whole index narrowing, so the
        caller knows how much is left to read before it hands work to scan threads."""
        out = []
        # plain strings, not segment_paths(): building pathlib Paths per segment per query showed in profiles
        data_dir = os.fspath(self.data_dir)
        for rs in rowsets:
            if rs.kind != "DATA":
                continue
            kept = []
            prefix = f"{data_dir}{os.sep}{rs.tablet_id}{os.sep}{rs.rowset_id}_"
            for i in range(rs.num_segments):
                reader = open_segment(f"{prefix}{i}.dat")
                if wanted:
                    reader = segment_for(reader, wanted)
                stats.segments_total += 1
                if not reader.may_contain(prune):
                    stats.segments_filtered += 1
                    stats.rows_stats_filtered += reader.num_rows
                    continue
                narrowed = reader.narrow(prune, stats, segment_checked=True) if narrow else None
                if narrowed is None or _narrowed_rows(narrowed):
                    kept.append((reader, narrowed))
            if kept:
                out.append((rs, kept))
        return out

    def _scan_tablet(self, segments: Sequence[tuple[Rowset, Sequence[tuple[SegmentReader, Narrowed | None]]]],
                     index: MaterializedIndexMeta, columns: Sequence[str], prune: Sequence[ColumnPredicate],
                     merging: bool, stats: ScanStats, exact: Sequence[ColumnPredicate] = (),
                     deletes: Sequence[Rowset] = ()) -> pa.Table | None:
        """One tablet's rows at the snapshot: rowsets in version order, without the rows later DELETE
        versions remove (before the merge: AGG / UNIQUE deletes name keys only), merged per the model if asked."""
        parts: list[pa.Table] = []
        data_rowsets = 0
        overlapping = False
        for rs, readers in segments:
            got = False
            above = deletes_above(deletes, rs.end_version)
            for reader, narrowed in readers:
                if merging:
                    ranges = reader.row_ranges(prune, stats) if prune else None
                    t = reader.read(columns, ranges, stats)
                else:
                    t = reader.scan(columns, prune, exact, stats, narrowed)
                if above:
                    t, removed = apply_deletes(t, above)
                    stats.rows_del_filtered += removed
                if t.num_rows:
                    parts.append(t)
                    got = True
            data_rowsets += got
            overlapping |= rs.overlapping and rs.num_segments > 1
        if not parts:
            return None
        if not columns:
            return rows_only(sum(p.num_rows for p in parts))
        if merging and (data_rowsets > 1 or overlapping):
            # parts were appended oldest first (a segment holds each key once)
            return merge_parts(parts, index)
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]

    @staticmethod
    def _output_schema(req: ScanRequest, requested: Sequence[str]) -> pa.Schema:
        return _output_schema(req.schema, tuple(requested), tuple(req.columns))


@functools.lru_cache(maxsize=512)
def _output_schema(schema: pa.Schema, requested: tuple[str, ...], columns: tuple[str, ...]) -> pa.Schema:
    """A scan's result schema (memoised: every point query of a plan asks the same)."""
    by_lower = {f.name.lower(): f for f in schema}
    fields = []
    for name, asked in zip(requested, columns, strict=True):
        f = by_lower.get(name.lower())
        if f is None:
            raise StorageError(f"no Arrow type given for column {name}")
        fields.append(pa.field(asked, f.type, f.nullable))
    return pa.schema(fields)
