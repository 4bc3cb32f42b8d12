"""A Spark write whose tasks each run a given Python callable over their rows as Arrow batches and answer a JSON
text the driver reads back: EXPORT's executors writing their own files. (Spark's mapInArrow would do the same but
needs pandas; a Python data source writer gets Arrow batches without it.)

The callable is pickled into the write's options (it must be importable by module path in the executors, as the
project is), runs once per Spark partition as `task(batches, partition_id) -> str`, and its answer is written to
`<work_dir>/task-<partition>.json`, which must be on a filesystem the driver shares (the storage root is)."""

from __future__ import annotations

import base64
import json
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceArrowWriter, WriterCommitMessage

from storage.errors import StorageError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

FORMAT = "dorislite_tasks"
ArrowTask = Callable[[Iterator[pa.RecordBatch], int], str]


class ArrowTasksDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def writer(self, schema: Any, overwrite: bool) -> ArrowTasksWriter:
        return ArrowTasksWriter(dict(self.options))


class ArrowTasksWriter(DataSourceArrowWriter):
    def __init__(self, options: dict[str, str]) -> None:
        self.task: ArrowTask = pickle.loads(base64.b64decode(options["task"]))
        self.work_dir = Path(options["work_dir"])

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition = ctx.partitionId() if ctx is not None else 0
        answer = self.task(iterator, partition)
        tmp = self.work_dir / f"task-{partition}.tmp"
        tmp.write_text(answer, encoding="utf-8")
        os.replace(tmp, self.work_dir / f"task-{partition}.json")  # a retried attempt replaces the failed one's
        return WriterCommitMessage()


def run_arrow_tasks(df: DataFrame, task: ArrowTask, work_dir: Path, job_group: str, description: str) -> list[Any]:
    """Run `task` over each partition of `df` under a cancellable job group; the tasks' answers (parsed JSON), in
    partition order."""
    work_dir.mkdir(parents=True, exist_ok=True)
    for stale in work_dir.glob("task-*"):
        stale.unlink()
    sc = df.sparkSession.sparkContext
    sc.setJobGroup(job_group, description, interruptOnCancel=True)
    try:
        (df.write.format(FORMAT).mode("append").option("task", base64.b64encode(pickle.dumps(task)).decode())
         .option("work_dir", str(work_dir)).save())
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
        sc.setLocalProperty("spark.job.interruptOnCancel", None)
    answers = sorted(work_dir.glob("task-*.json"), key=lambda p: int(p.stem.removeprefix("task-")))
    if len(answers) != df.rdd.getNumPartitions():
        raise StorageError(f"{description}: {len(answers)} of {df.rdd.getNumPartitions()} tasks answered")
    out = [json.loads(p.read_text(encoding="utf-8")) for p in answers]
    for p in answers:
        p.unlink()
    return out
