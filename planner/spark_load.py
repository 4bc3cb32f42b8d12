"""INSERT ... SELECT on Spark: the SELECT's rows mapped onto the target table's base columns.

`target_frame` takes the DataFrame of the SELECT and returns the frame `storage.spark.datasource.
run_spark_load` expects: the base columns in table order with their final types (try_cast in Spark SQL),
missing columns filled with their defaults, plus `__dl_error`, the reason a row does not fit (NULL when it
does), in Doris's order of checks: conversion failure, too long for CHAR/VARCHAR (bytes), NULL into NOT
NULL, then "no partition for this tuple" (also for rows outside an `INSERT ... PARTITION (p, ...)` list).
The reason carries the source row, so a strict-mode failure can show a sample of the bad rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from sqlglot import exp

from planner.bind.bind_insert import STRICT_FILTERED_CODE, TableColumn, _default_value, _resolve_targets
from planner.olap_source import arrow_schema
from planner.spark_sources import ResolveOlap, _quote, _sql_string, drop_views, register_views, spark_type
from sql.errors import SqlError, analysis_error
from sql.types import parse_type
from storage.catalog.model import OlapTable, Partition
from storage.engine import Overwrite, StorageEngine
from storage.tablet.partition_router import _TYPE_MINIMA

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

ERROR_COLUMN = "__dl_error"
SAMPLE_ROWS = 5  # bad rows quoted in a strict-mode failure


def _src(i: int) -> str:
    return f"__s{i}"


def _value_sql(col: TableColumn, source: str | None, now: dt.datetime, source_type: str | None = None) -> str:
    """The converted value of one target column (source column or the column's default)."""
    name, dtype, _nullable, _default = col
    target = spark_type(dtype.arrow_type())
    if source is None:
        default = _default_value(col, now)  # raises 1364 for NOT NULL without a default
        return f"CAST({'NULL' if default is None else _sql_string(default)} AS {target})"
    if source_type == target:
        return source  # already the target type (e.g. Parquet written with the table's types): no cast
    return f"try_cast({source} AS {target})"


def _reasons(col: TableColumn, source: str | None, value: str, cast: bool = True) -> list[str]:
    """Checks Spark must make per row. NOT NULL and "no partition" are checked again by the writer tasks
    (storage's reject_masks, one implementation), so they are not repeated here."""
    name, dtype, _nullable, _default = col
    out: list[str] = []
    if source is not None and cast:
        out.append(f"CASE WHEN {source} IS NOT NULL AND {value} IS NULL THEN concat("
                   f"{_sql_string(f'column({name}) value is incorrect: ')}, \"'\", CAST({source} AS STRING), \"'\")"
                   f" END")
    if dtype.name in ("CHAR", "VARCHAR") and dtype.length:
        out.append(f"CASE WHEN octet_length({value}) > {dtype.length} THEN concat("
                   f"{_sql_string(f'column({name}) value is too long: ')}, \"'\", {value}, \"'\", "
                   f"{_sql_string(f' (schema length: {dtype.length})')}) END")
    return out


# -- partitions ---------------------------------------------------------------------------------------


def _bound(column: str, text: str, spark_t: str) -> str:
    return f"CAST({_sql_string(text)} AS {spark_t})"


def _tuple_less(cols: Sequence[tuple[str, str]], bound: Sequence[str]) -> str:
    """Lexicographic (cols) < bound; NULL sorts below every value (as the storage router does)."""
    terms, equal = [], []
    for (col, t), text in zip(cols, bound, strict=False):
        b = _bound(col, text, t)
        terms.append("(" + " AND ".join([*equal, f"({col} IS NULL OR {col} < {b})"]) + ")")
        equal.append(f"({col} <=> {b})")
    return "(" + " OR ".join(terms) + ")" if terms else "false"


def _range_sql(cols: Sequence[tuple[str, str]], p: Partition) -> str:
    parts = []
    lower = p.item.lower
    if lower is not None and not all(v is None or v.strip().upper() in _TYPE_MINIMA for v in lower):
        parts.append(f"NOT {_tuple_less(cols, lower)}")
    if p.item.upper is not None:
        parts.append(_tuple_less(cols, p.item.upper))
    return " AND ".join(parts) or "true"


def _list_sql(cols: Sequence[tuple[str, str]], p: Partition) -> str:
    options = []
    for value in p.item.values or ():
        options.append("(" + " AND ".join(
            f"{c} IS NULL" if v is None else f"{c} = {_bound(c, v, t)}"
            for (c, t), v in zip(cols, value, strict=True)) + ")")
    return "(" + " OR ".join(options) + ")" if options else "false"


def partition_sql(table: OlapTable, values: dict[str, str], allowed: Sequence[str]) -> str | None:
    """A boolean Spark SQL expression: the row belongs to a partition of `allowed` (all when empty).
    None when every row qualifies (one implicit partition and no restriction)."""
    info = table.partition_info
    chosen = [p for p in table.partitions if not allowed or p.name.lower() in {a.lower() for a in allowed}]
    if info.type.upper() == "UNPARTITIONED" or not info.columns:
        return None if chosen else "false"
    by_lower = {c.name.lower(): c for c in table.columns}
    cols = [(values[by_lower[n.lower()].name], spark_type(parse_type(by_lower[n.lower()].type).arrow_type()))
            for n in info.columns]
    is_list = info.type.upper() == "LIST"
    if not chosen:
        return "false"
    # a row belongs to the first partition that matches (ranges do not overlap; lists are disjoint)
    matches = [_list_sql(cols, p) if is_list else _range_sql(cols, p) for p in chosen]
    return "(" + " OR ".join(matches) + ")"


def check_partitions(table: OlapTable, names: Sequence[str]) -> None:
    known = {p.name.lower() for p in table.partitions}
    for name in names:
        if name.lower() not in known:
            raise analysis_error(f"Unknown partition '{name}' in table '{table.name}'", 1105, "HY000")


# -- the target frame ---------------------------------------------------------------------------------


def target_frame(df: DataFrame, table: OlapTable, table_columns: Sequence[TableColumn],
                 target_columns: Sequence[str] | None, partitions: Sequence[str],
                 now: dt.datetime) -> DataFrame:
    targets = _resolve_targets(table_columns, target_columns)
    if len(df.columns) != len(targets):
        raise analysis_error("Column count doesn't match value count", 1136, "21S01")
    df = df.toDF(*(_src(i) for i in range(len(df.columns))))  # SELECT names may repeat or be expressions
    source_of = {ci: _src(pos) for pos, ci in enumerate(targets)}
    source_types = {_src(i): f.dataType.simpleString().replace(" ", "") for i, f in enumerate(df.schema.fields)}
    targets_t = {ci: spark_type(col[1].arrow_type()) for ci, col in enumerate(table_columns)}
    values = {col[0]: _value_sql(col, source_of.get(ci), now, source_types.get(source_of.get(ci, "")))
              for ci, col in enumerate(table_columns)}
    names = [c[0] for c in table_columns]
    converted = df.selectExpr("*", *(f"{v} AS {_quote('__v_' + n)}" for n, v in values.items()))
    reasons: list[str] = []
    for ci, col in enumerate(table_columns):
        src = source_of.get(ci)
        reasons += _reasons(col, src, _quote("__v_" + col[0]), cast=source_types.get(src or "") != targets_t[ci])
    # rows outside every partition are rejected by the writer tasks; only PARTITION (...) needs Spark
    in_partition = partition_sql(table, {n: _quote("__v_" + n) for n in names}, partitions) if partitions else None
    if in_partition is not None:
        reasons.append(f"CASE WHEN NOT coalesce({in_partition}, false) THEN 'no partition for this tuple' END")
    src_line = "concat_ws(', ', " + ", ".join(
        f"coalesce(CAST({_src(i)} AS STRING), 'NULL')" for i in range(len(targets))) + ")"
    reason = f"coalesce({', '.join(reasons)})" if reasons else "CAST(NULL AS STRING)"
    checked = converted.selectExpr("*", f"{reason} AS __reason")
    error = (f"CASE WHEN __reason IS NOT NULL THEN concat('Reason: ', __reason, '. src line [', {src_line}, ']') "
             f"END AS {ERROR_COLUMN}")
    return checked.selectExpr(*(f"{_quote('__v_' + n)} AS {_quote(n)}" for n in names), error)


# -- running the load ---------------------------------------------------------------------------------


class LoadCancelled(Exception):
    """The load was cancelled (CANCEL LOAD / KILL QUERY) before it published."""


class LoadHandle(Protocol):
    """The load job the server tracks (SHOW LOAD, CANCEL LOAD); see server.loads.LoadJob."""

    job_group: str

    def loading(self, txn_id: int) -> None: ...

    def commit_guard(self) -> AbstractContextManager[None]:
        """Held while deciding to publish: a cancel either lands before (the load aborts) or is refused."""
        ...

    @property
    def cancelled(self) -> bool: ...


@dataclass
class SparkInsert:
    engine: StorageEngine
    table: OlapTable
    query: exp.Expression
    target_columns: Sequence[str] | None
    partitions: Sequence[str]
    label: str
    strict: bool
    now: dt.datetime
    settings: Mapping[str, str]
    resolve: ResolveOlap
    overwrite: Overwrite | None = None  # INSERT OVERWRITE: the partitions the rows replace
    precommit: bool = False  # written and held (engine.hold): a LOAD publishes all its tables together


@dataclass(frozen=True)
class InsertOutcome:
    label: str
    txn_id: int | None  # None: nothing to load (empty SELECT)
    loaded_rows: int
    filtered_rows: int


def _sample_text(row: str, reason: str) -> str:
    # reasons from target_frame already carry "Reason: ... src line [...]"; the writer's own checks
    # (NOT NULL, no partition) give the bare reason and the converted row
    return reason if reason.startswith("Reason: ") else f"Reason: {reason}. src line [{row}]"


def strict_error(filtered: int, samples: Sequence[tuple[str, str]]) -> SqlError:
    sample = "; ".join(_sample_text(row, reason) for row, reason in samples[:SAMPLE_ROWS])
    return analysis_error(f"Insert has filtered data in strict mode. filtered rows: {filtered}, "
                          f"sample: [{sample}]", STRICT_FILTERED_CODE, "HY000")


def run_spark_insert(req: SparkInsert, handle: LoadHandle) -> InsertOutcome:
    """One INSERT ... SELECT as one transaction: begin (label checked), Spark writes staged rowsets,
    then publish all or nothing; strict mode aborts on any filtered row."""
    from storage.spark.datasource import run_spark_load
    from storage.spark.errors import spark_errors
    from storage.spark.session import spark_session, worker_python

    table = req.table
    check_partitions(table, req.partitions)
    columns = [(c.name, parse_type(c.type), c.nullable, c.default) for c in table.columns]
    _resolve_targets(columns, req.target_columns)  # unknown / repeated columns fail before anything runs
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
            if result.loaded_rows == 0 and result.filtered_rows:
                raise analysis_error("all partitions have no load data", 1064, "HY000")
            if result.loaded_rows == 0 and (req.overwrite is None or not req.overwrite.targets(())):
                req.engine.abort(txn_id, "no data")
                return InsertOutcome(req.label, None, 0, 0)
            if req.precommit:
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
