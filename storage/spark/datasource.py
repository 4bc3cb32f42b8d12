"""The "dorislite" Spark data source (PySpark's Python data source API): reads tablets, writes loads.

Read (also from a user's own PySpark code, next to a running server — the catalog is opened read-only):

    spark.read.format("dorislite").option("root", "/path/to/storage").option("database", "db")
         .option("table", "t").load()

  options: `schema` (Arrow schema as base64 IPC or JSON [[name, type]]; default: taken from a segment of the
  table), `versions` (JSON {partition_id: version}, default: the versions visible when the read is planned;
  every task reads that one snapshot). One Spark partition per base-index tablet holding data; each task runs
  the engine's own tablet scan (index pruning, merge-on-read per the model), so results equal
  `StorageEngine.scan`. Filter pushdown (option `pushdown=true`, off by default): comparisons, IN and
  IS [NOT] NULL on columns go to the tablet scan (short key / zone map pruning, then exact filtering, value
  predicates after the merge); it also needs `spark.sql.python.filterPushdown.enabled=true` (our session
  sets it). Off by default because of a Spark 4.3 bug: PythonDataSourceV2 keeps the read plan of the last
  query that pushed filters and reuses it for a later query on the SAME DataFrame that pushes none
  (`df.filter("k = 3").count()` then `df.count()` returns 7 rows instead of 350 — measured). Use it only on
  DataFrames that run one query (the server's load plans do). Column pruning: Spark 4.3 does not hand a
  Python data source the columns a query needs, so prune by giving a reader schema with only the wanted
  columns (`spark.read.format("dorislite").schema("k INT, v BIGINT")`) or the option
  `columns` ("k,v"); only those columns are read from the segments.

Write (the server's load path; `run_spark_load` in storage.spark.load drives it):

    df.write.format("dorislite").option("root", root).option("database", db).option("table", t)
      .option("txn_id", str(txn_id)).mode("append").save()

  The DataFrame has the table's base columns in order (plus an optional last string column `__dl_error`).
  Each task writes staged segments and a manifest (task_writer.py); nothing is published here — Spark's
  commit()/abort() run in other processes and only log.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    InputPartition,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from storage.catalog.store import TXN_PREPARE
from storage.engine import DEFAULT_MAX_SEGMENT_BYTES, ScanRequest
from storage.errors import StorageError
from storage.predicate import ColumnPredicate, Op
from storage.spark.load import SparkLoadResult, run_spark_load, spark_load_progress
from storage.spark.tables import (
    decode_schema,
    find_table,
    open_catalog_read_only,
    read_only_engine,
    table_schema,
)
from storage.spark.task_writer import WriteTask, write_committed

__all__ = ["DorisLiteDataSource", "SparkLoadResult", "register", "run_spark_load", "spark_load_progress"]

log = logging.getLogger(__name__)

FORMAT = "dorislite"


def _required(options: Any, key: str) -> str:
    value = options.get(key)
    if not value:
        raise StorageError(f"the dorislite data source needs the option '{key}'")
    return str(value)


def _spark_schema(schema: pa.Schema) -> StructType:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(schema, prefer_timestamp_ntz=True)


class DorisLiteDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        engine = read_only_engine(_required(self.options, "root"))
        try:
            table = find_table(engine.catalog, _required(self.options, "database"), _required(self.options, "table"))
            schema = table_schema(engine, table, self.options.get("schema"))
        finally:
            engine.close()
        if self.options.get("columns"):  # column pruning by option: the source's schema is just these
            by_lower = {f.name.lower(): f for f in schema}
            wanted = [c.strip() for c in self.options["columns"].split(",") if c.strip()]
            unknown = [c for c in wanted if c.lower() not in by_lower]
            if unknown:
                raise StorageError(f"Unknown column {unknown[0]} in table {table.name}")
            schema = pa.schema([by_lower[c.lower()] for c in wanted])
        return _spark_schema(schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        if str(self.options.get("pushdown", "false")).lower() == "true":
            return PushdownTabletReader(dict(self.options), schema)
        return TabletReader(dict(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DorisLiteWriter:
        if overwrite:
            raise StorageError("the dorislite data source only appends (INSERT OVERWRITE is not a Spark write)")
        return DorisLiteWriter(dict(self.options))


def register(spark: Any) -> None:
    """Make `spark.read.format("dorislite")` work in any SparkSession (a user's own PySpark code)."""
    spark.dataSource.register(DorisLiteDataSource)


# ------------------------------------------------------------------ read


@dataclass(frozen=True)
class TabletPartition(InputPartition):
    tablet_id: int
    partition_id: int


_FILTER_OPS = {EqualTo: Op.EQ, GreaterThan: Op.GT, GreaterThanOrEqual: Op.GE, LessThan: Op.LT,
               LessThanOrEqual: Op.LE}
_PUSHABLE_VALUES = (bool, int, float, str, decimal.Decimal, dt.date)


def _to_predicate(f: Filter, columns: dict[str, str]) -> ColumnPredicate | None:
    """A Spark filter as a storage predicate, or None when it cannot be evaluated exactly by the scan."""
    ref = getattr(f, "attribute", None)
    if not isinstance(ref, tuple) or len(ref) != 1 or ref[0].lower() not in columns:
        return None
    column = columns[ref[0].lower()]

    def ok(v: Any) -> bool:  # naive datetimes only: a zoned one would compare in another frame
        return isinstance(v, _PUSHABLE_VALUES) and not (isinstance(v, dt.datetime) and v.tzinfo is not None)

    if type(f) in _FILTER_OPS and ok(f.value):
        return ColumnPredicate(column, _FILTER_OPS[type(f)], (f.value,))
    if isinstance(f, In) and f.value and all(ok(v) for v in f.value):
        return ColumnPredicate(column, Op.IN, tuple(f.value))
    if isinstance(f, IsNull):
        return ColumnPredicate(column, Op.IS_NULL)
    if isinstance(f, IsNotNull):
        return ColumnPredicate(column, Op.IS_NOT_NULL)
    return None


class TabletReader(DataSourceReader):
    """Planned once (in a Spark planning worker): the snapshot, the tablets, the columns. Pickled to tasks."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        self.root = _required(options, "root")
        engine = read_only_engine(self.root)
        try:
            self.table = find_table(engine.catalog, _required(options, "database"), _required(options, "table"))
            full = table_schema(engine, self.table, options.get("schema"))
            if options.get("versions"):
                self.versions = {int(k): int(v) for k, v in json.loads(options["versions"]).items()}
            else:
                self.versions = engine.snapshot(self.table)
            tablets = [t for t in engine.catalog.tablets(self.table.table_id, index_id=self.table.base_index_id)
                       if t.partition_id in self.versions]
            rowsets = engine.catalog.rowsets_for_tablets(tablets, self.versions)
            self.tablets = [TabletPartition(t.tablet_id, t.partition_id) for t in tablets if rowsets[t.tablet_id]]
        finally:
            engine.close()
        by_lower = {f.name.lower(): f for f in full}
        missing = [c for c in schema.names if c.lower() not in by_lower]
        if missing:
            raise StorageError(f"Unknown column {missing[0]} in table {self.table.name}")
        self.full_schema = full
        self.columns = [by_lower[c.lower()].name for c in schema.names]  # only these are read (pruning)
        self.target = to_arrow_schema(schema, timezone="UTC")
        self.predicates: list[ColumnPredicate] = []

    def partitions(self) -> Sequence[InputPartition]:
        return self.tablets

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TabletPartition):
            # no tablet holds data: Spark still runs one task, with InputPartition(None), for an empty read
            return
        engine = read_only_engine(self.root)
        # segments written before a schema change are read through the current one (types from the schema)
        types = {c.type: self.full_schema.field(c.name).type for c in self.table.columns}
        engine.arrow_type = types.__getitem__
        try:
            result = engine.scan(ScanRequest(
                table=self.table, schema=self.full_schema, columns=self.columns, predicates=self.predicates,
                partition_ids=[partition.partition_id], versions=self.versions, tablet_ids=[partition.tablet_id],
            )).table
        finally:
            engine.close()
        if result.num_rows == 0:
            return
        # Spark checks the batches against its own Arrow rendering of the schema (UTC timestamps, nullability)
        arrays = [result.column(i).cast(f.type) for i, f in enumerate(self.target)]
        yield from pa.Table.from_arrays(arrays, schema=self.target).to_batches(max_chunksize=64 * 1024)


class PushdownTabletReader(TabletReader):
    def pushFilters(self, filters: list[Filter]) -> Iterator[Filter]:  # noqa: N802 - Spark's name
        columns = {c.lower(): c for c in self.full_schema.names}
        for f in filters:
            p = _to_predicate(f, columns)
            if p is None:
                yield f  # Spark evaluates it after the scan
            else:
                self.predicates.append(p)  # evaluated exactly by the tablet scan (SQL NULL semantics)


# ------------------------------------------------------------------ write


@dataclass
class TaskDone(WriterCommitMessage):
    spark_partition: int
    attempt: int
    rowsets: int
    loaded_rows: int
    error_rows: int


class DorisLiteWriter(DataSourceArrowWriter):
    """Built in a driver-side planning worker (reads the catalog read-only once), pickled to each task."""

    def __init__(self, options: dict[str, str]) -> None:
        root = _required(options, "root")
        txn_id = int(_required(options, "txn_id"))
        catalog = open_catalog_read_only(root)
        try:
            table = find_table(catalog, _required(options, "database"), _required(options, "table"))
            txn = catalog.get_txn(txn_id)
            if txn is None or txn.status != TXN_PREPARE or txn.table_id != table.table_id:
                state = "unknown" if txn is None else f"{txn.status} for table id {txn.table_id}"
                raise StorageError(f"transaction {txn_id} is {state}: cannot load into {table.name}")
            tablets = {(t.partition_id, t.index_id, t.bucket): t for t in catalog.tablets(table.table_id)}
        finally:
            catalog.close()
        self.root, self.txn_id = root, txn_id
        fail = options.get("test_fail_partition")
        self.task = WriteTask(
            root=root, txn_id=txn_id, table=table, tablets=tablets,
            target=decode_schema(options["schema"]) if options.get("schema") else None,
            max_segment_bytes=int(options.get("max_segment_bytes") or DEFAULT_MAX_SEGMENT_BYTES),
            base_sorted=str(options.get("presorted", "false")).lower() == "true",
            fail_partition=int(fail) if fail not in (None, "") else None,
        )

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskDone:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        partition, attempt = (ctx.partitionId(), ctx.attemptNumber()) if ctx is not None else (0, 0)
        m = self.task.run(iterator, partition, attempt)
        return TaskDone(partition, attempt, len(m.staged), m.loaded_rows, m.error_rows)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        # the server publishes after the job returns, from the manifests of the tasks listed here
        write_committed(self.root, self.txn_id, [m.spark_partition for m in messages if isinstance(m, TaskDone)])
        log.debug("dorislite write: %d tasks done", len(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        # the server's engine.abort removes the transaction's staging folder
        log.debug("dorislite write aborted (%d tasks)", len(messages))
