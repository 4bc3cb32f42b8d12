"""What one Spark write task does with its rows (runs in a Spark Python worker, no StorageEngine).

The task gets its whole Spark partition as Arrow batches, drops the rows the planner marked bad
(`__dl_error`) and the ones the engine's own checks reject (NOT NULL, no partition), then hands the rest to
the engine's load write path (`write_routed_rows`: routing, bucket hash, memtable per index, staged
segments). It ends by writing a manifest, atomically, named after the Spark partition: a retried attempt
overwrites its predecessor's manifest, so the driver counts each partition once and commits only the
rowsets listed in the surviving manifests; files of losing attempts stay unreferenced in the staging
folder and go with it at commit / abort / open().
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.catalog.model import OlapTable, Tablet
from storage.engine import StagedRowset, reject_masks, staging_path, write_routed_rows

ERROR_COLUMN = "__dl_error"
MANIFEST_DIR = "_manifests"
COMMITTED = "committed.json"
MAX_ERROR_SAMPLES = 10


@dataclass
class TaskManifest:
    spark_partition: int
    attempt: int
    staged: list[StagedRowset]
    loaded_rows: int
    error_rows: int
    error_samples: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> str:
        d = asdict(self)
        return json.dumps(d)

    @staticmethod
    def from_json(text: str) -> TaskManifest:
        d = json.loads(text)
        return TaskManifest(spark_partition=d["spark_partition"], attempt=d["attempt"],
                            staged=[StagedRowset(**s) for s in d["staged"]], loaded_rows=d["loaded_rows"],
                            error_rows=d["error_rows"], error_samples=[tuple(s) for s in d["error_samples"]])


def manifest_dir(root: Path | str, txn_id: int) -> Path:
    return staging_path(Path(root), txn_id) / MANIFEST_DIR


def write_manifest(root: Path | str, txn_id: int, manifest: TaskManifest) -> Path:
    """Write-then-rename (with fsync), so a manifest is complete or absent."""
    d = manifest_dir(root, txn_id)
    d.mkdir(parents=True, exist_ok=True)
    final = d / f"part-{manifest.spark_partition:05d}.json"
    _write_atomically(final, manifest.to_json())
    return final


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_committed(root: Path | str, txn_id: int, spark_partitions: Iterable[int]) -> None:
    """The Spark partitions whose tasks the job committed (written by the job's commit): Spark may run
    fewer tasks than buckets (an input it knows to be empty is not shuffled), so this, not the bucket
    count, says which manifests must be there."""
    d = manifest_dir(root, txn_id)
    d.mkdir(parents=True, exist_ok=True)
    _write_atomically(d / COMMITTED, json.dumps(sorted(set(spark_partitions))))


def read_committed(root: Path | str, txn_id: int) -> list[int] | None:
    path = manifest_dir(root, txn_id) / COMMITTED
    return json.loads(path.read_text()) if path.exists() else None


def read_manifests(root: Path | str, txn_id: int) -> list[TaskManifest]:
    d = manifest_dir(root, txn_id)
    if not d.is_dir():
        return []
    return [TaskManifest.from_json(p.read_text()) for p in sorted(d.glob("part-*.json"))]


def pick_samples(samples: Sequence[tuple[str, str]], limit: int = MAX_ERROR_SAMPLES) -> list[tuple[str, str]]:
    """At most `limit` samples, taken round robin over the reasons so every kind of error shows up."""
    by_reason: dict[str, list[tuple[str, str]]] = {}
    for s in samples:
        by_reason.setdefault(s[1], []).append(s)
    out: list[tuple[str, str]] = []
    queues = list(by_reason.values())
    while len(out) < limit and any(queues):
        for q in queues:
            if q and len(out) < limit:
                out.append(q.pop(0))
    return out


def _row_text(rows: pa.Table, i: int) -> str:
    """One rejected row as text for the error samples (at most MAX_ERROR_SAMPLES rows per task)."""
    values = [rows.column(c)[i].as_py() for c in rows.column_names]
    return ", ".join("NULL" if v is None else str(v) for v in values)


def conform(table: OlapTable, data: pa.Table, target: pa.Schema | None) -> pa.Table:
    """Rename to the table's column names and cast to the target Arrow types where Spark's Arrow types
    differ (large strings, timestamps carrying the session zone are turned into wall-clock times)."""
    names = [c.name for c in table.columns]
    if [n.lower() for n in data.column_names] != [n.lower() for n in names]:
        raise ValueError(f"load columns {data.column_names} do not match table columns {names}")
    data = data.rename_columns(names)
    if target is None:
        return data
    cols = []
    for name, want in zip(names, target.types, strict=True):
        col = data.column(name)
        if col.type != want:
            if pa.types.is_timestamp(col.type) and col.type.tz and pa.types.is_timestamp(want) and not want.tz:
                col = pc.local_timestamp(col)
            col = col.cast(want)
        cols.append(col)
    return pa.table(cols, names=names)


@dataclass
class WriteTask:
    """Everything a task needs, pickled from the driver-side planning worker to every task."""

    root: str
    txn_id: int
    table: OlapTable
    tablets: Mapping[tuple[int, int, int], Tablet]
    target: pa.Schema | None
    max_segment_bytes: int
    base_sorted: bool = False
    fail_partition: int | None = None  # test-only: this Spark partition raises after writing its files

    def run(self, batches: Iterable[pa.RecordBatch], spark_partition: int, attempt: int) -> TaskManifest:
        batch_list = list(batches)
        if not batch_list:
            manifest = TaskManifest(spark_partition, attempt, [], 0, 0)
            write_manifest(self.root, self.txn_id, manifest)
            return manifest
        data = pa.Table.from_batches(batch_list)
        del batch_list
        planner_errors = None
        if ERROR_COLUMN in data.column_names:
            planner_errors = data.column(ERROR_COLUMN)
            data = data.drop_columns([ERROR_COLUMN])
        data = conform(self.table, data, self.target)
        keep, positions, samples = self._reject(data, planner_errors)
        rows = data if keep is None else data.filter(pa.array(keep))
        staged, _ = write_routed_rows(staging_path(Path(self.root), self.txn_id), self.table, self.tablets, rows,
                                      positions, self.max_segment_bytes, random_bucket=spark_partition,
                                      base_sorted=self.base_sorted)
        if self.fail_partition is not None and spark_partition == self.fail_partition:
            raise RuntimeError(f"injected failure in Spark partition {spark_partition}")
        manifest = TaskManifest(spark_partition, attempt, staged, rows.num_rows, data.num_rows - rows.num_rows,
                                samples)
        write_manifest(self.root, self.txn_id, manifest)
        return manifest

    def _reject(self, data: pa.Table, planner_errors: pa.ChunkedArray | None
                ) -> tuple[np.ndarray | None, np.ndarray, list[tuple[str, str]]]:
        """(keep mask or None when every row is good, partition position of each kept row,
        up to MAX_ERROR_SAMPLES (row text, reason))."""
        positions, checks = reject_masks(self.table, data)
        reasons: list[tuple[str, np.ndarray]] = []
        if planner_errors is not None and planner_errors.null_count < len(planner_errors):
            reasons.append(("", planner_errors.is_valid().to_numpy(zero_copy_only=False)))
        reasons += [(why, mask) for why, mask in checks if mask.any()]
        if not reasons:
            return None, positions, []
        keep = np.ones(data.num_rows, dtype=bool)
        samples: list[tuple[str, str]] = []
        for why, failed in reasons:
            for i in np.flatnonzero(failed & keep)[:MAX_ERROR_SAMPLES]:
                samples.append((_row_text(data, int(i)), why or str(planner_errors[int(i)].as_py())))
            keep &= ~failed
        return keep, positions[keep], pick_samples(samples)


def merge_task_rowsets(root: Path | str, txn_id: int, staged: Sequence[StagedRowset]) -> list[StagedRowset]:
    """One rowset per tablet per load: when several tasks wrote the same tablet (partitions with fewer
    buckets than Spark partitions, RANDOM distribution), rename their segments into the first rowset's
    numbering and mark it overlapping, so reads merge its segments. Renames stay inside the staging folder:
    still nothing visible until the publish."""
    by_tablet: dict[int, list[StagedRowset]] = {}
    for s in staged:
        by_tablet.setdefault(s.tablet_id, []).append(s)
    out: list[StagedRowset] = []
    stage = staging_path(Path(root), txn_id)
    for tablet_id, parts in by_tablet.items():
        if len(parts) == 1:
            out.append(parts[0])
            continue
        first = parts[0]
        d = stage / str(tablet_id)
        n = first.num_segments
        for other in parts[1:]:
            for i in range(other.num_segments):
                os.replace(d / f"{other.rowset_id}_{i}.dat", d / f"{first.rowset_id}_{n}.dat")
                n += 1
        out.append(StagedRowset(tablet_id=tablet_id, partition_id=first.partition_id, rowset_id=first.rowset_id,
                                num_rows=sum(p.num_rows for p in parts), num_segments=n,
                                data_size=sum(p.data_size for p in parts), overlapping=True))
    return out
