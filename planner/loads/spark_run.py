"""The Spark run of a load: an INSERT ... SELECT whose sources are Spark views (planner.loads.spark_sources), its
rows converted and checked by `target_frame`, written by Spark's tasks into staged rowsets (storage.spark), then
published all or nothing here.

`target_frame` takes the DataFrame of the SELECT and returns the frame `storage.spark.datasource.
run_spark_load` expects: the base columns in table order with their final types (try_cast in Spark SQL),
missing columns filled with their defaults, plus `__dl_error`, the reason a row does not fit (NULL when it
does), in Doris's order of checks: conversion failure, too long for CHAR/VARCHAR (bytes), NULL into NOT
NULL, then "no partition for this tuple" (also for rows outside an `INSERT ... PARTITION (p, ...)` list).
The reason carries the source row, so a strict-mode failure can show a sample of the bad rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from planner.loads.convert import (
    TableColumn,
    check_filtered,
    resolve_targets,
    spark_reasons,
    spark_value_sql,
    strict_error,
)
from planner.loads.request import InsertOutcome, LoadCancelled, LoadHandle, LoadRequest
from planner.loads.route import check_partitions, partition_sql
from planner.loads.spark_sources import ResolveOlap, drop_views, register_views, spark_ident, spark_type
from planner.olap_source import arrow_schema
from sql.errors import analysis_error
from sql.types import parse_type
from storage.catalog.model import OlapTable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ERROR_COLUMN = "__dl_error"


def _src(i: int) -> str:
    return f"__s{i}"


# -- the target frame ---------------------------------------------------------------------------------


def target_frame(df: DataFrame, table: OlapTable, table_columns: Sequence[TableColumn],
                 target_columns: Sequence[str] | None, partitions: Sequence[str],
                 now: dt.datetime) -> DataFrame:
    targets = resolve_targets(table_columns, target_columns)
    if len(df.columns) != len(targets):
        raise analysis_error("Column count doesn't match value count", 1136, "21S01")
    df = df.toDF(*(_src(i) for i in range(len(df.columns))))  # SELECT names may repeat or be expressions
    source_of = {ci: _src(pos) for pos, ci in enumerate(targets)}
    source_types = {_src(i): f.dataType.simpleString().replace(" ", "") for i, f in enumerate(df.schema.fields)}
    targets_t = {ci: spark_type(col[1].arrow_type()) for ci, col in enumerate(table_columns)}
    values = {col[0]: spark_value_sql(col, source_of.get(ci), now, source_types.get(source_of.get(ci, "")))
              for ci, col in enumerate(table_columns)}
    names = [c[0] for c in table_columns]
    converted = df.selectExpr("*", *(f"{v} AS {spark_ident('__v_' + n)}" for n, v in values.items()))
    reasons: list[str] = []
    for ci, col in enumerate(table_columns):
        src = source_of.get(ci)
        reasons += spark_reasons(col, src, spark_ident("__v_" + col[0]), cast=source_types.get(src or "") != targets_t[ci])
    # rows outside every partition are rejected by the writer tasks; only PARTITION (...) needs Spark
    in_partition = partition_sql(table, {n: spark_ident("__v_" + n) for n in names}, partitions) if partitions else None
    if in_partition is not None:
        reasons.append(f"CASE WHEN NOT coalesce({in_partition}, false) THEN 'no partition for this tuple' END")
    src_line = "concat_ws(', ', " + ", ".join(
        f"coalesce(CAST({_src(i)} AS STRING), 'NULL')" for i in range(len(targets))) + ")"
    reason = f"coalesce({', '.join(reasons)})" if reasons else "CAST(NULL AS STRING)"
    checked = converted.selectExpr("*", f"{reason} AS __reason")
    error = (f"CASE WHEN __reason IS NOT NULL THEN concat('Reason: ', __reason, '. src line [', {src_line}, ']') "
             f"END AS {ERROR_COLUMN}")
    return checked.selectExpr(*(f"{spark_ident('__v_' + n)} AS {spark_ident(n)}" for n in names), error)


# -- running the load ---------------------------------------------------------------------------------


def run_on_spark(req: LoadRequest, handle: LoadHandle) -> InsertOutcome:
    """One INSERT ... SELECT as one transaction: begin (label checked), Spark writes staged rowsets,
    then publish all or nothing; strict mode aborts on any filtered row."""
    from storage.spark.datasource import run_spark_load
    from storage.spark.errors import spark_errors
    from storage.spark.session import spark_session, worker_python

    assert req.query is not None and req.resolve is not None
    table = req.table
    check_partitions(table, req.partitions)
    columns = [(c.name, parse_type(c.type), c.nullable, c.default) for c in table.columns]
    resolve_targets(columns, req.target_columns)  # unknown / repeated columns fail before anything runs
    with spark_errors("Load", worker_python(req.settings)):
        spark = spark_session(req.settings)
        # Spark finds Python data sources ("dorislite") through the JVM thread's active session, and each
        # server worker thread is its own JVM thread: make the shared session active here
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        views = register_views(spark, req.query, req.resolve, strict_types=req.strict)
    if handle.cancelled:  # cancelled while Spark started: nothing ran yet
        drop_views(spark, views.views)
        raise LoadCancelled()
    txn_id = req.engine.catalog.begin_txn(table.db_id, table.table_id, req.label)
    try:
        handle.loading(txn_id)
        with spark_errors("Load", spark.sparkContext.pythonExec):
            frame = target_frame(spark.sql(views.sql), table, columns, req.target_columns, req.partitions,
                                 req.now)
            result = run_spark_load(req.engine, table, frame, txn_id, handle.job_group, arrow_schema(table))
        with handle.commit_guard():
            if handle.cancelled:
                raise LoadCancelled()
            if result.filtered_rows and req.strict:
                raise strict_error(result.filtered_rows, result.error_samples)
            check_filtered(result.loaded_rows, result.filtered_rows, req.strict, req.max_filter_ratio)
            if result.loaded_rows == 0 and (req.overwrite is None or not req.overwrite.targets(())):
                req.engine.abort(txn_id, "no data")
                return InsertOutcome(req.label, None, 0, 0)
            if req.options.precommit:
                req.engine.hold(txn_id, result.staged, result.partition_ids, req.overwrite)
            else:
                req.engine.commit(txn_id, result.staged, result.partition_ids, req.overwrite)
        return InsertOutcome(req.label, txn_id, result.loaded_rows, result.filtered_rows)
    except BaseException as e:
        req.engine.abort(txn_id, "user cancel" if handle.cancelled else str(e)[:1000])
        if handle.cancelled and not isinstance(e, LoadCancelled):
            raise LoadCancelled() from e
        raise
    finally:
        drop_views(spark, views.views)


def map_query_on_spark(query: exp.Expression, resolve: ResolveOlap, settings: Mapping[str, str], job_group: str,
                       task: Callable[[Iterator[pa.RecordBatch], int], str], tasks: int, work_dir: Path) -> list[Any]:
    """The other direction (EXPORT): run a SELECT on Spark over the tables' snapshots and hand each of at most
    `tasks` Spark tasks its rows as Arrow batches; `task` runs in the executors and answers JSON (see
    storage.spark.arrow_tasks)."""
    from storage.spark.arrow_tasks import run_arrow_tasks
    from storage.spark.errors import spark_errors
    from storage.spark.session import spark_session, worker_python

    with spark_errors("Export", worker_python(settings)):
        spark = spark_session(settings)
        spark._jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
        views = register_views(spark, query, resolve)
    try:
        with spark_errors("Export", spark.sparkContext.pythonExec):
            frame = spark.sql(views.sql).coalesce(tasks)  # fewer when there is less to read, as Doris caps it
            return run_arrow_tasks(frame, task, work_dir, job_group, "dorislite export")
    finally:
        drop_views(spark, views.views)
