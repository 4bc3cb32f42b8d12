"""Driving a load through Spark from the server process: shuffle to buckets, write from the tasks, collect.

`run_spark_load` shapes the DataFrame so each Spark partition holds one bucket's rows sorted by the base
keys (`repartition(n_buckets, *hash cols)` puts a row in partition pmod(murmur3(cols), n), the engine's
own bucket hash), runs the dorislite write under a cancellable job group, then reads the task manifests.
It never publishes: the caller commits (or aborts) the transaction, so a server crash at any point leaves
either a published load or a staging folder that engine.open() deletes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from storage.catalog.model import OlapTable
from storage.engine import StagedRowset, StorageEngine
from storage.errors import StorageError
from storage.spark.tables import encode_schema
from storage.spark.task_writer import (
    ERROR_COLUMN,
    merge_task_rowsets,
    pick_samples,
    read_committed,
    read_manifests,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


@dataclass(frozen=True)
class SparkLoadResult:
    staged: list[StagedRowset]
    partition_ids: list[int]
    loaded_rows: int
    filtered_rows: int
    error_samples: list[tuple[str, str]]  # (row text, reason), at most 10


def load_frame(table: OlapTable, df: DataFrame) -> DataFrame:
    """The DataFrame as the writer wants it: one bucket per Spark partition, sorted by the base keys."""
    from pyspark.sql import functions as F  # noqa: N812

    n = max(p.buckets for p in table.partitions)
    dist = table.distribution
    if dist.type.upper() == "HASH":
        df = df.repartition(n, *[F.col(c) for c in dist.columns])
    else:  # RANDOM: round robin; a task's rows all go to bucket (task number mod buckets)
        df = df.repartition(n)
    keys = [c.name for c in table.base_index.columns if c.is_key]
    return df.sortWithinPartitions(*[F.col(k).asc_nulls_first() for k in keys]) if keys else df


def run_spark_load(engine: StorageEngine, table: OlapTable, df: DataFrame, txn_id: int, job_group: str,
                   schema: pa.Schema, *, options: dict[str, str] | None = None) -> SparkLoadResult:
    """Write `df` (base columns with final types, optional last `__dl_error`) as transaction `txn_id`'s
    staged rowsets. Raises on any Spark failure (cleanup: engine.abort). `options` adds writer options
    (tests use `test_fail_partition`)."""
    db_name = _database_name(engine, table)
    names = [c.name for c in table.columns]
    got = [c for c in df.columns if c != ERROR_COLUMN]
    if [c.lower() for c in got] != [n.lower() for n in names]:
        raise StorageError(f"load columns {got} do not match table columns {names}")
    frame = load_frame(table, df)
    n_tasks = max(p.buckets for p in table.partitions)
    spark = df.sparkSession
    sc = spark.sparkContext
    sc.setJobGroup(job_group, f"dorislite load txn {txn_id} into {table.name}", interruptOnCancel=True)
    try:
        writer = (frame.write.format("dorislite").mode("append")
                  .option("root", str(engine.root)).option("database", db_name).option("table", table.name)
                  .option("txn_id", str(txn_id)).option("schema", encode_schema(schema))
                  .option("presorted", "true")
                  .option("max_segment_bytes", str(engine.max_segment_bytes)))
        for k, v in (options or {}).items():
            writer = writer.option(k, v)
        writer.save()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
        sc.setLocalProperty("spark.job.interruptOnCancel", None)
    committed = read_committed(engine.root, txn_id)
    manifests = read_manifests(engine.root, txn_id)
    written = sorted(m.spark_partition for m in manifests)
    if committed is None or written != committed or len(written) > n_tasks:
        raise StorageError(f"Spark load txn {txn_id}: task manifests {written} do not match the committed "
                           f"tasks {committed} ({n_tasks} buckets)")
    staged = merge_task_rowsets(engine.root, txn_id, [s for m in manifests for s in m.staged])
    samples = pick_samples([s for m in manifests for s in m.error_samples])
    return SparkLoadResult(
        staged=staged,
        partition_ids=sorted({s.partition_id for s in staged}),
        loaded_rows=sum(m.loaded_rows for m in manifests),
        filtered_rows=sum(m.error_rows for m in manifests),
        error_samples=samples,
    )


def _database_name(engine: StorageEngine, table: OlapTable) -> str:
    for db in engine.catalog.list_databases():
        if db.db_id == table.db_id:
            return db.name
    raise StorageError(f"database of table {table.name} not found")


def spark_load_progress(job_group: str) -> tuple[int, int]:
    """(finished tasks, total tasks) of the jobs in `job_group` so far, from Spark's status tracker."""
    from storage.spark.session import _session

    if _session is None:
        return 0, 0
    tracker = _session.sparkContext.statusTracker()
    done = total = 0
    for job_id in tracker.getJobIdsForGroup(job_group):
        job = tracker.getJobInfo(job_id)
        if job is None:
            continue
        finished = str(job.status) == "SUCCEEDED"  # the tracker's stage counts lag (listener bus)
        for stage_id in job.stageIds:
            stage = tracker.getStageInfo(stage_id)
            if stage is not None:
                done += stage.numTasks if finished else stage.numCompletedTasks
                total += stage.numTasks
    return done, total
