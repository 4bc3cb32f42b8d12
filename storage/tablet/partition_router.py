"""Routing load rows to partitions: RANGE [lower, upper), LIST membership, or the single partition.

Bounds are the literal strings the catalog stores, cast to the partition column's Arrow type. NULL in a
partition column sorts below every value (Doris keeps it in the partition that holds the type minimum),
so a NULL only falls into a range whose lower bound is the type minimum. Work is one vectorized pass per
partition, never per row.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.catalog.model import OlapTable, Partition
from storage.int128 import wide_scalar

NO_PARTITION = -1

# Bound texts Doris prints for a type's minimum (the lower bound of the first LESS THAN partition).
_TYPE_MINIMA = {
    "-128", "-32768", "-2147483648", "-9223372036854775808", "-170141183460469231731687303715884105728",
    "0000-01-01", "0000-01-01 00:00:00", "MINVALUE", "",
}


def cast_bound(text: str | None, arrow_type: pa.DataType) -> pa.Scalar | None:
    """A stored bound literal as a scalar of the column type; None when it is not representable
    (e.g. the year-0 type minimum of DATE), which callers treat as the type minimum."""
    if text is None:
        return None
    try:
        return pc.cast(pa.array([text]), arrow_type)[0]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        if (wide := wide_scalar(text, arrow_type)) is not None:  # a 39-digit LARGEINT bound
            return wide
    if pa.types.is_date(arrow_type):
        try:  # pyarrow's date parser rejects year 0; the timestamp parser does not
            return pc.cast(pc.cast(pa.array([text]), pa.timestamp("s")), arrow_type)[0]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return None


def _is_minimum(text: str | None, scalar: pa.Scalar | None) -> bool:
    return text is not None and (scalar is None or text.strip().upper() in _TYPE_MINIMA)


def _compare(col: pa.Array, text: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(col < bound, col == bound) per row, with NULL as the smallest value; a None bound is MAXVALUE (a
    `LESS THAN (MAXVALUE)` / `("10", MAXVALUE)` column)."""
    n = len(col)
    if text is None:
        return np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    bound = cast_bound(text, col.type)
    is_min = _is_minimum(text, bound)
    if bound is None:
        lt = np.zeros(n, dtype=bool)
        eq = np.zeros(n, dtype=bool)
    else:
        lt = pc.fill_null(pc.less(col, bound), False).to_numpy(zero_copy_only=False)
        eq = pc.fill_null(pc.equal(col, bound), False).to_numpy(zero_copy_only=False)
    if col.null_count:
        nulls = col.is_null().to_numpy(zero_copy_only=False)
        lt = np.where(nulls, not is_min, lt)
        eq = np.where(nulls, is_min, eq)
    return lt, eq


def _tuple_less(cols: Sequence[pa.Array], bound: Sequence[str]) -> np.ndarray:
    """Lexicographic row < bound over the bound's length (missing trailing bound values = MIN)."""
    n = len(cols[0])
    less = np.zeros(n, dtype=bool)
    equal = np.ones(n, dtype=bool)
    for col, text in zip(cols, bound, strict=False):
        lt, eq = _compare(col, text)
        less |= equal & lt
        equal &= eq
    return less


def _range_mask(cols: Sequence[pa.Array], p: Partition) -> np.ndarray:
    n = len(cols[0])
    mask = np.ones(n, dtype=bool)
    if p.item.lower is not None:
        mask &= ~_tuple_less(cols, p.item.lower)
    if p.item.upper is not None:  # None = MAXVALUE
        mask &= _tuple_less(cols, p.item.upper)
    return mask


def _null_text(text: str | None, t: pa.DataType) -> str | None:
    """A LIST value as routing reads it: the catalog writes NULL as "NULL" (partition_items), a string otherwise."""
    return None if text == "NULL" and not (pa.types.is_string(t) or pa.types.is_large_string(t)) else text


def _list_mask(cols: Sequence[pa.Array], p: Partition) -> np.ndarray:
    n = len(cols[0])
    mask = np.zeros(n, dtype=bool)
    values = [tuple(_null_text(x, c.type) for x, c in zip(v, cols, strict=True)) for v in p.item.values or ()]
    if len(cols) == 1:
        col = cols[0]
        texts = [v[0] for v in values]
        non_null = [t for t in texts if t is not None]
        if non_null:
            try:
                value_set = pc.cast(pa.array(non_null), col.type)
            except pa.ArrowInvalid:  # 39-digit LARGEINT values
                value_set = pa.array([b for t in non_null if (b := cast_bound(t, col.type)) is not None], col.type)
            mask |= pc.fill_null(pc.is_in(col, value_set=value_set), False).to_numpy(zero_copy_only=False)
        if any(t is None for t in texts) and col.null_count:
            mask |= col.is_null().to_numpy(zero_copy_only=False)
        return mask
    for value in values:
        match = np.ones(n, dtype=bool)
        for col, text in zip(cols, value, strict=True):
            if text is None:
                match &= col.is_null().to_numpy(zero_copy_only=False)
            else:
                match &= _compare(col, text)[1] & col.is_valid().to_numpy(zero_copy_only=False)
        mask |= match
    return mask


def route_partitions(table: OlapTable, data: pa.Table) -> np.ndarray:
    """Position in `table.partitions` of each row's partition, NO_PARTITION (-1) where none matches."""
    n = data.num_rows
    info = table.partition_info
    if info.type.upper() == "UNPARTITIONED" or not info.columns:
        return np.zeros(n, dtype=np.int64) if table.partitions else np.full(n, NO_PARTITION, dtype=np.int64)
    by_lower = {name.lower(): name for name in data.column_names}
    cols = []
    for name in info.columns:
        col = data.column(by_lower[name.lower()])
        cols.append(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    out = np.full(n, NO_PARTITION, dtype=np.int64)
    is_list = info.type.upper() == "LIST"
    default = NO_PARTITION
    for pos, p in enumerate(table.partitions):
        if is_list and not p.item.values:  # the LIST default partition: whatever no other one takes
            default = pos
            continue
        mask = _list_mask(cols, p) if is_list else _range_mask(cols, p)
        out[mask & (out == NO_PARTITION)] = pos
    if default != NO_PARTITION:
        out[out == NO_PARTITION] = default
    return out
