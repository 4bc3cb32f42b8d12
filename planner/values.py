"""Arrow values flowing through expression evaluation: arrays or scalars, and their type algebra.

A constant sub-expression stays a pa.Scalar (pyarrow.compute accepts scalar/array mixes), and is only
broadcast to a full column when a projection materialises it.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from sql.types import LARGEINT_ARROW

Value = pa.Array | pa.ChunkedArray | pa.Scalar


def is_scalar(v: Value) -> bool:
    return isinstance(v, pa.Scalar)


def broadcast(v: Value, n: int) -> pa.Array:
    """A column of length n (vectorised: one `take` of a one-element array)."""
    if isinstance(v, pa.Scalar):
        if not v.is_valid:
            return pa.nulls(n, v.type)
        return pa.repeat(v, n)
    if isinstance(v, pa.ChunkedArray):
        return v.combine_chunks()
    return v


def null_of(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(None, type=t)


def is_null_type(t: pa.DataType) -> bool:
    return pa.types.is_null(t)


def is_int(t: pa.DataType) -> bool:
    return pa.types.is_integer(t)


def is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_boolean(t)


def is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def is_temporal(t: pa.DataType) -> bool:
    return pa.types.is_date(t) or pa.types.is_timestamp(t)


def numeric_supertype(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    if pa.types.is_floating(a) or pa.types.is_floating(b):
        return pa.float64()
    if pa.types.is_decimal(a) or pa.types.is_decimal(b):
        da = _as_decimal(a)
        db = _as_decimal(b)
        scale = max(da.scale, db.scale)
        digits = max(da.precision - da.scale, db.precision - db.scale)
        return pa.decimal128(min(38, digits + scale), scale)
    if pa.types.is_boolean(a) and pa.types.is_boolean(b):
        return pa.bool_()
    return pa.int64() if max(_int_width(a), _int_width(b)) <= 64 else pa.decimal128(38, 0)


def promoted_integer(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """Doris's `+ - *` on integers: the wider operand's type widened one step (TINYINT -> SMALLINT -> INT ->
    BIGINT; BIGINT stays BIGINT and wraps), so a sum or product of two narrower integers never overflows."""
    width = max(_int_width(a), _int_width(b))
    return {8: pa.int16(), 16: pa.int32()}.get(width, pa.int64())


def decimal_arithmetic_type(op: str, a: pa.DataType, b: pa.DataType) -> pa.Decimal128Type:
    """Doris's DECIMALV3 result of `a op b` ("+", "-" or "*") with an integer operand as DECIMAL(digits, 0):
    + and -: scale max(s1, s2), one digit more than the wider integral part; *: (p1 + p2, s1 + s2). Beyond 38
    digits the precision is 38 and the scale shrinks (processDecimalV3OverFlow): to what the integral part
    leaves, or to decimal_overflow_scale (6) when the integral part needs more than 32 digits."""
    da, db = _as_decimal(a), _as_decimal(b)
    if op == "*":
        precision, scale = da.precision + db.precision, da.scale + db.scale
    else:
        scale = max(da.scale, db.scale)
        precision = max(da.precision - da.scale, db.precision - db.scale) + scale + 1
    if precision > 38:
        integral = precision - scale
        scale = 38 - integral if integral < 38 - DECIMAL_OVERFLOW_SCALE else min(scale, DECIMAL_OVERFLOW_SCALE)
        precision = 38
    return pa.decimal128(precision, scale)


DECIMAL_OVERFLOW_SCALE = 6  # Doris's session variable decimal_overflow_scale


def _int_width(t: pa.DataType) -> int:
    return t.bit_width if pa.types.is_integer(t) else 8


def _as_decimal(t: pa.DataType) -> pa.Decimal128Type:
    if pa.types.is_decimal(t):
        return t
    width = _int_width(t)
    return pa.decimal128({8: 3, 16: 5, 32: 10}.get(width, 19), 0)


def supertype(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """The type two values are compared / unioned / coalesced as (MySQL-ish rules)."""
    if a == b:
        return a
    if is_null_type(a):
        return b
    if is_null_type(b):
        return a
    if is_numeric(a) and is_numeric(b):
        return numeric_supertype(a, b)
    if is_temporal(a) and is_temporal(b):
        return pa.timestamp("us")
    if is_temporal(a) and is_string(b):
        return a
    if is_string(a) and is_temporal(b):
        return b
    if (is_numeric(a) and is_string(b)) or (is_string(a) and is_numeric(b)):
        return pa.float64()  # MySQL compares a string with a number as DOUBLE
    return pa.string()


def value_type(v: Value) -> pa.DataType:
    return v.type


def all_valid(v: Value) -> bool:
    return v.is_valid if isinstance(v, pa.Scalar) else v.null_count == 0


def fill_false(v: Value) -> Value:
    """NULL conditions count as false (WHERE, IF, CASE)."""
    return pc.fill_null(v, False)


def result_supertype(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """The type of a value that may come from either side (CASE, IF, COALESCE, UNION): like `supertype`
    except that mixing text with numbers or dates gives text."""
    if not is_null_type(a) and not is_null_type(b) and a != b and (is_string(a) or is_string(b)):
        return pa.string()
    if (is_temporal(a) and pa.types.is_integer(b)) or (pa.types.is_integer(a) and is_temporal(b)):
        return pa.int64()  # Doris: ifnull(DATE '2023-01-01', 0) is 20230101
    return supertype(a, b)


def avg_decimal_scale(scale: int) -> int:
    """Doris's avg(DECIMAL(p, s)) is DECIMAL(38, max(s, 4)) (ScalarType.DEFAULT_MIN_AVG_DECIMAL128_SCALE)."""
    return min(max(scale, 4), 38)


def common_array(values: list[pa.Scalar]) -> pa.Array | None:
    """Scalars (NULLs kept) as one array of their common result type, None when they have none (all NULL,
    or a mix Arrow cannot cast): an IN list folded into a value set, in the binder and for DuckDB."""
    common = pa.null()
    for v in values:
        common = v.type if pa.types.is_null(common) else common if pa.types.is_null(v.type) \
            else result_supertype(common, v.type)
    if pa.types.is_null(common):
        return None
    try:
        return pa.array([v.as_py() for v in values]).cast(common)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):  # no common type after all
        if common == LARGEINT_ARROW and all(v.type in (common, pa.int64(), pa.null()) for v in values):
            return pa.array([v.cast(common) for v in values], common)  # 39-digit LARGEINTs
        return None
