"""The FROM items of an INSERT ... SELECT as Spark temporary views, and the SELECT as Spark SQL.

Each dorislite table becomes a view over the dorislite data source pinned to the partition versions taken
at statement start (the snapshot the whole load reads: merged, model-correct rows); each `local(...)` call
becomes a view over its files with the same column semantics as `planner.file_source` (csv: c1..cN or
header names, strings unless csv_schema, short rows NULL-filled, `\\N` is NULL). The query's table
references are then renamed to the views and the query transpiled with sqlglot's Spark dialect.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlglot import exp

from planner.loads.files import (
    STRICT_FILE_ERROR,
    FileScanOptions,
    file_schema,
    head_lines,
    head_records,
    json_path_steps,
    options_of,
)
from sql import expressions as dx

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# databases whose tables the in-process planner serves (virtual tables Spark cannot read)
VIRTUAL_DATABASES = ("information_schema", "mysql")


@dataclass(frozen=True)
class OlapRef:
    """What a view over a dorislite table needs: where the data is and the snapshot to read."""

    root: str
    db: str
    table: str
    schema: pa.Schema  # Arrow schema of the base columns
    versions: dict[int, int]  # partition_id -> version


# (db or None, table name) -> OlapRef; raises the usual unknown-table errors
ResolveOlap = Callable[[str | None, str], OlapRef]


@dataclass
class SparkQuery:
    sql: str
    views: list[str] = field(default_factory=list)


def _cte_names(query: exp.Expression) -> set[str]:
    return {cte.alias for cte in query.find_all(exp.CTE)}


def _table_refs(query: exp.Expression) -> list[exp.Table]:
    ctes = _cte_names(query)
    return [t for t in query.find_all(exp.Table)
            if isinstance(t.this, dx.TableFunction) or not (not t.db and t.name in ctes)]


def table_names(query: exp.Expression) -> list[tuple[str | None, str]]:
    """(database, table) of each table the SELECT reads (not its files or CTEs)."""
    return [(t.db or None, t.name) for t in _table_refs(query) if not isinstance(t.this, dx.TableFunction)]


def file_stats(query: exp.Expression) -> tuple[int, int]:
    """(number, total size) of the files the SELECT's table functions (local(), ...) read."""
    paths = [p for t in _table_refs(query) if isinstance(t.this, dx.TableFunction) for p in options_of(t.this).paths]
    return len(paths), sum(os.path.getsize(p) for p in paths)


def reads_data(query: exp.Expression, current_db: str | None) -> bool:
    """True when the SELECT reads dorislite tables or files only (the Spark path); False for constant
    SELECTs and queries over information_schema (the in-process path)."""
    refs = _table_refs(query)
    if not refs:
        return False
    for t in refs:
        if isinstance(t.this, dx.TableFunction):
            continue
        if not t.db and t.name.lower() == "dual":
            return False
        db = (t.db or current_db or "").lower()
        if db in VIRTUAL_DATABASES:
            return False
    return True


_SPARK_TYPES: dict[str, str] = {
    "bool": "boolean", "int8": "tinyint", "int16": "smallint", "int32": "int", "int64": "bigint",
    "float": "float", "double": "double", "date32[day]": "date", "string": "string",
}


def spark_type(t: pa.DataType) -> str:
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp_ntz"  # DATETIME has no time zone
    return _SPARK_TYPES.get(str(t), "string")


def spark_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def spark_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def file_frame(spark: SparkSession, opts: FileScanOptions) -> DataFrame:
    schema = file_schema(opts)
    if opts.format == "parquet":
        df = spark.read.parquet(*opts.paths)
        return df.selectExpr(*(f"try_cast({spark_ident(f.name)} AS {spark_type(f.type)}) AS {spark_ident(f.name)}"
                               for f in schema))
    if opts.format == "json":
        multi = opts.strip_outer_array or not opts.read_json_by_line
        if opts.json_root or opts.jsonpaths:
            return _json_path_frame(spark.read.json(list(opts.paths), multiLine=multi), opts, schema)
        ddl = ", ".join(f"{spark_ident(f.name)} {spark_type(f.type)}" for f in schema)
        return spark.read.json(list(opts.paths), multiLine=multi, schema=ddl)
    return _csv_frame(spark, opts, schema)


def _spark_path(steps: list[str | int], df_type: Any) -> tuple[str, Any] | None:
    """A JSON path as a Spark SQL expression over the frame's inferred schema, and its type; None when the
    data has no such field (the column is then NULL, as in-process)."""
    from pyspark.sql.types import ArrayType, StructType

    expr, t = "", df_type
    for step in steps:
        if isinstance(step, int) and isinstance(t, ArrayType):
            expr = f"try_element_at({expr}, {step + 1})"  # NULL past the end (ANSI mode raises on arr[i])
            t = t.elementType
        elif isinstance(step, str) and isinstance(t, StructType) and step in t.fieldNames():
            expr = f"{expr}.{spark_ident(step)}" if expr else spark_ident(step)
            t = t[step].dataType
        else:
            return None
    return expr, t


def _json_path_frame(df: DataFrame, opts: FileScanOptions, schema: pa.Schema) -> DataFrame:
    """json_root / jsonpaths on Spark: the rows under the root (an array of objects exploded), then one column
    per path, typed as the in-process reader types it (objects and arrays as their JSON text)."""
    from pyspark.sql.types import ArrayType, StructType

    if opts.json_root:
        found = _spark_path(json_path_steps(opts.json_root) or [], df.schema)
        if found is None:
            return df.sparkSession.createDataFrame([], ", ".join(f"{spark_ident(f.name)} string" for f in schema))
        expr, t = found
        df = df.where(f"{expr} IS NOT NULL")
        df = df.selectExpr(f"explode({expr}) AS __root").selectExpr("__root.*") if isinstance(t, ArrayType) \
            else df.selectExpr(f"{expr}.*")
    exprs = []
    for f in schema:
        found = _spark_path(json_path_steps(f.name) or [], df.schema) if opts.jsonpaths else \
            ((spark_ident(f.name), df.schema[f.name].dataType) if f.name in df.columns else None)
        if found is None:
            exprs.append(f"CAST(NULL AS {spark_type(f.type)}) AS {spark_ident(f.name)}")
            continue
        expr, t = found
        value = f"to_json({expr})" if isinstance(t, (ArrayType, StructType)) else expr
        exprs.append(f"try_cast({value} AS {spark_type(f.type)}) AS {spark_ident(f.name)}")
    return df.selectExpr(*exprs)


def _skipped_lines(opts: FileScanOptions) -> set[str]:
    """Header / skip_lines lines of every file (read in-process: a few lines per file)."""
    skip = opts.skip_lines + opts.header_lines
    out: set[str] = set()
    if skip:
        for path in opts.paths:
            out.update(head_lines(path, opts, skip))
    return out


def _enclosed_csv_frame(spark: SparkSession, opts: FileScanOptions, schema: pa.Schema) -> DataFrame:
    """CSV with `enclose` / `escape`: Spark's own CSV reader (enclosed separators and line breaks), every field
    text, then typed as the in-process reader types it."""
    names = [f"__c{i}" for i in range(len(schema))]
    df = spark.read.csv(list(opts.paths), schema=", ".join(f"{n} string" for n in names), sep=opts.column_separator,
                        quote=opts.enclose, escape=opts.escape or opts.enclose, multiLine=True, mode="PERMISSIVE",
                        nullValue="\\N", emptyValue="")
    skip = opts.skip_lines + opts.header_lines
    if skip:  # each file's first records, dropped by content as the plain path drops its first lines
        for record in {tuple(r) for path in opts.paths for r in head_records(path, opts, skip)}:
            same = " AND ".join(f"{n} <=> {spark_string(v) if v != chr(92) + 'N' else 'NULL'}"
                                for n, v in zip(names, record, strict=False))
            df = df.where(f"NOT ({same})")
    return df.selectExpr(*(_typed_field(n, f, opts) for n, f in zip(names, schema, strict=True)))


def _csv_frame(spark: SparkSession, opts: FileScanOptions, schema: pa.Schema) -> DataFrame:
    # raw lines, split in the JVM: the same semantics as the in-process reader (no quoting, ragged rows
    # NULL-filled); header and skip_lines lines are dropped by content, every file has its own
    if opts.enclose:
        return _enclosed_csv_frame(spark, opts, schema)
    df = spark.read.text(list(opts.paths), lineSep=opts.line_delimiter)
    skipped = _skipped_lines(opts)
    if skipped:
        df = df.where(f"value NOT IN ({', '.join(spark_string(s) for s in sorted(skipped))})")
    parts = f"split(value, {spark_string(re.escape(opts.column_separator))}, -1)"
    df = df.selectExpr(f"{parts} AS __parts")
    exprs = []
    for i, f in enumerate(schema):
        raw = f"try_element_at(__parts, {i + 1})"
        if opts.trim_double_quotes:
            raw = f"regexp_replace({raw}, '^\"(.*)\"$', '$1')"
        exprs.append(_typed_field(f"nullif({raw}, '\\\\N')", f, opts))
    return df.selectExpr(*exprs)


def _typed_field(raw: str, f: pa.Field, opts: FileScanOptions) -> str:
    """A CSV field's text as the column `f`, typed as the in-process reader types it: a value that does not
    convert is NULL, and fails the load when a strict INSERT reads the file."""
    if pa.types.is_string(f.type):
        return f"{raw} AS {spark_ident(f.name)}"
    value = f"try_cast({raw} AS {spark_type(f.type)})"
    if opts.strict_types:
        message = spark_string(f"{STRICT_FILE_ERROR}column({f.name}) value is incorrect: '")
        value = (f"CASE WHEN {raw} IS NOT NULL AND {value} IS NULL THEN "
                 f"raise_error(concat({message}, {raw}, {spark_string(chr(39))})) ELSE {value} END")
    return f"{value} AS {spark_ident(f.name)}"


def olap_frame(spark: SparkSession, ref: OlapRef) -> DataFrame:
    from storage.spark.tables import encode_schema

    return (spark.read.format("dorislite").option("root", ref.root).option("database", ref.db)
            .option("table", ref.table).option("schema", encode_schema(ref.schema))
            .option("versions", json.dumps({str(k): v for k, v in ref.versions.items()})).load())


def register_views(spark: SparkSession, query: exp.Expression, resolve: ResolveOlap,
                   strict_types: bool = False) -> SparkQuery:
    """Create one temp view per FROM item and return the query as Spark SQL over those views."""
    query = query.copy()
    out = SparkQuery("")
    tag = uuid.uuid4().hex[:8]
    for i, table in enumerate(_table_refs(query)):
        view = f"__dl_{tag}_{i}"
        frame: Any
        if isinstance(table.this, dx.TableFunction):
            frame = file_frame(spark, options_of(table.this, strict_types))
            alias = table.alias or table.this.name
        else:
            frame = olap_frame(spark, resolve(table.db or None, table.name))
            alias = table.alias or table.name
        frame.createOrReplaceTempView(view)
        out.views.append(view)
        table.replace(exp.alias_(exp.to_table(view), alias, table=True))
    out.sql = query.sql(dialect="spark")
    return out


def drop_views(spark: SparkSession, views: list[str]) -> None:
    """Best effort: a failure here (a JVM that died with the load) must not hide the load's own error."""
    for view in views:
        try:
            spark.catalog.dropTempView(view)
        except Exception:  # noqa: BLE001
            log.warning("could not drop Spark view %s", view, exc_info=True)
