"""Convert: a load's values (VALUES rows, a SELECT's or a file's result) cast to the target table's columns, with
Doris's load checks (type conversion, integer range, decimal overflow, calendar dates, VARCHAR/CHAR byte
length, NULL into NOT NULL). Strict mode fails the statement on the first bad row (1105); non-strict
drops bad rows and counts them.

The checks are vectorised per column: each column is converted once with `planner.functions.casts`
(unconvertible values become NULL), and "input not NULL but output NULL" marks a bad row. The Spark run states
the same rules as Spark SQL expressions (`spark_value_sql`, `spark_reasons`), and a schema change converts stored
values with the same casts (`convert_column`).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.context import QueryContext
from planner.expressions import Evaluator
from planner.functions.casts import convert, to_string
from planner.loads.spark_sources import spark_string, spark_type
from sql.errors import SqlError, analysis_error
from sql.types import DorisType, parse_type

TableColumn = tuple[str, DorisType, bool, str | None]  # (name, type, nullable, default text)

# Doris documents 5025, but the MariaDB client library reserves 5000-5999 for its own errors and then
# reports 'malformed packet'; 1105 is the generic code Doris uses for FE errors (doris-reference §0).
STRICT_FILTERED_CODE = 1105
SAMPLE_ROWS = 5  # bad rows quoted in a strict-mode failure
_CURRENT_TIMESTAMP = ("CURRENT_TIMESTAMP", "NOW()", "CURRENT_TIMESTAMP()", "NOW")


def _strict_error(reason: str, row_text: str) -> SqlError:
    return analysis_error(
        f"Insert has filtered data in strict mode. Reason: {reason}. src line [{row_text}]",
        STRICT_FILTERED_CODE, "HY000")


def resolve_targets(table_columns: Sequence[TableColumn], target_columns: Sequence[str] | None) -> list[int]:
    if target_columns is None:
        return list(range(len(table_columns)))
    by_name = {c[0].lower(): i for i, c in enumerate(table_columns)}
    out: list[int] = []
    for name in target_columns:
        i = by_name.get(name.lower())
        if i is None:
            raise analysis_error(f"Unknown column '{name}' in 'field list'", 1054, "42S22")
        if i in out:
            raise analysis_error(f"Column '{name}' specified twice", 1110, "42000")
        out.append(i)
    return out


@dataclass
class _ColumnInput:
    raw: pa.Array  # what the statement supplied (text for VALUES, typed for SELECT results)
    text: pa.Array  # the same as text, for error messages and length checks


def default_value(col: TableColumn, now: dt.datetime) -> str | None:
    name, dtype, nullable, default = col
    if default is None:
        if not nullable:
            raise analysis_error(f"Column has no default value, column={name}", 1364, "HY000")
        return None
    if default.upper() in _CURRENT_TIMESTAMP:
        return now.strftime("%Y-%m-%d %H:%M:%S")
    if default.upper() == "NULL":
        return None
    return default


def _literal_text(node: exp.Expression, dtype: DorisType, ctx: QueryContext, now: dt.datetime
                  ) -> tuple[bool, str | None]:
    """(is_default, text) of one VALUES cell. Literals keep their exact text (no float rounding);
    other expressions are evaluated once and rendered as text."""
    if isinstance(node, exp.Var) and node.name.upper() == "DEFAULT":
        return True, None
    if isinstance(node, exp.Column) and node.name.upper() == "DEFAULT" and not node.table:
        return True, None
    if isinstance(node, exp.Null):
        return False, None
    if isinstance(node, exp.Literal):
        return False, _numeric_text(node.this, dtype) if not node.is_string else node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return False, _numeric_text("-" + node.this.this, dtype)
    if isinstance(node, exp.Boolean):
        return False, "1" if node.this else "0"
    column = node if isinstance(node, exp.Column) else node.find(exp.Column)
    if column is not None:
        raise analysis_error(f"Unknown column '{column.name}' in 'field list'", 1054, "42S22")
    v = Evaluator(pa.table({}), ctx).eval(node)
    if not isinstance(v, pa.Scalar):
        raise analysis_error(f"VALUES can only contain constants: {node.sql('mysql')}")
    if not v.is_valid:
        return False, None
    return False, to_string(v).as_py()


def _numeric_text(text: str, dtype: DorisType) -> str:
    # a numeric literal into an integer column is truncated as Doris's implicit cast does
    if dtype.is_integer and ("." in text or "e" in text.lower()):
        try:
            return str(int(decimal.Decimal(text)))
        except (decimal.InvalidOperation, ValueError):
            return text
    return text


def bind_insert_values(
    table_columns: Sequence[TableColumn],
    target_columns: Sequence[str] | None,
    rows: Sequence[Sequence[exp.Expression]],
    strict: bool = True,
    ctx: QueryContext | None = None,
) -> tuple[pa.Table, int]:
    """Rows of `INSERT ... VALUES` as an Arrow table in table column order with exact Arrow types,
    and the number of rows filtered (non-strict mode)."""
    ctx = ctx or QueryContext(None, _no_tables)
    now = ctx.statement_time()
    targets = resolve_targets(table_columns, target_columns)
    for r, row in enumerate(rows):
        if len(row) != len(targets):
            raise analysis_error(f"Column count doesn't match value count at row {r + 1}", 1136, "21S01")
    n = len(rows)
    inputs: dict[int, _ColumnInput] = {}
    for pos, ci in enumerate(targets):
        col = table_columns[ci]
        texts: list[str | None] = []
        for row in rows:  # walking the statement's own AST: one node per cell, not table data
            is_default, text = _literal_text(row[pos], col[1], ctx, now)
            texts.append(default_value(col, now) if is_default else text)
        arr = pa.array(texts, pa.string())
        inputs[ci] = _ColumnInput(arr, arr)
    return _build(table_columns, inputs, n, strict, now)


def bind_insert_query_result(
    table_columns: Sequence[TableColumn],
    target_columns: Sequence[str] | None,
    result: pa.Table,
    strict: bool = True,
    ctx: QueryContext | None = None,
    rejects: list[str] | None = None,
) -> tuple[pa.Table, int]:
    """A SELECT's result for `INSERT ... SELECT`, cast to the table's schema with the same checks; `rejects`
    collects the filtered rows with their reasons (the first MAX_REJECTS, Doris's error log lines)."""
    ctx = ctx or QueryContext(None, _no_tables)
    now = ctx.statement_time()
    targets = resolve_targets(table_columns, target_columns)
    if result.num_columns != len(targets):
        raise analysis_error("Column count doesn't match value count", 1136, "21S01")
    inputs: dict[int, _ColumnInput] = {}
    for pos, ci in enumerate(targets):
        raw = result.column(pos).combine_chunks()
        text = to_string(raw) if not pa.types.is_null(raw.type) else pa.nulls(len(raw), pa.string())
        inputs[ci] = _ColumnInput(raw, text)
    return _build(table_columns, inputs, result.num_rows, strict, now, rejects)


def _no_tables(db: str | None, name: str):  # noqa: ANN202
    raise analysis_error(f"Table '{name}' doesn't exist", 1146, "42S02")


MAX_REJECTS = 1000


def _build(table_columns: Sequence[TableColumn], inputs: dict[int, _ColumnInput], n: int, strict: bool,
           now: dt.datetime, rejects: list[str] | None = None) -> tuple[pa.Table, int]:
    bad = np.zeros(n, dtype=bool)
    why: dict[int, str] = {}  # row -> first reason, for the rejected rows kept in `rejects`
    first_error: tuple[int, str] | None = None  # (row, reason) of the earliest bad row
    arrays: list[pa.Array] = []
    for ci, col in enumerate(table_columns):
        name, dtype, nullable, _ = col
        target = dtype.arrow_type()
        given = inputs.get(ci)
        if given is None:
            default = default_value(col, now)
            given = _ColumnInput(pa.array([default] * n, pa.string()), pa.array([default] * n, pa.string()))
        out, reasons = _convert_column(name, dtype, nullable, given, target)
        arrays.append(out)
        for mask, reason in reasons:
            m = np.asarray(pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool)
            if not m.any():
                continue
            row = int(np.argmax(m))
            if first_error is None or row < first_error[0]:
                first_error = (row, reason.format(value=given.text[row].as_py()))
            if rejects is not None:  # only the rows that failed, at most MAX_REJECTS of them
                for r in np.flatnonzero(m & ~bad)[:MAX_REJECTS]:
                    why.setdefault(int(r), reason.format(value=given.text[int(r)].as_py()))
            bad |= m
    if first_error is not None and strict:
        row = first_error[0]
        raise _strict_error(first_error[1], _row_text(inputs, row))
    if rejects is not None:
        rejects.extend(f"Reason: {why[r]}. src line [{_row_text(inputs, r)}]; " for r in sorted(why)[:MAX_REJECTS])
    table = pa.Table.from_arrays(arrays, names=[c[0] for c in table_columns])
    filtered = int(bad.sum())
    if filtered:
        if filtered == n:
            raise analysis_error("all partitions have no load data", 1064, "HY000")
        table = table.filter(pa.array(~bad))
    return table, filtered


def _convert_column(name: str, dtype: DorisType, nullable: bool, given: _ColumnInput, target: pa.DataType
                    ) -> tuple[pa.Array, list[tuple[pa.Array, str]]]:
    raw = given.raw
    out = raw if raw.type == target else convert(raw, target, strict=True)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    reasons: list[tuple[pa.Array, str]] = []
    if raw.type != target:
        reasons.append((pc.and_(pc.is_valid(raw), pc.is_null(out)),
                        f"column({name}) value is incorrect: '{{value}}'"))
    elif pa.types.is_decimal(target) and len(out):
        pass  # same decimal type: already within precision
    if dtype.name in ("CHAR", "VARCHAR") and dtype.length:
        too_long = pc.greater(pc.binary_length(given.text), dtype.length)
        reasons.append((too_long, f"column({name}) value is too long: '{{value}}' (schema length: {dtype.length})"))
    if not nullable:
        reasons.append((pc.is_null(out), f"column({name}) is NULL but the column is not nullable"))
    return out, reasons


def _row_text(inputs: dict[int, _ColumnInput], row: int) -> str:
    parts = []
    for ci in sorted(inputs):
        v = inputs[ci].text[row].as_py()
        parts.append("NULL" if v is None else str(v))
    return ", ".join(parts)


def _sample_text(row: str, reason: str) -> str:
    # reasons from target_frame already carry "Reason: ... src line [...]"; the writer's own checks
    # (NOT NULL, no partition) give the bare reason and the converted row
    return reason if reason.startswith("Reason: ") else f"Reason: {reason}. src line [{row}]"


def strict_error(filtered: int, samples: Sequence[tuple[str, str]]) -> SqlError:
    sample = "; ".join(_sample_text(row, reason) for row, reason in samples[:SAMPLE_ROWS])
    return analysis_error(f"Insert has filtered data in strict mode. filtered rows: {filtered}, "
                          f"sample: [{sample}]", STRICT_FILTERED_CODE, "HY000")


def check_filtered(loaded: int, filtered: int, strict: bool, max_ratio: float) -> None:
    """After the rows were converted and routed: nothing left, or (non-strict) more filtered than
    insert_max_filter_ratio / max_filter_ratio allows, fails the load."""
    total = loaded + filtered
    if not strict and filtered and filtered > max_ratio * total:
        raise analysis_error(f"Insert has too many filtered data {filtered}/{total} insert_max_filter_ratio is "
                             f"{max_ratio:.6f}")
    if loaded == 0 and filtered:
        raise analysis_error("all partitions have no load data", 1064, "HY000")


# -- on Spark: the same rules as Spark SQL expressions (planner.loads.spark_run.target_frame) ----------------


def spark_value_sql(col: TableColumn, source: str | None, now: dt.datetime, source_type: str | None = None) -> str:
    """The converted value of one target column (source column or the column's default)."""
    name, dtype, _nullable, _default = col
    target = spark_type(dtype.arrow_type())
    if source is None:
        default = default_value(col, now)  # raises 1364 for NOT NULL without a default
        return f"CAST({'NULL' if default is None else spark_string(default)} AS {target})"
    if source_type == target:
        return source  # already the target type (e.g. Parquet written with the table's types): no cast
    return f"try_cast({source} AS {target})"


def spark_reasons(col: TableColumn, source: str | None, value: str, cast: bool = True) -> list[str]:
    """Checks Spark must make per row. NOT NULL and "no partition" are checked again by the writer tasks
    (storage's reject_masks, one implementation), so they are not repeated here."""
    name, dtype, _nullable, _default = col
    out: list[str] = []
    if source is not None and cast:
        out.append(f"CASE WHEN {source} IS NOT NULL AND {value} IS NULL THEN concat("
                   f"{spark_string(f'column({name}) value is incorrect: ')}, \"'\", CAST({source} AS STRING), \"'\")"
                   f" END")
    if dtype.name in ("CHAR", "VARCHAR") and dtype.length:
        out.append(f"CASE WHEN octet_length({value}) > {dtype.length} THEN concat("
                   f"{spark_string(f'column({name}) value is too long: ')}, \"'\", {value}, \"'\", "
                   f"{spark_string(f' (schema length: {dtype.length})')}) END")
    return out


# -- schema change: a column's stored values in its new type (storage.tablet.convert.Converter) ---------


def convert_column(values: pa.ChunkedArray | pa.Array, old: str, new: str, column: str) -> pa.Array:
    arr = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    src, dst = parse_type(old), parse_type(new)
    if src.is_date and dst.name == "DATE":  # DATETIME -> DATE keeps the day, as Doris does
        out = pc.cast(pc.floor_temporal(arr, unit="day"), pa.date32()) if pa.types.is_timestamp(arr.type) else arr
    else:
        out = convert(arr, dst.arrow_type(), strict=True)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    failed = pc.and_(pc.is_valid(arr), pc.is_null(out))
    if dst.name in ("CHAR", "VARCHAR") and dst.length and len(out):
        failed = pc.or_(failed, pc.fill_null(pc.greater(pc.binary_length(out), dst.length), False))
    if len(arr) and pc.any(failed).as_py():
        value = to_string(arr.filter(failed)[:1])[0].as_py()
        raise analysis_error(f"[DATA_QUALITY_ERROR]Failed to convert column '{column}' from {src} to {dst}: "
                             f"value '{value}' does not fit the new type")
    return out
