"""Exact evaluation of ColumnPredicates over an Arrow table (SQL semantics: NULL never matches)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from storage.predicate import ColumnPredicate, Op


def _scalar(value: Any, arrow_type: pa.DataType) -> Any:
    """The literal in the column's type when it converts; else as-is (compute kernels coerce numbers)."""
    try:
        return pa.scalar(value, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        try:
            return pc.cast(pa.array([value]), arrow_type)[0]
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return value


def _value_set(values: Sequence[Any], arrow_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return pc.cast(pa.array(values), arrow_type)


_COMPARE = {Op.EQ: pc.equal, Op.NE: pc.not_equal, Op.LT: pc.less, Op.LE: pc.less_equal,
            Op.GT: pc.greater, Op.GE: pc.greater_equal}


def predicate_mask(table: pa.Table, predicates: Sequence[ColumnPredicate]) -> np.ndarray:
    """Rows of `table` satisfying every predicate (columns matched case-insensitively)."""
    mask = np.ones(table.num_rows, dtype=bool)
    by_lower = {name.lower(): name for name in table.column_names}
    for p in predicates:
        col = table.column(by_lower[p.column.lower()])
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
                m = _COMPARE[p.op](col, _scalar(p.value, col.type))
        mask &= pc.fill_null(m, False).to_numpy(zero_copy_only=False)
    return mask
