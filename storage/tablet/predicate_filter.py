"""Exact evaluation of ColumnPredicates over an Arrow table (SQL semantics: NULL never matches)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.int128 import values_array, wide_scalar
from storage.predicate import ColumnPredicate, Op
from storage.segment.zone_map import INT_RANGES, plain_int


def _scalar(value: Any, arrow_type: pa.DataType) -> Any:
    """The literal in the column's type when it converts; else as-is (compute kernels coerce numbers)."""
    try:
        return pa.scalar(value, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        if (wide := wide_scalar(value, arrow_type)) is not None:
            return wide
        try:
            return pc.cast(pa.array([value]), arrow_type)[0]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return value


@functools.lru_cache(maxsize=1024)
def _cached_scalar(value: Any, kind: type, arrow_type: pa.DataType) -> Any:
    return _scalar(value, arrow_type)


def _column_scalar(value: Any, arrow_type: pa.DataType) -> Any:
    """_scalar, memoised (keyed with the value's Python type: 1, 1.0 and True hash alike yet convert
    differently): a scan converts the same literal for every segment it filters."""
    try:
        return _cached_scalar(value, type(value), arrow_type)
    except TypeError:  # unhashable
        return _scalar(value, arrow_type)


def _numpy_compare(col: pa.Array | pa.ChunkedArray, op: Op, value: Any) -> np.ndarray | None:
    """The comparison in numpy for a null-free integer or float column and a literal of its own type (the
    common pushed-down `col = 5`): the same answer as the pyarrow kernel, without its fill_null/to_numpy
    round trip per segment. None when the fast path does not apply."""
    t = col.type
    if col.null_count or not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        return None
    if plain_int(value, t):  # a point query's key: no Arrow scalar to make and unmake
        plain = value
    elif type(value) is int and t in INT_RANGES:  # past the column type's range: the kernel's coercion decides
        return None
    else:
        s = _column_scalar(value, t)
        if not isinstance(s, pa.Scalar) or s.type != t:
            return None
        plain = s.as_py()
    if isinstance(col, pa.ChunkedArray):
        if col.num_chunks != 1:
            return None
        col = col.chunk(0)
    return _NUMPY_COMPARE[op](col.to_numpy(zero_copy_only=True), plain)


def _value_set(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    try:
        return values_array(values, arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return pc.cast(pa.array(values), arrow_type)


_COMPARE = {Op.EQ: pc.equal, Op.NE: pc.not_equal, Op.LT: pc.less, Op.LE: pc.less_equal,
            Op.GT: pc.greater, Op.GE: pc.greater_equal}
_NUMPY_COMPARE = {Op.EQ: np.equal, Op.NE: np.not_equal, Op.LT: np.less, Op.LE: np.less_equal,
                  Op.GT: np.greater, Op.GE: np.greater_equal}


def predicate_mask(table: pa.Table, predicates: Sequence[ColumnPredicate]) -> np.ndarray:
    """Rows of `table` satisfying every predicate (columns matched case-insensitively)."""
    mask = None
    by_lower = {name.lower(): name for name in table.column_names}
    for p in predicates:
        col = table.column(by_lower[p.column.lower()])
        if p.op in _NUMPY_COMPARE and p.values and p.value is not None:
            fast = _numpy_compare(col, p.op, p.value)
            if fast is not None:
                mask = fast if mask is None else mask & fast
                continue
        if p.op is Op.IS_NULL:
            m = pc.is_null(col)
        elif p.op is Op.IS_NOT_NULL:
            m = pc.is_valid(col)
        elif p.op in (Op.IN, Op.NOT_IN):
            present = [v for v in p.values if v is not None]
            m = pc.is_in(col, value_set=_value_set(present, col.type)) if present else pc.is_valid(col)
            if not present and p.op is Op.IN:
                m = pc.and_(m, pc.invert(m))
            if p.op is Op.NOT_IN:
                if any(v is None for v in p.values):  # x NOT IN (.., NULL) is never true
                    m = pc.and_(pc.is_valid(col), pc.invert(pc.is_valid(col)))
                else:
                    m = pc.and_(pc.invert(m), pc.is_valid(col))
        else:
            if p.value is None:
                m = pc.and_(pc.is_valid(col), pc.invert(pc.is_valid(col)))
            else:
                m = _COMPARE[p.op](col, _column_scalar(p.value, col.type))
        m = pc.fill_null(m, False).to_numpy(zero_copy_only=False)
        mask = m if mask is None else mask & m
    return np.ones(table.num_rows, dtype=bool) if mask is None else mask
