"""Rows of one schema seen in another: a schema change's shadow index is written from rows of the table's
current schema (a load's, or the origin index's at a version), columns matched by unique id, so renamed and
reordered columns find their values, added ones take their default and converted ones go through the
server's conversion (Doris's rules, which storage does not own: handed in as `Converter`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pyarrow as pa

from storage.catalog.model import Column

# (values, type before, type after, column name) -> values in the new type; raises on a value that does not
# convert (the job fails with its message, as Doris's does)
Converter = Callable[[pa.ChunkedArray, str, str, str], pa.ChunkedArray | pa.Array]
ArrowTypeOf = Callable[[str], pa.DataType]


def default_scalar(column: Column, t: pa.DataType) -> pa.Scalar:
    """The value rows written before `column` existed read as: its DEFAULT (NULL for none, and for
    CURRENT_TIMESTAMP, which has no one value for the past)."""
    text = column.fill if column.fill is not None else column.default
    if text is None or text.upper() in ("NULL", "CURRENT_TIMESTAMP", "NOW()", "CURRENT_TIMESTAMP()"):
        return pa.scalar(None, t)
    try:
        if pa.types.is_boolean(t):
            return pa.scalar(text.strip().lower() in ("1", "true"), t)
        return pa.scalar(text).cast(t)
    except (pa.ArrowException, ValueError):
        return pa.scalar(None, t)


def rows_as(rows: pa.Table, source: Sequence[Column], target: Sequence[Column], arrow_type: ArrowTypeOf,
            convert: Converter) -> pa.Table:
    """`rows` (columns of `source`, by name) as `target`'s columns, names and types."""
    by_uid = {c.unique_id: c for c in source if c.unique_id}
    by_name = {c.name.lower(): c for c in source}
    present = {n.lower(): n for n in rows.column_names}
    arrays: list[pa.ChunkedArray | pa.Array] = []
    fields = []
    for col in target:
        t = arrow_type(col.type)
        src = by_uid.get(col.unique_id) if col.unique_id else by_name.get(col.name.lower())
        if src is not None and src.name.lower() in present:
            values = rows.column(present[src.name.lower()])
            if src.type != col.type:
                values = convert(values, src.type, col.type, col.name)
            if values.type != t:
                values = values.cast(t)
        else:
            d = default_scalar(col, t)
            values = pa.repeat(d, rows.num_rows) if d.is_valid else pa.nulls(rows.num_rows, t)
        arrays.append(values)
        fields.append(pa.field(col.name, t))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
