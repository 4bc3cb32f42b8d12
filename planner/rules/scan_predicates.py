"""Translate WHERE conjuncts into storage ColumnPredicates (`col op literal`, IN, BETWEEN, IS [NOT] NULL).

A literal is converted to a Python value of the column's type (date strings -> datetime.date for DATE
columns, ...); a conversion that would change the value (1.5 against an INT column) is not pushed.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from planner.context import QueryContext
from planner.expressions import ArrowConst, Evaluator
from planner.functions.casts import convert
from planner.logical import LogicalScan, referenced_ids
from storage.predicate import ColumnPredicate, Op

_OPS = {exp.EQ: Op.EQ, exp.NEQ: Op.NE, exp.GT: Op.GT, exp.GTE: Op.GE, exp.LT: Op.LT, exp.LTE: Op.LE}
_FLIP = {Op.GT: Op.LT, Op.GE: Op.LE, Op.LT: Op.GT, Op.LE: Op.GE, Op.EQ: Op.EQ, Op.NE: Op.NE}
_EMPTY = pa.table({})


_INT_RANGES = {t: (-(2 ** (t.bit_width - 1)), 2 ** (t.bit_width - 1) - 1)
               for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64())}


def _plain_literal(e: exp.Literal, col_type: pa.DataType) -> tuple[bool, object] | None:
    """The common cases without Arrow (an IN list of 10,000 literals): an integer literal for an integer
    column, a string literal for a string column. None: take the general path."""
    text = str(e.this)
    if not e.is_string and col_type in _INT_RANGES and text.lstrip("+-").isdigit():
        low, high = _INT_RANGES[col_type]
        value = int(text)
        return (True, value) if low <= value <= high else (False, None)
    if e.is_string and (pa.types.is_string(col_type) or pa.types.is_large_string(col_type)):
        return True, text
    return None


def literal_value(e: exp.Expression, col_type: pa.DataType, ctx: QueryContext) -> tuple[bool, object]:
    """(ok, python value) for a constant expression converted losslessly to col_type (scan predicates and
    DELETE conditions convert their literals here)."""
    if isinstance(e, exp.Literal):
        plain = _plain_literal(e, col_type)
        if plain is not None:
            return plain
    if referenced_ids(e):
        return False, None
    try:
        v = Evaluator(_EMPTY, ctx).eval(e)
    except Exception:
        return False, None
    if not isinstance(v, pa.Scalar) or not v.is_valid:
        return False, None
    try:
        converted = convert(v, col_type)
        if not converted.is_valid:
            return False, None
        if v.type != col_type:
            back = convert(converted, v.type)
            if not back.is_valid or back.as_py() != v.as_py():
                return False, None
    except Exception:
        return False, None
    return True, converted.as_py()


def _value_set(values: pa.Array, col_type: pa.DataType) -> tuple | None:
    """A literal list's values converted losslessly to the column's type (NULLs never match: dropped;
    but NOT IN with a NULL matches nothing, so such a list is not pushed)."""
    if values.null_count or not len(values):  # an empty set is left to the filter (NOT IN () keeps every row)
        return None
    try:
        converted = values.cast(col_type)
        if converted.cast(values.type) != values:
            return None
        # a subquery's column repeats its values: each distinct one once, in order, for the index probes
        converted = pc.unique(converted)
        converted = pc.array_take(converted, pc.array_sort_indices(converted)) if len(converted) > 1 else converted
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    return tuple(converted.to_pylist())


def _scan_column(e: exp.Expression, ids: dict[str, tuple[str, pa.DataType]]) -> tuple[str, pa.DataType] | None:
    if isinstance(e, exp.Column) and e.name in ids:
        return ids[e.name]
    return None


def to_column_predicates(conjuncts: list[exp.Expression], scan: LogicalScan, ctx: QueryContext) -> list[ColumnPredicate]:
    schema = scan.source.schema
    ids = {cid: (name, schema.field(name).type) for name, cid in scan.columns}
    out: list[ColumnPredicate] = []
    for c in conjuncts:
        p = _one(c, ids, ctx)
        if p is not None:
            out.extend(p)
    return out


def _one(c: exp.Expression, ids: dict[str, tuple[str, pa.DataType]], ctx: QueryContext) -> list[ColumnPredicate] | None:
    op = _OPS.get(type(c))
    if op is not None:
        col, other = _scan_column(c.this, ids), c.expression
        if col is None:
            col, other, op = _scan_column(c.expression, ids), c.this, _FLIP[op]
        if col is None:
            return None
        ok, value = literal_value(other, col[1], ctx)
        return [ColumnPredicate(col[0], op, (value,))] if ok else None
    if isinstance(c, exp.Between):
        col = _scan_column(c.this, ids)
        if col is None:
            return None
        ok_lo, lo = literal_value(c.args["low"], col[1], ctx)
        ok_hi, hi = literal_value(c.args["high"], col[1], ctx)
        if ok_lo and ok_hi:
            return [ColumnPredicate(col[0], Op.GE, (lo,)), ColumnPredicate(col[0], Op.LE, (hi,))]
        return None
    negate = isinstance(c, exp.Not)
    inner = c.this if negate else c
    if isinstance(inner, exp.In) and inner.args.get("query") is None:
        col = _scan_column(inner.this, ids)
        if col is None:
            return None
        values = []
        items = inner.expressions
        if len(items) == 1 and isinstance(items[0], ArrowConst) and isinstance(items[0].value, pa.Array):
            values = _value_set(items[0].value, col[1])  # a long literal list, bound as one value set
            if values is None:
                return None
            return [ColumnPredicate(col[0], Op.NOT_IN if negate else Op.IN, values)]
        for item in items:
            if not isinstance(item, exp.Literal):
                return None  # subquery value sets and expressions stay in the filter
            ok, v = literal_value(item, col[1], ctx)
            if not ok:
                return None
            values.append(v)
        return [ColumnPredicate(col[0], Op.NOT_IN if negate else Op.IN, tuple(values))]
    if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
        col = _scan_column(inner.this, ids)
        if col is None:
            return None
        return [ColumnPredicate(col[0], Op.IS_NOT_NULL if negate else Op.IS_NULL)]
    return None
