"""The one place the data models' aggregation lives (load memtable, merge-on-read, compaction).

Input tables are sorted by the key columns with equal keys in ascending version / load order (older
first); `sort_by_keys` produces that order with a stable sort, so concatenating rowsets oldest-first and
sorting keeps "later wins" semantics. Runs of equal keys are found with vectorized adjacent-row
comparisons; REPLACE and UNIQUE take each run's last row, the other aggregations run as an ordered
pyarrow group-by over the run number (use_threads=False keeps `last` meaning "latest") of the rows of runs
longer than one row; a one-row run keeps its values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.catalog.model import KEYS_AGG, KEYS_DUP, KEYS_UNIQUE, Column, MaterializedIndexMeta
from storage.errors import StorageError
from storage.tablet.bucket_hash import spark_hash

AGG_SUM = "SUM"
AGG_MAX = "MAX"
AGG_MIN = "MIN"
AGG_REPLACE = "REPLACE"
AGG_REPLACE_IF_NOT_NULL = "REPLACE_IF_NOT_NULL"
AGG_NONE = "NONE"

_GROUPED = {
    AGG_SUM: ("sum", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)),
    AGG_MAX: ("max", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)),
    AGG_MIN: ("min", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)),
    AGG_REPLACE_IF_NOT_NULL: ("last", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)),
}
_RUN = "__run__"


def sort_by_keys(table: pa.Table, key_columns: Sequence[str], order_column: str | None = None) -> pa.Table:
    """Stable sort by keys (NULLs first, as Doris orders them); ties keep input order, or follow
    `order_column` ascending when given."""
    keys = [(k, "ascending", "at_start") for k in key_columns]
    if order_column is not None:
        keys.append((order_column, "ascending", "at_start"))
    if not keys or table.num_rows <= 1:
        return table
    idx = pc.sort_indices(table, sort_keys=keys)
    return table.take(idx)


def run_starts(table: pa.Table, key_columns: Sequence[str]) -> np.ndarray:
    """Index of the first row of each run of equal keys (NULL equals NULL) in a key-sorted table."""
    n = table.num_rows
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if not key_columns:
        return np.zeros(1, dtype=np.int64)
    change = np.zeros(n - 1, dtype=bool)
    for name in key_columns:
        col = table.column(name)
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        if pa.types.is_dictionary(arr.type):
            arr = arr.cast(arr.type.value_type)
        a, b = arr.slice(1), arr.slice(0, n - 1)
        differ = pc.fill_null(pc.not_equal(a, b), True)
        if arr.null_count:
            a_null, b_null = pc.is_null(a), pc.is_null(b)
            # two NULLs are the same key; NULL vs value differs
            differ = pc.and_(differ, pc.invert(pc.and_(a_null, b_null)))
            differ = pc.or_(differ, pc.xor(a_null, b_null))
        change |= differ.to_numpy(zero_copy_only=False)
    return np.concatenate([[0], np.flatnonzero(change) + 1]).astype(np.int64)


def aggregate(
    table: pa.Table,
    keys_type: str,
    key_columns: Sequence[str],
    aggregations: Mapping[str, str | None],
    order_column: str | None = None,
) -> pa.Table:
    """Collapse rows with equal keys per the data model.

    AGG: each value column by its aggregation (SUM / MAX / MIN / REPLACE / REPLACE_IF_NOT_NULL);
    UNIQUE: the newest row wins; DUPLICATE: rows are kept as they are. `aggregations` maps value column
    names to their aggregation (only consulted for AGG). The output keeps the input's columns in order,
    minus `order_column`.
    """
    if order_column is not None and order_column in table.column_names:
        table = table.drop_columns([order_column])
    if keys_type == KEYS_DUP or table.num_rows <= 1:
        return table
    starts = run_starts(table, key_columns)
    n = table.num_rows
    if len(starts) == n:
        return table  # every key is unique already
    ends = np.append(starts[1:], n) - 1
    if keys_type == KEYS_UNIQUE:
        return table.take(pa.array(ends))
    if keys_type != KEYS_AGG:
        raise StorageError(f"unknown keys type {keys_type}")

    keys = set(key_columns)
    grouped = [c for c in table.column_names
               if c not in keys and (aggregations.get(c) or AGG_REPLACE).upper() in _GROUPED]
    grouped_result: dict[str, pa.Array] = {}
    if grouped:
        # only runs of two or more rows need the group-by: a run of one row aggregates to itself (a merge of a
        # few small rowsets into a big one has almost only such runs)
        lengths = np.diff(np.append(starts, n))
        multi = lengths > 1
        multi_runs = np.flatnonzero(multi)
        row_run = np.repeat(np.arange(len(starts), dtype=np.int64), lengths)
        rows = np.flatnonzero(multi[row_run])
        dense = np.cumsum(multi) - 1  # run -> its number among the multi-row runs
        src = table.select(grouped).take(pa.array(rows)).append_column(_RUN, pa.array(dense[row_run[rows]]))
        specs = []
        for c in grouped:
            func, opts = _GROUPED[(aggregations.get(c) or AGG_REPLACE).upper()]
            specs.append((c, func, opts))
        out = src.group_by(_RUN, use_threads=False).aggregate(specs)
        order = out.column(_RUN).to_numpy()
        if len(order) > 1 and not np.all(order[1:] > order[:-1]):
            out = out.take(pa.array(np.argsort(order, kind="stable")))
        multi_mask = pa.array(multi)
        for c, func, _ in specs:
            res = out.column(f"{c}_{func}")
            want = table.schema.field(c).type
            res = res if res.type == want else pc.cast(res, want, safe=False)
            if len(multi_runs) == len(starts):
                grouped_result[c] = res
                continue
            # each run's first row, with the multi-row runs' slots replaced by their results (in run order)
            first = table.column(c).take(pa.array(starts)).combine_chunks()
            grouped_result[c] = pc.replace_with_mask(first, multi_mask, res.combine_chunks()
                                                     if isinstance(res, pa.ChunkedArray) else res)

    ends_idx = pa.array(ends)
    starts_idx = pa.array(starts)
    columns = []
    for c in table.column_names:
        if c in keys:
            columns.append(table.column(c).take(starts_idx))
        elif c in grouped_result:
            columns.append(grouped_result[c])
        else:
            agg = (aggregations.get(c) or AGG_REPLACE).upper()
            if agg not in (AGG_REPLACE, AGG_NONE):
                raise StorageError(f"aggregation type {agg} is not supported")
            columns.append(table.column(c).take(ends_idx))
    return pa.table(columns, schema=table.schema)


def index_aggregations(columns: Sequence[Column]) -> dict[str, str | None]:
    """Value column name -> aggregation type, from a schema."""
    return {c.name: c.aggregation for c in columns if not c.is_key}


def key_column_names(index: MaterializedIndexMeta) -> list[str]:
    return [c.name for c in index.columns if c.is_key]


def aggregate_index(table: pa.Table, index: MaterializedIndexMeta, order_column: str | None = None) -> pa.Table:
    """`aggregate` with the keys and aggregations of a materialized index (table must be key-sorted)."""
    keys = [k for k in key_column_names(index) if k in table.column_names]
    return aggregate(table, index.keys_type, keys, index_aggregations(index.columns), order_column)


# a part at least this many times larger than all the others together is merged by key lookup, not sorted
_DOMINANT_RATIO = 8


def merge_parts(parts: Sequence[pa.Table], index: MaterializedIndexMeta) -> pa.Table:
    """Merge-on-read of one tablet's parts (each key-sorted with unique keys, e.g. one segment; oldest first).

    After compaction a tablet is one big segment plus a few small loads: then only the big part's rows whose
    keys occur in the small parts (found by key hash; a collision only sends a row through the merge too)
    are sorted and aggregated with them, and the big part's other rows pass as they are. The result is
    the same rows as sorting everything, not in key order. Otherwise everything is sorted and aggregated."""
    keys = [k for k in key_column_names(index) if k in parts[0].column_names]
    big_at = max(range(len(parts)), key=lambda i: parts[i].num_rows)
    big = parts[big_at]
    rest = sum(p.num_rows for p in parts) - big.num_rows
    if not keys or len(parts) == 1 or rest * _DOMINANT_RATIO > big.num_rows:
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        return aggregate_index(sort_by_keys(table, keys), index)
    others = pa.concat_tables([p for i, p in enumerate(parts) if i != big_at])
    hit = np.isin(spark_hash([big.column(k) for k in keys]), spark_hash([others.column(k) for k in keys]))
    hit_rows = pa.array(hit)
    touched = [*parts[:big_at], big.filter(hit_rows), *parts[big_at + 1:]]  # version order kept for REPLACE
    merged = aggregate_index(sort_by_keys(pa.concat_tables(touched), keys), index)
    return pa.concat_tables([big.filter(pc.invert(hit_rows)), merged])
