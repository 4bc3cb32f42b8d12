"""A schema change's value conversion (storage.tablet.convert.Converter): the column's values in its new type,
by the rules INSERT converts with (planner.functions.casts, strict); a value that does not convert, or text
longer than the new VARCHAR / CHAR, fails the schema change job with the value, as Doris's does."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from planner.functions.casts import convert, to_string
from sql.errors import analysis_error
from sql.types import parse_type


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
